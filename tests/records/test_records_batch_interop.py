"""Magic 2 batches agree with kafka-python's independent implementation, both ways."""
import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from pykbroker.records import batch
from pykbroker.records.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from pykbroker.records.records import (
    Record,
    build_batch,
    decode_batch,
    iter_batches,
    iter_records,
)

CODECS = [NONE, GZIP, SNAPPY, LZ4, ZSTD]
DETERMINISTIC_CODECS = [NONE, SNAPPY, ZSTD]  # same library, same settings as kafka-python
T0 = 1_700_000_000_000

# (key, value, headers, timestamp): nulls, empties, headers, a timestamp earlier than the first
RECORDS = [
    (b"key-0", b"value " * 20, [], T0),
    (None, b"value " * 20, [("trace", b"abc"), ("empty", b""), ("null", None)], T0 + 5),
    (b"key-2", None, [], T0 - 3),
    (b"", b"", [("h\u00e9", b"\x00\xff")], T0 + 1000),
    (b"k" * 300, b"v" * 5000, [], T0 + 2),
]


def kafka_python_batch(records, compression=NONE, producer_id=-1, producer_epoch=-1,
                       base_sequence=-1, transactional=False):
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=transactional,
        producer_id=producer_id, producer_epoch=producer_epoch,
        base_sequence=base_sequence, batch_size=1 << 20)
    for offset, (key, value, headers, timestamp) in enumerate(records):
        builder.append(offset, timestamp=timestamp, key=key, value=value, headers=headers)
    return bytes(builder.build())


def as_tuples(kafka_records):
    return [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in kafka_records]


def expected_tuples(records, base_offset=0):
    return [(base_offset + i, ts, key, value, headers)
            for i, (key, value, headers, ts) in enumerate(records)]


# -- what we build, kafka-python reads ----------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_reads_our_batch(codec):
    data = build_batch(RECORDS, base_offset=42, compression=codec)
    theirs = DefaultRecordBatch(data)
    assert theirs.validate_crc()
    assert theirs.base_offset == 42
    assert theirs.compression_type == codec
    assert theirs.records_count == len(RECORDS)
    assert theirs.last_offset_delta == len(RECORDS) - 1
    assert theirs.first_timestamp == T0
    assert theirs.max_timestamp == T0 + 1000
    assert as_tuples(theirs) == expected_tuples(RECORDS, base_offset=42)


@pytest.mark.parametrize("codec", DETERMINISTIC_CODECS)
def test_our_batch_is_byte_for_byte_kafka_pythons(codec):
    ours = build_batch(RECORDS, compression=codec, partition_leader_epoch=0)
    assert ours == kafka_python_batch(RECORDS, compression=codec)


def test_idempotent_and_transactional_fields_are_byte_for_byte_kafka_pythons():
    ours = build_batch(RECORDS, producer_id=1234, producer_epoch=7, base_sequence=99,
                       is_transactional=True, partition_leader_epoch=0)
    theirs = kafka_python_batch(RECORDS, producer_id=1234, producer_epoch=7, base_sequence=99,
                                transactional=True)
    assert ours == theirs
    read_back = DefaultRecordBatch(ours)
    assert (read_back.producer_id, read_back.producer_epoch, read_back.base_sequence) == (1234, 7, 99)
    assert read_back.is_transactional and not read_back.is_control_batch


def test_kafka_python_reads_several_of_our_batches_in_one_buffer():
    buffer = (build_batch(RECORDS[:2], base_offset=0, compression=GZIP)
              + build_batch(RECORDS[2:], base_offset=2, compression=LZ4))
    seen = []
    for theirs in MemoryRecords(buffer):
        assert theirs.validate_crc()
        seen.extend(as_tuples(theirs))
    assert seen == expected_tuples(RECORDS)


# -- what kafka-python builds, we read ----------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_we_read_kafka_pythons_batch(codec):
    data = kafka_python_batch(RECORDS, compression=codec, producer_id=5, producer_epoch=1,
                              base_sequence=10)
    header, records = decode_batch(data)
    assert header == batch.parse_header(data)
    assert header.compression == codec
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (5, 1, 10)
    assert header.last_sequence == 10 + len(RECORDS) - 1
    assert header.size == len(data)
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records] == \
        expected_tuples(RECORDS)


@pytest.mark.parametrize("codec", CODECS)
def test_our_header_parsing_agrees_with_kafka_python(codec):
    data = kafka_python_batch(RECORDS, compression=codec)
    ours, theirs = batch.parse_header(data), DefaultRecordBatch(data)
    assert (ours.base_offset, ours.partition_leader_epoch, ours.magic, ours.crc,
            ours.attributes, ours.last_offset_delta, ours.base_timestamp, ours.max_timestamp,
            ours.producer_id, ours.producer_epoch, ours.base_sequence, ours.records_count,
            ours.size, ours.next_offset) == (
        theirs.base_offset, theirs.leader_epoch, theirs.magic, theirs.crc,
        theirs.attributes, theirs.last_offset_delta, theirs.first_timestamp,
        theirs.max_timestamp, theirs.producer_id, theirs.producer_epoch,
        theirs.base_sequence, theirs.records_count, theirs.size_in_bytes, theirs.next_offset)
    assert batch.is_crc_valid(data, 0, ours)


def test_decoded_records_rebuild_into_the_same_bytes():
    original = build_batch(RECORDS, compression=SNAPPY, base_offset=7)
    header, records = decode_batch(original)
    rebuilt = build_batch(records, compression=SNAPPY, base_offset=7,
                          base_timestamp=header.base_timestamp)
    assert rebuilt == original


# -- offsets, timestamps, in-place rewrites ------------------------------------------------

def test_assigning_the_base_offset_keeps_the_crc_valid():
    data = bytearray(build_batch(RECORDS, compression=ZSTD))
    header = batch.parse_header(data)
    batch.set_base_offset(data, 0, 1_000_000)
    batch.set_partition_leader_epoch(data, 0, 9)
    batch.check_crc(data, 0, batch.parse_header(data))
    assert DefaultRecordBatch(bytes(data)).validate_crc()
    new_header, records = decode_batch(data)
    assert new_header.crc == header.crc and new_header.partition_leader_epoch == 9
    assert [r.offset for r in records] == list(range(1_000_000, 1_000_000 + len(RECORDS)))


def test_log_append_time_rewrite_is_seen_by_kafka_python():
    data = bytearray(build_batch(RECORDS, compression=GZIP))
    batch.set_log_append_time(data, 0, batch.parse_header(data), T0 + 99_999)
    theirs = DefaultRecordBatch(bytes(data))
    assert theirs.validate_crc()
    assert theirs.timestamp_type == 1
    assert {r.timestamp for r in theirs} == {T0 + 99_999}
    header, records = decode_batch(data)
    assert header.is_log_append_time
    assert {r.timestamp for r in records} == {T0 + 99_999}


def test_built_log_append_time_batch_reports_the_max_timestamp_for_every_record():
    data = build_batch(RECORDS, log_append_time=True, max_timestamp=T0 + 50)
    assert {r.timestamp for r in DefaultRecordBatch(data)} == {T0 + 50}
    assert {r.timestamp for r in decode_batch(data)[1]} == {T0 + 50}


def test_tuples_default_to_one_timestamp_and_consecutive_offsets():
    header, records = decode_batch(build_batch([(b"a", b"1"), ("b", "2", [("h", "x")])],
                                               base_timestamp=T0))
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records] == [
        (0, T0, b"a", b"1", []), (1, T0, b"b", b"2", [("h", b"x")])]
    assert header.base_timestamp == header.max_timestamp == T0


def test_record_objects_keep_their_deltas():
    records = [Record(0, 0, b"a", b"1"), Record(5, -10, None, b"2")]  # a compaction gap
    header, decoded = decode_batch(build_batch(records, base_offset=100, base_timestamp=T0))
    assert decoded == records
    assert [(r.offset, r.timestamp) for r in decoded] == [(100, T0), (105, T0 - 10)]
    assert header.last_offset_delta == 5 and header.max_timestamp == T0


def test_empty_batch_like_compaction_leaves():
    data = build_batch([], base_offset=10, last_offset_delta=4)
    header, records = decode_batch(data)
    assert records == [] and header.records_count == 0
    assert header.next_offset == 15
    assert (header.base_timestamp, header.max_timestamp) == (-1, -1)
    assert list(DefaultRecordBatch(data)) == []


def test_iter_records_walks_every_batch_and_may_stop_at_a_partial_tail():
    first = build_batch(RECORDS[:2], base_offset=0, compression=GZIP)
    second = build_batch(RECORDS[2:], base_offset=2)
    assert [r.offset for r in iter_records(first + second)] == list(range(len(RECORDS)))
    assert [h.base_offset for h, _ in iter_batches(first + second)] == [0, 2]
    partial = first + second[:-1]
    assert [r.offset for r in iter_records(partial, allow_partial_tail=True)] == [0, 1]
