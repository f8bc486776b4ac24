"""The cluster and its logs: DescribeCluster, DescribeLogDirs and DeleteRecords.

Records are produced with kafka-python; log dirs and record deletion go through the replica
manager. Expected codes and messages are Kafka 3.9's.
"""
import os

import pytest
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition

from pykbroker.handlers.support.auth import OPERATIONS_NOT_REQUESTED
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient

DescribeCluster = messages.request(ApiKey.DESCRIBE_CLUSTER).cls
DescribeLogDirs = messages.request(ApiKey.DESCRIBE_LOG_DIRS).cls
DeleteRecords = messages.request(ApiKey.DELETE_RECORDS).cls
CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls


def request(broker, api_key, version, body):
    with WireClient(broker.bootstrap) as client:
        return client.request(api_key, version, body)


def create_topic(broker, name, partitions=1, configs=None):
    topic = CreateTopics.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=1,
        configs=[CreateTopics.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])
    [result] = request(broker, ApiKey.CREATE_TOPICS, 7, CreateTopics(topics=[topic])).topics
    assert result.error_code in (0, 36), result  # created, or there already


def produce(broker, topic, count, partition=0):
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap)
    try:
        for index in range(count):
            producer.send(topic, value=b"record-%d" % index, partition=partition)
        producer.flush(timeout=10)
    finally:
        producer.close()


def delete_records(broker, topic, offsets, version=2):
    body = DeleteRecords(topics=[DeleteRecords.DeleteRecordsTopic(name=topic, partitions=[
        DeleteRecords.DeleteRecordsPartition(partition_index=index, offset=offset)
        for index, offset in offsets.items()])], timeout_ms=30000)
    [result] = request(broker, ApiKey.DELETE_RECORDS, version, body).topics
    return {p.partition_index: (p.error_code, p.low_watermark) for p in result.partitions}


def describe_log_dirs(broker, topics=None, version=4):
    body = DescribeLogDirs(topics=None if topics is None else [
        DescribeLogDirs.DescribableLogDirTopic(topic=name, partitions=partitions) for name, partitions in topics.items()])
    return request(broker, ApiKey.DESCRIBE_LOG_DIRS, version, body)


def describe_cluster(broker, version=1, **fields):
    return request(broker, ApiKey.DESCRIBE_CLUSTER, version, DescribeCluster(**fields))


# --------------------------------------------------------------------------------------------
# DescribeCluster

def test_kafka_python_describes_the_cluster_with_its_authorized_operations(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        cluster = admin.describe_cluster()
    finally:
        admin.close()
    assert cluster["controller_id"] == 0 and cluster["cluster_id"]
    assert cluster["brokers"] == [{"broker_id": 0, "host": "127.0.0.1", "port": broker.port, "rack": None}]
    assert "DESCRIBE" in cluster["authorized_operations"]


def test_confluent_describes_the_cluster(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    cluster = admin.describe_cluster(include_authorized_operations=True).result(timeout=10)
    assert [(node.id, node.host, node.port) for node in cluster.nodes] == [(0, "127.0.0.1", broker.port)]
    assert cluster.controller.id == 0 and cluster.cluster_id
    assert cluster.authorized_operations


@pytest.mark.parametrize("version", [0, 1])
def test_both_versions_describe_the_broker_endpoints(broker, version):
    response = describe_cluster(broker, version)
    assert (response.error_code, response.controller_id) == (0, 0)
    assert [(b.broker_id, b.host, b.port) for b in response.brokers] == [(0, "127.0.0.1", broker.port)]
    assert response.cluster_authorized_operations == OPERATIONS_NOT_REQUESTED
    assert response.cluster_id == describe_cluster(broker, version).cluster_id


@pytest.mark.parametrize("endpoint_type, code, message", [
    (2, 114, "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"),
    (0, 115, "Unsupported endpoint type 0"),
    (7, 115, "Unsupported endpoint type 7"),
])
def test_a_broker_serves_only_broker_endpoints(broker, endpoint_type, code, message):
    response = describe_cluster(broker, 1, endpoint_type=endpoint_type)
    assert (response.error_code, response.error_message, response.brokers) == (code, message, [])


# --------------------------------------------------------------------------------------------
# DescribeLogDirs

def test_kafka_python_describes_the_log_dir_and_its_partitions(broker):
    create_topic(broker, "on-disk", partitions=2)
    produce(broker, "on-disk", 5)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        [answer] = admin.describe_log_dirs()
    finally:
        admin.close()
    [log_dir] = answer["log_dirs"]
    assert log_dir["error_code"] == 0
    assert log_dir["log_dir"] == os.path.abspath(broker.directory / "kafka-logs")
    assert log_dir["total_bytes"] >= log_dir["usable_bytes"] > 0
    [topic] = [t for t in log_dir["topics"] if t["name"] == "on-disk"]
    sizes = {p["partition_index"]: p["partition_size"] for p in topic["partitions"]}
    assert sizes[0] > 0 and sizes[1] == 0
    assert all(p["offset_lag"] == 0 and p["is_future_key"] is False for p in topic["partitions"])


def test_only_the_asked_partitions_are_described_and_other_topics_are_left_out(broker):
    """As Kafka 3.9.0 answers (checked on it: v1 and v4 list only the topic asked for)."""
    create_topic(broker, "asked-for", partitions=2)
    create_topic(broker, "not-asked-for")
    [log_dir] = describe_log_dirs(broker, {"asked-for": [1]}).results
    topics = {t.name: [p.partition_index for p in t.partitions] for t in log_dir.topics}
    assert topics == {"asked-for": [1]}


@pytest.mark.parametrize("version", range(0, 5))
def test_every_version_describes_the_log_dir(broker, version):
    create_topic(broker, "described-on-disk")
    response = describe_log_dirs(broker, version=version)
    [log_dir] = response.results
    assert log_dir.error_code == 0
    assert "described-on-disk" in {t.name for t in log_dir.topics}
    if version >= 4:
        assert log_dir.total_bytes > 0 and log_dir.usable_bytes > 0


# --------------------------------------------------------------------------------------------
# DeleteRecords

def test_kafka_python_deletes_records_before_an_offset(broker):
    create_topic(broker, "trimmed")
    produce(broker, "trimmed", 10)
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        result = admin.delete_records({TopicPartition("trimmed", 0): 4})
    finally:
        admin.close()
    assert result[TopicPartition("trimmed", 0)]["low_watermark"] == 4
    assert result[TopicPartition("trimmed", 0)]["error_code"] == 0


def test_minus_one_deletes_up_to_the_high_watermark(broker):
    create_topic(broker, "emptied")
    produce(broker, "emptied", 6)
    assert delete_records(broker, "emptied", {0: -1}) == {0: (0, 6)}


@pytest.mark.parametrize("offset", [4, -2])
def test_offsets_beyond_the_high_watermark_are_out_of_range(broker, offset):
    create_topic(broker, f"short-{offset}")
    produce(broker, f"short-{offset}", 3)
    assert delete_records(broker, f"short-{offset}", {0: offset}) == {0: (1, -1)}  # OFFSET_OUT_OF_RANGE


def test_unknown_partitions_and_topics_are_reported(broker):
    create_topic(broker, "one-partition")
    assert delete_records(broker, "one-partition", {0: 0, 5: 0}) == {0: (0, 0), 5: (3, -1)}
    assert delete_records(broker, "no-such-topic", {0: 0}) == {0: (3, -1)}


def test_records_of_internal_topics_cannot_be_deleted(broker):
    create_topic(broker, "__transaction_state")
    assert delete_records(broker, "__transaction_state", {0: 0}) == {0: (17, -1)}  # INVALID_TOPIC_EXCEPTION


def test_records_of_compacted_topics_cannot_be_deleted(broker):
    create_topic(broker, "compacted", configs={"cleanup.policy": "compact"})
    create_topic(broker, "compacted-and-deleted", configs={"cleanup.policy": "compact,delete"})
    assert delete_records(broker, "compacted", {0: 0}) == {0: (44, -1)}  # POLICY_VIOLATION
    assert delete_records(broker, "compacted-and-deleted", {0: 0}) == {0: (0, 0)}


@pytest.mark.parametrize("version", range(0, 3))
def test_every_version_deletes_records(broker, version):
    create_topic(broker, f"trimmed-v{version}")
    produce(broker, f"trimmed-v{version}", 3)
    assert delete_records(broker, f"trimmed-v{version}", {0: 2}, version=version) == {0: (0, 2)}
