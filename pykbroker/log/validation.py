"""Checks on the batches of an append, in Kafka's order, and the leader's in-place rewrites.

Everything works on batch headers and the CRC. Records are decoded only where Kafka's
rules need them and the topic asks for it: keys on compacted topics, and timestamps when
`message.timestamp.before.max.ms` is set or a header shows a timestamp past the after bound
(the decode then names the offending records, as Kafka's record_errors do).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from pykbroker.records.batch import (
    ATTRIBUTES_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    is_crc_valid,
    set_base_offset,
    set_log_append_time,
    set_partition_leader_epoch,
    unpack_header,
    write_crc,
)
from pykbroker.records.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from pykbroker.records.errors import InvalidRecordError
from pykbroker.records.records import Record, build_batch, decode_batch, timestamp_of

from .config import LONG_MAX, LogConfig
from .errors import ErrorCode, KafkaError, OffsetsOutOfOrderError, RecordValidationError
from .producer_state import CLIENT
from .scan import MIN_BATCH_LENGTH

_OFFSET_AND_LENGTH = struct.Struct(">qi")
MIN_LEGACY_RECORD_SIZE = 14  # Kafka refuses anything shorter, whatever its magic
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1
KNOWN_CODECS = range(0, 5)


@dataclass(eq=False)  # one append's buffer, never compared
class AppendBatches:
    """The complete batches of an append buffer (a partial tail is ignored, as Kafka does)."""

    buffer: bytearray
    batches: list[tuple[int, BatchHeader]]
    valid_bytes: int

    @property
    def record_count(self) -> int:
        return sum(header.records_count for _, header in self.batches)

    @property
    def first_offset(self) -> int:
        return self.batches[0][1].base_offset

    @property
    def last_offset(self) -> int:
        return self.batches[-1][1].last_offset

    def max_timestamp_and_offset(self) -> tuple[int, int]:
        """The largest batch max timestamp and the last offset of its batch."""
        best, offset = -1, -1
        for _, header in self.batches:
            if header.max_timestamp > best:
                best, offset = header.max_timestamp, header.last_offset
        return best, offset

    def data(self) -> memoryview:
        return memoryview(self.buffer)[: self.valid_bytes]


def split_batches(buffer: bytearray) -> AppendBatches:
    """Frame `buffer` into magic 2 batches: CORRUPT_MESSAGE or INVALID_RECORD if it is not that."""
    batches = []
    pos = 0
    while len(buffer) - pos >= LOG_OVERHEAD:
        _, length = _OFFSET_AND_LENGTH.unpack_from(buffer, pos)
        if length < MIN_LEGACY_RECORD_SIZE:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE,
                f"Record size {length} is less than the minimum record overhead ({MIN_LEGACY_RECORD_SIZE})",
            )
        if len(buffer) - pos < max(HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD + length):
            break
        if buffer[pos + MAGIC_OFFSET] != 2:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"record batch magic {buffer[pos + MAGIC_OFFSET]} is not 2")
        if length < MIN_BATCH_LENGTH:
            raise KafkaError(
                ErrorCode.CORRUPT_MESSAGE,
                f"Record batch is corrupt (the size {length + LOG_OVERHEAD} is smaller than "
                f"the minimum allowed overhead {MIN_BATCH_LENGTH + LOG_OVERHEAD})",
            )
        batches.append((pos, unpack_header(buffer, pos)))
        pos += LOG_OVERHEAD + length
    if not batches:
        raise KafkaError(ErrorCode.INVALID_RECORD, "the append holds no complete record batch")
    return AppendBatches(buffer, batches, pos)


# -- leader -----------------------------------------------------------------------------


def validate_leader_append(
    append: AppendBatches, config: LogConfig, *, origin: str, max_message_bytes: int, now_ms: int, log_append_time: bool
) -> None:
    """Kafka's leader-side checks, batch by batch; raises KafkaError on the first failure."""
    for pos, header in append.batches:
        check_batch_frame(append.buffer, pos, header, origin=origin, max_message_bytes=max_message_bytes)
    for pos, header in append.batches:
        if origin == CLIENT:
            check_client_batch(header)
        check_batch_timestamp_type(header, log_append_time)
        if needs_record_checks(header, config, now_ms, log_append_time):
            check_records(append.buffer, pos, config, now_ms, log_append_time)


def check_batch_frame(buffer: bytearray, pos: int, header: BatchHeader, *, origin: str, max_message_bytes: int) -> None:
    if origin == CLIENT and header.base_offset != 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"The baseOffset of the record batch in the append should be 0, but it is {header.base_offset}",
        )
    if header.size > max_message_bytes:
        raise KafkaError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"The record batch size in the append is {header.size} bytes which exceeds "
            f"the maximum configured value of {max_message_bytes}.",
        )
    if not is_crc_valid(buffer, pos, header):
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {header.crc})")
    if header.compression not in KNOWN_CODECS:
        # Kafka fails such a batch with an unexpected IllegalArgumentException.
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {header.compression}")


def check_client_batch(header: BatchHeader) -> None:
    count_from_offsets = header.last_offset_delta + 1
    if count_from_offsets <= 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD, f"Batch has an invalid offset range: [{header.base_offset}, {header.last_offset}]"
        )
    if header.records_count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid reported count for record batch: {header.records_count}")
    if count_from_offsets != header.records_count:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Inconsistent batch offset range [{header.base_offset}, {header.last_offset}] "
            f"and count of records {header.records_count}",
        )
    if header.is_control:
        raise KafkaError(ErrorCode.INVALID_RECORD, "Clients are not allowed to write control records")
    if header.producer_id >= 0 and header.base_sequence < 0:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Invalid sequence number {header.base_sequence} in record batch with producerId {header.producer_id}",
        )


def check_batch_timestamp_type(header: BatchHeader, log_append_time: bool) -> None:
    """A producer's LogAppendTime batch is refused unless a CreateTime topic can judge its timestamp.

    (Kafka reads every record of such a batch as carrying the batch's max timestamp.)
    """
    if header.is_log_append_time and (log_append_time or header.max_timestamp < 0):
        message = "Invalid timestamp type in message. Producer should not set timestamp type to LogAppendTime."
        raise RecordValidationError(
            ErrorCode.INVALID_TIMESTAMP,
            "One or more records have been rejected due to invalid timestamp",
            [(index, message) for index in range(max(header.records_count, 1))],
        )


def needs_record_checks(header: BatchHeader, config: LogConfig, now_ms: int, log_append_time: bool) -> bool:
    if config.compact and not header.is_control:
        return True
    if log_append_time:
        return False
    if config.timestamp_before_max_ms != LONG_MAX:
        return True
    after = config.timestamp_after_max_ms
    return after != LONG_MAX and header.max_timestamp >= 0 and header.max_timestamp - now_ms > after


def check_records(buffer: bytearray, pos: int, config: LogConfig, now_ms: int, log_append_time: bool) -> None:
    """Per-record checks (keys of compacted topics, timestamp bounds), Kafka's record_errors."""
    try:
        header, records = decode_batch(buffer, pos, verify_crc=False)
    except InvalidRecordError as error:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(error)) from None
    errors: list[tuple[int, str]] = []
    timestamp_error = False
    for index, record in enumerate(records):
        problem = None if log_append_time else timestamp_problem(record, config, now_ms)
        if problem is not None:
            timestamp_error = True
            errors.append((index, problem))
        elif config.compact and record.key is None:
            errors.append((index, "Compacted topic cannot accept message without key in topic partition."))
    if not errors:
        return
    if timestamp_error:
        raise RecordValidationError(
            ErrorCode.INVALID_TIMESTAMP, "One or more records have been rejected due to invalid timestamp", errors
        )
    raise RecordValidationError(
        ErrorCode.INVALID_RECORD,
        f"One or more records have been rejected due to {len(errors)} record errors in total, "
        f"and only showing the first three errors at most: {errors[:3]}",
        errors,
    )


def timestamp_problem(record: Record, config: LogConfig, now_ms: int) -> str | None:
    """Why a CreateTime record's timestamp is out of the topic's bounds (None if it is not)."""
    before, after = config.timestamp_before_max_ms, config.timestamp_after_max_ms
    timestamp = timestamp_of(record)
    if timestamp < 0 or (now_ms - timestamp <= before and timestamp - now_ms <= after):
        return None
    return (
        f"Timestamp {timestamp} of message with offset {record.offset} is out of range. "
        f"The timestamp should be within [{now_ms - before}, {now_ms + after}]"
    )


def assign_offsets(append: AppendBatches, next_offset: int, leader_epoch: int, log_append_time_ms: int | None) -> None:
    """Rewrite each batch in place: base offset, leader epoch, and LogAppendTime if asked."""
    assigned = []
    for pos, header in append.batches:
        set_base_offset(append.buffer, pos, next_offset)
        set_partition_leader_epoch(append.buffer, pos, leader_epoch)
        header = header._replace(base_offset=next_offset, partition_leader_epoch=leader_epoch)
        if log_append_time_ms is not None:
            set_log_append_time(append.buffer, pos, header, log_append_time_ms)
            header = header._replace(
                attributes=header.attributes | TIMESTAMP_TYPE_MASK, max_timestamp=log_append_time_ms
            )
        elif header.is_log_append_time:
            header = as_create_time(append.buffer, pos, header)
        assigned.append((pos, header))
        next_offset = header.next_offset
    append.batches = assigned


def as_create_time(buffer: bytearray, pos: int, header: BatchHeader) -> BatchHeader:
    """A producer's LogAppendTime batch on a CreateTime topic is stored as CreateTime, as Kafka does."""
    header = header._replace(attributes=header.attributes & ~TIMESTAMP_TYPE_MASK)
    struct.pack_into(">h", buffer, pos + ATTRIBUTES_OFFSET, header.attributes)
    write_crc(buffer, pos, header)
    return header


# The codec each `compression.type` value stores batches with; "producer" keeps theirs.
TARGET_CODECS = {"uncompressed": NONE, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}


def recompress(
    append: AppendBatches, compression_type: str, *, max_message_bytes: int, topic_partition: str
) -> AppendBatches:
    """The batches in the codec the topic's `compression.type` names, as Kafka's LogValidator
    stores them: a batch in another codec is rebuilt from its records (producer id, epoch,
    sequence, timestamps and offsets deltas kept), one already in that codec is kept as it
    is. A rebuilt batch above `max.message.bytes` fails with MESSAGE_TOO_LARGE."""
    target = TARGET_CODECS.get(compression_type)
    if target is None or all(header.compression == target or header.is_control for _, header in append.batches):
        return append
    buffer = bytearray()
    batches = []
    for pos, header in append.batches:
        data: bytes | bytearray
        if header.compression == target or header.is_control:
            data = append.buffer[pos : pos + header.size]
        else:
            data = _rebuilt(append.buffer, pos, header, target)
            if len(data) > max_message_bytes:
                raise KafkaError(
                    ErrorCode.MESSAGE_TOO_LARGE,
                    f"Message batch size is {len(data)} bytes in append to partition "
                    f"{topic_partition} which exceeds the maximum configured size of "
                    f"{max_message_bytes}.",
                )
        batches.append((len(buffer), unpack_header(data)))
        buffer += data
    return AppendBatches(buffer, batches, len(buffer))


def _rebuilt(buffer: bytearray, pos: int, header: BatchHeader, codec: int) -> bytes:
    try:
        _, records = decode_batch(buffer, pos, verify_crc=False)
    except InvalidRecordError as error:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, str(error)) from None
    return build_batch(
        records,
        base_offset=header.base_offset,
        compression=codec,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        is_transactional=header.is_transactional,
        log_append_time=header.is_log_append_time,
        partition_leader_epoch=header.partition_leader_epoch,
        base_timestamp=header.base_timestamp,
        max_timestamp=header.max_timestamp,
        last_offset_delta=header.last_offset_delta,
    )


# -- follower ---------------------------------------------------------------------------


def validate_follower_append(append: AppendBatches) -> None:
    """CRCs and strictly increasing offsets; sizes were checked by the leader."""
    previous_last = -1
    for pos, header in append.batches:
        if not is_crc_valid(append.buffer, pos, header):
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {header.crc})")
        if header.last_offset_delta < 0 or header.base_offset <= previous_last:
            raise OffsetsOutOfOrderError(
                f"Out of order offsets found in append: batch [{header.base_offset}, {header.last_offset}] "
                f"after offset {previous_last}"
            )
        previous_last = header.last_offset
