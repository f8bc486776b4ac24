"""Zigzag variable-length integers, as Kafka's magic 2 records use them.

A value is zigzag-mapped (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...) and then written
seven bits at a time, least significant group first, with the high bit of each
byte set while more bytes follow. A varint holds an int32 in at most 5 bytes,
a varlong an int64 in at most 10.
"""

from __future__ import annotations

from .buffers import ReadableBuffer
from .errors import InvalidRecordError

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10


def zigzag(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def unzigzag(encoded: int) -> int:
    return (encoded >> 1) ^ -(encoded & 1)


def encode_unsigned(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    """The varint (int32) bytes of `value`."""
    if not INT32_MIN <= value <= INT32_MAX:
        raise ValueError(f"{value} does not fit a varint (int32)")
    return encode_unsigned(zigzag(value) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    """The varlong (int64) bytes of `value`."""
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{value} does not fit a varlong (int64)")
    return encode_unsigned(zigzag(value) & 0xFFFFFFFFFFFFFFFF)


def decode_unsigned(buf: ReadableBuffer, pos: int, max_bytes: int, end: int | None = None) -> tuple[int, int]:
    """(value, position after it) of the unsigned varint at `pos`, reading before `end`."""
    end = len(buf) if end is None else end
    value = 0
    for index in range(max_bytes):
        if pos >= end:
            raise InvalidRecordError("varint runs past the end of its data")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            return value, pos
    raise InvalidRecordError(f"varint longer than {max_bytes} bytes")


def decode_varint(buf: ReadableBuffer, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    """(int32 value, position after it) of the zigzag varint at `pos`."""
    encoded, pos = decode_unsigned(buf, pos, MAX_VARINT_BYTES, end)
    return unzigzag(encoded & 0xFFFFFFFF), pos


def decode_varlong(buf: ReadableBuffer, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    """(int64 value, position after it) of the zigzag varlong at `pos`."""
    encoded, pos = decode_unsigned(buf, pos, MAX_VARLONG_BYTES, end)
    return unzigzag(encoded & 0xFFFFFFFFFFFFFFFF), pos


def size_of_varint(value: int) -> int:
    return len(encode_varint(value))
