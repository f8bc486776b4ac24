"""Real clients connect and read metadata: kafka-python, confluent-kafka and kcat."""
import json
import shutil
import subprocess

import pytest
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient

Metadata = messages.request(ApiKey.METADATA)


def create_topic_by_metadata(broker, name):
    with WireClient(broker.bootstrap) as client:
        request = Metadata.cls(topics=[Metadata.cls.MetadataRequestTopic(name=name)],
                               allow_auto_topic_creation=True)
        return client.request(ApiKey.METADATA, 12, request)


def test_kafka_python_admin_client_describes_the_cluster(broker):
    create_topic_by_metadata(broker, "kp-topic")
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap, client_id="kp-test")
    try:
        cluster = admin.describe_cluster()
        assert [b["broker_id"] for b in cluster["brokers"]] == [0]
        assert cluster["controller_id"] == 0
        assert cluster["cluster_id"]
        assert "kp-topic" in admin.list_topics()
    finally:
        admin.close()


def test_confluent_admin_client_lists_brokers_and_topics(broker):
    create_topic_by_metadata(broker, "ck-topic")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    metadata = admin.list_topics(timeout=10)
    assert list(metadata.brokers) == [0]
    assert metadata.brokers[0].host == "127.0.0.1" and metadata.brokers[0].port == broker.port
    assert metadata.controller_id == 0
    topic = metadata.topics["ck-topic"]
    assert topic.error is None
    assert list(topic.partitions) == [0]
    assert topic.partitions[0].leader == 0
    assert topic.partitions[0].replicas == [0] and topic.partitions[0].isrs == [0]


@pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is installed by `make test`")
def test_kcat_lists_metadata(broker):
    create_topic_by_metadata(broker, "kcat-topic")
    result = subprocess.run(["kcat", "-b", broker.bootstrap, "-L", "-J"], capture_output=True,
                            text=True, timeout=60, check=True)
    metadata = json.loads(result.stdout)
    assert [b["id"] for b in metadata["brokers"]] == [0]
    topics = {t["topic"]: t for t in metadata["topics"]}
    assert topics["kcat-topic"]["partitions"][0]["leader"] == 0


def test_metadata_auto_creates_a_topic_with_num_partitions(broker):
    response = create_topic_by_metadata(broker, "auto-created")
    [topic] = response.topics
    assert topic.error_code == 0 and topic.name == "auto-created"
    assert [p.partition_index for p in topic.partitions] == [0]
    assert topic.topic_id.int != 0


def test_metadata_without_auto_creation_reports_unknown_topic(broker):
    with WireClient(broker.bootstrap) as client:
        request = Metadata.cls(topics=[Metadata.cls.MetadataRequestTopic(name="never-made")],
                               allow_auto_topic_creation=False)
        [topic] = client.request(ApiKey.METADATA, 12, request).topics
    assert topic.error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_metadata_rejects_illegal_topic_names(broker):
    response = create_topic_by_metadata(broker, "bad/name")
    assert response.topics[0].error_code == 17  # INVALID_TOPIC_EXCEPTION


def test_metadata_by_topic_id_in_v12(broker):
    created = create_topic_by_metadata(broker, "by-id").topics[0]
    with WireClient(broker.bootstrap) as client:
        request = Metadata.cls(topics=[Metadata.cls.MetadataRequestTopic(
            name=None, topic_id=created.topic_id)])
        [topic] = client.request(ApiKey.METADATA, 12, request).topics
    assert topic.name == "by-id" and topic.topic_id == created.topic_id


@pytest.mark.parametrize("version", range(0, 13))
def test_every_metadata_version_lists_brokers_and_topics(broker, version):
    create_topic_by_metadata(broker, "all-versions")
    with WireClient(broker.bootstrap) as client:
        all_topics = Metadata.cls(topics=[] if version == 0 else None)
        response = client.request(ApiKey.METADATA, version, all_topics)
    assert [b.node_id for b in response.brokers] == [0]
    assert response.brokers[0].port == broker.port
    assert "all-versions" in {t.name for t in response.topics}
    if version >= 2:
        assert response.cluster_id
    if version >= 1:
        assert response.controller_id == 0


def test_empty_topic_list_means_no_topics_from_v1(broker):
    with WireClient(broker.bootstrap) as client:
        assert client.request(ApiKey.METADATA, 1, Metadata.cls(topics=[])).topics == []


def test_authorized_operations_are_reported_when_requested(broker):
    create_topic_by_metadata(broker, "ops")
    with WireClient(broker.bootstrap) as client:
        request = Metadata.cls(topics=[Metadata.cls.MetadataRequestTopic(name="ops")],
                               include_topic_authorized_operations=True)
        [topic] = client.request(ApiKey.METADATA, 10, request).topics
    assert topic.topic_authorized_operations & (1 << 3)  # READ
    assert topic.topic_authorized_operations != -2147483648


def test_metadata_auto_creates_consumer_offsets_as_the_internal_compacted_topic(broker):
    response = create_topic_by_metadata(broker, "__consumer_offsets")
    [topic] = response.topics
    assert topic.error_code == 0 and topic.is_internal
    assert len(topic.partitions) == 50  # offsets.topic.num.partitions, not num.partitions


def test_clients_cannot_produce_to_internal_topics(broker):
    from pykbroker.records.records import build_batch

    create_topic_by_metadata(broker, "__consumer_offsets")
    produce = messages.request(ApiKey.PRODUCE)
    request = produce.cls(acks=1, timeout_ms=5000, topic_data=[produce.cls.TopicProduceData(
        name="__consumer_offsets", partition_data=[produce.cls.PartitionProduceData(
            index=0, records=build_batch([(b"k", b"v")]))])])
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.PRODUCE, 9, request)
    [partition] = response.responses[0].partition_responses
    assert partition.error_code == 17  # INVALID_TOPIC_EXCEPTION
    assert partition.error_message == "Cannot append to internal topic __consumer_offsets"
