"""Delegation tokens in ZooKeeper as Kafka 3.9 keeps them, between brokers (token managers with
ZooKeeper sessions of their own, in this process, on the tests' ZooKeeper): the token's znode
`/delegation_token/tokens/<id>` holds Kafka's JSON, a `/delegation_token/token_changes`
notification tells every broker, so a token made or renewed on one broker is known (and
authenticates) on another at once, and a token removed by the controller's expiry check is
forgotten everywhere.
"""
from __future__ import annotations

import base64
import json

import anyio
import pytest

from pykbroker.cluster.zk_client import KafkaZkClient
from pykbroker.common.time import FakeClock
from pykbroker.protocol.errors import ErrorCode
from pykbroker.security.principal import KafkaPrincipal
from pykbroker.security.token_manager import DelegationTokenManager
from pykbroker.security.token_settings import TokenSettings
from pykbroker.security.zk_token_store import ZkTokenStore
from pykbroker.testkit.waiting import wait_until

SECRET = "the-cluster-secret"
ALICE, ADMIN, BOB = KafkaPrincipal("User", "alice"), KafkaPrincipal("User", "admin"), KafkaPrincipal("User", "bob")


@pytest.fixture
def brokers(zookeeper, request):
    """A token manager per broker (1 and 2), each on its own ZooKeeper session, one clock."""
    connect = zookeeper.connect_string(f"/{request.node.name}")
    clock, opened = FakeClock(), []

    def broker() -> tuple[DelegationTokenManager, KafkaZkClient]:
        client = KafkaZkClient(connect, session_timeout_ms=6000)
        client.start()
        client.create_top_level_paths()
        settings = TokenSettings(SECRET, max_lifetime_ms=100_000, expiry_time_ms=10_000, expiry_check_interval_ms=1000)
        manager = DelegationTokenManager(settings, ZkTokenStore(client, clock=clock), clock=clock)
        manager.startup()
        opened.append((manager, client))
        return manager, client

    yield broker, clock
    for manager, client in opened:
        manager.close()
        client.close()


def test_a_token_is_kept_in_kafkas_znode_and_known_on_every_broker(brokers):
    broker, clock = brokers
    (one, zk), (two, _) = broker(), broker()
    created = anyio.run(one.create, ALICE, ADMIN, [BOB], -1)
    assert created.error == ErrorCode.NONE
    stored = json.loads(zk.get_delegation_token_info(created.token_id))
    assert stored == {
        "version": 3,
        "owner": "User%3Aalice",
        "tokenRequester": "User%3Aadmin",
        "renewers": ["User%3Abob"],
        "issueTimestamp": clock.now,
        "maxTimestamp": clock.now + 100_000,
        "expiryTimestamp": clock.now + 10_000,
        "tokenId": created.token_id,
    }
    assert zk.get_token_change_notifications(), "a /delegation_token/token_changes notification"
    wait_until(lambda: two.cache.token(created.token_id), "broker 2 knows the token")
    credential = two.credential("SCRAM-SHA-512", created.token_id)
    assert credential is not None and credential.owner == "alice"
    assert created.hmac == two.hmac(created.token_id)
    assert len(created.token_id) == 22 and "=" not in created.token_id  # a UUID, URL-safe base64
    assert len(base64.b64encode(created.hmac)) == 88  # HmacSHA512


def test_a_renewal_on_one_broker_and_the_expiry_check_reach_the_other(brokers):
    broker, clock = brokers
    (one, _), (two, zk) = broker(), broker()
    created = anyio.run(one.create, ALICE, ALICE, [BOB], -1)
    wait_until(lambda: one.cache.token(created.token_id), "broker 1 knows the token")
    # broker 2 learns of the token through ZooKeeper's change notification, as Kafka's do
    wait_until(lambda: two.cache.token(created.token_id), "broker 2 knows the token")
    clock.now += 5_000
    error, expiry = anyio.run(two.renew, BOB, created.hmac, 20_000)
    assert (error, expiry) == (ErrorCode.NONE, clock.now + 20_000)
    wait_until(lambda: one.cache.token(created.token_id).expiry_timestamp == expiry, "broker 1 sees the renewal")

    clock.now = expiry + 1
    anyio.run(two.expire_tokens)  # the controller's check
    assert zk.get_delegation_token_info(created.token_id) is None
    wait_until(lambda: one.cache.token(created.token_id) is None, "broker 1 forgot the expired token")
    assert one.credential("SCRAM-SHA-256", created.token_id) is None


def test_a_broker_that_starts_later_loads_the_tokens(brokers):
    broker, _ = brokers
    one, _ = broker()
    created = anyio.run(one.create, ALICE, ALICE, [], -1)
    late, _ = broker()
    assert late.cache.token(created.token_id) == one.cache.token(created.token_id)
