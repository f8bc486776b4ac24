"""Broken magic 2 batches: every kind of damage is an InvalidRecordError, never a crash or hang."""
import random

import pytest
from kafka.record.default_records import DefaultRecordBatch

from pykbroker.records import batch
from pykbroker.records.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD, compress
from pykbroker.records.errors import CorruptRecordError, InvalidRecordError
from pykbroker.records.records import build_batch, decode_batch, iter_records
from pykbroker.records.varint import encode_varint

T0 = 1_700_000_000_000
RECORDS = [(b"key", b"value" * 10, [("h", b"v")], T0), (None, b"second", [], T0 + 1)]
CODECS = [NONE, GZIP, SNAPPY, LZ4, ZSTD]


def crafted_batch(body: bytes, records_count: int, compression: int = NONE) -> bytes:
    """A batch with a correct header and CRC around an arbitrary (uncompressed) body."""
    if compression:
        body = compress(compression, body)
    header = batch.BatchHeader(
        base_offset=0, batch_length=batch.BATCH_HEADER_SIZE - batch.LOG_OVERHEAD + len(body),
        partition_leader_epoch=0, magic=2, crc=0, attributes=compression, last_offset_delta=0,
        base_timestamp=T0, max_timestamp=T0, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, records_count=records_count)
    data = bytearray(batch.encode_header(header) + body)
    batch.write_crc(data, 0, header)
    return bytes(data)


def record_bytes(fields: bytes) -> bytes:
    return encode_varint(len(fields)) + fields


def varints(*values: int) -> bytes:
    return b"".join(encode_varint(value) for value in values)


GOOD_RECORD = record_bytes(b"\x00" + varints(0, 0, 1) + b"k" + varints(1) + b"v" + varints(0))


# -- CRC ----------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_a_flipped_bit_anywhere_under_the_crc_is_caught(codec):
    data = build_batch(RECORDS, compression=codec)
    for index in range(batch.CRC_OFFSET, len(data)):
        damaged = bytearray(data)
        damaged[index] ^= 0x10
        header = batch.parse_header(damaged)
        assert not batch.is_crc_valid(damaged, 0, header)
        assert not DefaultRecordBatch(bytes(damaged)).validate_crc()  # kafka-python agrees
        with pytest.raises(CorruptRecordError):
            decode_batch(damaged)


def test_fields_before_the_crc_are_not_covered_by_it():
    data = bytearray(build_batch(RECORDS))
    data[3] ^= 0x01  # base offset
    data[14] ^= 0x01  # partition leader epoch
    batch.check_crc(data, 0, batch.parse_header(data))


def test_crc_check_can_be_skipped():
    data = bytearray(build_batch(RECORDS))
    data[batch.CRC_OFFSET] ^= 0xFF
    assert decode_batch(data, verify_crc=False)[1][0].key == b"key"


def test_corrupt_record_error_is_an_invalid_record_error():
    assert issubclass(CorruptRecordError, InvalidRecordError)


# -- truncation and garbage ---------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_every_truncation_is_an_invalid_record(codec):
    data = build_batch(RECORDS, compression=codec)
    for cut in range(len(data)):
        with pytest.raises(InvalidRecordError):
            decode_batch(data[:cut])
    for cut in range(1, len(data)):  # an empty buffer holds no batches, which is fine
        with pytest.raises(InvalidRecordError):
            list(iter_records(data[:cut]))


def test_truncated_batch_with_a_recomputed_crc_is_still_invalid():
    data = build_batch(RECORDS)
    for cut in range(batch.BATCH_HEADER_SIZE, len(data)):
        reframed = crafted_batch(data[batch.BATCH_HEADER_SIZE:cut], records_count=2)
        with pytest.raises(InvalidRecordError):
            decode_batch(reframed)


@pytest.mark.timeout(20)
def test_random_bytes_are_invalid_records():
    rng = random.Random(2024)
    for _ in range(2000):
        garbage = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 200)))
        with pytest.raises(InvalidRecordError):
            decode_batch(garbage)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("codec", CODECS)
def test_scrambled_bodies_under_a_valid_crc_never_raise_anything_else(codec):
    rng = random.Random(codec)
    body = build_batch(RECORDS)[batch.BATCH_HEADER_SIZE:]
    for _ in range(300):
        scrambled = bytearray(body)
        for _ in range(rng.randrange(1, 4)):
            scrambled[rng.randrange(len(scrambled))] = rng.getrandbits(8)
        data = crafted_batch(bytes(scrambled), records_count=rng.choice([0, 1, 2, 3, 2**31 - 1]),
                             compression=codec)
        try:
            decode_batch(data)
        except InvalidRecordError:
            pass


@pytest.mark.timeout(20)
@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_scrambled_compressed_payloads_under_a_valid_crc_never_raise_anything_else(codec):
    rng = random.Random(codec)
    data = build_batch(RECORDS, compression=codec)
    for _ in range(300):
        scrambled = bytearray(data)
        for _ in range(rng.randrange(1, 4)):
            scrambled[rng.randrange(batch.BATCH_HEADER_SIZE, len(data))] = rng.getrandbits(8)
        batch.write_crc(scrambled, 0, batch.parse_header(scrambled))
        try:
            decode_batch(scrambled)
        except InvalidRecordError:
            pass


@pytest.mark.parametrize("codec", [GZIP, SNAPPY, LZ4, ZSTD])
def test_compressed_payload_that_does_not_decompress_is_invalid(codec):
    data = bytearray(build_batch(RECORDS, compression=codec))
    data[batch.BATCH_HEADER_SIZE:] = b"\xff" * (len(data) - batch.BATCH_HEADER_SIZE)
    batch.write_crc(data, 0, batch.parse_header(data))
    with pytest.raises(InvalidRecordError):
        decode_batch(data)


# -- record structure ---------------------------------------------------------------------

def test_well_formed_crafted_record_decodes():
    header, records = decode_batch(crafted_batch(GOOD_RECORD, records_count=1))
    assert (records[0].key, records[0].value, records[0].timestamp) == (b"k", b"v", T0)


@pytest.mark.parametrize("body,count,reason", [
    (GOOD_RECORD, 2, "fewer records than the count"),
    (GOOD_RECORD * 2, 1, "bytes left after the counted records"),
    (GOOD_RECORD, -1, "negative count"),
    (GOOD_RECORD, 2**31 - 1, "absurd count"),
    (encode_varint(500) + GOOD_RECORD[1:], 1, "record length past the end"),
    (encode_varint(-3) + GOOD_RECORD[1:], 1, "negative record length"),
    (record_bytes(b"\x00" + varints(0, 0, -2, 0, 0)), 1, "key length below -1"),
    (record_bytes(b"\x00" + varints(0, 0, 9) + b"k" + varints(-1, 0)), 1, "key past the record"),
    (record_bytes(b"\x00" + varints(0, 0, -1, -1, -1)), 1, "negative header count"),
    (record_bytes(b"\x00" + varints(0, 0, -1, -1, 1, -1, -1)), 1, "null header key"),
    (record_bytes(b"\x00" + varints(0, 0, -1, -1, 1, 1) + b"\xff" + varints(-1)), 1,
     "header key not UTF-8"),
    (record_bytes(b"\x00" + varints(0, 0, -1, -1, 0) + b"extra"), 1, "stray bytes in record"),
    (record_bytes(b"\x00" + varints(0, 0, -1, -1)), 1, "record ends before its headers"),
    (record_bytes(b"\x00" + b"\x80" * 11), 1, "overlong varlong timestamp"),
    (record_bytes(b"\x00" + varints(0) + b"\x80" * 6 + b"\x00"), 1, "overlong varint offset"),
], ids=lambda value: value if isinstance(value, str) else "")
@pytest.mark.parametrize("codec", [NONE, ZSTD])
def test_malformed_records_are_invalid(body, count, reason, codec):
    with pytest.raises(InvalidRecordError):
        decode_batch(crafted_batch(body, records_count=count, compression=codec))


def test_a_batch_of_another_magic_is_invalid():
    data = bytearray(build_batch(RECORDS))
    data[batch.MAGIC_OFFSET] = 1
    with pytest.raises(InvalidRecordError):
        decode_batch(data)


def test_batch_length_below_the_header_is_invalid():
    data = bytearray(build_batch(RECORDS))
    data[8:12] = (10).to_bytes(4, "big")
    with pytest.raises(InvalidRecordError):
        decode_batch(data)


def test_unknown_compression_codec_is_invalid():
    data = bytearray(build_batch(RECORDS))
    data[batch.ATTRIBUTES_OFFSET + 1] |= 0x07
    batch.write_crc(data, 0, batch.parse_header(data))
    with pytest.raises(InvalidRecordError):
        decode_batch(data)
