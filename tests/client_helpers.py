"""What the end-to-end log tests do with real clients and the wire: create topics, produce and
read everything back, ask for offsets, wait for background work, restart a broker."""
from __future__ import annotations

import time
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic,
)
from kafka import KafkaConsumer
from kafka import TopicPartition as KafkaTopicPartition

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.records.records import iter_batches
from pykbroker.testkit.process import BrokerProcess  # noqa: F401 - tests import it from here
from pykbroker.testkit.waiting import wait_until  # noqa: F401 - tests import it from here
from pykbroker.testkit.wire import WireClient

Produce = messages.request(ApiKey.PRODUCE).cls
Fetch = messages.request(ApiKey.FETCH).cls
ListOffsets = messages.request(ApiKey.LIST_OFFSETS).cls
InitProducerId = messages.request(ApiKey.INIT_PRODUCER_ID).cls

EARLIEST = -2
LATEST = -1
OFFSET_OUT_OF_RANGE = 1
INVALID_RECORD = 87
OUT_OF_ORDER_SEQUENCE_NUMBER = 45


# -- topics and clients ---------------------------------------------------------------------

def create_topic(bootstrap: str, name: str, partitions: int = 1,
                 config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})],
                                  operation_timeout=10)
    futures[name].result(timeout=15)


def topic_configs(bootstrap: str, name: str) -> dict:
    """{config name: ConfigEntry} as DescribeConfigs reports it."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, name)])
    return next(iter(futures.values())).result(timeout=15)


def alter_topic_configs(bootstrap: str, name: str, configs: dict[str, str]) -> None:
    """IncrementalAlterConfigs: set `configs` on the topic."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ConfigResource.Type.TOPIC, name, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET)
        for key, value in configs.items()])
    next(iter(admin.incremental_alter_configs([resource]).values())).result(timeout=15)


def producer(bootstrap: str, **config) -> Producer:
    settings = {"bootstrap.servers": bootstrap, "linger.ms": 2, "batch.size": 4000,
                "reconnect.backoff.max.ms": 500}
    settings.update({key.replace("_", "."): value for key, value in config.items()})
    return Producer(settings)


def produce_all(bootstrap: str, topic: str, records, **config) -> list:
    """Produce (partition, key, value[, timestamp]) records (acks=all, the default); every
    delivery must succeed. Returns the delivered messages, in delivery order."""
    client = producer(bootstrap, **config)
    delivered: list = []
    errors: list = []

    def on_delivery(error, message) -> None:
        (errors if error else delivered).append(error or message)

    for record in records:
        partition, key, value, *rest = record
        extra = {"timestamp": rest[0]} if rest else {}
        client.produce(topic, key=key, value=value, partition=partition, on_delivery=on_delivery,
                       **extra)
        client.poll(0)
    assert client.flush(30) == 0, "undelivered records"
    assert not errors, errors
    return delivered


def read_partition(bootstrap: str, topic: str, partition: int = 0, start: int = OFFSET_BEGINNING,
                   **config) -> list:
    """Every record from `start` up to the high watermark, as messages (confluent-kafka,
    manual assignment)."""
    settings = {"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                "enable.partition.eof": True, "auto.offset.reset": "error",
                "fetch.wait.max.ms": 50}  # the end of the partition shows as an empty fetch
    settings.update({key.replace("_", "."): value for key, value in config.items()})
    consumer = Consumer(settings)
    try:
        consumer.assign([TopicPartition(topic, partition, start)])
        records = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            if message.error():
                if message.error().code() == KafkaError._PARTITION_EOF:
                    return records
                raise AssertionError(f"consumer error: {message.error()}")
            records.append(message)
        raise AssertionError(f"{topic}-{partition}: no end of partition after "
                             f"{len(records)} records")
    finally:
        consumer.close()


def kafka_python_read(bootstrap: str, topic: str, partition: int = 0, *, end: int) -> list[tuple]:
    """(offset, key, value) from the log start up to offset `end` (exclusive), with kafka-python
    (no group, manual assignment)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             consumer_timeout_ms=10000)
    try:
        tp = KafkaTopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records = []
        for record in consumer:
            records.append((record.offset, record.key, record.value))
            if record.offset + 1 >= end:
                break
        return records
    finally:
        consumer.close()


def as_tuples(messages_) -> list[tuple]:
    return [(m.offset(), m.key(), m.value()) for m in messages_]


# -- the wire -------------------------------------------------------------------------------

def list_offset(bootstrap: str, topic: str, timestamp: int, partition: int = 0) -> int:
    request = ListOffsets(replica_id=-1, isolation_level=0, topics=[ListOffsets.ListOffsetsTopic(
        name=topic, partitions=[ListOffsets.ListOffsetsPartition(partition_index=partition,
                                                                 timestamp=timestamp)])])
    with WireClient(bootstrap) as client:
        [answer] = client.request(ApiKey.LIST_OFFSETS, 7, request).topics[0].partitions
    assert answer.error_code == 0, answer
    return answer.offset


def log_start_offset(bootstrap: str, topic: str, partition: int = 0) -> int:
    return list_offset(bootstrap, topic, EARLIEST, partition)


def log_end_offset(bootstrap: str, topic: str, partition: int = 0) -> int:
    return list_offset(bootstrap, topic, LATEST, partition)


def fetch(bootstrap: str, topic: str, offset: int, partition: int = 0, max_bytes: int = 1 << 20):
    """One Fetch v11 of one partition: its PartitionData (error, log start offset, records)."""
    request = Fetch(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=max_bytes,
                    isolation_level=0, session_id=0, session_epoch=-1, topics=[Fetch.FetchTopic(
                        topic=topic, partitions=[Fetch.FetchPartition(
                            partition=partition, fetch_offset=offset,
                            partition_max_bytes=max_bytes)])])
    with WireClient(bootstrap) as client:
        response = client.request(ApiKey.FETCH, 11, request)
    return response.responses[0].partitions[0]


def read_by_fetch(bootstrap: str, topic: str, partition: int = 0) -> list[tuple]:
    """(offset, key, value) of every record from the log start to the high watermark, read with
    plain Fetch requests (record-less batches are stepped over)."""
    offset, records = log_start_offset(bootstrap, topic, partition), []
    while True:
        answer = fetch(bootstrap, topic, offset, partition)
        assert answer.error_code == 0, answer
        if offset >= answer.high_watermark:
            return records
        for header, batch_records in iter_batches(bytes(answer.records), allow_partial_tail=True):
            records += [(r.offset, r.key, r.value) for r in batch_records]
            offset = header.next_offset


def init_producer_id(client: WireClient) -> int:
    answer = client.request(ApiKey.INIT_PRODUCER_ID, 4, InitProducerId(
        transactional_id=None, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1))
    assert answer.error_code == 0, answer
    return answer.producer_id


def produce_batch(client: WireClient, topic: str, batch: bytes, partition: int = 0, acks: int = -1):
    """Produce v9 of one batch: the partition's answer."""
    request = Produce(acks=acks, timeout_ms=10000, transactional_id=None, topic_data=[
        Produce.TopicProduceData(name=topic, partition_data=[
            Produce.PartitionProduceData(index=partition, records=batch)])])
    return client.request(ApiKey.PRODUCE, 9, request).responses[0].partition_responses[0]


# -- the broker and its files ---------------------------------------------------------------

def restart_on_same_port(broker: BrokerProcess, *, kill: bool = False) -> None:
    """SIGTERM (or SIGKILL) and start again on the port clients already know, so that they
    reconnect."""
    broker.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{broker.port}"
    broker.kill() if kill else broker.stop()
    broker.start()


def partition_dir(broker: BrokerProcess, topic: str, partition: int = 0) -> Path:
    return broker.directory / "kafka-logs" / f"{topic}-{partition}"


def segment_bases(broker: BrokerProcess, topic: str, partition: int = 0) -> list[int]:
    """Base offsets of the live segments (`<base>.log`, not `.deleted` or `.cleaned`)."""
    return sorted(int(path.name[:-len(".log")])
                  for path in partition_dir(broker, topic, partition).glob("*.log"))


def segment_size(broker: BrokerProcess, topic: str, base: int, partition: int = 0) -> int:
    return (partition_dir(broker, topic, partition) / f"{base:020d}.log").stat().st_size


