"""Exploratory scenarios: what Kafka users plausibly do with real clients against one broker, and
the Kafka behaviours they rely on that other tests do not reach.

- Topic ids: the Java AdminClient's `describeTopics(TopicCollection.ofTopicIds(...))` sends a
  Metadata v12 request naming each topic by id *and* by the empty name; Kafka looks topics up by
  id alone whenever an id is given.
- Auto-creation follows CreateTopics' rules: a name that collides with an existing topic's on
  '.' versus '_' is refused, not created.
- A topic's `compression.type` decides how its batches are stored: Kafka rebuilds a batch in that
  codec when the producer used another one (so a legacy consumer can read a zstd producer's
  records from a gzip topic), and a rebuilt batch must still fit `max.message.bytes`. Consumers
  older than Fetch v10 get UNSUPPORTED_COMPRESSION_TYPE from a zstd topic.
- Client scenarios that already behave as with Kafka, kept as regressions: kcat's group mode,
  a confluent-kafka group member's commit/committed/position/watermarks, a deleted topic seen by
  a subscribed consumer, and a transactional producer's init_transactions.
"""
from __future__ import annotations

import subprocess
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.codegen import ZERO_UUID
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records import compression
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

from .clients import create_topic, stored_batches

Metadata = messages.request(ApiKey.METADATA).cls
Fetch = messages.request(ApiKey.FETCH).cls
WAIT = 20


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("exploratory"),
                       {"group.initial.rebalance.delay.ms": "0"}) as running:
        yield running


@pytest.fixture
def topic(request) -> str:
    return "explore-" + request.node.name.replace("[", "-").replace("]", "")[:150]


def metadata(bootstrap: str, version: int, topics, allow_auto_topic_creation: bool = True):
    with WireClient(bootstrap) as client:
        return client.request(ApiKey.METADATA, version, Metadata(
            topics=topics, allow_auto_topic_creation=allow_auto_topic_creation))


def produce(bootstrap: str, topic: str, values, **config) -> list:
    """Delivery reports (error, partition, offset) of `values` produced to partition 0."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, **config})
    reports = []
    for value in values:
        producer.produce(topic, value, key=b"k", partition=0,
                         on_delivery=lambda e, m: reports.append((e, m.partition(), m.offset())))
    assert producer.flush(WAIT) == 0
    return reports


# -- Metadata by topic id ---------------------------------------------------------------------

def test_metadata_by_topic_id_ignores_the_empty_name_the_java_client_sends(broker, topic):
    create_topic(broker.bootstrap, topic, partitions=2)
    [known] = metadata(broker.bootstrap, 12, [Metadata.MetadataRequestTopic(name=topic)]).topics
    unknown_id = uuid.uuid4()

    answer = metadata(broker.bootstrap, 12, [
        Metadata.MetadataRequestTopic(name="", topic_id=known.topic_id),
        Metadata.MetadataRequestTopic(name="", topic_id=unknown_id)])

    first, second = answer.topics  # Kafka lists unknown ids first
    assert (first.error_code, first.name, first.topic_id) == \
        (ErrorCode.UNKNOWN_TOPIC_ID, None, unknown_id)
    assert (second.error_code, second.name, second.topic_id) == (0, topic, known.topic_id)
    assert len(second.partitions) == 2


# -- auto-creation ----------------------------------------------------------------------------

def test_auto_creation_refuses_a_name_colliding_on_dot_and_underscore(broker):
    create_topic(broker.bootstrap, "explore.collide")
    [answer] = metadata(broker.bootstrap, 12,
                        [Metadata.MetadataRequestTopic(name="explore_collide")]).topics
    assert answer.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION

    producer = Producer({"bootstrap.servers": broker.bootstrap})  # asks for auto-creation
    described = producer.list_topics("explore_collide", timeout=10).topics["explore_collide"]
    assert described.error.code() == KafkaError.TOPIC_EXCEPTION
    assert "explore_collide" not in producer.list_topics(timeout=10).topics


# -- compression.type -------------------------------------------------------------------------

@pytest.mark.parametrize("topic_codec", ["gzip", "snappy", "lz4", "zstd", "uncompressed"])
def test_batches_are_stored_in_the_codec_the_topic_names(broker, topic, topic_codec):
    """Whatever the producer used, the stored batches are in the topic's codec, with the
    producer's id and sequence numbers and the records as written."""
    create_topic(broker.bootstrap, topic, configs={"compression.type": topic_codec})
    expected = compression.NONE if topic_codec == "uncompressed" else \
        getattr(compression, topic_codec.upper())
    values = [b"value-%d" % i for i in range(40)]
    for producer_codec in ("none", "gzip", "zstd"):
        reports = produce(broker.bootstrap, topic, values, **{
            "compression.type": producer_codec, "enable.idempotence": True})
        assert [error for error, _, _ in reports] == [None] * len(values)

    batches = stored_batches(broker.bootstrap, topic)
    assert {b.compression for b in batches} == {expected}
    assert all(b.producer_id >= 0 and b.base_sequence >= 0 for b in batches)
    assert sum(b.records_count for b in batches) == 3 * len(values)

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused",
                         "check.crcs": True})
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        got = []
        wait_until(lambda: got.extend(m.value() for m in consumer.consume(200, 0.5)
                                      if m.error() is None) or len(got) >= 3 * len(values),
                   "the records back")
        assert got == values * 3
    finally:
        consumer.close()


def test_a_topic_that_keeps_the_producers_codec_stores_it(broker, topic):
    create_topic(broker.bootstrap, topic, configs={"compression.type": "producer"})
    produce(broker.bootstrap, topic, [b"x" * 100] * 20, **{"compression.type": "zstd"})
    assert {b.compression for b in stored_batches(broker.bootstrap, topic)} == {compression.ZSTD}


def test_a_legacy_consumer_reads_a_zstd_producers_records_from_a_gzip_topic(broker, topic):
    """kafka-python speaking Kafka 0.10.1's protocol (Fetch v3, no zstd) reads them, since the
    broker stored them as gzip."""
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition

    create_topic(broker.bootstrap, topic, configs={"compression.type": "gzip"})
    values = [b"v%d" % i for i in range(10)]
    produce(broker.bootstrap, topic, values, **{"compression.type": "zstd"})

    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, api_version=(0, 10, 1),
                             auto_offset_reset="earliest")
    try:
        consumer.assign([KafkaTopicPartition(topic, 0)])
        got = []
        wait_until(lambda: got.extend(m.value for batch in consumer.poll(500).values()
                                      for m in batch) or len(got) >= len(values),
                   "the records back")
        assert got == values
    finally:
        consumer.close()


def test_a_batch_that_fits_only_compressed_is_too_large_for_an_uncompressed_topic(broker, topic):
    create_topic(broker.bootstrap, topic, configs={"compression.type": "uncompressed",
                                                   "max.message.bytes": "5000"})
    [(error, _, _)] = produce(broker.bootstrap, topic, [b"x" * 20000],
                              **{"compression.type": "gzip"})
    assert error is not None and error.code() == KafkaError.MSG_SIZE_TOO_LARGE
    [(error, _, offset)] = produce(broker.bootstrap, topic, [b"x" * 2000],
                                   **{"compression.type": "gzip"})
    assert error is None and offset == 0


def fetch_partition(bootstrap: str, topic: str, version: int):
    request = Fetch(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20,
                    isolation_level=0, session_id=0, session_epoch=-1, topics=[Fetch.FetchTopic(
                        topic=topic, partitions=[Fetch.FetchPartition(
                            partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    with WireClient(bootstrap) as client:
        return client.request(ApiKey.FETCH, version, request).responses[0].partitions[0]


@pytest.mark.parametrize("version", [4, 9])
def test_consumers_before_fetch_v10_get_unsupported_compression_type_from_a_zstd_topic(
        broker, topic, version):
    create_topic(broker.bootstrap, topic, configs={"compression.type": "zstd"})
    produce(broker.bootstrap, topic, [b"a", b"b"], **{"compression.type": "none"})

    old = fetch_partition(broker.bootstrap, topic, version)
    assert old.error_code == ErrorCode.UNSUPPORTED_COMPRESSION_TYPE
    assert (old.high_watermark, bytes(old.records or b"")) == (-1, b"")
    current = fetch_partition(broker.bootstrap, topic, 10)
    assert current.error_code == 0 and current.high_watermark == 2


# -- client scenarios that behave as with Kafka -----------------------------------------------

def kcat(bootstrap: str, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["kcat", "-b", bootstrap, *args], input=stdin, capture_output=True,
                          timeout=WAIT)


def test_kcat_group_mode_reads_everything_once_and_resumes_after_its_commit(broker, topic):
    create_topic(broker.bootstrap, topic, partitions=3)
    lines = b"".join(b"%d\n" % i for i in range(30))
    assert kcat(broker.bootstrap, "-P", "-t", topic, "-z", "lz4", stdin=lines).returncode == 0
    group = ["-G", topic + "-group", topic, "-e", "-f", "%s\n",
             "-X", "auto.offset.reset=earliest"]

    first = kcat(broker.bootstrap, *group)
    assert first.returncode == 0, first.stderr
    assert sorted(int(v) for v in first.stdout.split()) == list(range(30))

    more = b"".join(b"%d\n" % i for i in range(30, 35))
    assert kcat(broker.bootstrap, "-P", "-t", topic, "-p", "1", stdin=more).returncode == 0
    second = kcat(broker.bootstrap, *group)
    assert second.returncode == 0, second.stderr
    assert sorted(int(v) for v in second.stdout.split()) == list(range(30, 35))


def test_a_confluent_group_member_commits_and_sees_its_positions_and_watermarks(broker, topic):
    create_topic(broker.bootstrap, topic, partitions=2)
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True,
                         "max.in.flight": 5})
    for i in range(100):
        producer.produce(topic, b"%d" % i, partition=i % 2)
    assert producer.flush(WAIT) == 0

    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": topic,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    try:
        consumer.subscribe([topic])
        got = []
        wait_until(lambda: got.extend(m for m in consumer.consume(100, 0.5)
                                      if m.error() is None) or len(got) >= 100, "100 records")
        committed = consumer.commit(asynchronous=False)
        partitions = [TopicPartition(topic, p) for p in range(2)]
        assert sorted((tp.partition, tp.offset) for tp in committed) == [(0, 50), (1, 50)]
        assert [tp.offset for tp in consumer.committed(partitions, timeout=10)] == [50, 50]
        assert [tp.offset for tp in consumer.position(partitions)] == [50, 50]
        assert consumer.get_watermark_offsets(partitions[1], timeout=10) == (0, 50)
        missing = consumer.list_topics("explore-no-such-topic", timeout=10)
        # a consumer's metadata request asks for no auto-creation
        assert missing.topics["explore-no-such-topic"].error.code() == \
            KafkaError.UNKNOWN_TOPIC_OR_PART
    finally:
        consumer.close()


def test_a_subscribed_consumer_is_told_its_topic_was_deleted(broker, topic):
    create_topic(broker.bootstrap, topic)
    produce(broker.bootstrap, topic, [b"a"])
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": topic,
                         "auto.offset.reset": "earliest",
                         "topic.metadata.refresh.interval.ms": 500,
                         "allow.auto.create.topics": False})
    try:
        consumer.subscribe([topic])
        wait_until(lambda: any(m.error() is None for m in consumer.consume(10, 0.5)), "a record")
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.delete_topics([topic])[topic].result(WAIT)

        errors = []
        wait_until(lambda: errors.extend(m.error().code() for m in consumer.consume(10, 0.5)
                                         if m.error() is not None) or errors,
                   "the consumer's error")
        assert KafkaError.UNKNOWN_TOPIC_OR_PART in errors
        wait_until(lambda: not consumer.assignment(), "the partition revoked")
    finally:
        consumer.close()


def test_a_transactional_producer_initializes_its_transactions(broker, topic):
    """FindCoordinator (key type 1) creates `__transaction_state` and names this broker, whose
    transaction coordinator gives the producer its id and epoch."""
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
