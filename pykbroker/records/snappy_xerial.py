"""Snappy as Kafka clients write it: the xerial block framing, or a raw snappy block.

The Java client (through the xerial snappy-java library) writes a 16-byte header,
`\\x82SNAPPY\\x00` then int32 version 1 and int32 compatible-version 1, followed by blocks of
[int32 compressed length][raw snappy block], each block holding at most 32 KiB of input.
Some clients write a bare snappy block instead, so reading accepts both. When reading we
look at the 8-byte magic only: some producers write version and compat little-endian.
A framed stream may also hold several framed streams one after another.
"""

from __future__ import annotations

import struct

import snappy

from .buffers import ReadableBuffer
from .errors import InvalidRecordError

XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_HEADER = XERIAL_MAGIC + struct.pack(">ii", 1, 1)
XERIAL_BLOCK_SIZE = 32 * 1024
_BLOCK_LENGTH = struct.Struct(">i")


def compress(data: bytes) -> bytes:
    """`data` in xerial framing, one snappy block per 32 KiB of input."""
    view = memoryview(data)
    parts = [XERIAL_HEADER]
    for start in range(0, len(data), XERIAL_BLOCK_SIZE):
        block = snappy.compress(view[start : start + XERIAL_BLOCK_SIZE].tobytes())
        parts.append(_BLOCK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def is_xerial_framed(data: ReadableBuffer) -> bool:
    return len(data) >= len(XERIAL_HEADER) and bytes(data[: len(XERIAL_MAGIC)]) == XERIAL_MAGIC


def decompress(data: bytes) -> bytes:
    """The content of xerial-framed or raw snappy `data`."""
    if is_xerial_framed(data):
        return decompress_xerial(data)
    return snappy.decompress(data)


def decompress_xerial(data: bytes) -> bytes:
    out = bytearray()
    pos = 0
    while pos < len(data):
        if data.startswith(XERIAL_MAGIC, pos):
            pos += len(XERIAL_HEADER)
            continue
        block, pos = _read_block(data, pos)
        out += snappy.decompress(block)
    return bytes(out)


def _read_block(data: bytes, pos: int) -> tuple[bytes, int]:
    if len(data) - pos < _BLOCK_LENGTH.size:
        raise InvalidRecordError("xerial snappy block length is truncated")
    (length,) = _BLOCK_LENGTH.unpack_from(data, pos)
    pos += _BLOCK_LENGTH.size
    if length < 0 or pos + length > len(data):
        raise InvalidRecordError(f"xerial snappy block of {length} bytes does not fit its data")
    return data[pos : pos + length], pos + length
