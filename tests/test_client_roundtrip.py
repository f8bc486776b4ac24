"""Acceptance: unmodified Kafka clients produce to and consume from one broker and get back exactly
what they wrote, as from Apache Kafka 3.9.

With kafka-python, confluent-kafka (librdkafka), aiokafka and kcat: keyed records with every acks
setting, every compression codec, headers, null keys and tombstones, 900 KB values, reading from
earliest, latest and sought offsets, offsets by timestamp, the default partitioners, records
written by one client and read by another, and long polling. Consumers use manual assignment.
"""
from __future__ import annotations

import asyncio
import os
import re
import shutil

import pytest

from pykbroker.records import compression

from .clients import (CLIENTS, LIBRARIES, AioKafka, Confluent, KafkaPython, Kcat, Record,
                      by_partition, contents, create_topic, from_start, stored_batches)

needs_kcat = pytest.mark.skipif(shutil.which("kcat") is None,
                                reason="kcat is installed by `make test`")


def clients(*which):
    return [pytest.param(c, id=c.name, marks=[needs_kcat] if c is Kcat else []) for c in which]


CODECS = {"gzip": compression.GZIP, "snappy": compression.SNAPPY, "lz4": compression.LZ4,
          "zstd": compression.ZSTD}
HEADERS = (("origin", b"roundtrip"), ("trace", b"7f3a"))
KEYS = [b"alpha", b"bravo", b"charlie", b"delta", b"echo"]
T0 = 1_700_000_000_000  # record timestamps of the offsets-by-time scenarios (retention is off)


@pytest.fixture
def topic(request) -> str:
    """A topic name of the test's own."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name).strip("-")


def keyed_records(count: int, tag: str) -> list[Record]:
    return [Record(KEYS[i % len(KEYS)], f"{tag}-{i}".encode(), HEADERS) for i in range(count)]


def numbered(tag: str, count: int, partition: int = 0) -> list[Record]:
    return [Record(f"{tag}-key-{i}".encode(), f"{tag}-{i}".encode(), HEADERS, partition=partition)
            for i in range(count)]


def assert_round_trip(sent: list[Record], received: list[Record]) -> None:
    """`received` holds exactly the `sent` records (whose contents are unique), each partition's
    at consecutive offsets in the order they were sent, and at the partition, offset and
    timestamp the producer chose or was told, where it was."""
    assert sorted(contents(received), key=repr) == sorted(contents(sent), key=repr)
    partition_of = {r.content: r.partition for r in received}
    for partition, records in by_partition(received).items():
        first = records[0].offset
        assert [r.offset for r in records] == list(range(first, first + len(records)))
        assert contents(records) == [r.content for r in sent
                                     if partition_of[r.content] == partition]
    got = {r.content: r for r in received}
    for r in sent:
        assert r.partition is None or got[r.content].partition == r.partition, r
        assert r.offset is None or got[r.content].offset == r.offset, r
        assert r.timestamp is None or got[r.content].timestamp == r.timestamp, r


# -- what goes in comes out ------------------------------------------------------------------

@pytest.mark.parametrize("acks", [0, 1, "all"])
@pytest.mark.parametrize("client", clients(*CLIENTS))
def test_keyed_records_round_trip_with_every_acks_setting(broker, topic, client, acks):
    create_topic(broker.bootstrap, topic, partitions=3)
    sent = client.produce(broker.bootstrap, topic, keyed_records(30, topic), acks=acks)

    received = client.consume(broker.bootstrap, topic, from_start(3), 30)

    assert_round_trip(sent, received)
    if acks != 0 and client is not Kcat:
        assert all(r.offset is not None for r in sent)  # acknowledged with their offsets


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("client", clients(*CLIENTS))
def test_every_compression_codec_round_trips(broker, topic, client, codec):
    create_topic(broker.bootstrap, topic)
    records = [Record(f"key-{i}".encode(), f"{codec} value {i} ".encode() * 20, HEADERS,
                      partition=0) for i in range(50)]
    sent = client.produce(broker.bootstrap, topic, records, compression=codec, batch=True)

    received = client.consume(broker.bootstrap, topic, from_start(1), len(records))

    assert_round_trip(sent, received)
    assert {b.compression for b in stored_batches(broker.bootstrap, topic)} == {CODECS[codec]}


def unusual_records(client) -> list[Record]:
    """Repeated, empty, null and non-ASCII headers, null keys, null values and empty and binary
    keys and values: as many as the client lets a producer send."""
    headers = (("trace", b"1"), ("trace", b"2"), ("empty", b""), ("ünï", b"\xff"))
    if client.null_header_values:
        headers += (("null", None),)
    records = [Record(b"headers", b"value", headers),
               Record(None, b"a null key"),
               Record(b"tombstone", None),
               Record(b"", b""),
               Record(b"\x00binary\xff", bytes(range(256)))]
    if client.null_key_and_value:
        records.append(Record(None, None))
    return [Record(r.key, r.value, r.headers, partition=0) for r in records]


@pytest.mark.parametrize("client", clients(*LIBRARIES))
def test_headers_null_keys_and_tombstones_round_trip(broker, topic, client):
    create_topic(broker.bootstrap, topic)
    records = unusual_records(client)
    sent = client.produce(broker.bootstrap, topic, records)

    received = client.consume(broker.bootstrap, topic, from_start(1), len(records))

    assert_round_trip(sent, received)


@needs_kcat
def test_kcat_round_trips_headers_null_keys_and_tombstones(broker, topic):
    create_topic(broker.bootstrap, topic)
    headers = (("trace", b"1"), ("trace", b"2"), ("empty", b""))
    records = [Record(b"key", b"value", headers), Record(None, b"a null key", headers),
               Record(b"tombstone", None, headers), Record(None, None, headers)]
    Kcat.produce(broker.bootstrap, topic, records)

    for reader in (Kcat, Confluent):
        assert contents(reader.consume(broker.bootstrap, topic, from_start(1), 4)) == \
            contents(records)


LIBRDKAFKA_SMALL_FETCHES = {"fetch.max.bytes": 65536, "max.partition.fetch.bytes": 65536,
                            "message.max.bytes": 65536,  # librdkafka: at most fetch.max.bytes
                            "receive.message.max.bytes": 2_000_000}  # its cap on any response
SMALL_FETCHES = {  # fetch limits below the size of one record
    KafkaPython: {"fetch_max_bytes": 65536, "max_partition_fetch_bytes": 65536},
    AioKafka: {"fetch_max_bytes": 65536, "max_partition_fetch_bytes": 65536},
    Confluent: LIBRDKAFKA_SMALL_FETCHES,
    Kcat: LIBRDKAFKA_SMALL_FETCHES,
}


@pytest.mark.parametrize("client", clients(*CLIENTS))
def test_900_kb_values_round_trip(broker, topic, client):
    create_topic(broker.bootstrap, topic)
    records = [Record(f"big-{i}".encode(), os.urandom(460_800).hex().encode(), HEADERS,
                      partition=0) for i in range(3)]
    sent = client.produce(broker.bootstrap, topic, records, max_request_size=1_048_576)

    received = client.consume(broker.bootstrap, topic, from_start(1), len(records))
    # With fetch limits smaller than a record the first batch still comes whole (KIP-74).
    through_small_fetches = client.consume(broker.bootstrap, topic, from_start(1), len(records),
                                           **SMALL_FETCHES[client])

    assert_round_trip(sent, received)
    assert through_small_fetches == received


# -- where reading starts -------------------------------------------------------------------

def test_kafka_python_reads_from_earliest_from_latest_and_from_sought_offsets(broker, topic):
    from kafka import TopicPartition

    create_topic(broker.bootstrap, topic)
    old = KafkaPython.produce(broker.bootstrap, topic, numbered("old", 10))
    tp = TopicPartition(topic, 0)
    earliest = KafkaPython.consumer(broker.bootstrap, auto_offset_reset="earliest")
    latest = KafkaPython.consumer(broker.bootstrap, auto_offset_reset="latest")
    try:
        earliest.assign([tp])
        latest.assign([tp])
        assert latest.position(tp) == 10  # the end, looked up before the new records
        new = KafkaPython.produce(broker.bootstrap, topic, numbered("new", 3))

        assert contents(KafkaPython.poll(earliest, 13)) == contents(old + new)
        assert contents(KafkaPython.poll(latest, 3)) == contents(new)

        earliest.seek(tp, 6)
        assert [r.offset for r in KafkaPython.poll(earliest, 7)] == list(range(6, 13))
        earliest.seek_to_beginning(tp)
        assert contents(KafkaPython.poll(earliest, 13)) == contents(old + new)
    finally:
        earliest.close()
        latest.close()


def test_confluent_kafka_reads_from_earliest_from_latest_and_from_sought_offsets(broker, topic):
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, TopicPartition

    create_topic(broker.bootstrap, topic)
    old = Confluent.produce(broker.bootstrap, topic, numbered("old", 10))
    earliest = Confluent.consumer(broker.bootstrap)
    latest = Confluent.consumer(broker.bootstrap, **{"enable.partition.eof": True})
    try:
        earliest.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        latest.assign([TopicPartition(topic, 0, OFFSET_END)])
        # The end-of-partition event: `latest` looked up the end and has fetched up to it.
        message = latest.poll(10)
        assert message is not None and Confluent.is_partition_eof(message)
        assert message.offset() == 10
        new = Confluent.produce(broker.bootstrap, topic, numbered("new", 3))

        assert contents(Confluent.poll(earliest, 13)) == contents(old + new)
        assert contents(Confluent.poll(latest, 3)) == contents(new)

        earliest.seek(TopicPartition(topic, 0, 6))
        assert [r.offset for r in Confluent.poll(earliest, 7)] == list(range(6, 13))
        earliest.seek(TopicPartition(topic, 0, OFFSET_BEGINNING))
        assert contents(Confluent.poll(earliest, 13)) == contents(old + new)
    finally:
        earliest.close()
        latest.close()


def test_aiokafka_reads_from_earliest_from_latest_and_from_sought_offsets(broker, topic):
    from aiokafka import TopicPartition

    create_topic(broker.bootstrap, topic)
    old = AioKafka.produce(broker.bootstrap, topic, numbered("old", 10))
    tp = TopicPartition(topic, 0)

    async def scenario():
        earliest = AioKafka.consumer(broker.bootstrap, auto_offset_reset="earliest")
        latest = AioKafka.consumer(broker.bootstrap, auto_offset_reset="latest")
        await earliest.start()
        await latest.start()
        try:
            earliest.assign([tp])
            latest.assign([tp])
            assert await latest.position(tp) == 10  # the end, looked up before the new records
            new = await AioKafka.produce_async(broker.bootstrap, topic, numbered("new", 3))

            assert contents(await AioKafka.poll(earliest, 13)) == contents(old + new)
            assert contents(await AioKafka.poll(latest, 3)) == contents(new)

            earliest.seek(tp, 6)
            assert [r.offset for r in await AioKafka.poll(earliest, 7)] == list(range(6, 13))
            await earliest.seek_to_beginning(tp)
            assert contents(await AioKafka.poll(earliest, 13)) == contents(old + new)
        finally:
            await earliest.stop()
            await latest.stop()

    asyncio.run(scenario())


# -- offsets by timestamp, beginning and end ------------------------------------------------

def timestamped_records() -> list[list[Record]]:
    """Two batches: ten records 10 ms apart from T0, five more from T0 + 1000."""
    return [[Record(f"first-{i}".encode(), b"v", HEADERS, partition=0, timestamp=T0 + 10 * i)
             for i in range(10)],
            [Record(f"second-{i}".encode(), b"v", HEADERS, partition=0,
                    timestamp=T0 + 1000 + 10 * i) for i in range(5)]]


# (timestamp asked for, the first offset at or after it, that record's timestamp)
BY_TIME = [
    (T0 - 60_000, 0, T0),  # before every record: the first
    (T0, 0, T0),
    (T0 + 30, 3, T0 + 30),  # a record inside the first batch
    (T0 + 31, 4, T0 + 40),  # between two records inside the first batch
    (T0 + 95, 10, T0 + 1000),  # after the first batch: the start of the second
    (T0 + 1035, 14, T0 + 1040),
]
AFTER_EVERY_RECORD = T0 + 1041


def write_timestamped(client, bootstrap: str, topic: str, codec: str) -> None:
    """The two batches, compressed: finding a record inside one means decompressing it."""
    create_topic(bootstrap, topic, configs={"retention.ms": "-1"})
    for records in timestamped_records():
        client.produce(bootstrap, topic, records, batch=True, compression=codec)
    assert [(b.records_count, b.compression) for b in stored_batches(bootstrap, topic)] == \
        [(10, CODECS[codec]), (5, CODECS[codec])]


def test_kafka_python_finds_offsets_by_timestamp_and_the_beginning_and_end(broker, topic):
    from kafka import TopicPartition
    from kafka.structs import OffsetAndTimestamp

    write_timestamped(KafkaPython, broker.bootstrap, topic, "gzip")
    tp = TopicPartition(topic, 0)
    consumer = KafkaPython.consumer(broker.bootstrap)
    try:
        for timestamp, offset, found in BY_TIME:
            assert consumer.offsets_for_times({tp: timestamp}) == \
                {tp: OffsetAndTimestamp(offset, found, 0)}, timestamp
        assert consumer.offsets_for_times({tp: AFTER_EVERY_RECORD}) == {tp: None}
        assert consumer.beginning_offsets([tp]) == {tp: 0}
        assert consumer.end_offsets([tp]) == {tp: 15}
    finally:
        consumer.close()


def test_confluent_kafka_finds_offsets_by_timestamp_and_the_beginning_and_end(broker, topic):
    from confluent_kafka import OFFSET_END, TopicPartition
    from confluent_kafka.admin import AdminClient, OffsetSpec

    write_timestamped(Confluent, broker.bootstrap, topic, "lz4")
    tp = TopicPartition(topic, 0)
    consumer = Confluent.consumer(broker.bootstrap)
    try:
        for timestamp, offset, _ in BY_TIME:
            [found] = consumer.offsets_for_times([TopicPartition(topic, 0, timestamp)], 10)
            assert (found.error, found.offset) == (None, offset), timestamp
        [after] = consumer.offsets_for_times([TopicPartition(topic, 0, AFTER_EVERY_RECORD)], 10)
        assert after.offset == OFFSET_END
        assert consumer.get_watermark_offsets(tp, 10) == (0, 15)
    finally:
        consumer.close()

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})

    def listed(spec) -> tuple[int, int]:
        answer = admin.list_offsets({tp: spec}, request_timeout=10)[tp].result(10)
        return answer.offset, answer.timestamp

    assert listed(OffsetSpec.earliest()) == (0, -1)
    assert listed(OffsetSpec.latest()) == (15, -1)
    assert listed(OffsetSpec.max_timestamp()) == (14, T0 + 1040)
    for timestamp, offset, found in BY_TIME:
        assert listed(OffsetSpec.for_timestamp(timestamp)) == (offset, found), timestamp


def test_aiokafka_finds_offsets_by_timestamp_and_the_beginning_and_end(broker, topic):
    from aiokafka import TopicPartition

    write_timestamped(AioKafka, broker.bootstrap, topic, "zstd")
    tp = TopicPartition(topic, 0)

    async def scenario():
        consumer = AioKafka.consumer(broker.bootstrap)
        await consumer.start()
        try:
            for timestamp, offset, found in BY_TIME:
                [(_, answer)] = (await consumer.offsets_for_times({tp: timestamp})).items()
                assert (answer.offset, answer.timestamp) == (offset, found), timestamp
            assert await consumer.offsets_for_times({tp: AFTER_EVERY_RECORD}) == {tp: None}
            assert await consumer.beginning_offsets([tp]) == {tp: 0}
            assert await consumer.end_offsets([tp]) == {tp: 15}
        finally:
            await consumer.stop()

    asyncio.run(scenario())


@needs_kcat
def test_kcat_reads_from_the_beginning_an_offset_an_offset_from_the_end_and_a_timestamp(
        broker, topic):
    write_timestamped(Confluent, broker.bootstrap, topic, "snappy")
    every = [r for batch in timestamped_records() for r in batch]

    def offsets(start: str) -> list[int]:
        return [r.offset for r in Kcat.consume(broker.bootstrap, topic, {0: start}, 15)]

    assert contents(Kcat.consume(broker.bootstrap, topic, from_start(1), 15)) == contents(every)
    assert offsets("6") == list(range(6, 15))
    assert offsets("-3") == [12, 13, 14]
    assert offsets(f"s@{T0 + 31}") == list(range(4, 15))


# -- partitioning -----------------------------------------------------------------------------

@pytest.mark.parametrize("client", clients(*CLIENTS))
def test_the_default_partitioner_puts_every_record_of_a_key_in_one_partition(broker, topic,
                                                                             client):
    create_topic(broker.bootstrap, topic, partitions=6)
    keys = [f"user-{n}".encode() for n in range(8)]
    records = [Record(keys[i % len(keys)], f"{topic}-{i}".encode(), HEADERS) for i in range(80)]
    sent = client.produce(broker.bootstrap, topic, records)

    received = client.consume(broker.bootstrap, topic, from_start(6), len(records))

    assert_round_trip(sent, received)
    partitions_of: dict[bytes, set[int]] = {}
    for r in received:
        partitions_of.setdefault(r.key, set()).add(r.partition)
    assert all(len(partitions) == 1 for partitions in partitions_of.values()), partitions_of
    assert len(set().union(*partitions_of.values())) > 1  # the keys spread over the topic


# -- across clients ---------------------------------------------------------------------------

@pytest.mark.parametrize(("writer", "codec"), [
    pytest.param(writer, codec, id=f"{writer.name}-{codec}",
                 marks=[needs_kcat] if writer is Kcat else [])
    for writer, codec in [(Confluent, "lz4"), (KafkaPython, "zstd"), (AioKafka, "snappy"),
                          (Kcat, "gzip")]])
def test_what_one_client_writes_every_other_client_reads_identically(broker, topic, writer,
                                                                     codec):
    create_topic(broker.bootstrap, topic)
    timestamp = (lambda i: None) if writer is Kcat else (lambda i: T0 + i)
    records = [Record(KEYS[i % len(KEYS)], f"{writer.name} wrote {i} ".encode() * 8, HEADERS,
                      partition=0, timestamp=timestamp(i)) for i in range(40)]
    records += [Record(None, b"a null key", HEADERS, partition=0, timestamp=timestamp(40)),
                Record(b"tombstone", None, HEADERS, partition=0, timestamp=timestamp(41))]
    sent = writer.produce(broker.bootstrap, topic, records, compression=codec, batch=True)
    assert {b.compression for b in stored_batches(broker.bootstrap, topic)} == {CODECS[codec]}

    readers = [c for c in CLIENTS if c is not writer and (c is not Kcat or shutil.which("kcat"))]
    readings = {reader.name: reader.consume(broker.bootstrap, topic, from_start(1), len(records))
                for reader in readers}

    for received in readings.values():
        assert_round_trip(sent, received)
    assert len({tuple(received) for received in readings.values()}) == 1  # offsets, times too


# -- long polling -----------------------------------------------------------------------------
# Each consumer reads a first record from partition 0 of three, then waits at the end of all of
# them with a fetch that the broker may hold for 30 s; a record produced meanwhile to partition 2
# must reach it within a 10 s poll: the broker answers as soon as data arrives.

LONG_WAIT_MS = 30_000
SHORTER_POLL_SECONDS = 10


def test_kafka_python_long_polling_the_end_of_a_partition_gets_a_new_record_promptly(broker,
                                                                                     topic):
    from kafka import TopicPartition

    create_topic(broker.bootstrap, topic, partitions=3)
    first = KafkaPython.produce(broker.bootstrap, topic, numbered("first", 1, partition=0))
    consumer = KafkaPython.consumer(broker.bootstrap, fetch_max_wait_ms=LONG_WAIT_MS,
                                    fetch_min_bytes=1, request_timeout_ms=2 * LONG_WAIT_MS)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(3)])
        assert contents(KafkaPython.poll(consumer, 1)) == contents(first)
        assert KafkaPython.poll(consumer, 1, seconds=0.5) == []  # now waiting at the end
        new = KafkaPython.produce(broker.bootstrap, topic, numbered("new", 1, partition=2))

        assert contents(KafkaPython.poll(consumer, 1, SHORTER_POLL_SECONDS)) == contents(new)
    finally:
        consumer.close()


def test_confluent_kafka_long_polling_the_end_of_a_partition_gets_a_new_record_promptly(broker,
                                                                                        topic):
    from confluent_kafka import TopicPartition

    create_topic(broker.bootstrap, topic, partitions=3)
    first = Confluent.produce(broker.bootstrap, topic, numbered("first", 1, partition=0))
    consumer = Confluent.consumer(broker.bootstrap, **{"fetch.wait.max.ms": LONG_WAIT_MS,
                                                       "fetch.min.bytes": 1})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(3)])
        assert contents(Confluent.poll(consumer, 1)) == contents(first)
        assert Confluent.poll(consumer, 1, seconds=0.5) == []  # now waiting at the end
        new = Confluent.produce(broker.bootstrap, topic, numbered("new", 1, partition=2))

        assert contents(Confluent.poll(consumer, 1, SHORTER_POLL_SECONDS)) == contents(new)
    finally:
        consumer.close()


def test_aiokafka_long_polling_the_end_of_a_partition_gets_a_new_record_promptly(broker, topic):
    from aiokafka import TopicPartition

    create_topic(broker.bootstrap, topic, partitions=3)
    first = AioKafka.produce(broker.bootstrap, topic, numbered("first", 1, partition=0))

    async def scenario():
        consumer = AioKafka.consumer(broker.bootstrap, fetch_max_wait_ms=LONG_WAIT_MS,
                                     fetch_min_bytes=1, request_timeout_ms=2 * LONG_WAIT_MS)
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, p) for p in range(3)])
            assert contents(await AioKafka.poll(consumer, 1)) == contents(first)
            assert await AioKafka.poll(consumer, 1, seconds=0.5) == []  # now waiting at the end
            new = await AioKafka.produce_async(broker.bootstrap, topic,
                                               numbered("new", 1, partition=2))

            assert contents(await AioKafka.poll(consumer, 1, SHORTER_POLL_SECONDS)) == \
                contents(new)
        finally:
            await consumer.stop()

    asyncio.run(scenario())
