"""The Log's side of compaction (a mixin of `Log`): what is cleanable, and one cleaning pass.

Offsets are read under the log's lock; the offset map and the cleaned segments are built
outside it (on the caller's worker thread); each cleaned group is swapped in under the lock
and only if the log did not change under it (see `replace_segments`). No fsync happens under
the lock: an append on the event loop never waits for the disk here.

A cleaned group's offset range is [its first segment's base, the base of the segment after
it). Its cleaned segment may end well before that (the last batches of the group can all be
dropped), so the range's end is written to `<base>.swapend` before the swap is committed:
a restart that finds the `.swap` replaces exactly the old segments in that range.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

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
from .results import CleanerStats
from .segment import Segment

if TYPE_CHECKING:
    from .config import LogConfig
    from .producer_state import ProducerStateManager
    from .segments import SegmentList


class Compaction:
    """Needs: _lock, _segments, _truncations, closed, config, producers, log_start_offset,
    _log_end_offset, last_stable_offset, cleaner_checkpoint, _segment, _schedule_deletion, _now."""

    # What this mixin uses of `Log`, declared for the type checker only (Log sets or defines them)
    _lock: threading.RLock
    _segments: SegmentList
    _truncations: int
    closed: bool
    config: LogConfig
    producers: ProducerStateManager
    directory: str
    log_start_offset: int
    _log_end_offset: int
    cleaner_checkpoint: int | None
    # a swap committed on disk (renamed to .swap) whose install waits for the directory fsync
    _pending_swap: tuple[Segment, list[Segment]] | None = None

    if TYPE_CHECKING:

        @property
        def last_stable_offset(self) -> int: ...
        def _segment(self, base_offset: int, *, suffix: str = "", create: bool = False) -> Segment: ...
        def _schedule_deletion(self, segments: list[Segment], now: int | None = None) -> None: ...
        def _now(self, now_ms: int | None) -> int: ...

    def cleanable_offsets(self, now_ms: int) -> tuple[int, int]:
        """(first dirty offset, first uncleanable offset) for compaction."""
        segments = self._segments
        first_dirty = self.cleaner_checkpoint
        if first_dirty is None or not self.log_start_offset <= first_dirty <= self._log_end_offset:
            first_dirty = self.log_start_offset
        first_uncleanable = min(self.last_stable_offset, segments.active.base_offset)
        lag = max(self.config.min_compaction_lag_ms, 0)
        if lag > 0:
            for segment in segments.overlapping(first_dirty, segments.active.base_offset):
                if segment.largest_timestamp() > now_ms - lag:
                    first_uncleanable = min(first_uncleanable, segment.base_offset)
                    break
        return first_dirty, max(first_dirty, first_uncleanable)

    def cleanable_ratio(self, now_ms: int) -> tuple[float, int]:
        """(dirty bytes / total bytes, dirty bytes) of the cleanable part, as Kafka measures it."""
        segments = self._segments
        first_dirty, first_uncleanable = self.cleanable_offsets(now_ms)
        uncleanable_base = (segments.floor(first_uncleanable) or segments.first).base_offset
        clean = sum(s.size for s in segments.overlapping(-1, first_dirty))
        dirty = sum(s.size for s in segments.overlapping(min(first_dirty, uncleanable_base), uncleanable_base))
        total = clean + dirty
        return (dirty / total if total else 0.0), dirty

    def compact(
        self, now_ms: int | None = None, *, max_map_entries: int = DEFAULT_MAX_MAP_ENTRIES
    ) -> CleanerStats | None:
        """One compaction pass (see `cleaner`); None when there is nothing dirty to clean."""
        now = self._now(now_ms)
        with self._lock:
            if self.closed:
                return None
            segments = self._segments
            first_dirty, first_uncleanable = self.cleanable_offsets(now)
            last_records = self.producers.last_records_of_active_producers()
            truncations = self._truncations
        if first_dirty >= first_uncleanable:
            return None
        dirty = [s for s in segments.overlapping(first_dirty, first_uncleanable) if s is not segments.active]
        aborted = AbortedRanges([txn for segment in segments for txn in segment.txn_index.entries()])
        offset_map = OffsetMap(max_map_entries)
        build_offset_map(dirty, first_dirty, first_uncleanable, offset_map, aborted)
        end_offset = offset_map.latest_offset + 1 if len(offset_map) else first_uncleanable
        rules = CleaningRules(
            offset_map, now, self.config.delete_retention_ms, last_records, aborted, upper_bound=first_uncleanable
        )
        candidates = [s for s in segments.overlapping(0, end_offset) if s is not segments.active]
        groups = group_segments_by_size(
            candidates, self.config.segment_bytes, self.config.segment_index_bytes, first_uncleanable
        )
        bytes_read = bytes_written = 0
        for group in groups:
            cleaned, read, written = clean_group(group, rules, self._cleaned_segment)
            last = segments.floor_index(group[-1].base_offset)
            group_end = segments.upper_bound(last, self._log_end_offset)  # the next segment's base
            files.write_swap_end(self.directory, cleaned.base_offset, group_end)
            if not self.replace_segments(cleaned, group, truncations):
                cleaned.delete_files()
                files.remove_if_exists(files.swap_end_path(self.directory, cleaned.base_offset))
                return None
            bytes_read, bytes_written = bytes_read + read, bytes_written + written
        with self._lock:
            self.cleaner_checkpoint = end_offset
        return CleanerStats(end_offset, sum(len(group) for group in groups), bytes_read, bytes_written)

    def _cleaned_segment(self, base_offset: int) -> Segment:
        return self._segment(base_offset, suffix=files.CLEANED_SUFFIX, create=True)

    def replace_segments(self, cleaned: Segment, old: list[Segment], truncations: int) -> bool:
        """Swap a `.cleaned` segment in for `old` atomically; False if the log changed meanwhile
        (closed, `old` no longer all there, or truncated since `truncations` was read).

        `old` are consecutive segments, and `<base>.swapend` (written durably beforehand, see
        `files.write_swap_end`) holds where their offset range ends: the base offset of the
        segment after them. A cleaned segment without any batch takes no place in the log,
        unless `old` starts the log (its base offset keeps the log start offset).

        Crash safety: renaming `.cleaned` to `.swap` commits the swap (a restart finishes it:
        the old segments in [base, recorded end) go, the swap replaces them); the directory is
        fsynced before anything destructive happens, then the old segments become `.deleted`
        and the swap becomes the live segment (or goes, if empty).

        The log's lock is held only for the renames and the in-memory swap, not across the
        directory fsync (appends on the event loop take that lock): the commit rename is made
        under the lock, the fsync runs outside it, and the install re-checks the log under the
        lock. Meanwhile the swap is *pending*: a truncation, or a deletion of any of `old`,
        withdraws it first (`_withdraw_pending_swap`: the `.swap` files go before anything of
        `old` is touched), so a restart can never install a swap over a log that changed.
        """
        with self._lock:
            if not self._still_replaceable(old, truncations):
                return False
            cleaned.change_suffix(files.SWAP_SUFFIX)
            self._pending_swap = (cleaned, old)
        try:
            files.fsync_dir(self.directory)  # the commit is durable before `old` is touched
        except FileNotFoundError:
            if not self.closed:  # the directory only goes away with a deleted (closed) log
                raise
        with self._lock:
            if self._pending_swap is None or self._pending_swap[0] is not cleaned:
                return False  # withdrawn meanwhile (its files are gone)
            if not self._still_replaceable(old, truncations):
                self._withdraw_pending_swap()
                return False
            self._pending_swap = None
            keep = cleaned.size > 0 or old[0] is self._segments.first
            self._segments = self._segments.without(old)
            self._schedule_deletion(old)
            if keep:
                cleaned.change_suffix("")
                cleaned.close()
                self._segments = self._segments.with_segment(cleaned)
            else:
                cleaned.delete_files()
            files.remove_if_exists(files.swap_end_path(self.directory, cleaned.base_offset))
            return True

    def _still_replaceable(self, old: list[Segment], truncations: int) -> bool:
        """Under the lock: the log is open, not truncated since, and still holds all of `old`."""
        if self.closed or truncations != self._truncations:
            return False
        return all(segment in self._segments for segment in old)

    def _withdraw_pending_swap(self, touched: list[Segment] | None = None) -> None:
        """Under the lock, before a truncation (touched=None) or a deletion of `touched`: drop a
        committed but not yet installed swap (see `replace_segments`) if that change concerns it,
        so that a restart does not install it over the changed log."""
        pending = self._pending_swap
        if pending is None:
            return
        cleaned, old = pending
        if touched is not None and not any(segment in old for segment in touched):
            return
        self._pending_swap = None
        cleaned.delete_files()
        files.remove_if_exists(files.swap_end_path(self.directory, cleaned.base_offset))
