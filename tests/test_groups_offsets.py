"""Acceptance: committed offsets with unmodified clients, as with Apache Kafka 3.9.

A consumer that commits and closes is followed by one that resumes exactly after the committed
offsets (no record lost, none read twice), with kafka-python, confluent-kafka and aiokafka;
committed offsets and the group survive a broker restart; two groups on one topic each read
every record; consumers with manual assignment commit as "simple" consumers; commit metadata
comes back as it was sent.
"""
from __future__ import annotations

import asyncio
import time

import pytest

from .clients import KafkaPython, Record, create_topic
from .coordinator.live import group_broker

PARTITIONS = 3
COUNT = 30
WAIT_SECONDS = 30


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with group_broker(tmp_path_factory.mktemp("offsets")) as running:
        yield running


def produce(bootstrap: str, topic: str, count: int = COUNT) -> set[tuple[int, int]]:
    create_topic(bootstrap, topic, PARTITIONS)
    sent = KafkaPython.produce(bootstrap, topic, [
        Record(f"key-{i}".encode(), f"value-{i}".encode(), partition=i % PARTITIONS)
        for i in range(count)])
    return {(r.partition, r.offset) for r in sent}


# -- one consumer session per library: read `count` records (or all that come), commit what was
# -- read if asked, close; returns the (partition, offset) of every record read

def kafka_python_session(bootstrap, topic, group, count, commit=True):
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             max_poll_records=5)
    read = set()
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while len(read) < count and time.monotonic() < deadline:
            # one poll may wait all the time left: kafka-python 3.0 drops the assignment of a
            # rebalance that completes after poll() returned (it returns when records arrive)
            wait_ms = max(1, int((deadline - time.monotonic()) * 1000))
            for messages in consumer.poll(timeout_ms=wait_ms, max_records=count - len(read)).values():
                read |= {(m.partition, m.offset) for m in messages}
        if commit:
            consumer.commit()
    finally:
        consumer.close()
    return read


def confluent_session(bootstrap, topic, group, count, commit=True):
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    read = set()
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while len(read) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                read.add((message.partition(), message.offset()))
        if commit:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return read


def aiokafka_session(bootstrap, topic, group, count, commit=True):
    from aiokafka import AIOKafkaConsumer

    async def run():
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        read = set()
        try:
            deadline = time.monotonic() + WAIT_SECONDS
            while len(read) < count and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=200, max_records=count - len(read))
                for messages in batches.values():
                    read |= {(m.partition, m.offset) for m in messages}
            if commit:
                await consumer.commit()
        finally:
            await consumer.stop()
        return read
    return asyncio.run(run())


SESSIONS = {"kafka-python": kafka_python_session, "confluent-kafka": confluent_session,
            "aiokafka": aiokafka_session}


@pytest.mark.parametrize("library", list(SESSIONS))
def test_a_consumer_resumes_exactly_after_the_offsets_committed_before_it(broker, library):
    topic = group = f"resume-{library}"
    produced = produce(broker.bootstrap, topic)
    session = SESSIONS[library]
    first = session(broker.bootstrap, topic, group, 12)
    assert len(first) == 12
    second = session(broker.bootstrap, topic, group, COUNT - 12)
    assert first.isdisjoint(second), "no record is read twice"
    assert first | second == produced, "no record is lost"


def test_committed_offsets_and_the_group_survive_a_broker_restart(tmp_path):
    from kafka import KafkaAdminClient, TopicPartition

    broker = group_broker(tmp_path / "broker").start()
    try:
        produced = produce(broker.bootstrap, "restart")
        first = kafka_python_session(broker.bootstrap, "restart", "survivor", 12)
        broker.stop()
        broker.start()
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            described = admin.describe_groups(["survivor"])["survivor"]
            committed = admin.list_group_offsets({"survivor": None})["survivor"]
        finally:
            admin.close()
        assert (described["group_state"], described["protocol_type"]) == ("Empty", "consumer")
        assert sum(c.offset for c in committed.values()) == len(first)
        assert set(committed) <= {TopicPartition("restart", p) for p in range(PARTITIONS)}
        second = confluent_session(broker.bootstrap, "restart", "survivor", COUNT - len(first))
        assert first.isdisjoint(second) and first | second == produced
    finally:
        broker.stop()


def test_two_groups_on_one_topic_each_read_every_record(broker):
    from kafka import KafkaAdminClient

    produced = produce(broker.bootstrap, "shared")
    assert kafka_python_session(broker.bootstrap, "shared", "group-a", COUNT) == produced
    assert confluent_session(broker.bootstrap, "shared", "group-b", COUNT) == produced
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        committed = admin.list_group_offsets({"group-a": None, "group-b": None})
    finally:
        admin.close()
    end_offsets = {p: COUNT // PARTITIONS for p in range(PARTITIONS)}
    for group in ("group-a", "group-b"):
        assert {tp.partition: c.offset for tp, c in committed[group].items()} == end_offsets


def test_a_consumer_with_manual_assignment_commits_as_a_simple_consumer(broker):
    from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    produce(broker.bootstrap, "manual")
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id="standalone",
                             enable_auto_commit=False)
    tp = TopicPartition("manual", 1)
    try:
        consumer.assign([tp])
        consumer.commit({tp: OffsetAndMetadata(4, "checkpoint 4", -1)})
        assert consumer.committed(tp) == 4
    finally:
        consumer.close()
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        [listed] = [g for g in admin.list_groups() if g["group_id"] == "standalone"]
        offsets = admin.list_group_offsets({"standalone": None})["standalone"]
    finally:
        admin.close()
    assert (listed["protocol_type"], listed["group_state"]) == ("", "Empty")
    assert (offsets[tp].offset, offsets[tp].metadata) == (4, "checkpoint 4")


def test_commit_metadata_round_trips_through_confluent_kafka(broker):
    from confluent_kafka import Consumer, TopicPartition

    produce(broker.bootstrap, "metadata")
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "with-metadata",
                         "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition("metadata", 2, 7, metadata="batch-12")],
                        asynchronous=False)
        [committed] = consumer.committed([TopicPartition("metadata", 2)], timeout=10)
    finally:
        consumer.close()
    assert (committed.offset, committed.metadata, committed.error) == (7, "batch-12", None)
