"""Record batch v2 headers: read, check and rewrite without decoding a single record.

Layout of a magic 2 batch (all big-endian; the CRC32C covers `attributes` to the end):

    offset  size  field
    0       8     base_offset
    8       4     batch_length          (bytes after this field)
    12      4     partition_leader_epoch
    16      1     magic                 (2)
    17      4     crc                   (CRC32C, unsigned)
    21      2     attributes            (bits 0-2 compression, 3 timestamp type,
                                         4 transactional, 5 control, 6 delete horizon)
    23      4     last_offset_delta
    27      8     base_timestamp
    35      8     max_timestamp
    43      8     producer_id
    51      2     producer_epoch
    53      4     base_sequence
    57      4     records_count
    61            records...

This is the produce and fetch hot path: everything here works on the header alone. The `crc32c`
package (whose import reads package metadata and builds a command line) loads with the first CRC.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from typing import NamedTuple

from .buffers import ReadableBuffer
from .errors import CorruptRecordError, InvalidRecordError

BATCH_HEADER_SIZE = 61
LOG_OVERHEAD = 12  # base_offset + batch_length, which precede what batch_length counts
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PREFIX = struct.Struct(">qib")  # base_offset, batch_length, partition_leader_epoch, magic
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_INT64 = struct.Struct(">q")
_INT32 = struct.Struct(">i")
_UINT32 = struct.Struct(">I")


class BatchHeader(NamedTuple):
    """The 61-byte header of a magic 2 record batch."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch takes, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id >= 0

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) & 0x7FFFFFFF


def read_magic(buf: ReadableBuffer, pos: int = 0) -> int:
    """The magic byte of the batch or legacy message at `pos` (both keep it at offset 16)."""
    if len(buf) - pos < MAGIC_OFFSET + 1:
        raise InvalidRecordError("record batch is shorter than its header")
    return buf[pos + MAGIC_OFFSET]


def unpack_header(buf: ReadableBuffer, pos: int = 0) -> BatchHeader:
    """The batch header at `pos` of `buf`, without any checks beyond its 61 bytes being there
    (for data already validated, such as a log's own segments)."""
    return BatchHeader._make(_HEADER.unpack_from(buf, pos))


def parse_header(buf: ReadableBuffer, pos: int = 0) -> BatchHeader:
    """The header of the magic 2 batch at `pos`; checks sizes, not the CRC."""
    if len(buf) - pos < BATCH_HEADER_SIZE:
        raise InvalidRecordError("record batch is shorter than its header")
    header = unpack_header(buf, pos)
    if header.magic != 2:
        raise InvalidRecordError(f"expected a magic 2 batch, found magic {header.magic}")
    if header.batch_length < BATCH_HEADER_SIZE - LOG_OVERHEAD:
        raise InvalidRecordError(f"batch length {header.batch_length} is below the header size")
    if pos + header.size > len(buf):
        raise InvalidRecordError("record batch is truncated")
    return header


def compute_crc(buf: ReadableBuffer, pos: int, header: BatchHeader) -> int:
    """CRC32C of the batch at `pos` from its attributes to its end."""
    start = pos + ATTRIBUTES_OFFSET
    return crc32c_of(memoryview(buf)[start : pos + header.size])


_crc32c: Callable[[ReadableBuffer], int] | None = None


def load_crc32c() -> Callable[[ReadableBuffer], int]:
    """The CRC-32C function, its library imported on the first call (logs about to be loaded call
    this first: a library imported on a loading thread delays every log behind it)."""
    global _crc32c
    if _crc32c is None:
        from crc32c import crc32c

        _crc32c = crc32c
    return _crc32c


def crc32c_of(data: ReadableBuffer) -> int:
    """CRC32C (Castagnoli) of `data`; after the first call one global lookup, no import."""
    return (_crc32c or load_crc32c())(data)


def is_crc_valid(buf: ReadableBuffer, pos: int, header: BatchHeader) -> bool:
    return compute_crc(buf, pos, header) == header.crc


def check_crc(buf: ReadableBuffer, pos: int, header: BatchHeader) -> None:
    if not is_crc_valid(buf, pos, header):
        raise CorruptRecordError(
            f"record batch at offset {header.base_offset} has a bad CRC "
            f"(stored {header.crc:#010x}, computed {compute_crc(buf, pos, header):#010x})"
        )


def iter_headers(buf: ReadableBuffer, pos: int = 0, end: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of each complete magic 2 batch in `buf[pos:end]`.

    Stops at the first incomplete batch (a partial tail, as fetch responses may carry).
    """
    end = len(buf) if end is None else end
    while end - pos >= BATCH_HEADER_SIZE:
        _, length = _OFFSET_AND_LENGTH.unpack_from(buf, pos)
        if pos + LOG_OVERHEAD + length > end:
            return
        header = parse_header(buf, pos)
        yield pos, header
        pos += header.size


def encode_header(header: BatchHeader) -> bytes:
    """The 61 header bytes of `header`, its CRC field written as given (see `write_crc`)."""
    return _HEADER.pack(*header)


def write_crc(buf: bytearray, pos: int, header: BatchHeader) -> None:
    """Compute the CRC32C of the batch at `pos` and store it in its CRC field."""
    _UINT32.pack_into(buf, pos + CRC_OFFSET, compute_crc(buf, pos, header))


def set_base_offset(buf: bytearray, pos: int, base_offset: int) -> None:
    """Assign the batch's base offset in place (outside the CRC, so the CRC stays valid)."""
    _INT64.pack_into(buf, pos, base_offset)


def set_partition_leader_epoch(buf: bytearray, pos: int, epoch: int) -> None:
    """Stamp the leader epoch in place (outside the CRC)."""
    _INT32.pack_into(buf, pos + 12, epoch)


def set_log_append_time(buf: bytearray, pos: int, header: BatchHeader, timestamp: int) -> None:
    """Mark the batch LogAppendTime with `timestamp` as its max timestamp, and redo the CRC."""
    attributes = header.attributes | TIMESTAMP_TYPE_MASK
    struct.pack_into(">h", buf, pos + ATTRIBUTES_OFFSET, attributes)
    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, timestamp)
    write_crc(buf, pos, header)
