"""Which segments retention may delete (Kafka's `deletableSegments` and its three predicates).

Segments are considered oldest first and deletion stops at the first that does not qualify.
A segment is never deleted while any of its offsets is at or above the high watermark, and
a last segment that is empty is never deleted. The log rolls a new active segment first
when every segment qualifies.
"""
from __future__ import annotations

from typing import Callable

from .segment import Segment
from .segments import SegmentList

Predicate = Callable[[Segment, "Segment | None"], bool]


def deletable_segments(segments: SegmentList, *, high_watermark: int, log_end_offset: int,
                       should_delete: Predicate) -> list[Segment]:
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
