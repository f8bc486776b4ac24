"""Magic 2 records: decode a whole batch into records and build batches from records.

For tests and tools; the broker's hot path works on headers only (see `batch`).

A record inside a batch (after the optional compression of everything past the header):

    length          varint   (bytes that follow)
    attributes      int8     (unused, 0)
    timestamp_delta varlong  (from the batch's base timestamp)
    offset_delta    varint   (from the batch's base offset)
    key             varint length (-1 for null) + bytes
    value           varint length (-1 for null) + bytes
    headers         varint count, then per header:
                      key   varint length + UTF-8 bytes (never null)
                      value varint length (-1 for null) + bytes
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from ..common.time import now_ms
from . import batch as _batch
from .batch import BatchHeader
from .buffers import ReadableBuffer
from .compression import check_codec, compress, decompress
from .errors import InvalidRecordError
from .varint import decode_varint, decode_varlong, encode_varint, encode_varlong

NO_TIMESTAMP = -1
RECORD_ATTRIBUTES = b"\x00"

Header = tuple[str, bytes | None]


@dataclass(slots=True)
class Record:
    """One record of a magic 2 batch.

    `offset` and `timestamp` are absolute and filled in when the record is decoded from a
    batch (for a LogAppendTime batch the timestamp is the batch's max timestamp, as
    consumers see it); they take no part in comparisons.
    """

    offset_delta: int
    timestamp_delta: int
    key: bytes | None
    value: bytes | None
    headers: list[Header] = field(default_factory=list)
    offset: int | None = field(default=None, compare=False)
    timestamp: int | None = field(default=None, compare=False)


def offset_of(record: Record) -> int:
    """The absolute offset of a record `decode_batch` returned (it always fills it in)."""
    if record.offset is None:
        raise ValueError("the record has no absolute offset: it was not decoded from a batch")
    return record.offset


def timestamp_of(record: Record) -> int:
    """The absolute timestamp of a record `decode_batch` returned (it always fills it in)."""
    if record.timestamp is None:
        raise ValueError("the record has no absolute timestamp: it was not decoded from a batch")
    return record.timestamp


# What `build_batch` accepts for a record: a Record, or (key, value[, headers[, timestamp]]).
RecordLike = Record | Sequence


# -- encoding -----------------------------------------------------------------------------


def encode_record(record: Record) -> bytes:
    """The bytes of `record`, length prefix included."""
    body = bytearray(RECORD_ATTRIBUTES)
    body += encode_varlong(record.timestamp_delta)
    body += encode_varint(record.offset_delta)
    body += encode_nullable_bytes(record.key)
    body += encode_nullable_bytes(record.value)
    body += encode_varint(len(record.headers))
    for header_key, header_value in record.headers:
        body += encode_nullable_bytes(header_key.encode("utf-8"))
        body += encode_nullable_bytes(header_value)
    return encode_varint(len(body)) + bytes(body)


def encode_nullable_bytes(data: bytes | None) -> bytes:
    if data is None:
        return encode_varint(-1)
    return encode_varint(len(data)) + bytes(data)


def build_batch(
    records: Iterable[RecordLike],
    *,
    base_offset: int = 0,
    compression: int = 0,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    log_append_time: bool = False,
    partition_leader_epoch: int = -1,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
) -> bytes:
    """A complete magic 2 batch (CRC included) holding `records`.

    Each record is a `Record`, whose deltas are used as they are, or a tuple
    (key, value[, headers[, timestamp]]) whose offset delta is its position in `records`
    and whose timestamp is absolute (default: the base timestamp). Keys, values and header
    values may be bytes, str (written as UTF-8) or None.

    `base_timestamp` defaults to the first record's timestamp when it is a tuple with one,
    else to now (-1 for no records); to rebuild decoded records pass
    `base_timestamp=header.base_timestamp`.
    `max_timestamp` defaults to the largest record timestamp (-1 for no records) and
    `last_offset_delta` to the last record's offset delta (0 for no records).
    """
    items = list(records)
    check_codec(compression)
    base_timestamp = _choose_base_timestamp(items, base_timestamp)
    normalized = [to_record(item, index, base_timestamp) for index, item in enumerate(items)]
    body = b"".join(encode_record(record) for record in normalized)
    if compression:
        body = compress(compression, body)
    header = BatchHeader(
        base_offset=base_offset,
        batch_length=_batch.BATCH_HEADER_SIZE - _batch.LOG_OVERHEAD + len(body),
        partition_leader_epoch=partition_leader_epoch,
        magic=2,
        crc=0,
        attributes=_attributes(compression, log_append_time, is_transactional, is_control),
        last_offset_delta=_last_offset_delta(normalized, last_offset_delta),
        base_timestamp=base_timestamp,
        max_timestamp=_max_timestamp(normalized, base_timestamp, max_timestamp),
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_count=len(normalized),
    )
    buf = bytearray(_batch.encode_header(header))
    buf += body
    _batch.write_crc(buf, 0, header)
    return bytes(buf)


def to_record(item: RecordLike, index: int, base_timestamp: int) -> Record:
    """`item` as a Record: a Record as it is, a tuple placed at offset delta `index`."""
    if isinstance(item, Record):
        return item
    if not isinstance(item, (tuple, list)) or not 2 <= len(item) <= 4:
        raise TypeError(f"a record is a Record or (key, value[, headers[, timestamp]]), not {item!r}")
    key, value, headers, timestamp = (*item, None, None)[:4]
    if timestamp is None:
        timestamp = base_timestamp
    return Record(
        offset_delta=index,
        timestamp_delta=timestamp - base_timestamp,
        key=as_bytes(key),
        value=as_bytes(value),
        headers=[(header_name(name), as_bytes(data)) for name, data in headers or ()],
    )


def header_name(name: str | bytes | bytearray) -> str:
    if isinstance(name, (bytes, bytearray)):
        return bytes(name).decode("utf-8")
    if isinstance(name, str):
        return name
    raise TypeError(f"a header name is str or UTF-8 bytes, not {type(name).__name__}")


def as_bytes(data: ReadableBuffer) -> bytes | None:
    if data is None:
        return None
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"expected bytes, str or None, not {type(data).__name__}")


def _choose_base_timestamp(items: list, base_timestamp: int | None) -> int:
    if base_timestamp is not None:
        return base_timestamp
    if not items:
        return NO_TIMESTAMP
    first = items[0]
    if isinstance(first, (tuple, list)) and len(first) == 4 and first[3] is not None:
        return first[3]
    return now_ms()


def _attributes(compression: int, log_append_time: bool, is_transactional: bool, is_control: bool) -> int:
    attributes = compression
    if log_append_time:
        attributes |= _batch.TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= _batch.TRANSACTIONAL_MASK
    if is_control:
        attributes |= _batch.CONTROL_MASK
    return attributes


def _last_offset_delta(records: list[Record], last_offset_delta: int | None) -> int:
    if last_offset_delta is not None:
        return last_offset_delta
    return records[-1].offset_delta if records else 0


def _max_timestamp(records: list[Record], base_timestamp: int, max_timestamp: int | None) -> int:
    if max_timestamp is not None:
        return max_timestamp
    if not records:
        return NO_TIMESTAMP
    return base_timestamp + max(record.timestamp_delta for record in records)


# -- decoding -----------------------------------------------------------------------------


def decode_batch(buf: ReadableBuffer, pos: int = 0, *, verify_crc: bool = True) -> tuple[BatchHeader, list[Record]]:
    """The header and records of the magic 2 batch at `pos`, decompressing as needed.

    Raises InvalidRecordError (CorruptRecordError for a CRC mismatch) on anything that is
    not a well-formed batch: wrong sizes, bad varints, a record count that does not match,
    bytes left over after the last record.
    """
    header = _batch.parse_header(buf, pos)
    if verify_crc:
        _batch.check_crc(buf, pos, header)
    if header.records_count < 0:
        raise InvalidRecordError(f"negative record count {header.records_count}")
    body = bytes(memoryview(buf)[pos + _batch.BATCH_HEADER_SIZE : pos + header.size])
    if header.compression:
        body = decompress(header.compression, body)
    records = decode_records(body, header.records_count)
    for record in records:
        record.offset = header.base_offset + record.offset_delta
        record.timestamp = _effective_timestamp(header, record)
    return header, records


def decode_records(body: bytes, count: int) -> list[Record]:
    """Exactly `count` records that fill `body` exactly."""
    records = []
    pos = 0
    for _ in range(count):
        record, pos = decode_record(body, pos)
        records.append(record)
    if pos != len(body):
        raise InvalidRecordError(f"{len(body) - pos} bytes left after the batch's {count} records")
    return records


def decode_record(buf: ReadableBuffer, pos: int) -> tuple[Record, int]:
    """(record, position after it) for the length-prefixed record at `pos`."""
    length, pos = decode_varint(buf, pos)
    end = pos + length
    if length < 1 or end > len(buf):
        raise InvalidRecordError(f"record length {length} does not fit the batch")
    pos += len(RECORD_ATTRIBUTES)
    timestamp_delta, pos = decode_varlong(buf, pos, end)
    offset_delta, pos = decode_varint(buf, pos, end)
    key, pos = decode_nullable_bytes(buf, pos, end)
    value, pos = decode_nullable_bytes(buf, pos, end)
    headers, pos = decode_headers(buf, pos, end)
    if pos != end:
        raise InvalidRecordError(f"record declares {length} bytes but its fields end before that")
    return Record(offset_delta, timestamp_delta, key, value, headers), pos


def decode_headers(buf: ReadableBuffer, pos: int, end: int) -> tuple[list[Header], int]:
    count, pos = decode_varint(buf, pos, end)
    if count < 0:
        raise InvalidRecordError(f"negative header count {count}")
    headers = []
    for _ in range(count):
        name, pos = decode_nullable_bytes(buf, pos, end)
        if name is None:
            raise InvalidRecordError("record header key is null")
        data, pos = decode_nullable_bytes(buf, pos, end)
        headers.append((_decode_utf8(name), data))
    return headers, pos


def decode_nullable_bytes(buf: ReadableBuffer, pos: int, end: int) -> tuple[bytes | None, int]:
    length, pos = decode_varint(buf, pos, end)
    if length == -1:
        return None, pos
    if length < -1 or pos + length > end:
        raise InvalidRecordError(f"field length {length} does not fit its record")
    return bytes(buf[pos : pos + length]), pos + length


def _decode_utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidRecordError(f"record header key is not UTF-8: {error}") from error


def _effective_timestamp(header: BatchHeader, record: Record) -> int:
    if header.is_log_append_time:
        return header.max_timestamp
    return header.base_timestamp + record.timestamp_delta


# -- buffers of batches -------------------------------------------------------------------


def iter_batches(
    buf: ReadableBuffer, *, verify_crc: bool = True, allow_partial_tail: bool = False
) -> Iterator[tuple[BatchHeader, list[Record]]]:
    """(header, records) of each magic 2 batch in `buf`, in order.

    With `allow_partial_tail`, an incomplete last batch (as a fetch response may end with)
    is skipped instead of being an error.
    """
    pos = 0
    while pos < len(buf):
        if allow_partial_tail and _is_partial(buf, pos):
            return
        header, records = decode_batch(buf, pos, verify_crc=verify_crc)
        yield header, records
        pos += header.size


def iter_records(buf: ReadableBuffer, *, verify_crc: bool = True, allow_partial_tail: bool = False) -> Iterator[Record]:
    """Every record of every magic 2 batch in `buf`, with absolute offsets and timestamps."""
    for _, records in iter_batches(buf, verify_crc=verify_crc, allow_partial_tail=allow_partial_tail):
        yield from records


def _is_partial(buf: ReadableBuffer, pos: int) -> bool:
    remaining = len(buf) - pos
    if remaining < _batch.BATCH_HEADER_SIZE:
        return True
    batch_length = int.from_bytes(buf[pos + 8 : pos + 12], "big", signed=True)
    return batch_length >= 0 and _batch.LOG_OVERHEAD + batch_length > remaining
