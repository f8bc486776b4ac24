"""The vocabulary of share-partition state: a record's state and an acknowledgement's type (with
Kafka's codes), what one share partition is configured with, and the ranges a fetch acquired."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple


class RecordState(IntEnum):
    """Kafka's RecordState: the codes are also those persisted."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(IntEnum):
    """Kafka's AcknowledgeType (GAP: the offset holds no record for the consumer)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


READ_UNCOMMITTED, READ_COMMITTED = 0, 1


@dataclass(frozen=True)
class ShareSettings:
    """What governs a share partition, from the group's configs over the broker's defaults."""

    record_lock_duration_ms: int = 30000
    delivery_count_limit: int = 5
    max_in_flight_records: int = 2000
    auto_offset_reset: str = "latest"  # latest, earliest or by_duration:<ISO-8601 duration>
    isolation_level: int = READ_UNCOMMITTED


class AcquiredRange(NamedTuple):
    """Offsets a fetch acquired for a member, all delivered `delivery_count` times."""

    first_offset: int
    last_offset: int
    delivery_count: int


class AcknowledgementBatch(NamedTuple):
    """One acknowledgement: a type for the whole range, or one per offset."""

    first_offset: int
    last_offset: int
    types: tuple[int, ...]


class FetchedBatch(NamedTuple):
    """A record batch as read from the log: its offsets and where it lies in the bytes read."""

    first_offset: int
    last_offset: int
    position: int
    size: int
    producer_id: int
    is_transactional: bool
    is_control: bool
