"""Delegation tokens (KIP-48, KIP-373) on pykbroker and on Kafka 3.9.0, side by side: Kafka's own
`DelegationTokenCommand` creates, describes, renews and expires tokens on both and prints the same
(after token ids, HMACs and dates are normalised), and a Java client (kafka-clients 3.9.1:
librdkafka sends no SCRAM extensions, so it cannot use tokens) authenticates with a token over
SCRAM (`tokenauth="true"`, the token id as user name, the HMAC as password) as the token's owner,
until the token expires and the expiry check removes it.

Both brokers have the compatibility suite's secured set-up (`compat/security_setup.py`: PLAIN on
SASL_PLAINTEXT with the super user admin, SCRAM-SHA-512 on SASL_SSL, the ACL authorizer) plus
`delegation.token.secret.key` and a one-second `delegation.token.expiry.check.interval.ms`.
"""
from __future__ import annotations

import base64
import re
import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from compat import java
from compat.realkafka import REALKAFKA, unavailable
from compat.security_scenarios import Setup
from compat.security_setup import PLAIN_USERS, SCRAM_MECHANISM, SCRAM_USERS, SecureKafkaBroker, SecurePykBroker
from compat.tool_shell import ToolShell
from pykbroker.security.delegation_tokens import token_hmac
from pykbroker.testkit.waiting import wait_until
from tests.ci import skip_or_fail_in_ci

TOKEN_SETTINGS = {
    "delegation.token.secret.key": "token-secret-of-the-tests",
    "delegation.token.expiry.check.interval.ms": "1000",
}
TOOL = "org.apache.kafka.tools.DelegationTokenCommand"
ACL_TOOL = "kafka.admin.AclCommand"
TLS_CLIENT = Path(__file__).resolve().parents[1] / "java" / "TlsClient.java"
QUIET_LOG4J = "log4j.rootLogger=OFF\n"
HMAC = re.compile(r"[A-Za-z0-9+/]{86}==")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")
CREATED = re.compile(r"Created delegation token with tokenId : (\S+)")


class TokenPykBroker(SecurePykBroker):
    def __init__(self, directory) -> None:
        super().__init__(directory)
        self.overrides.update(TOKEN_SETTINGS)


class TokenKafkaBroker(SecureKafkaBroker):
    def extra_settings(self, port: int) -> dict[str, str]:
        return {**super().extra_settings(port), **TOKEN_SETTINGS}


@pytest.fixture(scope="module")
def kafka_libs() -> Path:
    reason = unavailable()
    if reason:
        skip_or_fail_in_ci(reason)
    return REALKAFKA / "libs"


@pytest.fixture(scope="module")
def brokers(kafka_libs, tmp_path_factory):
    """pykbroker and Kafka 3.9.0, each with the SCRAM users alice, bob and carol (Kafka starts
    meanwhile, on another thread: it takes the longest)."""
    theirs = TokenKafkaBroker(tmp_path_factory.mktemp("tokens-kafka"))
    with ThreadPoolExecutor(1) as pool:
        kafka_started = pool.submit(lambda: Setup(theirs.start()).create_scram_users())
        try:
            with TokenPykBroker(tmp_path_factory.mktemp("tokens-pykbroker")) as ours:
                Setup(ours).create_scram_users()
                kafka_started.result()
                yield {"pykbroker": ours, "kafka": theirs}
        finally:
            kafka_started.exception()  # started or failed: stop what there is
            theirs.discard()  # killed: nothing reads its data afterwards


@pytest.fixture(scope="module")
def tls_client(tmp_path_factory) -> Path:
    return java.compile_sources([TLS_CLIENT], tmp_path_factory.mktemp("token-java-classes"))


class Side:
    """One broker, with Kafka's token tool run against it as a given user."""

    def __init__(self, broker, session: ToolShell, directory: Path) -> None:
        self.broker = broker
        self.session = session
        self.directory = directory
        self.tokens: dict[str, str] = {}  # token id -> its label in the normalised output
        self.hmacs: dict[str, str] = {}  # label -> HMAC

    def properties(self, user: str, *, password: str | None = None, token: bool = False) -> list[str]:
        """A client's settings: admin and dave over PLAIN, the SCRAM users (or a token) over SCRAM."""
        if user in PLAIN_USERS and not token:
            module, mechanism, protocol = "plain.PlainLoginModule", "PLAIN", "SASL_PLAINTEXT"
            listener, secret = "PLAIN", PLAIN_USERS[user]
        else:
            module, mechanism, protocol = "scram.ScramLoginModule", SCRAM_MECHANISM, "SASL_SSL"
            listener, secret = "SCRAM", password if password is not None else SCRAM_USERS[user]
        extension = ' tokenauth="true"' if token else ""
        lines = [
            f"bootstrap.servers={self.broker.bootstrap_of(listener)}",
            f"security.protocol={protocol}",
            f"sasl.mechanism={mechanism}",
            f"sasl.jaas.config=org.apache.kafka.common.security.{module} required "
            f'username="{user}" password="{secret}"{extension};',
        ]
        if protocol == "SASL_SSL":
            lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={self.broker.pki.ca}"]
        return lines

    def tool(self, user: str, *args: str, password: str | None = None, token: bool = False) -> tuple[int, list[str]]:
        """DelegationTokenCommand as `user` (a token's id with `token`): its exit status and its
        output, normalised (token ids as labels, HMACs and dates replaced, columns collapsed)."""
        lines = self.properties(user, password=password, token=token)
        config = self.directory / f"{uuid.uuid4().hex[:8]}.properties"
        config.write_text("\n".join(lines) + "\n")
        bootstrap = lines[0].split("=", 1)[1]
        done = self.session.run(TOOL, "--bootstrap-server", bootstrap, "--command-config", str(config), *args)
        status, out, err = done.status, done.out, done.err
        for token_id in CREATED.findall(out):
            label = f"<token-{len(self.tokens) + 1}>"
            self.tokens[token_id] = label
            for line in out.splitlines():
                if line.startswith(token_id):
                    self.hmacs[label] = line.split()[1]
        return status, self.normalised(out + err)

    def acl(self, *args: str) -> int:
        """Kafka's AclCommand as the super user: its exit status."""
        lines = self.properties("admin")
        config = self.directory / "acl-admin.properties"
        config.write_text("\n".join(lines) + "\n")
        done = self.session.run(ACL_TOOL, "--bootstrap-server", lines[0].split("=", 1)[1],
                                "--command-config", str(config), *args)
        return done.status

    def normalised(self, text: str) -> list[str]:
        for token_id, label in self.tokens.items():
            text = text.replace(token_id, label)
        text = DATE.sub("<date>", HMAC.sub("<hmac>", text))
        lines = [" ".join(line.split()) for line in text.splitlines()]
        # the first line of an error is the tool's; a stack trace below it is the client's
        kept = [line for line in lines if line and not line.startswith(("at ", "..."))]
        return sorted(kept)  # the order of listed tokens is a hash map's on Kafka

    def hmac(self, label: str) -> str:
        return self.hmacs[label]

    def token_id(self, label: str) -> str:
        return next(token_id for token_id, known in self.tokens.items() if known == label)


@pytest.fixture(scope="module")
def tool_session(kafka_libs, tmp_path_factory):
    session = ToolShell(tmp_path_factory.mktemp("tool-session"), libs=kafka_libs, log4j=QUIET_LOG4J).start()
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="module")
def sides(brokers, tool_session, tmp_path_factory):
    return {name: Side(broker, tool_session, tmp_path_factory.mktemp(f"tool-{name}")) for name, broker in brokers.items()}


def both(sides, user: str, *args: str, **options) -> tuple[int, list[str]]:
    """The tool's run on both brokers; the same exit status and output asserted, pykbroker's returned."""
    ours = sides["pykbroker"].tool(user, *args, **options)
    theirs = sides["kafka"].tool(user, *args, **options)
    assert ours == theirs, f"pykbroker: {ours}\nKafka 3.9.0: {theirs}"
    return ours


def both_with_hmac(sides, user: str, label: str, *args: str) -> tuple[int, list[str]]:
    """`args` with each broker's own HMAC of the token `label` after `--hmac`."""
    ours = sides["pykbroker"].tool(user, *args, "--hmac", sides["pykbroker"].hmac(label))
    theirs = sides["kafka"].tool(user, *args, "--hmac", sides["kafka"].hmac(label))
    assert ours == theirs, f"pykbroker: {ours}\nKafka 3.9.0: {theirs}"
    return ours


def test_kafkas_token_tool_creates_describes_renews_and_expires_tokens_as_on_kafka(sides):
    """admin creates a token of its own and one owned by alice (KIP-373), both renewable by bob;
    alice may not create one for carol (no CREATE_TOKENS on User:carol); carol sees alice's token
    only once she has DESCRIBE_TOKENS on User:alice; bob, a renewer, sees both; bob renews alice's;
    carol may not renew admin's; alice expires hers at once; alice then sees none."""
    status, out = both(sides, "admin", "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob")
    assert status == 0 and any("<token-1> <hmac> User:admin User:admin [User:bob]" in line for line in out), out
    status, out = both(sides, "admin", "--create", "--max-life-time-period", "-1", "--owner-principal", "User:alice",
                       "--renewer-principal", "User:bob")
    assert status == 0 and any("<token-2> <hmac> User:alice User:admin [User:bob]" in line for line in out), out
    status, out = both(sides, "alice", "--create", "--max-life-time-period", "-1", "--owner-principal", "User:carol")
    assert status != 0 and any("DelegationTokenAuthorizationException" in line for line in out), out
    status, out = both(sides, "carol", "--describe", "--owner-principal", "User:alice")
    assert status == 0 and "Total number of tokens : 0" in out, out
    for side in sides.values():  # DESCRIBE_TOKENS on User:alice lets carol see alice's tokens (KIP-373)
        assert side.acl("--add", "--allow-principal", "User:carol", "--operation", "DescribeTokens",
                        "--user-principal", "User:alice") == 0
    status, out = both(sides, "carol", "--describe", "--owner-principal", "User:alice")
    assert status == 0 and "Total number of tokens : 1" in out, out
    status, out = both(sides, "bob", "--describe", "--owner-principal", "User:bob")
    assert status == 0 and "Total number of tokens : 2" in out, out
    for side in sides.values():  # the HMAC is HmacSHA512(secret, token id), on Kafka as here
        for token_id in side.tokens:
            expected = token_hmac(token_id, TOKEN_SETTINGS["delegation.token.secret.key"])
            assert base64.b64decode(side.hmac(side.tokens[token_id])) == expected
    status, out = both_with_hmac(sides, "bob", "<token-2>", "--renew", "--renew-time-period", "-1")
    assert status == 0, out
    status, out = both_with_hmac(sides, "carol", "<token-1>", "--renew", "--renew-time-period", "-1")
    assert status != 0 and any("DelegationTokenOwnerMismatchException" in line for line in out), out
    status, out = both_with_hmac(sides, "alice", "<token-2>", "--expire", "--expiry-time-period", "-1")
    assert status == 0, out
    status, out = both(sides, "alice", "--describe", "--owner-principal", "User:alice")
    assert status == 0 and "Total number of tokens : 0" in out, out


def run_client(classes: Path, side: Side, label: str, directory: Path) -> subprocess.CompletedProcess:
    """TlsClient (produce 5 records, read them back in a group) authenticated with the token."""
    properties = side.properties(side.token_id(label), password=side.hmac(label), token=True)
    (directory / "token.properties").write_text("\n".join(properties[1:]) + "\n")
    topic = f"tokens-{uuid.uuid4().hex[:8]}"
    return java.run_main(classes, "TlsClient", side.broker.bootstrap_of("SCRAM"), topic,
                         str(directory / "token.properties"))


def token_client_until_expiry(side: Side, name: str, tls_client: Path, directory: Path) -> tuple[int, list[str]]:
    """On one broker: a token of admin serves the Java client until it is expired and removed;
    returns what the tool printed when asked for tokens with the token itself."""
    directory.mkdir()
    status, out = side.tool("admin", "--create", "--max-life-time-period", "-1")
    assert status == 0, out
    label = side.tokens[next(reversed(side.tokens))]
    passed = run_client(tls_client, side, label, directory)
    assert passed.returncode == 0 and "PASS tls" in passed.stdout, passed.stdout + passed.stderr[-3000:]

    asked_with_the_token = side.tool(side.token_id(label), "--describe", password=side.hmac(label), token=True)

    status, out = side.tool("admin", "--expire", "--expiry-time-period", "0", "--hmac", side.hmac(label))
    assert status == 0, out

    def removed() -> bool:
        status, out = side.tool("admin", "--describe", "--owner-principal", "User:admin")
        return status == 0 and not any(label in line for line in out)

    wait_until(removed, f"the expiry check removed the token on {name}", timeout=60, interval=1)
    refused = run_client(tls_client, side, label, directory)
    assert refused.returncode != 0 and "SaslAuthenticationException" in refused.stdout + refused.stderr, (
        refused.stdout + refused.stderr[-3000:]
    )
    return asked_with_the_token


def test_a_java_client_authenticates_with_a_token_as_its_owner_until_it_expires(sides, tls_client, tmp_path):
    """A token of admin (the super user: only as admin may the client write and read, with the
    authorizer on) serves a Java client over SCRAM-SHA-512; a connection authenticated with a
    token may not ask for tokens itself; once expired (period 0) the expiry check removes the
    token and the client's authentication fails. On pykbroker and on Kafka 3.9.0 alike."""
    with ThreadPoolExecutor(max_workers=len(sides)) as pool:  # both brokers at once: each side is its own
        running = {name: pool.submit(token_client_until_expiry, side, name, tls_client, tmp_path / name)
                   for name, side in sides.items()}
        outputs = {name: future.result() for name, future in running.items()}
    status, out = outputs["pykbroker"]
    assert outputs["pykbroker"] == outputs["kafka"]
    assert status != 0 and any("not allowed" in line for line in out), out
