"""Three brokers whose only listener (and so the inter-broker one) is SASL_PLAINTEXT: brokers
authenticate to each other with PLAIN (their JAAS `username`/`password`), replicate and fail over;
a SCRAM user created through the controller reaches every broker through ZooKeeper, in Kafka's
layout (`/config/users/<user>` and a `/config/changes` notification); so does a delegation token
made through any broker (`/delegation_token/tokens/<id>` and a `/delegation_token/token_changes`
notification). The ACL authorizer runs with
`allow.everyone.if.no.acl.found=true` (resources without ACLs are open) and `User:admin` as the
super user; only the cluster resource gets ACLs, so that its APIs are refused to other users."""
from __future__ import annotations

import base64
import json
import time
import uuid
from pathlib import Path

import pytest
from kazoo.client import KazooClient

from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.zookeeper import ZooKeeperProcess, zookeeper_available

from .sasl_support import MECHANISMS, PLAIN_USERS, SaslBroker, confluent_conf, jaas_plain, jaas_scram

LISTENER = "sasl_plaintext"
OVERRIDES = {
    "listeners": "SASL_PLAINTEXT://127.0.0.1:0",
    "security.inter.broker.protocol": "SASL_PLAINTEXT",
    "sasl.enabled.mechanisms": MECHANISMS,
    "sasl.mechanism.inter.broker.protocol": "PLAIN",
    f"listener.name.{LISTENER}.plain.sasl.jaas.config": jaas_plain(PLAIN_USERS, "admin", "admin-secret"),
    f"listener.name.{LISTENER}.scram-sha-256.sasl.jaas.config": jaas_scram(),
    f"listener.name.{LISTENER}.scram-sha-512.sasl.jaas.config": jaas_scram(),
    "zookeeper.session.timeout.ms": "6000",
    "replica.lag.time.max.ms": "3000",
    "replica.fetch.wait.max.ms": "200",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "0",
    "connections.max.reauth.ms": "4000",  # inter-broker connections re-authenticate meanwhile
    "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
    "allow.everyone.if.no.acl.found": "true",
    "super.users": "User:admin",
    "delegation.token.secret.key": "the-cluster-token-secret",
}
ADMIN = ("PLAIN", "admin", "admin-secret")
TLS_CLIENT = Path(__file__).resolve().parents[1] / "java" / "TlsClient.java"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not zookeeper_available():
        pytest.skip("needs java and ZooKeeper (Debian's zookeeper package)")
    directory = tmp_path_factory.mktemp("sasl-cluster")
    with ZooKeeperProcess(directory / "zookeeper") as zookeeper:
        connect = zookeeper.connect_string("/sasl")
        brokers = {i: SaslBroker(directory / f"broker-{i}", {**OVERRIDES, "zookeeper.connect": connect},
                                 broker_id=i) for i in (1, 2, 3)}
        zk = KazooClient(hosts=connect)
        zk.start(timeout=30)
        try:
            for broker in brokers.values():
                broker.start()
            wait(lambda: len(zk.get_children("/brokers/ids")) == 3, "three brokers registered")
            yield brokers, zk
        finally:
            zk.stop()
            for broker in brokers.values():
                broker.stop()


def wait(condition, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except Exception:  # noqa: BLE001 - not yet
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def bootstrap(brokers) -> str:
    return ",".join(f"127.0.0.1:{b.ports['SASL_PLAINTEXT']}" for b in brokers.values() if b.is_running())


def isr(zk, topic: str) -> list[int]:
    return sorted(json.loads(zk.get(f"/brokers/topics/{topic}/partitions/0/state")[0])["isr"])


def leader(zk, topic: str) -> int:
    return json.loads(zk.get(f"/brokers/topics/{topic}/partitions/0/state")[0])["leader"]


def test_brokers_replicate_over_sasl_and_fail_over(cluster):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    brokers, zk = cluster
    topic = f"replicated-{uuid.uuid4().hex[:6]}"
    conf = confluent_conf(bootstrap(brokers), *ADMIN)
    admin = AdminClient(conf)
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(30)
    producer = Producer({**conf, "acks": "all"})
    for i in range(20):
        producer.produce(topic, f"before-{i}".encode())
    assert producer.flush(30) == 0
    wait(lambda: isr(zk, topic) == [1, 2, 3], "the followers in the ISR (they fetch over SASL)")

    old_leader = leader(zk, topic)
    brokers[old_leader].kill()
    wait(lambda: leader(zk, topic) not in (-1, old_leader), "a new leader")
    survivors = {i: b for i, b in brokers.items() if i != old_leader}
    producer = Producer({**confluent_conf(bootstrap(survivors), *ADMIN), "acks": "all"})
    for i in range(20):
        producer.produce(topic, f"after-{i}".encode())
    assert producer.flush(30) == 0

    consumer = Consumer({**confluent_conf(bootstrap(survivors), *ADMIN), "group.id": "g",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])  # no group: its topic needs 3 brokers
    values = []
    deadline = time.monotonic() + 60
    while len(values) < 40 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value().decode())
    consumer.close()
    assert values == [f"before-{i}" for i in range(20)] + [f"after-{i}" for i in range(20)]
    brokers[old_leader].start()
    wait(lambda: isr(zk, topic) == [1, 2, 3], "the restarted broker back in the ISR")


def test_a_scram_user_created_on_the_controller_authenticates_on_every_broker(cluster):
    from confluent_kafka import Producer

    from .sasl_support import create_scram_user

    brokers, zk = cluster
    running = {i: b for i, b in brokers.items() if b.is_running()}
    conf = confluent_conf(bootstrap(running), *ADMIN)
    conf.pop("bootstrap.servers")
    create_scram_user(bootstrap(running), "dave@example", "dave-secret", "SCRAM-SHA-512", **conf)
    stored = json.loads(zk.get("/config/users/dave%40example")[0])
    assert list(stored) == ["version", "config"] and stored["version"] == 1
    assert stored["config"]["SCRAM-SHA-512"].startswith("salt=")
    changes = [json.loads(zk.get(f"/config/changes/{c}")[0]) for c in zk.get_children("/config/changes")]
    assert {"version": 2, "entity_path": "users/dave%40example"} in changes
    for broker in running.values():
        errors = []
        producer = Producer({**confluent_conf(f"127.0.0.1:{broker.ports['SASL_PLAINTEXT']}", "SCRAM-SHA-512",
                                              "dave@example", "dave-secret"), "error_cb": errors.append})
        producer.produce("dave-topic", b"x")
        assert producer.flush(30) == 0, errors


def test_only_users_allowed_on_the_cluster_alter_or_describe_scram_credentials_on_any_broker(cluster):
    """alice (a PLAIN user, no ACLs) asks every broker to set admin's SCRAM password: the controller
    answers CLUSTER_AUTHORIZATION_FAILED, the others NOT_CONTROLLER (checked first, as Kafka does);
    describing credentials is refused on every broker; nothing changes in ZooKeeper."""
    from pykbroker.testkit.wire import WireClient

    from .support import log_in_plain, request_of

    brokers, zk = cluster
    running = {i: b for i, b in brokers.items() if b.is_running()}
    some_broker = next(iter(running.values()))
    with WireClient(some_broker.bootstrap_of("SASL_PLAINTEXT")) as admin:
        log_in_plain(admin, "admin", "admin-secret")
        acl = request_of(ApiKey.CREATE_ACLS).AclCreation(
            resource_type=4, resource_name="kafka-cluster", resource_pattern_type=3, principal="User:operator",
            host="*", operation=8, permission_type=3)  # the cluster now has an ACL: no longer open to all
        assert admin.request(ApiKey.CREATE_ACLS, 3, request_of(ApiKey.CREATE_ACLS, creations=[acl])
                             ).results[0].error_code == 0
    controller = json.loads(zk.get("/controller")[0])["brokerid"]
    upsertion = request_of(ApiKey.ALTER_USER_SCRAM_CREDENTIALS).ScramCredentialUpsertion(
        name="admin", mechanism=2, iterations=8192, salt=b"salt", salted_password=b"stolen")
    alter = request_of(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, deletions=[], upsertions=[upsertion])
    describe = request_of(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, users=[
        request_of(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS).UserName(name="admin")])
    for broker_id, broker in running.items():
        with WireClient(broker.bootstrap_of("SASL_PLAINTEXT")) as alice:
            log_in_plain(alice, "alice", "alice-secret")

            def refused() -> bool:
                return alice.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, describe).error_code == 31

            wait(refused, f"broker {broker_id} to apply the cluster ACL")
            [result] = alice.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, alter).results
            expected = 31 if broker_id == controller else 41  # CLUSTER_AUTHORIZATION_FAILED, NOT_CONTROLLER
            assert (result.user, result.error_code) == ("admin", expected)
    assert not zk.exists("/config/users/admin")


def log_in_with_token(client, token_id: str, token_hmac: bytes):
    """SCRAM-SHA-256 with Kafka's `tokenauth=true` extension on a raw connection; the last
    SaslAuthenticate answer (its error code, and the session's lifetime)."""
    from pykbroker.security.sasl.scram import SCRAM_SHA_256, ClientFirstMessage, ScramSaslClient, sasl_name

    from .support import request_of

    class TokenClient(ScramSaslClient):
        def first_message(self) -> bytes:
            self._first = ClientFirstMessage(sasl_name(self.username), self._nonce, "", "tokenauth=true")
            return f"n,,{self._first.bare()}".encode()

    scram = TokenClient(SCRAM_SHA_256, token_id, base64.b64encode(token_hmac).decode())
    handshake = client.request(ApiKey.SASL_HANDSHAKE, 1, request_of(ApiKey.SASL_HANDSHAKE, mechanism="SCRAM-SHA-256"))
    assert handshake.error_code == 0, handshake
    answer = client.request(ApiKey.SASL_AUTHENTICATE, 2,
                            request_of(ApiKey.SASL_AUTHENTICATE, auth_bytes=scram.first_message()))
    if answer.error_code:
        return answer
    final = scram.final_message(bytes(answer.auth_bytes))
    return client.request(ApiKey.SASL_AUTHENTICATE, 2, request_of(ApiKey.SASL_AUTHENTICATE, auth_bytes=final))


def test_a_delegation_token_made_on_one_broker_authenticates_on_every_broker_until_expired(cluster, tmp_path):
    """admin makes a token through one broker; it is in ZooKeeper in Kafka's layout, a Java client
    authenticated with it (`tokenauth="true"`) writes and reads through another broker, and a
    token-authenticated connection gets a session that ends at the token's expiry and may not ask
    for tokens itself; once expired through a third broker, no broker accepts the token."""
    from compat import java
    from pykbroker.testkit.wire import WireClient

    from .support import log_in_plain, request_of

    brokers, zk = cluster
    first, second, third = [b for b in brokers.values() if b.is_running()][:3]
    with WireClient(first.bootstrap_of("SASL_PLAINTEXT")) as admin:
        log_in_plain(admin, "admin", "admin-secret")
        created = admin.request(ApiKey.CREATE_DELEGATION_TOKEN, 3, request_of(
            ApiKey.CREATE_DELEGATION_TOKEN, owner_principal_type=None, owner_principal_name=None, renewers=[],
            max_lifetime_ms=-1))
    assert created.error_code == 0 and (created.principal_name, created.token_requester_principal_name) == (
        "admin", "admin")
    stored = json.loads(zk.get(f"/delegation_token/tokens/{created.token_id}")[0])
    assert (stored["version"], stored["owner"], stored["tokenId"]) == (3, "User%3Aadmin", created.token_id)
    assert created.token_id.encode() in [zk.get(f"/delegation_token/token_changes/{c}")[0]
                                         for c in zk.get_children("/delegation_token/token_changes")]

    classes = java.compile_sources([TLS_CLIENT], tmp_path / "classes")
    (tmp_path / "token.properties").write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{created.token_id}" password="{base64.b64encode(created.hmac).decode()}" tokenauth="true";\n')
    result = java.run_main(classes, "TlsClient", second.bootstrap_of("SASL_PLAINTEXT"),
                           f"token-{uuid.uuid4().hex[:8]}", str(tmp_path / "token.properties"))
    assert result.returncode == 0 and "PASS tls" in result.stdout, result.stdout + result.stderr[-3000:]

    with WireClient(second.bootstrap_of("SASL_PLAINTEXT")) as by_token:
        answer = log_in_with_token(by_token, created.token_id, bytes(created.hmac))
        assert answer.error_code == 0
        assert 0 < answer.session_lifetime_ms <= created.expiry_timestamp_ms - created.issue_timestamp_ms
        described = by_token.request(ApiKey.DESCRIBE_DELEGATION_TOKEN, 3,
                                     request_of(ApiKey.DESCRIBE_DELEGATION_TOKEN, owners=None))
        assert described.error_code == 64  # DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    with WireClient(third.bootstrap_of("SASL_PLAINTEXT")) as admin:
        log_in_plain(admin, "admin", "admin-secret")
        expired = admin.request(ApiKey.EXPIRE_DELEGATION_TOKEN, 2, request_of(
            ApiKey.EXPIRE_DELEGATION_TOKEN, hmac=created.hmac, expiry_time_period_ms=-1))
        assert expired.error_code == 0
    assert not zk.exists(f"/delegation_token/tokens/{created.token_id}")
    for broker in (first, second, third):
        def refused() -> bool:
            with WireClient(broker.bootstrap_of("SASL_PLAINTEXT")) as client:
                return log_in_with_token(client, created.token_id, bytes(created.hmac)).error_code == 58

        wait(refused, "every broker to forget the expired token")  # SASL_AUTHENTICATION_FAILED
