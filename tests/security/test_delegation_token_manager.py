"""The delegation token manager's rules, as Kafka 3.9's DelegationTokenManager (on a single
broker's token file, with a clock the tests move), the token's SCRAM exchange with `tokenauth`,
and the requests a PLAINTEXT listener refuses.
"""
from __future__ import annotations

import anyio
import pytest

from pykbroker import EmbeddedBroker
from pykbroker.common.time import FakeClock
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.security.delegation_tokens import FileTokenStore, decode_token, hmac_as_base64
from pykbroker.security.principal import KafkaPrincipal
from pykbroker.security.sasl.errors import SaslFailure
from pykbroker.security.sasl.scram import (
    SCRAM_SHA_256,
    ClientFirstMessage,
    ScramSaslClient,
    ScramSaslServer,
    sasl_name,
)
from pykbroker.security.token_manager import DelegationTokenManager
from pykbroker.security.token_settings import TokenSettings
from pykbroker.testkit.wire import WireClient

ALICE, BOB, CAROL = KafkaPrincipal("User", "alice"), KafkaPrincipal("User", "bob"), KafkaPrincipal("User", "carol")
SETTINGS = TokenSettings("secret", max_lifetime_ms=100_000, expiry_time_ms=10_000, expiry_check_interval_ms=1000)


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def manager(tmp_path, clock):
    manager = DelegationTokenManager(SETTINGS, FileTokenStore(tmp_path), clock=clock)
    manager.startup()
    return manager


def test_lifetimes_renewals_and_expiry_follow_kafkas_rules(manager, clock):
    issued = clock.now
    capped = anyio.run(manager.create, ALICE, ALICE, [BOB], 500_000)
    assert (capped.max_timestamp, capped.expiry_timestamp) == (issued + 100_000, issued + 10_000)
    short = anyio.run(manager.create, ALICE, ALICE, [], 3_000)
    assert (short.max_timestamp, short.expiry_timestamp) == (issued + 3_000, issued + 3_000)

    assert anyio.run(manager.renew, CAROL, capped.hmac, -1) == (ErrorCode.DELEGATION_TOKEN_OWNER_MISMATCH, -1)
    assert anyio.run(manager.renew, BOB, b"no such token", -1) == (ErrorCode.DELEGATION_TOKEN_NOT_FOUND, -1)
    clock.now += 95_000
    assert anyio.run(manager.renew, BOB, capped.hmac, 1) == (ErrorCode.DELEGATION_TOKEN_EXPIRED, -1)
    assert anyio.run(manager.expire, ALICE, short.hmac, 10) == (ErrorCode.DELEGATION_TOKEN_EXPIRED, -1)
    assert anyio.run(manager.expire, ALICE, short.hmac, -1) == (ErrorCode.NONE, clock.now)
    assert manager.cache.token(short.token_id) is None

    clock.now = issued
    renewed = anyio.run(manager.create, ALICE, ALICE, [BOB], -1)
    clock.now += 5_000
    assert anyio.run(manager.renew, BOB, renewed.hmac, -1) == (ErrorCode.NONE, clock.now + 10_000)
    assert anyio.run(manager.renew, ALICE, renewed.hmac, 999_999) == (ErrorCode.NONE, issued + 100_000)
    assert anyio.run(manager.expire, BOB, renewed.hmac, 1_000) == (ErrorCode.NONE, clock.now + 1_000)
    clock.now += 1_001
    anyio.run(manager.expire_tokens)
    assert manager.cache.token(renewed.token_id) is None
    assert manager.cache.token(capped.token_id) is not None  # not expired yet: it stays


def test_a_single_brokers_tokens_survive_a_restart(tmp_path, manager, clock):
    created = anyio.run(manager.create, ALICE, BOB, [CAROL], -1)
    restarted = DelegationTokenManager(SETTINGS, FileTokenStore(tmp_path), clock=clock)
    restarted.startup()
    assert restarted.cache.token(created.token_id) == manager.cache.token(created.token_id)
    assert restarted.cache.token_for_hmac(created.hmac).token_requester == BOB


class TokenScramClient(ScramSaslClient):
    """A SCRAM client sending Kafka's `tokenauth=true` extension, as Java's ScramLoginModule does
    with `tokenauth="true"`."""

    def first_message(self) -> bytes:
        self._first = ClientFirstMessage(sasl_name(self.username), self._nonce, "", "tokenauth=true")
        return f"n,,{self._first.bare()}".encode()


def test_a_token_authenticates_over_scram_as_its_owner_and_no_longer_once_removed(manager):
    created = anyio.run(manager.create, ALICE, BOB, [], -1)

    def exchange(password: str) -> ScramSaslServer:
        client = TokenScramClient(SCRAM_SHA_256, created.token_id, password)
        server = ScramSaslServer(SCRAM_SHA_256, lambda user: None, lambda tid: manager.credential("SCRAM-SHA-256", tid))
        server_first = server.evaluate(client.first_message())
        client.verify_server_final(server.evaluate(client.final_message(server_first)))
        return server

    server = exchange(hmac_as_base64(created.hmac))
    assert (server.authorization_id, server.token_authenticated) == ("alice", True)
    assert server.token_expiry_ms == created.expiry_timestamp
    with pytest.raises(SaslFailure):
        exchange("not the hmac")
    anyio.run(manager.expire, ALICE, created.hmac, -1)
    with pytest.raises(SaslFailure, match="Invalid tokenId"):
        exchange(hmac_as_base64(created.hmac))


def test_a_token_written_by_an_older_kafka_has_its_owner_as_requester():
    info = decode_token(b'{"version":2,"owner":"User%3Aalice","renewers":[],"issueTimestamp":1,'
                        b'"maxTimestamp":3,"expiryTimestamp":2,"tokenId":"t"}')
    assert info is not None and info.token_requester == ALICE == info.owner


@pytest.mark.parametrize("api_key, version, body", [
    (ApiKey.CREATE_DELEGATION_TOKEN, 3, {"renewers": [], "max_lifetime_ms": -1}),
    (ApiKey.RENEW_DELEGATION_TOKEN, 2, {"hmac": b"x", "renew_period_ms": -1}),
    (ApiKey.EXPIRE_DELEGATION_TOKEN, 2, {"hmac": b"x", "expiry_time_period_ms": -1}),
    (ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, {"owners": None}),
])
def test_a_plaintext_listener_refuses_every_token_request(plaintext_broker, api_key, version, body):
    """Kafka's allowTokenRequests: no tokens over PLAINTEXT, even with a secret key."""
    with WireClient(plaintext_broker.bootstrap) as client:
        response = client.request(api_key, version, messages.request(api_key).cls(**body))
    assert response.error_code == ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED


@pytest.fixture(scope="module")
def plaintext_broker():
    with EmbeddedBroker(overrides={"delegation.token.secret.key": "secret"}) as broker:
        yield broker
