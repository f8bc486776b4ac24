"""Legacy message sets (magic 0 and 1): parse, build, and convert to and from magic 2.

A message set is a sequence of messages (all big-endian):

    offset      int64
    size        int32   (bytes that follow)
    crc         uint32  (zlib CRC32 of magic to the end)
    magic       int8    (0 or 1)
    attributes  int8    (bits 0-2 compression; bit 3 LogAppendTime, magic 1 only)
    timestamp   int64   (magic 1 only)
    key         int32 length (-1 for null) + bytes
    value       int32 length (-1 for null) + bytes

A compressed message is a wrapper: no key, and a value that is a compressed message set
of uncompressed inner messages of the same magic. Magic 0 inner messages carry absolute
offsets; magic 1 inner messages carry offsets relative to the first, and the wrapper
carries the absolute offset of the last. A magic 1 wrapper's timestamp is the largest
inner timestamp, or for LogAppendTime the append time, which then applies to every inner
message. Magic 0 has no timestamps: -1 (NO_TIMESTAMP) stands for them.

Brokers store magic 2 only (Kafka 3.0 and later): produce requests v0-v2 are up-converted
(`upconvert_to_v2`) and fetch requests v0-v3 get down-converted data (`downconvert`).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from ..common.time import now_ms
from . import batch as _batch
from .buffers import ReadableBuffer
from .compression import ZSTD, check_codec, compress, decompress
from .errors import CorruptRecordError, InvalidRecordError, UnsupportedCompressionError
from .records import Record, as_bytes, build_batch, decode_batch

NO_TIMESTAMP = -1
LOG_OVERHEAD = 12  # offset + size
MAGIC_OFFSET = 16
COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
RECORD_OVERHEAD = {0: 14, 1: 22}  # crc, magic, attributes, [timestamp], key and value lengths

_OFFSET_AND_SIZE = struct.Struct(">qi")
_CRC_MAGIC_ATTRIBUTES = struct.Struct(">IBB")
_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")

_Entry = tuple[bytes | None, bytes | None, int]  # key, value, timestamp of a message to build


class LegacyMessage(NamedTuple):
    """One magic 0 or 1 message (a wrapper, or an inner message with absolute offset)."""

    offset: int
    magic: int
    attributes: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    crc: int

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return self.magic > 0 and bool(self.attributes & TIMESTAMP_TYPE_MASK)


# -- parsing ------------------------------------------------------------------------------


def parse_message(buf: ReadableBuffer, pos: int = 0, *, verify_crc: bool = True) -> tuple[LegacyMessage, int]:
    """(message, position after it) for the message at `pos`, its CRC checked."""
    end = _message_end(buf, pos)
    magic = buf[pos + MAGIC_OFFSET]
    if magic not in RECORD_OVERHEAD:
        raise InvalidRecordError(f"expected a magic 0 or 1 message, found magic {magic}")
    if end - pos - LOG_OVERHEAD < RECORD_OVERHEAD[magic]:
        raise InvalidRecordError(f"message is shorter than the magic {magic} overhead")
    offset, _size = _OFFSET_AND_SIZE.unpack_from(buf, pos)
    crc, _magic, attributes = _CRC_MAGIC_ATTRIBUTES.unpack_from(buf, pos + LOG_OVERHEAD)
    if verify_crc:
        _check_crc(buf, pos, end, crc, offset)
    _check_compression(attributes & COMPRESSION_MASK, magic)
    cursor = pos + LOG_OVERHEAD + _CRC_MAGIC_ATTRIBUTES.size
    timestamp = NO_TIMESTAMP
    if magic == 1:
        (timestamp,) = _TIMESTAMP.unpack_from(buf, cursor)
        cursor += _TIMESTAMP.size
    key, cursor = _read_nullable_bytes(buf, cursor, end)
    value, cursor = _read_nullable_bytes(buf, cursor, end)
    if cursor != end:
        raise InvalidRecordError(f"message at offset {offset} has {end - cursor} stray bytes")
    return LegacyMessage(offset, magic, attributes, timestamp, key, value, crc), end


def parse_message_set(
    buf: ReadableBuffer, *, verify_crc: bool = True, allow_partial_tail: bool = False
) -> list[LegacyMessage]:
    """The messages of `buf` as they are stored: wrappers are not opened."""
    messages = []
    pos = 0
    while pos < len(buf):
        if allow_partial_tail and _is_partial(buf, pos):
            break
        message, pos = parse_message(buf, pos, verify_crc=verify_crc)
        messages.append(message)
    return messages


def decode_message_set(
    buf: ReadableBuffer, *, verify_crc: bool = True, allow_partial_tail: bool = False
) -> list[LegacyMessage]:
    """The logical messages of `buf`: wrappers replaced by their inner messages, with
    absolute offsets and the timestamps consumers see."""
    messages = []
    for message in parse_message_set(buf, verify_crc=verify_crc, allow_partial_tail=allow_partial_tail):
        if message.compression:
            messages.extend(open_wrapper(message, verify_crc=verify_crc))
        else:
            messages.append(message)
    return messages


def open_wrapper(wrapper: LegacyMessage, *, verify_crc: bool = True) -> list[LegacyMessage]:
    """The inner messages of a compressed wrapper, with absolute offsets and timestamps."""
    if wrapper.value is None:
        raise InvalidRecordError(f"compressed message at offset {wrapper.offset} has no value")
    inner_bytes = decompress(wrapper.compression, wrapper.value, magic=wrapper.magic)
    inner = parse_message_set(inner_bytes, verify_crc=verify_crc)
    if not inner:
        raise InvalidRecordError(f"compressed message at offset {wrapper.offset} is empty")
    for message in inner:
        _check_inner_message(message, wrapper)
    if wrapper.magic == 0:
        return inner
    base_offset = wrapper.offset - inner[-1].offset
    return [_absolute_inner_message(message, wrapper, base_offset) for message in inner]


def _absolute_inner_message(message: LegacyMessage, wrapper: LegacyMessage, base_offset: int) -> LegacyMessage:
    message = message._replace(offset=base_offset + message.offset)
    if wrapper.is_log_append_time:
        message = message._replace(timestamp=wrapper.timestamp, attributes=message.attributes | TIMESTAMP_TYPE_MASK)
    return message


def _check_inner_message(message: LegacyMessage, wrapper: LegacyMessage) -> None:
    if message.magic != wrapper.magic:
        raise InvalidRecordError(f"magic {wrapper.magic} wrapper holds an inner message of magic {message.magic}")
    if message.compression:
        raise InvalidRecordError(f"compressed message at offset {wrapper.offset} is nested")


def _message_end(buf: ReadableBuffer, pos: int) -> int:
    if len(buf) - pos < MAGIC_OFFSET + 1:
        raise InvalidRecordError("message is shorter than its header")
    _offset, size = _OFFSET_AND_SIZE.unpack_from(buf, pos)
    if size < RECORD_OVERHEAD[0]:
        raise InvalidRecordError(f"message size {size} is below the minimum")
    end = pos + LOG_OVERHEAD + size
    if end > len(buf):
        raise InvalidRecordError("message is truncated")
    return end


def _is_partial(buf: ReadableBuffer, pos: int) -> bool:
    if len(buf) - pos < LOG_OVERHEAD:
        return True
    _offset, size = _OFFSET_AND_SIZE.unpack_from(buf, pos)
    return size >= 0 and pos + LOG_OVERHEAD + size > len(buf)


def _check_crc(buf: ReadableBuffer, pos: int, end: int, stored: int, offset: int) -> None:
    computed = zlib.crc32(memoryview(buf)[pos + MAGIC_OFFSET : end])
    if computed != stored:
        raise CorruptRecordError(
            f"message at offset {offset} has a bad CRC (stored {stored:#010x}, computed {computed:#010x})"
        )


def _check_compression(codec: int, magic: int) -> None:
    check_codec(codec)
    if codec == ZSTD:
        raise UnsupportedCompressionError(f"zstd needs magic 2, not magic {magic}")


def _read_nullable_bytes(buf: ReadableBuffer, pos: int, end: int) -> tuple[bytes | None, int]:
    if end - pos < _LENGTH.size:
        raise InvalidRecordError("message field length is truncated")
    (length,) = _LENGTH.unpack_from(buf, pos)
    pos += _LENGTH.size
    if length == -1:
        return None, pos
    if length < -1 or pos + length > end:
        raise InvalidRecordError(f"message field length {length} does not fit its message")
    return bytes(buf[pos : pos + length]), pos + length


# -- building -----------------------------------------------------------------------------


def encode_message(
    offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None
) -> bytes:
    """One message, CRC computed."""
    body = bytearray(struct.pack(">BB", magic, attributes))
    if magic == 1:
        body += _TIMESTAMP.pack(timestamp)
    body += _encode_nullable_bytes(key)
    body += _encode_nullable_bytes(value)
    crc = zlib.crc32(body)
    return _OFFSET_AND_SIZE.pack(offset, 4 + len(body)) + struct.pack(">I", crc) + bytes(body)


def _encode_nullable_bytes(data: bytes | None) -> bytes:
    if data is None:
        return _LENGTH.pack(-1)
    return _LENGTH.pack(len(data)) + bytes(data)


def build_message_set(
    entries: Iterable[Sequence],
    *,
    magic: int,
    compression: int = 0,
    base_offset: int = 0,
    offsets: Sequence[int] | None = None,
    log_append_time: int | None = None,
) -> bytes:
    """A magic 0 or 1 message set of `entries`, each (key, value[, timestamp]).

    Offsets are `offsets` if given, else consecutive from `base_offset`. Magic 1 timestamps
    default to now; magic 0 has none. With `compression`, all entries go into one wrapper.
    `log_append_time` (magic 1) marks the messages LogAppendTime with that timestamp.
    """
    if magic not in RECORD_OVERHEAD:
        raise ValueError(f"legacy magic is 0 or 1, not {magic}")
    _check_compression(compression, magic)
    built = [_as_entry(entry, magic) for entry in entries]
    if offsets is None:
        offsets = [base_offset + i for i in range(len(built))]
    offsets = list(offsets)
    if len(offsets) != len(built):
        raise ValueError("one offset per entry is needed")
    if not built:
        return b""
    if compression:
        return _build_wrapper(built, offsets, magic, compression, log_append_time)
    return b"".join(_encode_plain(entry, offset, magic, log_append_time) for entry, offset in zip(built, offsets))


def _as_entry(entry: Sequence, magic: int) -> _Entry:
    if not 2 <= len(entry) <= 3:
        raise TypeError(f"a legacy entry is (key, value[, timestamp]), not {entry!r}")
    key, value, timestamp = (*entry, None)[:3]
    if magic == 0:
        timestamp = NO_TIMESTAMP
    elif timestamp is None:
        timestamp = now_ms()
    return as_bytes(key), as_bytes(value), timestamp


def _timestamp_attributes(magic: int, log_append_time: int | None) -> int:
    return TIMESTAMP_TYPE_MASK if magic == 1 and log_append_time is not None else 0


def _encode_plain(entry: _Entry, offset: int, magic: int, log_append_time: int | None) -> bytes:
    key, value, timestamp = entry
    attributes = _timestamp_attributes(magic, log_append_time)
    if attributes and log_append_time is not None:  # attributes are set only with a log append time
        timestamp = log_append_time
    return encode_message(offset, magic, attributes, timestamp, key, value)


def _build_wrapper(
    entries: list[_Entry], offsets: list[int], magic: int, compression: int, log_append_time: int | None
) -> bytes:
    attributes = _timestamp_attributes(magic, log_append_time)
    inner = b"".join(
        encode_message(_inner_offset(offset, offsets[0], magic), magic, attributes, timestamp, key, value)
        for (key, value, timestamp), offset in zip(entries, offsets)
    )
    if magic == 0:
        wrapper_timestamp = NO_TIMESTAMP
    elif attributes and log_append_time is not None:  # attributes are set only with a log append time
        wrapper_timestamp = log_append_time
    else:
        wrapper_timestamp = max(timestamp for _, _, timestamp in entries)
    return encode_message(
        offsets[-1], magic, attributes | compression, wrapper_timestamp, None, compress(compression, inner, magic=magic)
    )


def _inner_offset(offset: int, first_offset: int, magic: int) -> int:
    return offset if magic == 0 else offset - first_offset


# -- conversion ---------------------------------------------------------------------------


def upconvert_to_v2(
    message_set: ReadableBuffer,
    *,
    base_offset: int | None = None,
    compression: int | None = None,
    partition_leader_epoch: int = -1,
    log_append_time: int | None = None,
    verify_crc: bool = True,
) -> bytes:
    """One magic 2 batch holding every message of a magic 0/1 message set (b"" if empty).

    Keys, values and timestamps are kept (magic 0: -1, NO_TIMESTAMP). Offsets are assigned
    from `base_offset`, or with None kept as they are (they must then increase).
    `compression` defaults to the codec of the last compressed wrapper, as Kafka does for
    topics whose compression.type is `producer`. `log_append_time` makes the batch
    LogAppendTime with that timestamp.
    """
    shallow = parse_message_set(message_set, verify_crc=verify_crc)
    if not shallow:
        return b""
    messages = decode_message_set(message_set, verify_crc=verify_crc)
    codec = _source_compression(shallow) if compression is None else compression
    offsets = _upconverted_offsets(messages, base_offset)
    base_timestamp = messages[0].timestamp
    records = [
        Record(
            offset_delta=offset - offsets[0],
            timestamp_delta=message.timestamp - base_timestamp,
            key=message.key,
            value=message.value,
        )
        for message, offset in zip(messages, offsets)
    ]
    return build_batch(
        records,
        base_offset=offsets[0],
        compression=codec,
        log_append_time=log_append_time is not None,
        partition_leader_epoch=partition_leader_epoch,
        base_timestamp=base_timestamp,
        max_timestamp=(
            log_append_time if log_append_time is not None else max(message.timestamp for message in messages)
        ),
    )


def _source_compression(shallow: list[LegacyMessage]) -> int:
    codecs = [message.compression for message in shallow if message.compression]
    return codecs[-1] if codecs else 0


def _upconverted_offsets(messages: list[LegacyMessage], base_offset: int | None) -> list[int]:
    if base_offset is not None:
        return [base_offset + i for i in range(len(messages))]
    offsets = [message.offset for message in messages]
    if any(later <= earlier for earlier, later in zip(offsets, offsets[1:])):
        raise InvalidRecordError("message offsets do not increase; pass base_offset to assign them")
    return offsets


def downconvert(
    batches: ReadableBuffer, magic: int, *, first_offset: int | None = None, verify_crc: bool = True
) -> bytes:
    """The magic 0 or 1 message set an old fetcher (Fetch v0-v3) reads for `batches`.

    Offsets, keys, values and (magic 1) timestamps are kept; headers are dropped; control
    batches are left out; each compressed batch becomes one wrapper of the same codec
    (zstd cannot be expressed and raises UnsupportedCompressionError). Records before
    `first_offset` are left out. Messages already at or below `magic` pass through as they are.
    """
    if magic not in RECORD_OVERHEAD:
        raise ValueError(f"legacy magic is 0 or 1, not {magic}")
    out = bytearray()
    pos = 0
    while pos < len(batches):
        if _batch.read_magic(batches, pos) >= 2:
            header, records = decode_batch(batches, pos, verify_crc=verify_crc)
            out += _downconvert_batch(header, records, magic, first_offset)
            pos += header.size
        else:
            message, end = parse_message(batches, pos, verify_crc=verify_crc)
            out += _downconvert_message(batches[pos:end], message, magic, verify_crc)
            pos = end
    return bytes(out)


def _downconvert_batch(
    header: _batch.BatchHeader, records: list[Record], magic: int, first_offset: int | None
) -> bytes:
    if header.is_control:
        return b""
    # Each record's absolute offset, as `decode_batch` computes it (typed int, unlike Record.offset)
    offsets = [header.base_offset + record.offset_delta for record in records]
    kept = [
        (offset, record) for offset, record in zip(offsets, records) if first_offset is None or offset >= first_offset
    ]
    if not kept:
        return b""
    if header.compression == ZSTD:
        raise UnsupportedCompressionError("zstd batches cannot be down-converted below magic 2")
    return build_message_set(
        [(record.key, record.value, record.timestamp) for _, record in kept],
        magic=magic,
        compression=header.compression,
        offsets=[offset for offset, _ in kept],
        log_append_time=header.max_timestamp if header.is_log_append_time else None,
    )


def _downconvert_message(raw: ReadableBuffer, message: LegacyMessage, magic: int, verify_crc: bool) -> bytes:
    if message.magic <= magic:
        return bytes(raw)
    inner = open_wrapper(message, verify_crc=verify_crc) if message.compression else [message]
    return build_message_set(
        [(m.key, m.value, m.timestamp) for m in inner],
        magic=magic,
        compression=message.compression,
        offsets=[m.offset for m in inner],
    )
