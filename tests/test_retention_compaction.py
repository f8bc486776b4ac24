"""Retention, compaction and DeleteRecords end to end: the broker's background jobs at short
intervals, seen through ListOffsets, Fetch, real consumers and the partition directory."""
from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as CkTopicPartition
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.errors import OffsetOutOfRangeError

from pykbroker.records.records import build_batch
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.wire import WireClient

from .client_helpers import (
    INVALID_RECORD, OFFSET_OUT_OF_RANGE, alter_topic_configs, as_tuples, create_topic, fetch,
    kafka_python_read, log_end_offset, log_start_offset, produce_all, produce_batch, producer,
    read_by_fetch, read_partition, segment_bases, segment_size, wait_until,
)

HOUR_MS = 3600 * 1000
SEGMENT_BYTES = 16384
MAINTENANCE = {"log.retention.check.interval.ms": "100", "log.cleaner.backoff.ms": "100"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """One broker whose retention and cleaner jobs run every 100 ms."""
    with BrokerProcess(tmp_path_factory.mktemp("maintained"), MAINTENANCE) as running:
        yield running


def first_consumed_offset(bootstrap: str, topic: str, start: int) -> int:
    """Where a consumer assigned at `start` with auto.offset.reset=earliest begins reading."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused",
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    try:
        consumer.assign([CkTopicPartition(topic, 0, start)])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                return message.offset()
        raise AssertionError("nothing consumed")
    finally:
        consumer.close()


def produce_expired_then_fresh(bootstrap: str, topic: str, expired: int, fresh: int) -> list:
    """`expired` records stamped two hours ago, then `fresh` ones stamped now (500-byte values)."""
    two_hours_ago = int(time.time() * 1000) - 2 * HOUR_MS
    records = [(0, b"old-%d" % i, b"o" * 500, two_hours_ago) for i in range(expired)]
    records += [(0, b"new-%d" % i, b"n" * 500) for i in range(fresh)]
    return as_tuples(produce_all(bootstrap, topic, records))


def segment_holding(broker, topic: str, offset: int) -> int:
    return max(base for base in segment_bases(broker, topic) if base <= offset)


# -- retention by size -------------------------------------------------------------------------

def test_retention_bytes_deletes_the_oldest_segments_and_moves_the_log_start_offset(broker):
    retention_bytes = 40000
    create_topic(broker.bootstrap, "by-size", config={
        "segment.bytes": str(SEGMENT_BYTES), "retention.bytes": str(retention_bytes)})
    written = as_tuples(produce_all(broker.bootstrap, "by-size", [
        (0, b"k%d" % i, b"%04d" % i + b"." * 1000) for i in range(160)]))
    active_base = segment_bases(broker, "by-size")[-1]

    def retention_done():
        bases = segment_bases(broker, "by-size")
        try:
            sizes = [segment_size(broker, "by-size", base) for base in bases]
        except FileNotFoundError:  # a segment deleted between the listing and its size: not done yet
            return False
        start = log_start_offset(broker.bootstrap, "by-size")
        return (start > 0 and bases[0] == start and sum(sizes) >= retention_bytes
                and sum(sizes) - sizes[0] < retention_bytes and start)

    start = wait_until(retention_done, what="size-based retention")
    assert segment_bases(broker, "by-size")[-1] == active_base  # the active segment stays
    assert log_end_offset(broker.bootstrap, "by-size") == 160
    assert as_tuples(read_partition(broker.bootstrap, "by-size", start=start)) == written[start:]

    below = fetch(broker.bootstrap, "by-size", 0)
    assert below.error_code == OFFSET_OUT_OF_RANGE
    # as Kafka, a failed partition carries no offsets
    assert (below.high_watermark, below.log_start_offset, below.records) == (-1, -1, b"")
    at_start = fetch(broker.bootstrap, "by-size", start)
    assert at_start.error_code == 0
    assert (at_start.log_start_offset, at_start.high_watermark) == (start, 160)
    assert at_start.records

    assert first_consumed_offset(broker.bootstrap, "by-size", 0) == start


def test_a_kafka_python_consumer_below_the_log_start_resets_to_it(broker):
    create_topic(broker.bootstrap, "by-size-kp", config={
        "segment.bytes": str(SEGMENT_BYTES), "retention.bytes": "20000"})
    produce_all(broker.bootstrap, "by-size-kp", [(0, None, b"." * 1000) for _ in range(80)])
    start = wait_until(lambda: log_start_offset(broker.bootstrap, "by-size-kp"),
                       what="size-based retention")
    tp = TopicPartition("by-size-kp", 0)
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None,
                             enable_auto_commit=False, auto_offset_reset="none")
    try:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        with pytest.raises(OffsetOutOfRangeError):
            for _ in range(20):
                consumer.poll(timeout_ms=500)
    finally:
        consumer.close()
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None,
                             enable_auto_commit=False, auto_offset_reset="earliest")
    try:
        consumer.assign([tp])
        consumer.seek(tp, 0)
        first = next(iter(consumer))
        assert first.offset == log_start_offset(broker.bootstrap, "by-size-kp") >= start
    finally:
        consumer.close()


# -- retention by time -------------------------------------------------------------------------

def test_retention_ms_deletes_segments_whose_newest_record_expired(broker):
    create_topic(broker.bootstrap, "by-time", config={
        "segment.bytes": str(SEGMENT_BYTES), "retention.ms": str(HOUR_MS)})
    written = produce_expired_then_fresh(broker.bootstrap, "by-time", expired=100, fresh=20)
    first_fresh = 100
    expected_start = segment_holding(broker, "by-time", first_fresh)
    assert expected_start > 0

    wait_until(lambda: log_start_offset(broker.bootstrap, "by-time") == expected_start,
               what="time-based retention")
    # the expired segments' files are renamed to .deleted just after the log start moves
    wait_until(lambda: segment_bases(broker, "by-time")[0] == expected_start,
               what="the expired segments' files to go")
    # the segment holding fresh records stays whole, expired records included
    assert as_tuples(read_partition(broker.bootstrap, "by-time")) == written[expected_start:]
    assert fetch(broker.bootstrap, "by-time", expected_start - 1).error_code == OFFSET_OUT_OF_RANGE


def test_when_every_segment_expired_a_new_segment_is_rolled_and_producing_continues(broker):
    create_topic(broker.bootstrap, "all-expired", config={
        "segment.bytes": str(SEGMENT_BYTES), "retention.ms": str(HOUR_MS)})
    produce_expired_then_fresh(broker.bootstrap, "all-expired", expired=60, fresh=0)

    wait_until(lambda: log_start_offset(broker.bootstrap, "all-expired") == 60,
               what="time-based retention of the whole log")
    assert log_end_offset(broker.bootstrap, "all-expired") == 60
    wait_until(lambda: segment_bases(broker, "all-expired") == [60], what="the expired segments' files to go")
    assert read_partition(broker.bootstrap, "all-expired") == []

    appended = produce_all(broker.bootstrap, "all-expired", [(0, b"k", b"after")])
    assert appended[0].offset() == 60
    assert as_tuples(read_partition(broker.bootstrap, "all-expired")) == [(60, b"k", b"after")]


# -- compaction --------------------------------------------------------------------------------

COMPACTED = {"cleanup.policy": "compact", "segment.bytes": str(SEGMENT_BYTES),
             "min.cleanable.dirty.ratio": "0.01"}


def keys_repeat_below(records, offset: int) -> bool:
    keys = [key for record_offset, key, _ in records if record_offset < offset]
    return len(keys) != len(set(keys))


def wait_until_compacted(broker, topic: str, read=None) -> list[tuple]:
    """Wait until no key repeats below the active segment; returns the records then read."""
    active_base = segment_bases(broker, topic)[-1]
    assert active_base > 0, "nothing to compact: a single segment"
    read = read or (lambda: as_tuples(read_partition(broker.bootstrap, topic)))

    def compacted():
        records = read()
        return None if keys_repeat_below(records, active_base) else records
    return wait_until(compacted, what=f"compaction of {topic}", interval=0.3)


def test_compaction_keeps_the_latest_value_of_each_key_at_its_offset(broker):
    create_topic(broker.bootstrap, "latest", config=COMPACTED)
    written = as_tuples(produce_all(broker.bootstrap, "latest", [
        (0, b"key-%02d" % k, b"round-%02d-" % r + b"." * 150)
        for r in range(15) for k in range(40)]))
    latest = {}
    for offset, key, value in written:
        latest[key] = (offset, key, value)

    records = wait_until_compacted(broker, "latest")
    assert len(records) < len(written)
    assert set(records) <= set(written)  # offsets preserved, records unchanged
    assert set(latest.values()) <= set(records)
    last_seen = {}
    for offset, key, value in records:
        last_seen[key] = value
    assert last_seen == {key: value for _, key, value in latest.values()}
    assert log_start_offset(broker.bootstrap, "latest") == 0
    assert log_end_offset(broker.bootstrap, "latest") == len(written)


def test_consumers_read_past_segments_that_compaction_emptied(broker):
    # written before the topic turns compacted, so that one cleaning pass sees every segment
    create_topic(broker.bootstrap, "emptied", config={
        **COMPACTED, "cleanup.policy": "delete", "segment.bytes": "2048"})
    with WireClient(broker.bootstrap) as wire:
        for round_ in range(16):  # about one batch per segment, each superseded by the next
            batch = build_batch([(b"key-%d" % (i % 5), b"%02d-%02d-" % (round_, i) + b"." * 40)
                                 for i in range(20)])
            assert produce_batch(wire, "emptied", batch).base_offset == 20 * round_
    assert segment_bases(broker, "emptied")[-1] >= 12 * 20
    alter_topic_configs(broker.bootstrap, "emptied", {"cleanup.policy": "compact"})

    records = wait_until_compacted(broker, "emptied",
                                   read=lambda: read_by_fetch(broker.bootstrap, "emptied"))
    assert len(records) < 20 * 4
    assert as_tuples(read_partition(broker.bootstrap, "emptied")) == records
    assert kafka_python_read(broker.bootstrap, "emptied", end=320) == records


@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_a_compacted_log_reads_the_same_after_a_restart(tmp_path, stop):
    with BrokerProcess(tmp_path / "broker", MAINTENANCE) as broker:
        create_topic(broker.bootstrap, "compacted", config=COMPACTED)
        written = as_tuples(produce_all(broker.bootstrap, "compacted", [
            (0, b"key-%02d" % k, b"round-%02d-" % r + b"." * 150)
            for r in range(10) for k in range(30)]))
        records = wait_until_compacted(broker, "compacted")
        assert len(records) < len(written)

        broker.stop() if stop == "sigterm" else broker.kill()
        broker.start()
        assert as_tuples(read_partition(broker.bootstrap, "compacted")) == records
        appended = produce_all(broker.bootstrap, "compacted", [(0, b"key-00", b"after restart")])
        assert appended[0].offset() == len(written)


def write_then_delete(broker, topic: str) -> dict:
    """Ten keys with three values each, tombstones for the first five, then other keys enough
    to roll the tombstones out of the active segment. Returns {key: tombstone offset}."""
    produce_all(broker.bootstrap, topic, [
        (0, b"doomed-%d" % k, b"v%d" % r + b"." * 150) for r in range(3) for k in range(10)])
    tombstones = produce_all(broker.bootstrap, topic,
                             [(0, b"doomed-%d" % k, None) for k in range(5)])
    produce_all(broker.bootstrap, topic,
                [(0, b"filler-%d" % (i % 20), b"." * 500) for i in range(80)])
    assert segment_bases(broker, topic)[-1] > tombstones[-1].offset()
    return {m.key(): m.offset() for m in tombstones}


def test_tombstones_are_kept_while_delete_retention_lasts(broker):
    create_topic(broker.bootstrap, "tombstones-kept",
                 config={**COMPACTED, "delete.retention.ms": str(24 * HOUR_MS)})
    tombstones = write_then_delete(broker, "tombstones-kept")

    def deleted_values_gone():
        records = as_tuples(read_partition(broker.bootstrap, "tombstones-kept"))
        doomed = [r for r in records if r[1] in tombstones]
        return doomed if all(value is None for _, _, value in doomed) else None

    doomed = wait_until(deleted_values_gone, what="compaction", interval=0.3)
    assert doomed == [(offset, key, None) for key, offset in tombstones.items()]


def test_tombstones_are_removed_once_delete_retention_has_passed(broker):
    create_topic(broker.bootstrap, "tombstones-removed",
                 config={**COMPACTED, "delete.retention.ms": "0"})
    tombstones = write_then_delete(broker, "tombstones-removed")
    survivors = {b"doomed-%d" % k for k in range(5, 10)}

    def tombstones_gone():
        # newly dirty data makes the cleaner pass again, past the tombstones' delete horizon
        produce_all(broker.bootstrap, "tombstones-removed",
                    [(0, b"filler-%d" % (i % 20), b"." * 500) for i in range(40)])
        records = as_tuples(read_partition(broker.bootstrap, "tombstones-removed"))
        keys = {key for _, key, _ in records}
        return records if not keys & set(tombstones) else None

    records = wait_until(tombstones_gone, what="tombstone removal", interval=0.3)
    assert {key for _, key, _ in records if key.startswith(b"doomed")} == survivors
    assert all(value is not None for _, _, value in records)


def test_a_record_without_key_is_rejected_by_a_compacted_topic(broker):
    create_topic(broker.bootstrap, "keys-only", config={"cleanup.policy": "compact"})
    client = producer(broker.bootstrap)
    outcomes = []
    for key, value in ((None, b"no key"), (b"k", b"keyed")):
        client.produce("keys-only", key=key, value=value, partition=0,
                       on_delivery=lambda error, message: outcomes.append(error))
        assert client.flush(20) == 0
    assert outcomes[0] is not None and outcomes[0].code() == KafkaError.INVALID_RECORD
    assert outcomes[1] is None

    with WireClient(broker.bootstrap) as wire:
        answer = produce_batch(wire, "keys-only", build_batch([(b"k1", b"a"), (None, b"b")]))
    assert answer.error_code == INVALID_RECORD
    assert [error.batch_index for error in answer.record_errors] == [1]
    assert as_tuples(read_partition(broker.bootstrap, "keys-only")) == [(0, b"k", b"keyed")]


def test_compact_delete_also_deletes_by_retention(broker):
    create_topic(broker.bootstrap, "compact-delete", config={
        **COMPACTED, "cleanup.policy": "compact,delete", "retention.ms": str(HOUR_MS)})
    written = produce_expired_then_fresh(broker.bootstrap, "compact-delete", expired=100, fresh=20)
    expected_start = segment_holding(broker, "compact-delete", 100)
    assert expected_start > 0

    wait_until(lambda: log_start_offset(broker.bootstrap, "compact-delete") == expected_start,
               what="time-based retention")
    assert as_tuples(read_partition(broker.bootstrap, "compact-delete")) == written[expected_start:]


# -- DeleteRecords -----------------------------------------------------------------------------

def test_delete_records_moves_the_log_start_offset(tmp_path):
    with BrokerProcess(tmp_path / "broker", MAINTENANCE) as broker:
        create_topic(broker.bootstrap, "trim", config={"segment.bytes": "4096"})
        written = as_tuples(produce_all(broker.bootstrap, "trim", [
            (0, b"k%d" % i, b"." * 200) for i in range(100)]))
        tp = TopicPartition("trim", 0)
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            result = admin.delete_records({tp: 50})
            assert result[tp]["low_watermark"] == 50
            with pytest.raises(OffsetOutOfRangeError):  # past the high watermark
                admin.delete_records({tp: 101})
        finally:
            admin.close()

        assert log_start_offset(broker.bootstrap, "trim") == 50
        assert fetch(broker.bootstrap, "trim", 49).error_code == OFFSET_OUT_OF_RANGE
        assert fetch(broker.bootstrap, "trim", 50).log_start_offset == 50
        assert first_consumed_offset(broker.bootstrap, "trim", 0) == 50
        assert as_tuples(read_partition(broker.bootstrap, "trim", start=50)) == written[50:]
        def first_segment_holds_the_log_start():
            bases = segment_bases(broker, "trim")
            return bases[0] <= 50 and (len(bases) == 1 or bases[1] > 50)
        # whole segments below the new start go at the next retention run
        wait_until(first_segment_holds_the_log_start, what="segments below the log start deleted")

        broker.stop()
        broker.start()
        assert log_start_offset(broker.bootstrap, "trim") == 50
        assert as_tuples(read_partition(broker.bootstrap, "trim", start=50)) == written[50:]
        assert produce_all(broker.bootstrap, "trim", [(0, None, b"more")])[0].offset() == 100

        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            # -1 stands for the high watermark
            assert admin.delete_records({tp: -1})[tp]["low_watermark"] == 101
        finally:
            admin.close()
        assert log_start_offset(broker.bootstrap, "trim") == 101
        assert log_end_offset(broker.bootstrap, "trim") == 101
        assert read_partition(broker.bootstrap, "trim") == []
