"""The issue's acceptance cases with a real client (confluent-kafka / librdkafka): ACLs made with the
admin API; a user without WRITE gets TOPIC_AUTHORIZATION_FAILED, without READ on the group
GROUP_AUTHORIZATION_FAILED; super users may do everything; DENY wins over ALLOW.

Principals come from the test hook of `support.py` (client id `as-<user>`) until SASL lands."""
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from .support import AUTHORIZER, PrincipalBroker, client_id_of

ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with PrincipalBroker(tmp_path_factory.mktemp("clients"), {**AUTHORIZER, "super.users": "User:admin"}) as running:
        yield running


@pytest.fixture(scope="module")
def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap, "client.id": client_id_of("admin")})


def new_topic(admin) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    admin.create_topics([NewTopic(name, 1, 1)])[name].result(20)
    return name


def grant(admin, user, resource_type, name, operation, permission=ALLOW, pattern=ResourcePatternType.LITERAL):
    binding = AclBinding(resource_type, name, pattern, f"User:{user}", "*", operation, permission)
    for future in admin.create_acls([binding]).values():
        assert future.result(20) is None


def produce(broker, user, topic) -> KafkaError | None:
    producer = Producer({"bootstrap.servers": broker.bootstrap, "client.id": client_id_of(user),
                         "message.timeout.ms": 10000})
    outcome = []
    producer.produce(topic, b"value", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(20)
    assert outcome, "no delivery report"
    return outcome[0]


def consume(broker, user, topic, group, timeout=20.0):
    """The first message's value, or the KafkaError the consumer reports."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "client.id": client_id_of(user), "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
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


def test_a_user_with_the_right_acls_produces_and_consumes_in_a_group(broker, admin):
    topic = new_topic(admin)
    grant(admin, "alice", ResourceType.TOPIC, topic, AclOperation.WRITE)
    grant(admin, "alice", ResourceType.TOPIC, topic, AclOperation.READ)
    grant(admin, "alice", ResourceType.GROUP, "alice-", AclOperation.READ, pattern=ResourcePatternType.PREFIXED)
    assert produce(broker, "alice", topic) is None
    assert consume(broker, "alice", topic, "alice-group") == b"value"


def test_a_user_without_write_gets_topic_authorization_failed(broker, admin):
    topic = new_topic(admin)
    grant(admin, "bob", ResourceType.TOPIC, topic, AclOperation.READ)  # may see it, not write it
    error = produce(broker, "bob", topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED


def test_a_user_without_read_on_the_group_gets_group_authorization_failed(broker, admin):
    topic = new_topic(admin)
    assert produce(broker, "admin", topic) is None
    grant(admin, "carol", ResourceType.TOPIC, topic, AclOperation.READ)
    error = consume(broker, "carol", topic, "not-carols-group")
    assert isinstance(error, KafkaError) and error.code() == KafkaError.GROUP_AUTHORIZATION_FAILED


def test_super_users_may_do_everything(broker, admin):
    topic = new_topic(admin)
    grant(admin, "admin", ResourceType.TOPIC, topic, AclOperation.ALL, DENY)  # not even a DENY stops them
    assert produce(broker, "admin", topic) is None
    assert consume(broker, "admin", topic, "any-group") == b"value"
    assert len(admin.describe_acls(AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, None, None,
                                                    AclOperation.ANY, AclPermissionType.ANY)).result(20)) > 0


def test_deny_wins_over_allow(broker, admin):
    topic = new_topic(admin)
    grant(admin, "dave", ResourceType.TOPIC, "*", AclOperation.ALL)
    grant(admin, "dave", ResourceType.TOPIC, topic, AclOperation.WRITE, DENY)
    error = produce(broker, "dave", topic)
    assert error is not None and error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    other = new_topic(admin)
    assert produce(broker, "dave", other) is None


def test_acls_are_listed_and_deleted_with_the_admin_api(broker, admin):
    grant(admin, "erin", ResourceType.GROUP, "erin-group", AclOperation.READ)
    erin = AclBindingFilter(ResourceType.ANY, None, ResourcePatternType.ANY, "User:erin", None, AclOperation.ANY,
                            AclPermissionType.ANY)
    assert [(b.name, b.operation) for b in admin.describe_acls(erin).result(20)] == [("erin-group",
                                                                                       AclOperation.READ)]
    [deleted] = admin.delete_acls([erin]).values()
    assert [b.name for b in deleted.result(20)] == ["erin-group"]
    assert admin.describe_acls(erin).result(20) == []
    with pytest.raises(KafkaException):  # erin may not administer ACLs
        AdminClient({"bootstrap.servers": broker.bootstrap, "client.id": client_id_of("erin")}).describe_acls(
            erin).result(20)
