"""Plain records the group coordinator hands back: what JoinGroup, SyncGroup and LeaveGroup
answer, the offsets OffsetFetch reads, and the summaries DescribeGroups and ListGroups show."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...protocol.errors import ErrorCode

NO_GENERATION = -1
NO_LEADER = ""
NO_PROTOCOL = ""
UNKNOWN_MEMBER_ID = ""
INVALID_OFFSET = -1


@dataclass(frozen=True)
class JoinedMember:
    """One member as the leader sees it in its JoinGroup response."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass
class JoinResult:
    member_id: str
    error: ErrorCode = ErrorCode.NONE
    generation_id: int = NO_GENERATION
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = NO_LEADER
    skip_assignment: bool = False
    members: list[JoinedMember] = field(default_factory=list)


@dataclass
class SyncResult:
    error: ErrorCode = ErrorCode.NONE
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class MemberIdentity:
    """A member a LeaveGroup names: by member id, or (static members) by group instance id."""

    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(frozen=True)
class LeaveMemberResult:
    member_id: str
    group_instance_id: str | None
    error: ErrorCode


@dataclass
class LeaveResult:
    error: ErrorCode = ErrorCode.NONE
    members: list[LeaveMemberResult] = field(default_factory=list)


@dataclass(frozen=True)
class FetchedOffset:
    offset: int = INVALID_OFFSET
    leader_epoch: int = -1
    metadata: str = ""
    error: ErrorCode = ErrorCode.NONE


@dataclass(frozen=True)
class MemberSummary:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    metadata: bytes
    assignment: bytes


@dataclass(frozen=True)
class GroupSummary:
    state: str
    protocol_type: str
    protocol: str
    members: list[MemberSummary]


EMPTY_SUMMARY = GroupSummary("", "", NO_PROTOCOL, [])
DEAD_SUMMARY = GroupSummary("Dead", "", NO_PROTOCOL, [])


@dataclass(frozen=True)
class GroupOverview:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = "classic"
