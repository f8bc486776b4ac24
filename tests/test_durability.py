"""Durability end to end: what a broker process keeps across a clean stop, a `kill -9` and a torn
log tail, and how idempotent producers resume after a restart."""
from __future__ import annotations

import random
import time

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from kafka import KafkaProducer

from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.wire import WireClient

from .client_helpers import (
    OUT_OF_ORDER_SEQUENCE_NUMBER, ListOffsets, alter_topic_configs, as_tuples, create_topic, init_producer_id, kafka_python_read,
    log_end_offset, partition_dir, produce_all, produce_batch, producer, read_partition,
    restart_on_same_port, segment_bases, topic_configs,
)


# -- a clean stop and start ---------------------------------------------------------------------

def test_topics_configs_and_records_survive_a_restart(tmp_path):
    with BrokerProcess(tmp_path / "broker") as broker:
        create_topic(broker.bootstrap, "orders", partitions=3,
                     config={"retention.ms": "3600000", "max.message.bytes": "200000"})
        create_topic(broker.bootstrap, "audit", config={"cleanup.policy": "compact"})
        by_confluent = produce_all(broker.bootstrap, "orders", [
            (i % 3, b"key-%d" % i, b"confluent-%d" % i) for i in range(60)])
        kp = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
        futures = [kp.send("orders", key=b"kp-%d" % i, value=b"kafka-python-%d" % i,
                           partition=i % 3) for i in range(30)]
        futures += [kp.send("audit", key=b"user-%d" % i, value=b"state-%d" % i, partition=0)
                    for i in range(10)]
        kp.flush(timeout=30)
        by_kafka_python = [future.get(timeout=10) for future in futures]
        kp.close()
        before = {p: as_tuples(read_partition(broker.bootstrap, "orders", p)) for p in range(3)}
        before["audit"] = as_tuples(read_partition(broker.bootstrap, "audit", 0))
        assert sum(len(records) for records in before.values()) == 100

        broker.stop()
        broker.start()

        configs = topic_configs(broker.bootstrap, "orders")
        assert configs["retention.ms"].value == "3600000" and not configs["retention.ms"].is_default
        assert configs["max.message.bytes"].value == "200000"
        assert topic_configs(broker.bootstrap, "audit")["cleanup.policy"].value == "compact"
        after = {p: as_tuples(read_partition(broker.bootstrap, "orders", p)) for p in range(3)}
        after["audit"] = as_tuples(read_partition(broker.bootstrap, "audit", 0))
        assert after == before
        for message in by_confluent:
            assert (message.offset(), message.key(), message.value()) in after[message.partition()]
        for metadata in by_kafka_python:
            partition = "audit" if metadata.topic == "audit" else metadata.partition
            assert metadata.offset in {offset for offset, _, _ in after[partition]}
        assert kafka_python_read(broker.bootstrap, "orders", 1, end=30) == after[1]

        continued = produce_all(broker.bootstrap, "orders",
                                [(p, None, b"after-restart") for p in range(3)])
        assert {m.partition(): m.offset() for m in continued} == {p: 30 for p in range(3)}
        kp = KafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
        sent = kp.send("audit", key=b"user-0", value=b"again", partition=0)
        assert sent.get(timeout=10).offset == 10
        kp.close()


def test_a_second_restart_changes_nothing(tmp_path):
    with BrokerProcess(tmp_path / "broker") as broker:
        create_topic(broker.bootstrap, "twice")
        produce_all(broker.bootstrap, "twice", [(0, None, b"r%d" % i) for i in range(25)])
        broker.stop()
        broker.start()
        first = as_tuples(read_partition(broker.bootstrap, "twice"))
        broker.stop()
        broker.start()
        assert as_tuples(read_partition(broker.bootstrap, "twice")) == first
        assert [offset for offset, _, _ in first] == list(range(25))
        assert log_end_offset(broker.bootstrap, "twice") == 25


# -- idempotent producers --------------------------------------------------------------------------

@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_an_idempotent_producer_resumes_after_a_restart_without_duplicates_or_gaps(tmp_path, stop):
    with BrokerProcess(tmp_path / "broker") as broker:
        create_topic(broker.bootstrap, "idempotent", config={"segment.bytes": "4096"})
        client = producer(broker.bootstrap, enable_idempotence=True, linger_ms=1)
        acked, errors = {}, []

        def on_delivery(error, message):
            if error:
                errors.append(error)
            else:
                acked[message.value()] = message.offset()

        for i in range(400):
            client.produce("idempotent", value=b"%d" % i, partition=0, on_delivery=on_delivery)
            client.poll(0)
            if i == 200:  # batches are in flight while the broker goes down
                restart_on_same_port(broker, kill=stop == "sigkill")
        assert client.flush(60) == 0
        assert not errors, errors

        records = as_tuples(read_partition(broker.bootstrap, "idempotent"))
        assert [value for _, _, value in records] == [b"%d" % i for i in range(400)]
        assert [offset for offset, _, _ in records] == list(range(400))
        assert acked == {value: offset for offset, _, value in records}


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_a_retried_idempotent_batch_is_not_appended_twice_across_a_restart(tmp_path, stop):
    with BrokerProcess(tmp_path / "broker") as broker:
        create_topic(broker.bootstrap, "dedup")
        with WireClient(broker.bootstrap) as client:
            producer_id = init_producer_id(client)
            first = build_batch([(b"k", b"a"), (b"k", b"b")], producer_id=producer_id,
                                producer_epoch=0, base_sequence=0)
            second = build_batch([(b"k", b"c")], producer_id=producer_id, producer_epoch=0,
                                 base_sequence=2)
            assert produce_batch(client, "dedup", first).base_offset == 0
            assert produce_batch(client, "dedup", second).base_offset == 2
            retried_now = produce_batch(client, "dedup", second)
            assert (retried_now.error_code, retried_now.base_offset) == (0, 2)

        broker.stop() if stop == "sigterm" else broker.kill()
        broker.start()
        broker.wait_until_logs_loaded()

        with WireClient(broker.bootstrap) as client:
            for batch, base_offset in ((first, 0), (second, 2)):
                retried = produce_batch(client, "dedup", batch)
                assert (retried.error_code, retried.base_offset) == (0, base_offset)
            assert log_end_offset(broker.bootstrap, "dedup") == 3

            skipped = build_batch([(b"k", b"z")], producer_id=producer_id, producer_epoch=0,
                                  base_sequence=7)
            answer = produce_batch(client, "dedup", skipped)
            assert answer.error_code == OUT_OF_ORDER_SEQUENCE_NUMBER

            following = build_batch([(b"k", b"d")], producer_id=producer_id, producer_epoch=0,
                                    base_sequence=3)
            answer = produce_batch(client, "dedup", following)
            assert (answer.error_code, answer.base_offset) == (0, 3)
        assert [value for _, _, value in as_tuples(read_partition(broker.bootstrap, "dedup"))] == [
            b"a", b"b", b"c", b"d"]


# -- kill -9 ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_acknowledged_admin_changes_survive_a_restart(tmp_path, stop):
    """The embedded store writes its state file on a worker thread, but answers an admin request
    only once the change is on disk: killed right after the answers, the broker keeps them."""
    with BrokerProcess(tmp_path / "broker") as broker:
        create_topic(broker.bootstrap, "doomed")
        create_topic(broker.bootstrap, "kept", partitions=2, config={"retention.ms": "3600000"})
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        admin.delete_topics(["doomed"], operation_timeout=10)["doomed"].result(timeout=15)
        admin.create_partitions([NewPartitions("kept", 3)])["kept"].result(timeout=15)
        alter_topic_configs(broker.bootstrap, "kept", {"max.message.bytes": "200000"})
        create_topic(broker.bootstrap, "last")

        broker.stop() if stop == "sigterm" else broker.kill()
        broker.start()

        topics = AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=15).topics
        assert {name: len(topic.partitions) for name, topic in topics.items()} == {"kept": 3, "last": 1}
        configs = topic_configs(broker.bootstrap, "kept")
        assert configs["retention.ms"].value == "3600000"
        assert configs["max.message.bytes"].value == "200000"


def produce_until_killed(broker: BrokerProcess, topic: str,
                         acks_before_kill: int) -> dict[int, bytes]:
    """Produce a stream of numbered records and SIGKILL the broker while batches are in flight.
    Returns {offset: value} of every acknowledged record."""
    client = producer(broker.bootstrap, acks="all", linger_ms=0, batch_size=2000,
                      message_timeout_ms=5000)
    acked: dict[int, bytes] = {}

    def on_delivery(error, message):
        if error is None:
            acked[message.offset()] = message.value()

    sequence = 0
    deadline = time.monotonic() + 60
    while broker.is_running():
        assert time.monotonic() < deadline, f"only {len(acked)} records acknowledged"
        client.produce(topic, value=b"record-%06d-" % sequence + b"x" * 200, partition=0,
                       on_delivery=on_delivery)
        sequence += 1
        client.poll(0)
        if len(acked) >= acks_before_kill:
            broker.kill()
        elif sequence - len(acked) > 500:
            client.poll(0.01)  # keep a bounded number of records in flight
    assert len(acked) >= acks_before_kill
    client.purge()
    client.flush(0)
    return dict(acked)


@pytest.mark.parametrize("overrides", [
    pytest.param({"pykbroker.fsync.before.ack": "true"}, id="fsync-before-ack"),
    pytest.param({}, id="defaults"),
])
def test_acknowledged_records_survive_kill_9(tmp_path, overrides):
    with BrokerProcess(tmp_path / "broker", {**overrides, "log.segment.bytes": "65536"}) as broker:
        create_topic(broker.bootstrap, "crash")
        acked = produce_until_killed(broker, "crash", acks_before_kill=1500)
        broker.start()

        records = as_tuples(read_partition(broker.bootstrap, "crash"))
        end = log_end_offset(broker.bootstrap, "crash")
        assert [offset for offset, _, _ in records] == list(range(end))
        values = [value for _, _, value in records]
        assert values == [b"record-%06d-" % i + b"x" * 200 for i in range(end)]
        stored = {offset: value for offset, _, value in records}
        assert {offset: stored.get(offset) for offset in acked} == acked

        appended = produce_all(broker.bootstrap, "crash", [(0, None, b"after-crash")])
        assert appended[0].offset() == end


def damage_active_segment(broker: BrokerProcess, topic: str, damage: str) -> None:
    active = partition_dir(broker, topic) / f"{segment_bases(broker, topic)[-1]:020d}.log"
    size = active.stat().st_size
    with open(active, "r+b") as log_file:
        if damage == "garbage appended":
            log_file.seek(size)
            log_file.write(random.Random(7).randbytes(777))
        elif damage == "zeros appended":
            log_file.seek(size)
            log_file.write(bytes(4096))
        elif damage == "last batch cut short":
            log_file.truncate(size - 9)
    (broker.directory / "kafka-logs" / ".kafka_cleanshutdown").unlink()


@pytest.mark.parametrize("damage, intact", [
    ("garbage appended", 100),
    ("zeros appended", 100),
    ("last batch cut short", 90),
])
def test_a_torn_tail_is_cut_off_by_recovery(tmp_path, damage, intact):
    with BrokerProcess(tmp_path / "broker") as broker:
        create_topic(broker.bootstrap, "torn", config={"segment.bytes": "1024"})
        written = [(i, b"k%d" % i, b"value-%d" % i) for i in range(100)]
        with WireClient(broker.bootstrap) as client:
            for start in range(0, 100, 10):  # ten batches of ten records
                batch = build_batch([(key, value) for _, key, value in written[start:start + 10]])
                assert produce_batch(client, "torn", batch).base_offset == start
        assert len(segment_bases(broker, "torn")) > 1
        broker.stop()
        damage_active_segment(broker, "torn", damage)

        broker.start()
        assert as_tuples(read_partition(broker.bootstrap, "torn")) == written[:intact]
        assert log_end_offset(broker.bootstrap, "torn") == intact
        appended = produce_all(broker.bootstrap, "torn", [(0, b"new", b"after-recovery")])
        assert appended[0].offset() == intact
        assert as_tuples(read_partition(broker.bootstrap, "torn", start=intact)) == [
            (intact, b"new", b"after-recovery")]


# -- many partitions -------------------------------------------------------------------------------

def end_offset_once_served(bootstrap: str, topic: str, partition: int) -> int:
    """ListOffsets(latest) as a client does it: a partition still loading answers
    NOT_LEADER_OR_FOLLOWER, retried; any other error fails."""
    request = ListOffsets(replica_id=-1, isolation_level=0, topics=[ListOffsets.ListOffsetsTopic(
        name=topic, partitions=[ListOffsets.ListOffsetsPartition(partition_index=partition, timestamp=-1)])])
    with WireClient(bootstrap) as client:
        for _ in range(1000):
            [answer] = client.request(ApiKey.LIST_OFFSETS, 7, request).topics[0].partitions
            if answer.error_code == 0:
                return answer.offset
            assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER, answer
            time.sleep(0.02)
    raise AssertionError(f"{topic}-{partition} was never served")


def test_records_acknowledged_on_two_hundred_partitions_survive_kill_9(tmp_path):
    topics = [f"many{i:02d}" for i in range(20)]
    with BrokerProcess(tmp_path, keep_port_on_restart=True) as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for future in admin.create_topics([NewTopic(t, 10, 1) for t in topics], operation_timeout=30).values():
            future.result(timeout=60)
        acked = {(t, p): 1 + (i + p) % 4 for i, t in enumerate(topics) for p in range(10)}
        client = producer(broker.bootstrap)
        for (topic, partition), count in acked.items():
            for n in range(count):
                client.produce(topic, key=b"k", value=b"v%d" % n, partition=partition)
        assert client.flush(60) == 0
        broker.kill()
        broker.start()
        survived = {(t, p): end_offset_once_served(broker.bootstrap, t, p) for t, p in acked}
        recovered = [line for line in broker.log_text().splitlines() if "Recovered 200 logs" in line]
    assert survived == acked
    assert len(recovered) == 1 and "200 segments scanned" in recovered[0]
