"""Compaction of one partition's log: what is cleanable, and one cleaning pass (Kafka's
Cleaner working on a UnifiedLog). `Compaction` works through the interface `CompactableLog`
names; the swap itself is the local log's (`LocalLog.replace_segments`).

Offsets are read under the log's lock; the offset map and the cleaned segments are built
outside it (on the caller's worker thread); each cleaned group is swapped in under the lock
and only if the log did not change under it (see `LocalLog.replace_segments`). No fsync
happens under the lock: an append on the event loop never waits for the disk here.

A cleaned group's offset range is [its first segment's base, the base of the segment after
it). Its cleaned segment may end well before that (the last batches of the group can all be
dropped), so the range's end is written to `<base>.swapend` before the swap is committed:
a restart that finds the `.swap` replaces exactly the old segments in that range.
"""

from __future__ import annotations

from typing import Protocol

from . import files
from .cleaner import (
    DEFAULT_MAX_MAP_ENTRIES,
    AbortedRanges,
    CleaningRules,
    OffsetMap,
    build_offset_map,
    clean_group,
    group_segments_by_size,
)
from .config import LogConfig
from .local_log import LocalLog
from .producer_state import ProducerStateManager
from .results import CleanerStats
from .segment import Segment


class CompactableLog(Protocol):
    """What compaction needs of a partition's log."""

    @property
    def local(self) -> LocalLog: ...

    @property
    def config(self) -> LogConfig: ...

    @property
    def producers(self) -> ProducerStateManager: ...

    @property
    def log_start_offset(self) -> int: ...

    @property
    def last_stable_offset(self) -> int: ...


class Compaction:
    """Compaction of one log; remembers where the last pass ended (the cleaner checkpoint)."""

    def __init__(self, log: CompactableLog) -> None:
        self._log = log
        self.checkpoint: int | None = None  # the first dirty offset, as the last pass left it

    def cleanable_offsets(self, now_ms: int) -> tuple[int, int]:
        """(first dirty offset, first uncleanable offset) for compaction."""
        log = self._log
        segments = log.local.segments
        log_start_offset = log.log_start_offset
        first_dirty = self.checkpoint
        if first_dirty is None or not log_start_offset <= first_dirty <= log.local.log_end_offset:
            first_dirty = log_start_offset
        first_uncleanable = min(log.last_stable_offset, segments.active.base_offset)
        lag = max(log.config.min_compaction_lag_ms, 0)
        if lag > 0:
            for segment in segments.overlapping(first_dirty, segments.active.base_offset):
                if segment.largest_timestamp() > now_ms - lag:
                    first_uncleanable = min(first_uncleanable, segment.base_offset)
                    break
        return first_dirty, max(first_dirty, first_uncleanable)

    def cleanable_ratio(self, now_ms: int) -> tuple[float, int]:
        """(dirty bytes / total bytes, dirty bytes) of the cleanable part, as Kafka measures it."""
        segments = self._log.local.segments
        first_dirty, first_uncleanable = self.cleanable_offsets(now_ms)
        uncleanable_base = (segments.floor(first_uncleanable) or segments.first).base_offset
        clean = sum(s.size for s in segments.overlapping(-1, first_dirty))
        dirty = sum(s.size for s in segments.overlapping(min(first_dirty, uncleanable_base), uncleanable_base))
        total = clean + dirty
        return (dirty / total if total else 0.0), dirty

    def compact(self, now: int, *, max_map_entries: int = DEFAULT_MAX_MAP_ENTRIES) -> CleanerStats | None:
        """One compaction pass (see `cleaner`); None when there is nothing dirty to clean."""
        local, config = self._log.local, self._log.config
        with local.lock:
            if local.closed:
                return None
            segments = local.segments
            first_dirty, first_uncleanable = self.cleanable_offsets(now)
            last_records = self._log.producers.last_records_of_active_producers()
            truncations = local.truncations
        if first_dirty >= first_uncleanable:
            return None
        dirty = [s for s in segments.overlapping(first_dirty, first_uncleanable) if s is not segments.active]
        aborted = AbortedRanges([txn for segment in segments for txn in segment.txn_index.entries()])
        offset_map = OffsetMap(max_map_entries)
        build_offset_map(dirty, first_dirty, first_uncleanable, offset_map, aborted)
        end_offset = offset_map.latest_offset + 1 if len(offset_map) else first_uncleanable
        rules = CleaningRules(
            offset_map, now, config.delete_retention_ms, last_records, aborted, upper_bound=first_uncleanable
        )
        candidates = [s for s in segments.overlapping(0, end_offset) if s is not segments.active]
        groups = group_segments_by_size(candidates, config.segment_bytes, config.segment_index_bytes, first_uncleanable)
        bytes_read = bytes_written = 0
        for group in groups:
            cleaned, read, written = clean_group(group, rules, self._cleaned_segment)
            last = segments.floor_index(group[-1].base_offset)
            group_end = segments.upper_bound(last, local.log_end_offset)  # the next segment's base
            files.write_swap_end(local.directory, cleaned.base_offset, group_end)
            if not local.replace_segments(cleaned, group, truncations):
                cleaned.delete_files()
                files.remove_if_exists(files.swap_end_path(local.directory, cleaned.base_offset))
                return None
            bytes_read, bytes_written = bytes_read + read, bytes_written + written
        with local.lock:
            self.checkpoint = end_offset
        return CleanerStats(end_offset, sum(len(group) for group in groups), bytes_read, bytes_written)

    def _cleaned_segment(self, base_offset: int) -> Segment:
        return self._log.local.new_segment(base_offset, suffix=files.CLEANED_SUFFIX, create=True)
