"""Zigzag varints: Kafka's encoding, checked against known bytes and kafka-python."""
import pytest
from kafka.record import util as kafka_util

from pykbroker.records.errors import InvalidRecordError
from pykbroker.records.varint import (
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
)

KNOWN = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (300, "d804"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]

SAMPLES = sorted({0, 1, -1, 63, 64, -64, -65, 127, 128, 8191, 8192, -8193, 2**20, -(2**20),
                  2**31 - 1, -(2**31)})


@pytest.mark.parametrize("value,hex_bytes", KNOWN)
def test_varint_bytes_are_kafkas(value, hex_bytes):
    assert encode_varint(value).hex() == hex_bytes
    assert decode_varint(bytes.fromhex(hex_bytes)) == (value, len(hex_bytes) // 2)


@pytest.mark.parametrize("value", SAMPLES + [2**40, -(2**40), 2**63 - 1, -(2**63)])
def test_varlong_agrees_with_kafka_python(value):
    theirs = bytearray()
    kafka_util.encode_varint(value, theirs.append)
    assert encode_varlong(value) == bytes(theirs)
    assert decode_varlong(bytes(theirs)) == kafka_util.decode_varint(bytes(theirs), 0)


@pytest.mark.parametrize("value", SAMPLES)
def test_varint_agrees_with_kafka_python_for_int32(value):
    theirs = bytearray()
    kafka_util.encode_varint(value, theirs.append)
    assert encode_varint(value) == bytes(theirs)


def test_values_out_of_range_are_refused():
    with pytest.raises(ValueError):
        encode_varint(2**31)
    with pytest.raises(ValueError):
        encode_varlong(2**63)


@pytest.mark.parametrize("data", [b"", b"\x80", b"\xff\xff"])
def test_truncated_varint_is_invalid(data):
    with pytest.raises(InvalidRecordError):
        decode_varint(data)


def test_varint_longer_than_five_bytes_is_invalid():
    with pytest.raises(InvalidRecordError):
        decode_varint(b"\x80\x80\x80\x80\x80\x01")


def test_varlong_longer_than_ten_bytes_is_invalid():
    with pytest.raises(InvalidRecordError):
        decode_varlong(b"\x80" * 10 + b"\x01")


def test_decoding_stops_at_the_given_end():
    with pytest.raises(InvalidRecordError):
        decode_varint(b"\x80\x01", 0, 1)
