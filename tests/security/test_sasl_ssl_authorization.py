"""TLS, SASL and the ACL authorizer together, on one broker:

- a SASL_SSL listener (TLS first, then SASL) with SCRAM-SHA-512 users created through the admin
  API (AlterUserScramCredentials, by a PLAIN super user), for confluent-kafka and Java
  kafka-clients 3.9.1;
- the issue's first acceptance case end to end: right password and ACLs produce and consume in a
  group; a wrong password fails authentication; no WRITE: TOPIC_AUTHORIZATION_FAILED; no READ on
  the group: GROUP_AUTHORIZATION_FAILED; the super user may do everything; DENY wins over ALLOW;
  ACLs are listed and deleted with the admin API, which a user without ACLs may not use;
- on SASL_SSL the principal is the SASL user even when the client also shows a certificate;
- an mTLS listener (`ssl.client.auth=required`) whose principal is the certificate's DN after
  `ssl.principal.mapping.rules`, as the authorizer decides on it.
"""
from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest

from compat import java

from .certs import Pki
from .sasl_support import create_scram_user, jaas_plain, jaas_scram
from .tls_support import DEBUG_COMMAND, listener_ports, principals, ssl_overrides, wait_for_log

ADMIN = ("PLAIN", "admin", "admin-secret")
SCRAM = "SCRAM-SHA-512"
USERS = {user: f"{user}-secret" for user in ("alice", "bob", "carol", "dave", "erin", "ivan", "javauser")}
MAPPING = "RULE:^CN=(.*?),OU=eng(,.*)?$/$1/L,DEFAULT"
TLS_CLIENT = Path(__file__).resolve().parents[1] / "java" / "TlsClient.java"


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.broker = pki.issue("broker", "CN=broker,OU=test,O=pykbroker")
    pki.frank = pki.issue("frank", "CN=Frank,OU=eng,O=example", hosts=())
    pki.gina = pki.issue("gina", "CN=gina,OU=eng,O=example", hosts=())
    pki.hal = pki.issue("hal", "CN=hal,OU=ops,O=example", hosts=())
    return pki


@pytest.fixture(scope="module")
def broker(pki, tmp_path_factory):
    from pykbroker.testkit.process import BrokerProcess

    overrides = {
        "listeners": "SASL_SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,MTLS:SSL",
        **ssl_overrides(pki, pki.broker, "none"),
        "listener.name.sasl_ssl.ssl.client.auth": "requested",  # a certificate may come along
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mtls.ssl.principal.mapping.rules": MAPPING,
        "sasl.enabled.mechanisms": f"PLAIN,{SCRAM}",
        "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas_plain({"admin": "admin-secret"}),
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": jaas_scram(),
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:admin",
        "group.initial.rebalance.delay.ms": "0",
    }
    with BrokerProcess(tmp_path_factory.mktemp("sasl-ssl-broker"), overrides, command=DEBUG_COMMAND) as running:
        running.ports = listener_ports(running)
        running.ca = pki.ca_pem
        admin = admin_conf(running)
        admin.pop("bootstrap.servers")
        for user, password in USERS.items():
            create_scram_user(sasl_ssl(running), user, password, SCRAM, **admin)
        yield running


def sasl_ssl(broker) -> str:
    return f"127.0.0.1:{broker.ports['SASL_SSL']}"


def conf(broker, user: str, password: str | None = None, mechanism: str = SCRAM, **extra) -> dict:
    return {"bootstrap.servers": sasl_ssl(broker), "security.protocol": "SASL_SSL", "sasl.mechanism": mechanism,
            "sasl.username": user, "sasl.password": USERS[user] if password is None else password,
            "ssl.ca.location": str(broker.ca), **extra}


def admin_conf(broker) -> dict:
    mechanism, user, password = ADMIN
    return conf(broker, user, password, mechanism)


def mtls_conf(broker, issued) -> dict:
    return {"bootstrap.servers": f"127.0.0.1:{broker.ports['MTLS']}", "security.protocol": "SSL",
            "ssl.ca.location": str(broker.ca), "ssl.certificate.location": str(issued.cert_pem),
            "ssl.key.location": str(issued.key_pem)}


@pytest.fixture(scope="module")
def admin(broker):
    from confluent_kafka.admin import AdminClient

    return AdminClient(admin_conf(broker))


def new_topic(admin) -> str:
    from confluent_kafka.admin import NewTopic

    name = f"t-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(20)
    return name


def grant(admin, principal: str, resource_type, name: str, operation, permission=None, pattern=None) -> None:
    from confluent_kafka.admin import AclBinding, AclPermissionType, ResourcePatternType

    binding = AclBinding(resource_type, name, pattern or ResourcePatternType.LITERAL, principal, "*", operation,
                         permission or AclPermissionType.ALLOW)
    for future in admin.create_acls([binding]).values():
        assert future.result(20) is None


def produce(client_conf: dict, topic: str):
    """None when the record was written, else the delivery report's KafkaError."""
    from confluent_kafka import Producer

    outcome = []
    producer = Producer({**client_conf, "message.timeout.ms": 10000})
    producer.produce(topic, b"value", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "no delivery report"
    return outcome[0]


def consume(client_conf: dict, topic: str, group: str, timeout: float = 20.0):
    """The first message's value (committed in `group`), or the KafkaError the consumer reports."""
    from confluent_kafka import Consumer

    consumer = Consumer({**client_conf, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error():
                return message.error()
            consumer.commit(message, asynchronous=False)
            return message.value()
        return None
    finally:
        consumer.close()


def authenticated_as(broker, principal: str) -> bool:
    return f"authenticated as {principal}" in broker.log_text()


# -- the issue's first acceptance case: SASL_SSL, SCRAM-SHA-512, ACLs ----------------------------


def test_right_password_and_acls_produce_and_consume_in_a_group(broker, admin):
    from confluent_kafka.admin import AclOperation, ResourcePatternType, ResourceType

    topic = new_topic(admin)
    grant(admin, "User:alice", ResourceType.TOPIC, topic, AclOperation.WRITE)
    grant(admin, "User:alice", ResourceType.TOPIC, topic, AclOperation.READ)
    grant(admin, "User:alice", ResourceType.GROUP, "alice-", AclOperation.READ, pattern=ResourcePatternType.PREFIXED)
    assert produce(conf(broker, "alice"), topic) is None
    assert consume(conf(broker, "alice"), topic, "alice-group") == b"value"
    assert authenticated_as(broker, "User:alice")


def test_a_wrong_password_fails_authentication(broker):
    from confluent_kafka import KafkaError, Producer

    errors = []
    producer = Producer({**conf(broker, "alice", "not-alices-password"), "error_cb": errors.append})
    for _ in range(50):
        producer.poll(0.2)
        if errors:
            break
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "Authentication failed" in errors[0].str()
    wait_for_log(broker, "SASL authentication failed")


def test_a_user_without_write_gets_topic_authorization_failed(broker, admin):
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AclOperation, ResourceType

    topic = new_topic(admin)
    grant(admin, "User:bob", ResourceType.TOPIC, topic, AclOperation.READ)  # may see it, not write it
    error = produce(conf(broker, "bob"), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_user_without_read_on_the_group_gets_group_authorization_failed(broker, admin):
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AclOperation, ResourceType

    topic = new_topic(admin)
    assert produce(admin_conf(broker), topic) is None
    grant(admin, "User:carol", ResourceType.TOPIC, topic, AclOperation.READ)
    error = consume(conf(broker, "carol"), topic, "not-carols-group")
    assert error is not None and not isinstance(error, bytes)
    assert error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_the_super_user_may_do_everything(broker, admin):
    from confluent_kafka.admin import (
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        ResourcePatternType,
        ResourceType,
    )

    topic = new_topic(admin)
    grant(admin, "User:admin", ResourceType.TOPIC, topic, AclOperation.ALL, AclPermissionType.DENY)  # ignored
    assert produce(admin_conf(broker), topic) is None
    assert consume(admin_conf(broker), topic, "any-group") == b"value"
    every_acl = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY,
                                 AclPermissionType.ANY)
    assert len(admin.describe_acls(every_acl).result(20)) > 0


def test_deny_wins_over_allow(broker, admin):
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AclOperation, AclPermissionType, ResourceType

    topic, other = new_topic(admin), new_topic(admin)
    grant(admin, "User:dave", ResourceType.TOPIC, "*", AclOperation.ALL)
    grant(admin, "User:dave", ResourceType.TOPIC, topic, AclOperation.WRITE, AclPermissionType.DENY)
    error = produce(conf(broker, "dave"), topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert produce(conf(broker, "dave"), other) is None


def test_acls_are_listed_and_deleted_with_the_admin_api_by_the_super_user_only(broker, admin):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import (
        AclBinding,
        AclBindingFilter,
        AclOperation,
        AclPermissionType,
        AdminClient,
        ResourcePatternType,
        ResourceType,
    )

    grant(admin, "User:erin", ResourceType.GROUP, "erin-group", AclOperation.READ)
    erin = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, "User:erin", None, AclOperation.ANY,
                            AclPermissionType.ANY)
    assert [(b.name, b.operation) for b in admin.describe_acls(erin).result(20)] == [("erin-group",
                                                                                       AclOperation.READ)]
    [deleted] = admin.delete_acls([erin]).values()
    assert [b.name for b in deleted.result(20)] == ["erin-group"]
    assert admin.describe_acls(erin).result(20) == []
    # erin may not administer ACLs. (librdkafka hands DescribeAcls' CLUSTER_AUTHORIZATION_FAILED back
    # as an empty list; test_acl_apis.py checks that answer on the wire.)
    as_erin = AdminClient(conf(broker, "erin"))  # kept: a client destroyed early fails its futures
    for future in [*as_erin.create_acls([AclBinding(ResourceType.GROUP, "erin-group", ResourcePatternType.LITERAL,
                                                     "User:erin", "*", AclOperation.READ,
                                                     AclPermissionType.ALLOW)]).values(),
                   *as_erin.delete_acls([erin]).values()]:
        with pytest.raises(KafkaException, match="CLUSTER_AUTHORIZATION_FAILED"):
            future.result(20)


def test_on_sasl_ssl_the_principal_is_the_sasl_user_not_the_certificate(broker, admin, pki):
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AclOperation, ResourceType

    topic = new_topic(admin)
    for name in ("User:CN=Frank,OU=eng,O=example", "User:frank"):  # the certificate's names may write
        grant(admin, name, ResourceType.TOPIC, topic, AclOperation.WRITE)
    with_certificate = conf(broker, "ivan", **{"ssl.certificate.location": str(pki.frank.cert_pem),
                                                "ssl.key.location": str(pki.frank.key_pem)})
    error = produce(with_certificate, topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert authenticated_as(broker, "User:ivan")


# -- SCRAM-SHA-512 over SASL_SSL from Java kafka-clients 3.9.1 --------------------------------------


def test_java_kafka_clients_over_sasl_ssl_with_scram_sha_512(broker, admin, tmp_path):
    from confluent_kafka.admin import AclOperation, ResourceType

    topic = new_topic(admin)
    for operation in (AclOperation.WRITE, AclOperation.READ):
        grant(admin, "User:javauser", ResourceType.TOPIC, topic, operation)
    grant(admin, "User:javauser", ResourceType.GROUP, f"{topic}-group", AclOperation.READ)
    classes = java.compile_sources([TLS_CLIENT], tmp_path / "classes")  # any security.protocol
    properties = [
        "security.protocol=SASL_SSL",
        f"sasl.mechanism={SCRAM}",
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="javauser" password="{USERS["javauser"]}";',
        "ssl.truststore.type=PEM",
        f"ssl.truststore.location={broker.ca}",
    ]
    (tmp_path / "client.properties").write_text("\n".join(properties) + "\n")
    result = java.run_main(classes, "TlsClient", sasl_ssl(broker), topic, str(tmp_path / "client.properties"))
    assert result.returncode == 0 and "PASS tls" in result.stdout, result.stdout + result.stderr[-3000:]
    assert authenticated_as(broker, "User:javauser")


# -- mTLS: the certificate's mapped name is the principal the ACLs name ---------------------------


def test_mtls_principal_is_the_mapped_certificate_name_in_acl_decisions(broker, admin, pki):
    from confluent_kafka import KafkaError
    from confluent_kafka.admin import AclOperation, ResourceType

    topic = new_topic(admin)
    grant(admin, "User:frank", ResourceType.TOPIC, topic, AclOperation.WRITE)  # CN=Frank,OU=eng,... -> frank
    grant(admin, "User:CN=hal,OU=ops,O=example", ResourceType.TOPIC, topic, AclOperation.WRITE)  # no rule: DEFAULT
    before = len(principals(broker, "MTLS"))
    assert produce(mtls_conf(broker, pki.frank), topic) is None
    assert produce(mtls_conf(broker, pki.hal), topic) is None
    error = produce(mtls_conf(broker, pki.gina), topic)  # User:gina: no ACL
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    seen = set(principals(broker, "MTLS")[before:])
    assert {"User:frank", "User:CN=hal,OU=ops,O=example", "User:gina"} <= seen
