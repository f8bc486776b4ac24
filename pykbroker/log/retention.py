"""Retention: which segments may go (Kafka's `deletableSegments` and its three predicates),
and `Retention`, which deletes them from a partition's log through the interface
`RetainedLog` names.

Segments are considered oldest first and deletion stops at the first that does not qualify.
A segment is never deleted while any of its offsets is at or above the high watermark, and
a last segment that is empty is never deleted. The log rolls a new active segment first
when every segment qualifies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .config import LogConfig
from .local_log import LocalLog
from .segment import Segment
from .segments import LogSegments

Predicate = Callable[[Segment, "Segment | None"], bool]


def deletable_segments(
    segments: LogSegments, *, high_watermark: int, log_end_offset: int, should_delete: Predicate
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

    def should_delete(segment: Segment, _following: Segment | None) -> bool:
        nonlocal excess
        if excess - segment.size < 0:
            return False
        excess -= segment.size
        return True

    return should_delete


def log_start_offset_breached(log_start_offset: int) -> Predicate:
    """Segments wholly below the log start offset (after DeleteRecords, say)."""
    return lambda _segment, following: following is not None and following.base_offset <= log_start_offset


class RetainedLog(Protocol):
    """What retention needs of a partition's log."""

    @property
    def local(self) -> LocalLog: ...

    @property
    def config(self) -> LogConfig: ...

    @property
    def log_start_offset(self) -> int: ...

    @property
    def high_watermark(self) -> int: ...

    def roll(self, expected_next_offset: int | None = None) -> Segment: ...

    def maybe_increment_log_start_offset(self, offset: int) -> None: ...


class Retention:
    """Deletes the segments of one log that retention lets go."""

    def __init__(self, log: RetainedLog) -> None:
        self._log = log

    def delete_old_segments(self, now: int) -> int:
        """Segments below the log start offset, and by retention.ms / retention.bytes when
        cleanup.policy includes delete. Returns how many segments were deleted."""
        log, config = self._log, self._log.config
        deleted = self._delete_segments_where(log_start_offset_breached(log.log_start_offset), now)
        if config.delete:
            if config.retention_bytes >= 0 and log.local.size >= config.retention_bytes:
                deleted += self._delete_segments_where(
                    retention_size_breached(log.local.size, config.retention_bytes), now
                )
            if config.retention_ms >= 0:
                deleted += self._delete_segments_where(retention_ms_breached(now, config.retention_ms), now)
        return deleted

    def _delete_segments_where(self, should_delete: Predicate, now: int) -> int:
        log, local = self._log, self._log.local
        with local.lock:
            if local.closed:
                return 0
            deletable = deletable_segments(
                local.segments,
                high_watermark=log.high_watermark,
                log_end_offset=local.log_end_offset,
                should_delete=should_delete,
            )
            count = len(deletable)
            if count == len(local.segments):
                rolled = log.roll()
                if deletable[-1] is rolled:
                    deletable.pop()
            if deletable:
                following = local.segments[len(deletable)]
                log.maybe_increment_log_start_offset(following.base_offset)
                local.remove_and_delete_segments(deletable, now)
            return count
