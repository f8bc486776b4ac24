"""Plain records the share group coordinator hands back to the handlers."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from ....protocol.errors import ErrorCode
from .records import Assignment


@dataclass(frozen=True)
class HeartbeatResult:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None  # None: not sent


@dataclass(frozen=True)
class DescribedMember:
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: list[str]
    assignment: list[tuple[uuid.UUID, str, list[int]]]  # (topic id, name, partitions)


@dataclass(frozen=True)
class DescribedShareGroup:
    group_id: str
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = ""
    members: list[DescribedMember] = field(default_factory=list)


@dataclass(frozen=True)
class PartitionResult:
    partition: int
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    start_offset: int = -1
    leader_epoch: int = -1


@dataclass(frozen=True)
class TopicResult:
    name: str
    topic_id: uuid.UUID
    partitions: list[PartitionResult] = field(default_factory=list)
    error: ErrorCode = ErrorCode.NONE  # DeleteShareGroupOffsets answers per topic
    message: str | None = None


@dataclass(frozen=True)
class OffsetsResult:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    topics: list[TopicResult] = field(default_factory=list)
