"""`LogSegments`: the ordered collection of a log's segments and the lookups over it (Kafka's
`LogSegments`).

It is immutable: the local log replaces its whole `LogSegments` when a segment is added or
removed (rare), so readers on any thread may take `log.segments` once and use it without a lock.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator

from .segment import Segment


class LogSegments:
    """A log's segments sorted by base offset; the last one is the active segment."""

    __slots__ = ("_segments", "_bases")

    def __init__(self, segments: Iterable[Segment] = ()) -> None:
        self._segments = tuple(sorted(segments, key=lambda segment: segment.base_offset))
        self._bases = [segment.base_offset for segment in self._segments]

    def __len__(self) -> int:
        return len(self._segments)

    def __iter__(self) -> Iterator[Segment]:
        return iter(self._segments)

    def __getitem__(self, index: int) -> Segment:
        return self._segments[index]

    def __contains__(self, segment: Segment) -> bool:
        index = bisect_right(self._bases, segment.base_offset) - 1
        return index >= 0 and self._segments[index] is segment

    @property
    def active(self) -> Segment:
        return self._segments[-1]

    @property
    def first(self) -> Segment:
        return self._segments[0]

    def floor_index(self, offset: int) -> int:
        """Index of the segment that would hold `offset` (the last with base <= offset), or -1."""
        return bisect_right(self._bases, offset) - 1

    def floor(self, offset: int) -> Segment | None:
        index = self.floor_index(offset)
        return self._segments[index] if index >= 0 else None

    def upper_bound(self, index: int, log_end_offset: int) -> int:
        """The offset where segment `index` ends: the next segment's base, or the log end."""
        return self._bases[index + 1] if index + 1 < len(self._bases) else log_end_offset

    def overlapping(self, start: int, end: int) -> list[Segment]:
        """Segments that may hold offsets in [start, end)."""
        first = max(self.floor_index(start), 0)
        return [segment for segment in self._segments[first:] if segment.base_offset < end]

    def size_in_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    def with_segment(self, segment: Segment) -> LogSegments:
        """A list with `segment` added (replacing one of the same base offset)."""
        kept = [s for s in self._segments if s.base_offset != segment.base_offset]
        return LogSegments([*kept, segment])

    def without(self, removed: Iterable[Segment]) -> LogSegments:
        gone = {id(segment) for segment in removed}
        return LogSegments(s for s in self._segments if id(s) not in gone)
