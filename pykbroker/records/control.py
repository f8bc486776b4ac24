"""Control records, chiefly the transaction markers (COMMIT / ABORT) that end a transaction.

A control batch (attribute bit 5) holds control records, which consumers do not see.
A control record's key is (version int16 = 0, type int16); a transaction marker's value is
(version int16 = 0, coordinator_epoch int32). Kafka reads keys and values of a newer
version as version 0 (the leading fields keep their meaning), so we do the same; shorter
keys or values are invalid.
"""

from __future__ import annotations

import enum
import struct
from typing import NamedTuple

from ..common.time import now_ms
from .batch import BatchHeader
from .buffers import ReadableBuffer
from .errors import InvalidRecordError
from .records import Record, build_batch, decode_batch

CONTROL_RECORD_VERSION = 0
END_TXN_MARKER_VERSION = 0

_KEY = struct.Struct(">hh")
_END_TXN_MARKER_VALUE = struct.Struct(">hi")


class ControlType(enum.IntEnum):
    """Control record types Kafka defines (2 and up are KRaft's metadata log)."""

    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


ABORT = ControlType.ABORT
COMMIT = ControlType.COMMIT


class EndTxnMarker(NamedTuple):
    """A transaction marker as read from a control batch."""

    producer_id: int
    producer_epoch: int
    commit: bool
    coordinator_epoch: int
    offset: int
    timestamp: int


def encode_control_key(control_type: int) -> bytes:
    return _KEY.pack(CONTROL_RECORD_VERSION, control_type)


def encode_end_txn_marker_value(coordinator_epoch: int) -> bytes:
    return _END_TXN_MARKER_VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch)


def build_end_txn_marker(
    producer_id: int,
    producer_epoch: int,
    commit: bool,
    coordinator_epoch: int,
    base_offset: int = 0,
    timestamp: int | None = None,
    partition_leader_epoch: int = -1,
) -> bytes:
    """A transactional control batch holding one COMMIT or ABORT marker (timestamp: now)."""
    timestamp = now_ms() if timestamp is None else timestamp
    marker = Record(
        offset_delta=0,
        timestamp_delta=0,
        key=encode_control_key(COMMIT if commit else ABORT),
        value=encode_end_txn_marker_value(coordinator_epoch),
    )
    return build_batch(
        [marker],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
        base_timestamp=timestamp,
    )


def parse_control_type(key: bytes | None) -> int:
    """The type of a control record from its key."""
    if key is None or len(key) < _KEY.size:
        raise InvalidRecordError("control record key is shorter than version and type")
    _version, control_type = _KEY.unpack_from(key)
    return control_type


def parse_control_record(record: Record) -> tuple[int, int]:
    """(type, coordinator_epoch) of a transaction marker record; other types are invalid."""
    control_type = parse_control_type(record.key)
    if control_type not in (ABORT, COMMIT):
        raise InvalidRecordError(f"control record of type {control_type} is not a transaction marker")
    value = record.value
    if value is None or len(value) < _END_TXN_MARKER_VALUE.size:
        raise InvalidRecordError("transaction marker value is shorter than version and epoch")
    _version, coordinator_epoch = _END_TXN_MARKER_VALUE.unpack_from(value)
    return control_type, coordinator_epoch


def read_end_txn_marker(buf: ReadableBuffer, pos: int = 0) -> EndTxnMarker:
    """The transaction marker held by the control batch at `pos`."""
    header, records = decode_batch(buf, pos)
    if not header.is_control or len(records) != 1:
        raise InvalidRecordError("not a control batch of exactly one record")
    record = records[0]
    control_type, coordinator_epoch = parse_control_record(record)
    if record.offset is None or record.timestamp is None:  # decode_batch fills both in
        raise InvalidRecordError("control record without an offset or timestamp")
    return EndTxnMarker(
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        commit=control_type == COMMIT,
        coordinator_epoch=coordinator_epoch,
        offset=record.offset,
        timestamp=record.timestamp,
    )


def is_end_txn_marker_batch(header: BatchHeader) -> bool:
    """Whether a batch header may hold a transaction marker (transactional and control)."""
    return header.is_control and header.is_transactional
