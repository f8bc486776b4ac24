"""Magic 0/1 message sets: interop with kafka-python, validation, up- and down-conversion."""
import importlib.util
import random
import struct
import zlib

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatch, LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from pykbroker.records import batch
from pykbroker.records.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD, compress, decompress
from pykbroker.records.control import build_end_txn_marker
from pykbroker.records.errors import (
    CorruptRecordError,
    InvalidRecordError,
    UnsupportedCompressionError,
)
from pykbroker.records.legacy import (
    NO_TIMESTAMP,
    build_message_set,
    decode_message_set,
    downconvert,
    encode_message,
    parse_message,
    parse_message_set,
    upconvert_to_v2,
)
from pykbroker.records.lz4_kafka import MAGIC_0_HEADER_CHECKSUM
from pykbroker.records.records import Record, build_batch, decode_batch

T0 = 1_700_000_000_000
ENTRIES = [(b"k0", b"value " * 10, T0), (None, b"value " * 12, T0 + 7), (b"k2", None, T0 - 2),
           (b"", b"", T0 + 1)]
LEGACY_CODECS = [NONE, GZIP, SNAPPY, LZ4]
has_xxhash = importlib.util.find_spec("xxhash") is not None


def needs_old_lz4(magic, codec):
    """kafka-python reads and writes magic 0 LZ4 only with the optional xxhash package."""
    if magic == 0 and codec == LZ4 and not has_xxhash:
        pytest.skip("kafka-python needs xxhash for magic 0 lz4")


def kafka_python_message_set(entries, magic, codec):
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for offset, (key, value, timestamp) in enumerate(entries):
        builder.append(offset, timestamp=timestamp, key=key, value=value)
    return bytes(builder.build())


def kafka_python_reads(message_set):
    """(offset, timestamp, key, value) of every record kafka-python finds, CRCs checked."""
    seen = []
    for entry in MemoryRecords(message_set):
        assert entry.validate_crc()
        for record in entry:
            assert record.validate_crc()
            seen.append((record.offset, record.timestamp, record.key, record.value))
    return seen


def expected(entries, magic, base_offset=0):
    return [(base_offset + i, ts if magic else None, key, value)
            for i, (key, value, ts) in enumerate(entries)]


def logical(messages):
    return [(m.offset, m.timestamp, m.key, m.value) for m in messages]


# -- interop ------------------------------------------------------------------------------

@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_kafka_python_reads_our_message_set(magic, codec):
    needs_old_lz4(magic, codec)
    data = build_message_set(ENTRIES, magic=magic, compression=codec, base_offset=500)
    assert kafka_python_reads(data) == expected(ENTRIES, magic, base_offset=500)


@pytest.mark.parametrize("magic", [0, 1])
def test_our_plain_message_set_is_byte_for_byte_kafka_pythons(magic):
    assert build_message_set(ENTRIES, magic=magic) == kafka_python_message_set(ENTRIES, magic, NONE)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4])
def test_our_wrapper_holds_the_inner_messages_kafka_python_would(magic, codec):
    needs_old_lz4(magic, codec)
    ours = parse_message_set(build_message_set(ENTRIES, magic=magic, compression=codec))
    theirs = parse_message_set(kafka_python_message_set(ENTRIES, magic, codec))
    assert len(ours) == len(theirs) == 1
    assert decompress(codec, ours[0].value, magic) == decompress(codec, theirs[0].value, magic)
    assert ours[0].attributes == theirs[0].attributes == codec


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_we_read_kafka_pythons_message_set(magic, codec):
    needs_old_lz4(magic, codec)
    messages = decode_message_set(kafka_python_message_set(ENTRIES, magic, codec))
    assert [(m.key, m.value) for m in messages] == [(k, v) for k, v, _ in ENTRIES]
    assert [m.timestamp for m in messages] == [ts if magic else NO_TIMESTAMP for _, _, ts in ENTRIES]
    offsets = [m.offset for m in messages]
    # kafka-python writes wrapper offset 0 (brokers assign offsets): absolute offsets follow
    # Kafka's rule, base = wrapper offset - last relative offset.
    first = 0 if magic == 0 or codec == NONE else -(len(ENTRIES) - 1)
    assert offsets == list(range(first, first + len(ENTRIES)))


def test_we_read_a_single_kafka_python_message_batch():
    data = build_message_set(ENTRIES[:1], magic=1, base_offset=3)
    theirs = LegacyRecordBatch(data, 1)
    ours, end = parse_message(data)
    assert end == len(data) == theirs.size_in_bytes
    assert (ours.offset, ours.crc, ours.timestamp) == (3, next(iter(theirs)).checksum, T0)


def test_magic_1_compressed_inner_offsets_are_relative_and_the_wrapper_has_the_last():
    data = build_message_set(ENTRIES, magic=1, compression=GZIP, offsets=[10, 11, 15, 20])
    (wrapper,) = parse_message_set(data)
    inner = parse_message_set(decompress(GZIP, wrapper.value))
    assert wrapper.offset == 20
    assert [m.offset for m in inner] == [0, 1, 5, 10]
    assert wrapper.timestamp == max(ts for _, _, ts in ENTRIES)
    assert [m.offset for m in decode_message_set(data)] == [10, 11, 15, 20]
    assert [offset for offset, *_ in kafka_python_reads(data)] == [10, 11, 15, 20]


def test_magic_0_compressed_inner_offsets_are_absolute():
    data = build_message_set(ENTRIES, magic=0, compression=SNAPPY, base_offset=77)
    (wrapper,) = parse_message_set(data)
    inner = parse_message_set(decompress(SNAPPY, wrapper.value))
    assert wrapper.offset == 80 and [m.offset for m in inner] == [77, 78, 79, 80]


def test_magic_0_lz4_wrapper_uses_kafkas_old_frame_checksum():
    (wrapper,) = parse_message_set(build_message_set(ENTRIES, magic=0, compression=LZ4))
    assert wrapper.value[6] == MAGIC_0_HEADER_CHECKSUM
    with pytest.raises(InvalidRecordError):
        decompress(LZ4, wrapper.value, magic=1)


def test_log_append_time_wrapper_gives_its_timestamp_to_every_inner_message():
    data = build_message_set(ENTRIES, magic=1, compression=GZIP, log_append_time=T0 + 500)
    assert {ts for _, ts, _, _ in kafka_python_reads(data)} == {T0 + 500}
    messages = decode_message_set(data)
    assert {m.timestamp for m in messages} == {T0 + 500}
    assert all(m.is_log_append_time for m in messages)


# -- validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("magic", [0, 1])
def test_a_flipped_bit_under_the_crc_is_caught(magic):
    data = build_message_set(ENTRIES[:1], magic=magic)
    for index in range(12, len(data)):
        damaged = bytearray(data)
        damaged[index] ^= 0x04
        if index == 16:
            continue  # the magic byte itself: checked as a magic first, see below
        assert not LegacyRecordBatch(bytes(damaged), magic).validate_crc()
        with pytest.raises(CorruptRecordError):
            parse_message_set(damaged)


def test_a_corrupt_inner_message_is_caught_when_the_wrapper_is_opened():
    inner = bytearray(build_message_set(ENTRIES, magic=1))
    inner[30] ^= 0x01
    wrapper = encode_message(3, 1, GZIP, T0, None, compress(GZIP, bytes(inner)))
    assert len(parse_message_set(wrapper)) == 1  # the wrapper's own CRC is fine
    with pytest.raises(CorruptRecordError):
        decode_message_set(wrapper)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_every_truncation_is_an_invalid_record(magic, codec):
    data = build_message_set(ENTRIES, magic=magic, compression=codec)
    boundaries = message_boundaries(data)  # cutting there leaves a shorter, valid set
    for cut in range(1, len(data)):
        if cut in boundaries:
            assert len(decode_message_set(data[:cut])) == boundaries.index(cut) + 1
            continue
        with pytest.raises(InvalidRecordError):
            decode_message_set(data[:cut])


def message_boundaries(data):
    ends, pos = [], 0
    while pos < len(data):
        pos = parse_message(data, pos)[1]
        ends.append(pos)
    return ends


def test_a_partial_last_message_may_be_skipped():
    data = build_message_set(ENTRIES, magic=1)
    assert len(parse_message_set(data[:-3], allow_partial_tail=True)) == len(ENTRIES) - 1


@pytest.mark.timeout(20)
def test_random_bytes_are_invalid_records():
    rng = random.Random(7)
    for _ in range(2000):
        garbage = bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 120)))
        with pytest.raises(InvalidRecordError):
            decode_message_set(garbage)


def message_with_valid_crc(offset, magic, attributes, payload: bytes) -> bytes:
    """A message whose bytes after the attributes are `payload`, CRC made valid."""
    body = bytes([magic, attributes]) + payload
    return struct.pack(">qiI", offset, 4 + len(body), zlib.crc32(body)) + body


@pytest.mark.timeout(20)
def test_scrambled_messages_with_valid_crcs_never_raise_anything_else():
    rng = random.Random(11)
    payload = build_message_set(ENTRIES[:1], magic=1)[18:]
    for _ in range(1000):
        scrambled = bytearray(payload)
        scrambled[rng.randrange(len(scrambled))] = rng.getrandbits(8)
        data = message_with_valid_crc(0, 1, rng.choice([0, 1, 2, 3, 8]), bytes(scrambled))
        try:
            decode_message_set(data)
        except InvalidRecordError:
            pass


@pytest.mark.parametrize("message,reason", [
    (message_with_valid_crc(0, 1, GZIP, struct.pack(">qii", T0, -1, -1)), "wrapper without value"),
    (message_with_valid_crc(0, 1, GZIP, struct.pack(">qii", T0, -1, 4) + b"junk"), "not gzip"),
    (encode_message(0, 1, GZIP, T0, None, compress(GZIP, b"")), "empty wrapper"),
    (encode_message(0, 1, GZIP, T0, None, compress(GZIP, build_message_set(
        ENTRIES, magic=1, compression=GZIP))), "nested compression"),
    (encode_message(0, 1, GZIP, T0, None, compress(GZIP, build_message_set(
        ENTRIES, magic=0))), "inner magic differs"),
    (message_with_valid_crc(0, 1, 0, struct.pack(">qii", T0, -2, -1)), "key length below -1"),
    (message_with_valid_crc(0, 1, 0, struct.pack(">qii", T0, 9, -1)), "key past the end"),
    (message_with_valid_crc(0, 1, 0, struct.pack(">qii", T0, -1, -1) + b"x"), "stray byte"),
    (message_with_valid_crc(0, 0, 0, struct.pack(">i", -1)), "too short for magic 0"),
    (message_with_valid_crc(0, 1, 0, struct.pack(">qi", T0, -1)), "too short for magic 1"),
    (message_with_valid_crc(0, 2, 0, struct.pack(">qii", T0, -1, -1)), "magic 2"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_malformed_messages_are_invalid(message, reason):
    with pytest.raises(InvalidRecordError):
        decode_message_set(message)


def test_zstd_is_not_a_legacy_codec():
    with pytest.raises(UnsupportedCompressionError):
        decode_message_set(message_with_valid_crc(0, 1, ZSTD, struct.pack(">qii", T0, -1, 1) + b"x"))
    with pytest.raises(UnsupportedCompressionError):
        build_message_set(ENTRIES, magic=1, compression=ZSTD)


# -- up-conversion ------------------------------------------------------------------------

@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_upconversion_keeps_keys_values_timestamps_and_codec(magic, codec):
    legacy = build_message_set(ENTRIES, magic=magic, compression=codec, base_offset=0)
    header, records = decode_batch(upconvert_to_v2(legacy, base_offset=1000))
    assert header.compression == codec
    assert [(r.offset, r.key, r.value, r.headers) for r in records] == [
        (1000 + i, key, value, []) for i, (key, value, _) in enumerate(ENTRIES)]
    timestamps = [ts if magic else NO_TIMESTAMP for _, _, ts in ENTRIES]
    assert [r.timestamp for r in records] == timestamps
    assert header.base_timestamp == timestamps[0] and header.max_timestamp == max(timestamps)
    assert not header.is_log_append_time and not header.has_producer_id


def test_upconverted_magic_0_has_no_timestamps_like_kafka():
    header, records = decode_batch(upconvert_to_v2(build_message_set(ENTRIES, magic=0)))
    assert (header.base_timestamp, header.max_timestamp) == (-1, -1)
    assert {(r.timestamp_delta, r.timestamp) for r in records} == {(0, -1)}


def test_upconverted_batch_is_byte_for_byte_what_kafka_python_builds():
    legacy = build_message_set(ENTRIES, magic=1)
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=NONE, is_transactional=False,
                                        producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                        batch_size=1 << 20)
    for offset, (key, value, ts) in enumerate(ENTRIES):
        builder.append(offset, timestamp=ts, key=key, value=value, headers=[])
    assert upconvert_to_v2(legacy, partition_leader_epoch=0) == bytes(builder.build())


def test_upconversion_of_kafka_python_data_is_read_by_kafka_python():
    legacy = kafka_python_message_set(ENTRIES, 1, SNAPPY)
    theirs = DefaultRecordBatch(upconvert_to_v2(legacy, base_offset=0))
    assert theirs.validate_crc() and theirs.compression_type == SNAPPY
    assert [(r.offset, r.timestamp, r.key, r.value) for r in theirs] == expected(ENTRIES, 1)


def test_several_messages_and_wrappers_become_one_batch_with_the_last_codec():
    legacy = (build_message_set(ENTRIES[:1], magic=1, base_offset=0)
              + build_message_set(ENTRIES[1:2], magic=1, compression=GZIP, base_offset=1)
              + build_message_set(ENTRIES[2:], magic=1, compression=SNAPPY, base_offset=2))
    header, records = decode_batch(upconvert_to_v2(legacy))
    assert header.compression == SNAPPY
    assert [(r.offset, r.key) for r in records] == [(i, k) for i, (k, _, _) in enumerate(ENTRIES)]
    assert decode_batch(upconvert_to_v2(legacy, compression=NONE))[0].compression == NONE


def test_upconversion_keeps_offsets_unless_told_to_assign_them():
    legacy = build_message_set(ENTRIES, magic=1, offsets=[5, 6, 9, 12])
    header, records = decode_batch(upconvert_to_v2(legacy))
    assert header.base_offset == 5 and [r.offset for r in records] == [5, 6, 9, 12]
    same_offsets = build_message_set(ENTRIES, magic=1, offsets=[0, 0, 0, 0])  # as producers may
    with pytest.raises(InvalidRecordError):
        upconvert_to_v2(same_offsets)
    assert [r.offset for r in decode_batch(upconvert_to_v2(same_offsets, base_offset=40))[1]] == \
        [40, 41, 42, 43]


def test_upconversion_can_stamp_log_append_time():
    header, records = decode_batch(upconvert_to_v2(build_message_set(ENTRIES, magic=1),
                                                   log_append_time=T0 + 9, partition_leader_epoch=3))
    assert header.is_log_append_time and header.max_timestamp == T0 + 9
    assert header.partition_leader_epoch == 3 and {r.timestamp for r in records} == {T0 + 9}


def test_upconversion_of_nothing_is_nothing():
    assert upconvert_to_v2(b"") == b""


def test_upconversion_rejects_a_corrupt_message_set():
    damaged = bytearray(build_message_set(ENTRIES, magic=1))
    damaged[-1] ^= 0x01
    with pytest.raises(CorruptRecordError):
        upconvert_to_v2(bytes(damaged))


# -- down-conversion ----------------------------------------------------------------------

V2_RECORDS = [(b"k0", b"value " * 10, [("h", b"dropped")], T0), (None, b"v1", [], T0 + 3),
              (b"k2", None, [], T0 - 1)]


def v2_log(codec=NONE):
    """Two batches, offsets 100-102 and 103-105, like a log segment."""
    return (build_batch(V2_RECORDS, base_offset=100, compression=codec)
            + build_batch(V2_RECORDS, base_offset=103, compression=codec))


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_downconversion_keeps_offsets_keys_values_and_codec(magic, codec):
    needs_old_lz4(magic, codec)
    legacy = downconvert(v2_log(codec), magic)
    shallow = parse_message_set(legacy)
    assert {m.magic for m in shallow} == {magic}
    assert {m.compression for m in shallow} == {codec}
    assert len(shallow) == (2 if codec else 6)  # one wrapper per compressed batch
    assert kafka_python_reads(legacy) == [
        (100 + i, (ts if magic else None), key, value)
        for i, (key, value, _, ts) in enumerate(V2_RECORDS * 2)]


def test_downconversion_drops_headers():
    assert all(m.key in (b"k0", None, b"k2") for m in decode_message_set(downconvert(v2_log(), 1)))
    assert [m.value for m in decode_message_set(downconvert(v2_log(), 1))][:1] == [b"value " * 10]


def test_downconversion_leaves_out_control_batches():
    log = (build_batch(V2_RECORDS, base_offset=0, producer_id=9, producer_epoch=0,
                       base_sequence=0, is_transactional=True)
           + build_end_txn_marker(9, 0, True, coordinator_epoch=1, base_offset=3, timestamp=T0))
    assert [m.offset for m in decode_message_set(downconvert(log, 1))] == [0, 1, 2]


def test_downconversion_of_zstd_is_unsupported():
    with pytest.raises(UnsupportedCompressionError):
        downconvert(v2_log(ZSTD), 1)


def test_downconversion_can_start_at_an_offset():
    assert [m.offset for m in decode_message_set(downconvert(v2_log(GZIP), 1, first_offset=102))] \
        == [102, 103, 104, 105]


def test_downconversion_keeps_compaction_gaps():
    records = [Record(0, 0, b"a", b"1"), Record(4, 1, b"b", b"2")]
    log = build_batch(records, base_offset=50, base_timestamp=T0, compression=SNAPPY)
    legacy = downconvert(log, 1)
    assert [offset for offset, *_ in kafka_python_reads(legacy)] == [50, 54]


def test_downconverted_log_append_time_batch_is_log_append_time_for_kafka_python():
    log = bytearray(build_batch(V2_RECORDS, compression=GZIP))
    batch.set_log_append_time(log, 0, batch.parse_header(log), T0 + 1234)
    legacy = downconvert(bytes(log), 1)
    (entry,) = list(MemoryRecords(legacy))
    assert entry.timestamp_type == 1
    assert {record.timestamp for record in entry} == {T0 + 1234}


def test_downconversion_passes_older_messages_through_and_converts_newer_ones():
    magic_0 = build_message_set(ENTRIES, magic=0, base_offset=0)
    magic_1 = build_message_set(ENTRIES, magic=1, compression=GZIP, base_offset=4)
    assert downconvert(magic_0 + magic_1, 1) == magic_0 + magic_1
    to_magic_0 = parse_message_set(downconvert(magic_0 + magic_1, 0))
    assert {m.magic for m in to_magic_0} == {0}
    assert [m.offset for m in decode_message_set(downconvert(magic_0 + magic_1, 0))] == list(range(8))


# -- round trips --------------------------------------------------------------------------

@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_v2_to_magic_1_and_back_keeps_every_record_but_headers(codec):
    log = build_batch(V2_RECORDS, base_offset=100, compression=codec)
    header, records = decode_batch(upconvert_to_v2(downconvert(log, 1)))
    original_header, original = decode_batch(log)
    assert header.compression == codec and header.base_offset == 100
    assert [(r.offset, r.timestamp, r.key, r.value) for r in records] == \
        [(r.offset, r.timestamp, r.key, r.value) for r in original]
    assert header.max_timestamp == original_header.max_timestamp


@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_v2_to_magic_0_and_back_loses_only_timestamps_and_headers(codec):
    log = build_batch(V2_RECORDS, base_offset=100, compression=codec)
    _, records = decode_batch(upconvert_to_v2(downconvert(log, 0)))
    assert [(r.offset, r.timestamp, r.key, r.value) for r in records] == \
        [(100 + i, -1, key, value) for i, (key, value, _, _) in enumerate(V2_RECORDS)]


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", LEGACY_CODECS)
def test_legacy_to_v2_and_back_gives_the_same_bytes(magic, codec):
    legacy = build_message_set(ENTRIES, magic=magic, compression=codec, base_offset=20)
    assert downconvert(upconvert_to_v2(legacy), magic) == legacy
