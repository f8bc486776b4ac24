"""Errors raised by the log: client-visible ones are KafkaError, the rest are for the broker.

`RecordValidationError` is a KafkaError that also names the records at fault, for the
ProduceResponse's `record_errors` (batch_index = the record's index within its batch).
`KafkaStorageError` is a file the log could not open, write or create (descriptor limit,
disk full, permissions): the request that needed it gets KAFKA_STORAGE_ERROR, as in Kafka,
and the log stays as it was before that request (and, unless descriptors ran out, its log
directory goes offline: see `dir_failure`).
"""

from __future__ import annotations

from pykbroker.protocol.errors import ErrorCode, KafkaError

__all__ = [
    "ErrorCode",
    "KafkaError",
    "RecordValidationError",
    "KafkaStorageError",
    "LogError",
    "OffsetsOutOfOrderError",
    "UnexpectedAppendOffsetError",
    "LogClosedError",
]


class RecordValidationError(KafkaError):
    """A produce rejected because of particular records (Kafka: RecordValidationException)."""

    def __init__(self, code: int, message: str, record_errors: list[tuple[int, str]]) -> None:
        super().__init__(code, message)
        self.record_errors = record_errors


class KafkaStorageError(KafkaError):
    """KAFKA_STORAGE_ERROR: an operating system error on a log's files (Kafka's KafkaStorageException)."""

    def __init__(self, message: str, cause: OSError) -> None:
        super().__init__(ErrorCode.KAFKA_STORAGE_ERROR, f"{message}: {cause.strerror or cause}")
        self.cause = cause


class LogError(Exception):
    """A broker-internal log failure (never a client's fault)."""


class OffsetsOutOfOrderError(LogError):
    """A replicated append whose batch offsets do not increase."""


class UnexpectedAppendOffsetError(LogError):
    """A replicated append that starts below the log end offset."""

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class LogClosedError(LogError):
    """An operation on a log that was closed or deleted."""
