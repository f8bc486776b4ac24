"""Errors raised by the record batch library (mapped to Kafka error codes by the handlers)."""


class InvalidRecordError(ValueError):
    """The bytes are not a valid batch or message set (Kafka: INVALID_RECORD / CORRUPT_MESSAGE)."""


class CorruptRecordError(InvalidRecordError):
    """A batch whose CRC does not match its contents (Kafka: CORRUPT_MESSAGE)."""


class UnsupportedCompressionError(InvalidRecordError):
    """A compression codec id that Kafka does not define (Kafka: UNSUPPORTED_COMPRESSION_TYPE)."""
