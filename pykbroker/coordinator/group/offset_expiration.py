"""Removing committed offsets nobody asked to remove: the retention check, and the offsets of
deleted topics (Kafka's cleanupGroupMetadata, run every `offsets.retention.check.interval.ms`).

Expiration (Kafka 2.1+): offsets of an Empty group expire `offsets.retention.minutes` after the
group became Empty; offsets of a consumer group with members expire that long after their commit
unless a member subscribes to their topic; offsets of simple consumers that long after their
commit; an offset committed with an explicit retention time (OffsetCommit v2-v4) at its own expire
timestamp. An Empty group left without offsets is deleted (`offset_store.py`).
"""

from __future__ import annotations

import logging

from ..runtime import LoopRuntime
from .config import OffsetConfig
from .group import CONSUMER_PROTOCOL_TYPE, GroupMetadata
from .manager import GroupMetadataManager
from .offset_store import Offsets, OffsetStore
from .state import EMPTY

log = logging.getLogger(__name__)


class OffsetExpiration:
    def __init__(
        self, groups: GroupMetadataManager, store: OffsetStore, runtime: LoopRuntime, config: OffsetConfig
    ) -> None:
        self.groups = groups
        self.store = store
        self.runtime = runtime
        self.config = config

    def start(self) -> None:
        """Run the retention check every `offsets.retention.check.interval.ms` from now on."""
        self.runtime.call_later(self.config.retention_check_interval_ms, self._expire_offsets_and_reschedule)

    def _expire_offsets_and_reschedule(self) -> None:
        try:
            self.expire_offsets()
        finally:
            self.start()

    def expire_offsets(self) -> int:
        """One run of the retention check; returns how many offsets expired."""
        now = self.runtime.now_ms()
        removed = self.store.cleanup_group_metadata(
            self.groups.current_groups(), lambda group: self._expired_offsets(group, now)
        )
        if removed:
            log.info("Removed %d expired offsets", removed)
        return removed

    def _expired_offsets(self, group: GroupMetadata, now: int) -> Offsets:
        retention_ms = self.config.retention_ms
        offsets = group.offsets
        if group.consumer is not None:
            if group.consumer.members:
                keep = frozenset(group.consumer.subscribed_topic_names())
                return offsets.remove_expired(now, retention_ms, lambda e: e.commit_timestamp, keep_topics=keep)
            return offsets.remove_expired(now, retention_ms, lambda e: e.commit_timestamp)
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
        removed = self.store.cleanup_group_metadata(
            self.groups.current_groups(),
            lambda group: group.offsets.remove([tp for tp in group.offsets.partitions() if tp[0] == topic]),
        )
        if removed:
            log.info("Removed %d offsets of deleted topic %s", removed, topic)
        return removed
