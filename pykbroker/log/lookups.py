"""The ListOffsets and OffsetForLeaderEpoch lookups of a partition's log: `OffsetLookups`,
working through the interface `LookedUpLog` names.

Timestamp lookups follow Kafka: the first segment whose largest timestamp reaches the
target, then its time index, offset index and a scan; only the one batch holding the answer
is decoded.
"""

from __future__ import annotations

from typing import Protocol

from .epoch_cache import LeaderEpochCache
from .results import TimestampAndOffset
from .segments import LogSegments

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5


class LookedUpLog(Protocol):
    """What the lookups need of a partition's log."""

    @property
    def segments(self) -> LogSegments: ...

    @property
    def log_start_offset(self) -> int: ...

    @property
    def log_end_offset(self) -> int: ...

    @property
    def epoch_cache(self) -> LeaderEpochCache: ...


class OffsetLookups:
    """Offsets by timestamp and by leader epoch in one log."""

    def __init__(self, log: LookedUpLog) -> None:
        self._log = log

    def offset_for_timestamp(self, target_ms: int) -> TimestampAndOffset | None:
        """ListOffsets: the earliest record with timestamp >= target_ms (or a special value).

        -2 earliest, -1 latest, -3 the record with the max timestamp, -4 earliest local,
        -5 latest tiered (nothing is tiered: offset -1). None when no record qualifies.
        """
        if target_ms in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return self.earliest()
        if target_ms == LATEST_TIMESTAMP:
            return self.latest()
        if target_ms == MAX_TIMESTAMP:
            return self.max_timestamp()
        if target_ms == LATEST_TIERED_TIMESTAMP:
            return TimestampAndOffset(-1, -1, -1)
        log_start_offset = self._log.log_start_offset
        for segment in self._log.segments:
            if segment.largest_timestamp() >= target_ms:
                return segment.find_offset_by_timestamp(target_ms, log_start_offset)
        return None

    def earliest(self) -> TimestampAndOffset:
        entry = self._log.epoch_cache.earliest_entry()
        epoch = entry[0] if entry is not None and entry[1] <= self._log.log_start_offset else -1
        return TimestampAndOffset(self._log.log_start_offset, -1, epoch)

    def latest(self) -> TimestampAndOffset:
        epoch = self._log.epoch_cache.latest_epoch
        return TimestampAndOffset(self._log.log_end_offset, -1, -1 if epoch is None else epoch)

    def max_timestamp(self) -> TimestampAndOffset | None:
        """KIP-734: offset and timestamp of the (first) record with the largest timestamp."""
        segments = list(self._log.segments)
        best = max(segments, key=lambda segment: segment.max_timestamp_so_far)
        return best.find_max_timestamp_record()

    def legacy_latest_offsets(self, high_watermark: int, max_num_offsets: int) -> list[int]:
        """ListOffsets v0's answer for latest, as Kafka's legacy lookup: the segments' base
        offsets and the log end offset (when the active segment holds data), newest first, at
        most `max_num_offsets`; offsets above the high watermark replaced by the high watermark."""
        segments = list(self._log.segments)
        offsets = [max(s.base_offset, self._log.log_start_offset) for s in segments]
        if segments[-1].size > 0:
            offsets.append(self._log.log_end_offset)
        offsets = sorted(offsets[::-1][: max(max_num_offsets, 0)], reverse=True)
        if any(o > high_watermark for o in offsets):
            offsets = [high_watermark, *(o for o in offsets if o <= high_watermark)]
        return offsets

    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int] | None:
        """OffsetForLeaderEpoch: (epoch, end offset), or None when the epoch is undefined."""
        epoch, offset = self._log.epoch_cache.end_offset_for(leader_epoch, self._log.log_end_offset)
        return None if offset < 0 else (epoch, offset)
