"""A group's committed offsets as the coordinator serves them, and the commits in flight.

A commit is staged (`prepare`) before its records are appended to `__consumer_offsets`, and
materialized (`on_appended`) once the append succeeded, remembering the offset of the batch that
holds it, so that the latest write always wins. A failed append drops the staged commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...common.topic_partition import TopicPartition
from .formats import OffsetAndMetadata


@dataclass(frozen=True)
class StoredOffset:
    entry: OffsetAndMetadata
    batch_offset: int  # where the record holding it sits in __consumer_offsets


class OffsetCache:
    def __init__(self) -> None:
        self._offsets: dict[TopicPartition, StoredOffset] = {}
        self._pending: dict[TopicPartition, OffsetAndMetadata] = {}

    # -- reading -----------------------------------------------------------------------
    def get(self, tp: TopicPartition) -> OffsetAndMetadata | None:
        stored = self._offsets.get(tp)
        return None if stored is None else stored.entry

    def all(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: stored.entry for tp, stored in self._offsets.items()}

    def partitions(self) -> list[TopicPartition]:
        return list(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    def has_offsets(self) -> bool:
        return bool(self._offsets) or bool(self._pending)

    def is_pending(self, tp: TopicPartition) -> bool:
        return tp in self._pending

    # -- commits -----------------------------------------------------------------------
    def load(self, tp: TopicPartition, stored: StoredOffset) -> None:
        self._offsets[tp] = stored

    def prepare(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self._pending.update(offsets)

    def on_appended(self, tp: TopicPartition, entry: OffsetAndMetadata, batch_offset: int) -> None:
        if tp in self._pending:
            current = self._offsets.get(tp)
            if current is None or current.batch_offset < batch_offset:
                self._offsets[tp] = StoredOffset(entry, batch_offset)
        if self._pending.get(tp) == entry:
            del self._pending[tp]

    def on_failed(self, tp: TopicPartition, entry: OffsetAndMetadata) -> None:
        if self._pending.get(tp) == entry:
            del self._pending[tp]

    # -- removal -----------------------------------------------------------------------
    def remove(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        removed = {}
        for tp in list(partitions):
            self._pending.pop(tp, None)
            stored = self._offsets.pop(tp, None)
            if stored is not None:
                removed[tp] = stored.entry
        return removed

    def remove_all(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.remove(list(self._offsets))

    def remove_expired(
        self,
        now_ms: int,
        retention_ms: int,
        base_timestamp: Callable[[OffsetAndMetadata], int],
        keep_topics: frozenset[str] = frozenset(),
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Drop offsets whose retention has passed since `base_timestamp(entry)` (or whose
        explicit expire timestamp, from a commit with a retention time, has passed), except
        those of `keep_topics` and those with a commit in flight."""
        expired = [
            tp
            for tp, stored in self._offsets.items()
            if tp[0] not in keep_topics
            and tp not in self._pending
            and _is_expired(stored.entry, now_ms, retention_ms, base_timestamp)
        ]
        return self.remove(expired)


def _is_expired(
    entry: OffsetAndMetadata, now_ms: int, retention_ms: int, base_timestamp: Callable[[OffsetAndMetadata], int]
) -> bool:
    if entry.expire_timestamp is not None:
        return now_ms >= entry.expire_timestamp
    return now_ms - base_timestamp(entry) >= retention_ms
