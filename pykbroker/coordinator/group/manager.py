"""The groups this broker coordinates (Kafka's GroupMetadataManager): where each group lives,
the cache of the groups of the `__consumer_offsets` partitions it leads, the checks every group
request starts with, and the writes of a group's record.

A group lives in partition `partition_for(group_id)` of `__consumer_offsets`. While a partition
loads (`loader.py`) its groups answer COORDINATOR_LOAD_IN_PROGRESS (and so do the groups an older
pykbroker placed there, `relocation.py`); a partition another broker
leads answers NOT_COORDINATOR. Every group request is first checked as Kafka does
(`validate_group_status`): INVALID_GROUP_ID (an empty group id, except for the offset and
describe/delete APIs), COORDINATOR_NOT_AVAILABLE (not started, or stopped),
COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR.

`store_group` writes a group's generation, members and assignment after a rebalance, turning
append errors into the errors Kafka gives the members.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ..placement import legacy_partition
from ..runtime import LoopRuntime
from .config import OffsetConfig
from .formats import GroupRecord, MemberRecord, group_key, group_value
from .group import GroupMetadata
from .log_io import OffsetsLog
from .offsets_topic import partition_for
from .state import DEAD, EMPTY

log = logging.getLogger(__name__)

# APIs that accept an empty group id (for compatibility, as Kafka does)
_EMPTY_GROUP_ID_ALLOWED = {ApiKey.OFFSET_COMMIT, ApiKey.OFFSET_FETCH, ApiKey.DESCRIBE_GROUPS, ApiKey.DELETE_GROUPS}


class GroupMetadataManager:
    def __init__(
        self,
        offsets_log: OffsetsLog,
        runtime: LoopRuntime,
        offset_config: OffsetConfig,
        partition_count: Callable[[], int],
    ) -> None:
        self.offsets_log = offsets_log
        self.runtime = runtime
        self.config = offset_config
        self._partition_count = partition_count
        self.is_active = False  # between the coordinator's startup and shutdown
        self.groups: dict[str, GroupMetadata] = {}
        self.owned_partitions: set[int] = set()
        self.loading_partitions: set[int] = set()

    # -- where groups live ---------------------------------------------------------------
    @property
    def partition_count(self) -> int:
        return self._partition_count()

    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self._partition_count())

    def is_group_local(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self.owned_partitions

    def is_group_loading(self, group_id: str) -> bool:
        """Whether the group's partition loads, or the one an older pykbroker placed it in
        (`relocation.py`)."""
        count = self._partition_count()
        return (
            partition_for(group_id, count) in self.loading_partitions
            or legacy_partition(group_id, count) in self.loading_partitions
        )

    @property
    def is_loading(self) -> bool:
        return bool(self.loading_partitions)

    def served_partitions(self) -> set[int]:
        """The partitions this broker loads or has loaded."""
        return self.owned_partitions | self.loading_partitions

    def start_loading(self, partition: int) -> None:
        self.loading_partitions.add(partition)

    def finish_loading(self, partition: int) -> None:
        self.loading_partitions.discard(partition)
        self.owned_partitions.add(partition)

    def stop_serving(self, partition: int) -> None:
        self.loading_partitions.discard(partition)
        self.owned_partitions.discard(partition)

    def validate_group_status(self, group_id: str | None, api: int) -> ErrorCode | None:
        """The error a request for `group_id` answers before anything else; None if none."""
        if group_id is None or (group_id == "" and api not in _EMPTY_GROUP_ID_ALLOWED):
            return ErrorCode.INVALID_GROUP_ID
        if not self.is_active:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if self.is_group_loading(group_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if not self.is_group_local(group_id):
            return ErrorCode.NOT_COORDINATOR
        return None

    # -- the cache -----------------------------------------------------------------------
    def get_group(self, group_id: str) -> GroupMetadata | None:
        return self.groups.get(group_id)

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """Cache `group` unless a group of that id is cached already; returns the cached one."""
        return self.groups.setdefault(group.group_id, group)

    def get_or_maybe_create_group(self, group_id: str, create: bool) -> GroupMetadata | None:
        if create:
            return self.add_group(GroupMetadata(group_id, EMPTY, self.runtime.now_ms))
        return self.groups.get(group_id)

    def get_or_create_group(self, group_id: str) -> GroupMetadata:
        return self.add_group(GroupMetadata(group_id, EMPTY, self.runtime.now_ms))

    def remove_group(self, group: GroupMetadata) -> bool:
        """Forget `group` if it is the cached group of its id; whether it was."""
        if self.groups.get(group.group_id) is not group:
            return False
        del self.groups[group.group_id]
        return True

    def current_groups(self) -> list[GroupMetadata]:
        return list(self.groups.values())

    def groups_of_partition(self, partition: int) -> list[GroupMetadata]:
        return [g for g in self.groups.values() if self.partition_for(g.group_id) == partition]

    def group_not_exists(self, group_id: str) -> bool:
        group = self.groups.get(group_id)
        return self.is_group_local(group_id) and (group is None or group.is_(DEAD))

    def missing_group_error(self, group_id: str) -> ErrorCode:
        """What a request for a group that is not here (or Dead) answers."""
        return ErrorCode.GROUP_ID_NOT_FOUND if self.group_not_exists(group_id) else ErrorCode.NOT_COORDINATOR

    # -- writing a group -------------------------------------------------------------------
    def store_group(
        self, group: GroupMetadata, assignment: dict[str, bytes], callback: Callable[[ErrorCode], None]
    ) -> None:
        if not self.is_group_local(group.group_id):
            callback(ErrorCode.NOT_COORDINATOR)
            return
        record = _group_record(group, assignment)
        self.offsets_log.append(
            self.partition_for(group.group_id),
            [(group_key(group.group_id), group_value(record))],
            lambda error, _offset: callback(_store_group_error(error)),
            acks=self.config.commit_required_acks,
        )


def _group_record(group: GroupMetadata, assignment: dict[str, bytes]) -> GroupRecord:
    return GroupRecord(
        protocol_type=group.protocol_type or "",
        generation=group.generation_id,
        protocol=group.protocol_name,
        leader=group.leader_id,
        current_state_timestamp=(-1 if group.current_state_timestamp is None else group.current_state_timestamp),
        members=[
            MemberRecord(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms,
                m.session_timeout_ms,
                m.metadata(group.protocol_name),
                assignment[m.member_id],
            )
            for m in group.members.values()
        ],
    )


def _store_group_error(error: ErrorCode) -> ErrorCode:
    """The error a rebalance reports for a failed write of the group's record."""
    if error in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    ):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if error in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if error == ErrorCode.REQUEST_TIMED_OUT:
        return ErrorCode.REBALANCE_IN_PROGRESS
    if error in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE):
        log.error("Group metadata record too large to be stored: %s", error.name)
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return error
