"""Retention: which segments may go (Kafka's `deletableSegments` and its three predicates),
and the Log's side of deleting them (the `Retention` mixin of `Log`).

Segments are considered oldest first and deletion stops at the first that does not qualify.
A segment is never deleted while any of its offsets is at or above the high watermark, and
a last segment that is empty is never deleted. The log rolls a new active segment first
when every segment qualifies.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .segment import Segment
from .segments import SegmentList

if TYPE_CHECKING:
    from .config import LogConfig

Predicate = Callable[[Segment, "Segment | None"], bool]


def deletable_segments(
    segments: SegmentList, *, high_watermark: int, log_end_offset: int, should_delete: Predicate
) -> list[Segment]:
    deletable = []
    for index, segment in enumerate(segments):
        following = segments[index + 1] if index + 1 < len(segments) else None
        upper_bound = following.base_offset if following is not None else log_end_offset
        last_and_empty = following is None and segment.size == 0
        if last_and_empty or high_watermark < upper_bound or not should_delete(segment, following):
            break
        deletable.append(segment)
    return deletable


def retention_ms_breached(now_ms: int, retention_ms: int) -> Predicate:
    """Segments whose newest record (else file mtime) is older than retention.ms."""
    return lambda segment, _following: now_ms - segment.largest_timestamp() > retention_ms


def retention_size_breached(log_size: int, retention_bytes: int) -> Predicate:
    """The oldest segments whose removal keeps the log at or above retention.bytes."""
    excess = log_size - retention_bytes

    def should_delete(segment: Segment, _following) -> bool:
        nonlocal excess
        if excess - segment.size < 0:
            return False
        excess -= segment.size
        return True

    return should_delete


def log_start_offset_breached(log_start_offset: int) -> Predicate:
    """Segments wholly below the log start offset (after DeleteRecords, say)."""
    return lambda _segment, following: following is not None and following.base_offset <= log_start_offset


class Retention:
    """Needs: _lock, _segments, closed, config, size, log_start_offset, _log_end_offset,
    _high_watermark, roll, _increment_log_start_offset, _schedule_deletion, _now."""

    # What this mixin uses of `Log`, declared for the type checker only (Log sets or defines them)
    _lock: threading.RLock
    _segments: SegmentList
    closed: bool
    config: LogConfig
    log_start_offset: int
    _log_end_offset: int
    _high_watermark: int

    if TYPE_CHECKING:

        @property
        def size(self) -> int: ...
        def roll(self, expected_next_offset: int | None = None) -> Segment: ...
        def _increment_log_start_offset(self, offset: int) -> None: ...
        def _schedule_deletion(self, segments: list[Segment], now: int | None = None) -> None: ...
        def _now(self, now_ms: int | None) -> int: ...

    def delete_old_segments(self, now_ms: int | None = None) -> int:
        """Retention: segments below the log start offset, and by retention.ms / retention.bytes
        when cleanup.policy includes delete. Returns how many segments were deleted."""
        now = self._now(now_ms)
        deleted = self._delete_segments_where(log_start_offset_breached(self.log_start_offset), now)
        if self.config.delete:
            if self.config.retention_bytes >= 0 and self.size >= self.config.retention_bytes:
                deleted += self._delete_segments_where(
                    retention_size_breached(self.size, self.config.retention_bytes), now
                )
            if self.config.retention_ms >= 0:
                deleted += self._delete_segments_where(retention_ms_breached(now, self.config.retention_ms), now)
        return deleted

    def _delete_segments_where(self, should_delete: Predicate, now: int) -> int:
        with self._lock:
            if self.closed:
                return 0
            deletable = deletable_segments(
                self._segments,
                high_watermark=self._high_watermark,
                log_end_offset=self._log_end_offset,
                should_delete=should_delete,
            )
            count = len(deletable)
            if count == len(self._segments):
                rolled = self.roll()
                if deletable[-1] is rolled:
                    deletable.pop()
            if deletable:
                following = self._segments[len(deletable)]
                self._increment_log_start_offset(following.base_offset)
                self._segments = self._segments.without(deletable)
                self._schedule_deletion(deletable, now)
            return count
