"""Acceptance: administering consumer groups with kafka-python's KafkaAdminClient and
confluent-kafka's AdminClient gives Apache Kafka 3.9's answers: listing (with state and type
filters), describing (members, client ids and hosts, decoded assignments), listing committed
offsets beside the end offsets (consumer lag), deleting offsets and deleting groups.
"""
from __future__ import annotations

import pytest

from .clients import KafkaPython, Record, create_topic
from .coordinator.live import MemberProcess, group_broker, wait_until

PARTITIONS = 3
TOPIC = "admin-orders"
RECORDS = 12


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with group_broker(tmp_path_factory.mktemp("admin")) as running:
        create_topic(running.bootstrap, TOPIC, PARTITIONS)
        KafkaPython.produce(running.bootstrap, TOPIC, [
            Record(b"k", f"v{i}".encode(), partition=i % PARTITIONS) for i in range(RECORDS)])
        yield running


@pytest.fixture(scope="module")
def active_group(broker):
    """"busy": one kafka-python member owning every partition."""
    member = MemberProcess("kafka-python", broker.bootstrap, "busy", TOPIC)
    try:
        wait_until(lambda: member.assignment == frozenset(range(PARTITIONS)), what="assignment")
        yield member
    finally:
        member.stop()


@pytest.fixture(scope="module")
def idle_group(broker):
    """"idle": an Empty group that committed offsets 1, 2, 3 on partitions 0, 1, 2."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="idle",
                             enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(TOPIC, p): OffsetAndMetadata(p + 1, "", -1)
                         for p in range(PARTITIONS)})
    finally:
        consumer.close()
    return "idle"


@pytest.fixture
def kafka_admin(broker):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    yield admin
    admin.close()


@pytest.fixture
def confluent_admin(broker):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": broker.bootstrap})


# -- kafka-python ------------------------------------------------------------------------------

def test_kafka_python_lists_groups_with_state_and_type(kafka_admin, active_group, idle_group):
    listed = {g["group_id"]: g for g in kafka_admin.list_groups()}
    assert listed["busy"] == {"group_id": "busy", "protocol_type": "consumer",
                              "group_state": "Stable", "group_type": "classic"}
    assert listed["idle"]["group_state"] == "Empty" and listed["idle"]["protocol_type"] == ""
    assert [g["group_id"] for g in kafka_admin.list_groups(states_filter=["Stable"])] == ["busy"]


def test_kafka_python_describes_a_stable_group(kafka_admin, active_group):
    described = kafka_admin.describe_groups(["busy"], include_authorized_operations=True)["busy"]
    assert (described["group_state"], described["protocol_type"], described["protocol_data"]) \
        == ("Stable", "consumer", "range")
    [member] = described["members"]
    assert member["client_id"].startswith("kafka-python") and member["client_host"] == "/127.0.0.1"
    assert member["member_metadata"]["topics"] == [TOPIC]
    assert member["member_assignment"]["assigned_partitions"] == [
        {"topic": TOPIC, "partitions": list(range(PARTITIONS))}]
    assert sorted(described["authorized_operations"]) == ["DELETE", "DESCRIBE", "READ"]
    assert described["error"] is None


def test_kafka_python_lists_committed_offsets_and_lag(broker, kafka_admin, idle_group):
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec

    committed = kafka_admin.list_group_offsets({"idle": None})["idle"]
    assert {tp.partition: c.offset for tp, c in committed.items()} == {0: 1, 1: 2, 2: 3}
    ends = kafka_admin.list_partition_offsets({TopicPartition(TOPIC, p): OffsetSpec.LATEST
                                               for p in range(PARTITIONS)})
    lag = {tp.partition: ends[tp].offset - c.offset for tp, c in committed.items()}
    assert lag == {0: 3, 1: 2, 2: 1}


def test_kafka_python_deletes_offsets_and_groups(broker, kafka_admin, active_group):
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="doomed",
                             enable_auto_commit=False)
    consumer.commit({TopicPartition(TOPIC, 0): OffsetAndMetadata(1, "", -1),
                     TopicPartition(TOPIC, 1): OffsetAndMetadata(1, "", -1)})
    consumer.close()
    result = kafka_admin.delete_group_offsets("doomed", [TopicPartition(TOPIC, 0)])
    assert [e.__name__ for e in result.values()] == ["NoError"]
    remaining = kafka_admin.list_group_offsets({"doomed": None})["doomed"]
    assert list(remaining) == [TopicPartition(TOPIC, 1)]
    assert kafka_admin.delete_groups(["doomed", "busy", "never-existed"]) == {
        "doomed": "OK", "busy": "NonEmptyGroupError", "never-existed": "GroupIdNotFoundError"}
    assert "doomed" not in {g["group_id"] for g in kafka_admin.list_groups()}


# -- confluent-kafka ---------------------------------------------------------------------------

def test_confluent_lists_groups_by_state(confluent_admin, active_group, idle_group):
    from confluent_kafka import ConsumerGroupState

    listing = confluent_admin.list_consumer_groups(request_timeout=10).result()
    states = {g.group_id: (g.state, g.is_simple_consumer_group) for g in listing.valid}
    assert states["busy"] == (ConsumerGroupState.STABLE, False)
    assert states["idle"] == (ConsumerGroupState.EMPTY, True)
    empty_only = confluent_admin.list_consumer_groups(
        states={ConsumerGroupState.EMPTY}, request_timeout=10).result()
    assert "busy" not in {g.group_id for g in empty_only.valid}


def test_confluent_describes_a_stable_group(confluent_admin, active_group):
    from confluent_kafka import ConsumerGroupState

    described = confluent_admin.describe_consumer_groups(["busy"], request_timeout=10)["busy"].result()
    assert (described.state, described.partition_assignor) == (ConsumerGroupState.STABLE, "range")
    assert described.coordinator.id == 0 and not described.is_simple_consumer_group
    [member] = described.members
    assert member.host == "/127.0.0.1" and member.client_id.startswith("kafka-python")
    assert sorted(tp.partition for tp in member.assignment.topic_partitions) == [0, 1, 2]


def test_confluent_lists_committed_offsets(confluent_admin, idle_group):
    from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition

    request = [ConsumerGroupTopicPartitions("idle", [TopicPartition(TOPIC, p)
                                                     for p in range(PARTITIONS)])]
    result = confluent_admin.list_consumer_group_offsets(request, request_timeout=10)["idle"].result()
    assert {tp.partition: tp.offset for tp in result.topic_partitions} == {0: 1, 1: 2, 2: 3}
    everything = confluent_admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions("idle")], request_timeout=10)["idle"].result()
    assert sorted((tp.topic, tp.partition) for tp in everything.topic_partitions) == [
        (TOPIC, 0), (TOPIC, 1), (TOPIC, 2)]


def test_confluent_deletes_only_empty_groups(confluent_admin, active_group, broker):
    from confluent_kafka import KafkaException
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="disposable",
                             enable_auto_commit=False)
    consumer.commit({TopicPartition(TOPIC, 2): OffsetAndMetadata(5, "", -1)})
    consumer.close()
    futures = confluent_admin.delete_consumer_groups(["disposable", "busy"], request_timeout=10)
    assert futures["disposable"].result() is None
    with pytest.raises(KafkaException) as failure:
        futures["busy"].result()
    assert failure.value.args[0].name() == "NON_EMPTY_GROUP"
