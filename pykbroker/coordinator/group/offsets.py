"""Offsets of a group: OffsetCommit, OffsetFetch, OffsetDelete and the expiration of old offsets.

Commits with generation -1 and no member id are "simple" commits (standalone consumers, admin
tools): they are accepted while the group is Empty, and create the group if it does not exist.
Otherwise the committer must be a member of the current generation; during CompletingRebalance
commits get REBALANCE_IN_PROGRESS, during PreparingRebalance the previous generation may still
commit.

Expiration (Kafka 2.1+, checked every `offsets.retention.check.interval.ms`): offsets of an Empty
group expire `offsets.retention.minutes` after the group became Empty; offsets of a consumer
group with members expire that long after their commit unless a member subscribes to their
topic; offsets of simple consumers that long after their commit; an offset committed with an
explicit retention time (OffsetCommit v2-v4) at its own expire timestamp. An Empty group left
without offsets is deleted.

This mixin expects `manager`, `runtime`, `offset_config` and `validate_group_status` of the
coordinator, and the `Rebalance` mixin.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...common.topic_partition import TopicPartition
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from .formats import OffsetAndMetadata
from .group import CONSUMER_PROTOCOL_TYPE, GroupMetadata
from .manager import FetchedOffset, GroupManager, OffsetConfig
from .member import MemberMetadata
from .model import UNKNOWN_MEMBER_ID
from .state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE

if TYPE_CHECKING:
    from .runtime import LoopRuntime

log = logging.getLogger(__name__)

CommitCallback = Callable[[dict[TopicPartition, ErrorCode]], None]


class Offsets:
    # What this mixin uses of the coordinator and the other mixins, declared for the type
    # checker only (GroupCoordinator sets the attributes; the methods are defined elsewhere)
    manager: GroupManager
    runtime: LoopRuntime
    offset_config: OffsetConfig

    if TYPE_CHECKING:

        def validate_group_status(self, group_id: str | None, api: int) -> ErrorCode | None: ...
        def validate_current_member(
            self, group: GroupMetadata, member_id: str, group_instance_id: str | None
        ) -> ErrorCode | None: ...
        def complete_and_schedule_next_heartbeat(self, group: GroupMetadata, member: MemberMetadata) -> None: ...

    # -- OffsetCommit ----------------------------------------------------------------------
    def handle_commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        error = self.validate_group_status(group_id, ApiKey.OFFSET_COMMIT)
        if error is not None:
            callback({tp: error for tp in offsets})
            return
        group = self.manager.get_group(group_id)
        if group is None:
            if generation_id >= 0:  # a member of a group this coordinator does not know
                callback({tp: ErrorCode.ILLEGAL_GENERATION for tp in offsets})
                return
            log.info("Creating simple consumer group %s via manual offset commit.", group_id)
            group = self.manager.get_or_maybe_create_group(group_id, True)
            assert group is not None, "get_or_maybe_create_group(create=True) always gives a group"
        error = self._validate_offset_commit(group, generation_id, member_id, group_instance_id)
        if error is not None:
            callback({tp: error for tp in offsets})
        elif group.is_(EMPTY):
            self.manager.store_offsets(group, offsets, callback)
        elif group.state in (STABLE, PREPARING_REBALANCE):
            # the previous generation may still commit while the group prepares to rebalance
            self.complete_and_schedule_next_heartbeat(group, group.get(member_id))
            self.manager.store_offsets(group, offsets, callback)
        elif group.is_(COMPLETING_REBALANCE):
            callback({tp: ErrorCode.REBALANCE_IN_PROGRESS for tp in offsets})

    def _validate_offset_commit(
        self,
        group: GroupMetadata,
        generation_id: int,
        member_id: str,
        group_instance_id: str | None,
        is_transactional: bool = False,
    ) -> ErrorCode | None:
        """Kafka's validateOffsetCommit: who may commit to `group` (a transactional commit
        before TxnOffsetCommit v3 names no member and generation, and is accepted whatever
        the group's state)."""
        if group.is_(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        if generation_id < 0 and group.is_(EMPTY):
            return None  # the admin client, or a consumer without group management
        if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
            error = self.validate_current_member(group, member_id, group_instance_id)
            if error is not None:
                return error
            if generation_id != group.generation_id:
                return ErrorCode.ILLEGAL_GENERATION
            return None
        if not is_transactional and not group.is_(EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID  # only members commit to a non-empty group
        return None

    # -- OffsetFetch -----------------------------------------------------------------------
    def handle_fetch_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool = False
    ) -> tuple[ErrorCode, dict[TopicPartition, FetchedOffset]]:
        """Committed offsets whatever the group's state (a group may use Kafka only to store
        offsets); all of the group's offsets when `partitions` is None."""
        error = self.validate_group_status(group_id, ApiKey.OFFSET_FETCH)
        if error is not None:
            return error, {}
        return ErrorCode.NONE, self.manager.get_offsets(group_id, partitions, require_stable)

    # -- OffsetDelete ----------------------------------------------------------------------
    def handle_delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """(group error, per-partition errors); the partition errors are empty on a group
        error. Offsets of topics a consumer group's members subscribe to stay."""
        error = self.validate_group_status(group_id, ApiKey.OFFSET_DELETE)
        if error is not None:
            return error, {}
        group = self.manager.get_group(group_id)
        if group is None or group.is_(DEAD):
            return self._missing_group_error(group_id), {}
        if group.is_(EMPTY):
            deletable, results = list(partitions), {}
        elif group.is_consumer_group:
            deletable = [tp for tp in partitions if not group.is_subscribed_to_topic(tp[0])]
            results = {
                tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in partitions if group.is_subscribed_to_topic(tp[0])
            }
        else:
            return ErrorCode.NON_EMPTY_GROUP, {}
        if deletable:
            removed = self.manager.cleanup_group_metadata([group], lambda g: g.offsets.remove(deletable))
            results.update({tp: ErrorCode.NONE for tp in deletable})
            log.info("Deleted offsets of group %s for %s; %d offsets removed", group_id, deletable, removed)
        return ErrorCode.NONE, results

    def _missing_group_error(self, group_id: str) -> ErrorCode:
        return ErrorCode.GROUP_ID_NOT_FOUND if self.manager.group_not_exists(group_id) else ErrorCode.NOT_COORDINATOR

    # -- expiration ------------------------------------------------------------------------
    def expire_offsets(self) -> int:
        """One run of the retention check; returns how many offsets expired."""
        now = self.runtime.now_ms()
        removed = self.manager.cleanup_group_metadata(
            self.manager.current_groups(), lambda group: self._expired_offsets(group, now)
        )
        if removed:
            log.info("Removed %d expired offsets", removed)
        return removed

    def _expired_offsets(self, group: GroupMetadata, now: int) -> dict:
        retention_ms = self.offset_config.retention_ms
        offsets = group.offsets
        if group.protocol_type is not None and group.is_(EMPTY):
            # nobody consumes: the retention counts from when the group became Empty
            became_empty = group.current_state_timestamp
            return offsets.remove_expired(
                now, retention_ms, lambda e: e.commit_timestamp if became_empty is None else became_empty
            )
        if group.protocol_type == CONSUMER_PROTOCOL_TYPE and group.subscribed_topics is not None:
            return offsets.remove_expired(
                now, retention_ms, lambda e: e.commit_timestamp, keep_topics=group.subscribed_topics
            )
        if group.protocol_type is None:  # a simple consumer's offsets
            return offsets.remove_expired(now, retention_ms, lambda e: e.commit_timestamp)
        return {}

    def remove_offsets_of_topic(self, topic: str) -> int:
        """A topic was deleted: forget every group's offsets of it."""
        removed = self.manager.cleanup_group_metadata(
            self.manager.current_groups(),
            lambda group: group.offsets.remove([tp for tp in group.offsets.partitions() if tp[0] == topic]),
        )
        if removed:
            log.info("Removed %d offsets of deleted topic %s", removed, topic)
        return removed
