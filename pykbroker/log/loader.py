"""Opening a partition directory: leftovers cleaned up, segments loaded, recovery if unclean.

Order of work (Kafka's LogLoader):
1. delete `.deleted`, `.cleaned` and temporary files; finish interrupted compaction swaps
   (a `<base>.log.swap` replaces the segments in the offset range its `<base>.swapend`
   records; an empty swap goes too, unless it would be the first segment); drop orphan
   indexes;
2. open every `<base>.log`, rebuilding indexes that are missing or inconsistent;
3. after an unclean shutdown, recover each segment from the one holding the recovery
   point: re-read batches, check CRCs, rebuild indexes, cut the torn tail and drop any later
   segment; the leader epoch cache tail, producer state and aborted-transaction index are
   rebuilt on the way;
4. after a clean shutdown, rebuild producer state from the newest snapshot.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ..records.batch import BatchHeader
from . import files
from .epoch_cache import LeaderEpochCache
from .producer_snapshot import SnapshotFiles
from .producer_state import ProducerStateManager
from .replay import is_marker_candidate, read_marker, rebuild_producer_state
from .results import RecoveryStats
from .scan import StoredBatch
from .segment import Segment
from .segments import LogSegments
from .txn_index import AbortedTxn

SegmentFactory = Callable[..., Segment]


@dataclass(eq=False)  # a load's outcome, never compared
class LoadedLog:
    segments: LogSegments
    log_start_offset: int
    recovery_point: int
    log_end_offset: int
    recovery: RecoveryStats | None  # None after a clean shutdown


class LogLoader:
    def __init__(
        self,
        directory: str,
        *,
        segment_factory: SegmentFactory,
        epoch_cache: LeaderEpochCache,
        producers: ProducerStateManager,
        snapshots: SnapshotFiles,
        now_ms: int,
    ) -> None:
        self.directory = directory
        self.segment_factory = segment_factory
        self.epoch_cache = epoch_cache
        self.producers = producers
        self.snapshots = snapshots
        self.now_ms = now_ms

    def load(self, *, log_start_offset: int, recovery_point: int, clean_shutdown: bool) -> LoadedLog:
        names = os.listdir(self.directory)  # listed once: thousands of partitions load at start
        swaps = self.remove_stray_files(names)
        if swaps:
            self.complete_swaps(swaps)
            names = os.listdir(self.directory)
        else:
            self.remove_swap_ends(names)
        log_offsets = self.log_file_offsets(names)
        self.remove_orphan_indexes(names, log_offsets)
        with self.snapshots.listed_while(names):
            return self.load_segments(log_offsets, log_start_offset, recovery_point, clean_shutdown)

    def load_segments(
        self, log_offsets: list[int], log_start_offset: int, recovery_point: int, clean_shutdown: bool
    ) -> LoadedLog:
        """Steps 2 to 4 of the module docstring, on the `.log` files at `log_offsets`."""
        segments = self.open_segments(log_offsets)
        if segments:
            log_start_offset = max(log_start_offset, segments[0].base_offset)
        recovery = None
        if clean_shutdown:
            segments, log_end_offset = self.load_clean(segments, log_start_offset)
            recovery_point = log_end_offset
        else:
            recovery = RecoveryStats(logs=1)
            segments, log_end_offset = self.recover(segments, recovery_point, log_start_offset, recovery)
            recovery_point = min(recovery_point, log_end_offset)
        if log_start_offset > log_end_offset:
            segments, log_end_offset = self.start_over_at(segments, log_start_offset)
            recovery_point = log_end_offset
        if self.epoch_cache.needs_rebuild:
            self.rebuild_epoch_cache(segments)
        self.epoch_cache.truncate_from_end(log_end_offset)
        self.epoch_cache.truncate_from_start(log_start_offset)
        return LoadedLog(LogSegments(segments), log_start_offset, recovery_point, log_end_offset, recovery)

    # -- leftovers ------------------------------------------------------------------------

    def remove_stray_files(self, names: list[str]) -> list[int]:
        """Delete leftovers of deletions, compactions and atomic writes among the directory's
        `names`; return swap offsets."""
        swaps = []
        for name in names:
            path = os.path.join(self.directory, name)
            if name.endswith((files.DELETED_SUFFIX, files.CLEANED_SUFFIX, files.TMP_SUFFIX)):
                files.remove_if_exists(path)
            elif name.endswith(files.SWAP_SUFFIX):
                if files.is_offset_file(name[: -len(files.SWAP_SUFFIX)], files.LOG_SUFFIX):
                    swaps.append(files.offset_from_file_name(name))
                else:
                    files.remove_if_exists(path)  # index swaps: indexes are rebuilt
        return sorted(swaps)

    def complete_swaps(self, swap_offsets: list[int]) -> None:
        """Finish a compaction that was committed (renamed to .swap) but not fully installed.

        The old segments in [base, recorded end) go; without a record (a swap written before
        end offsets were recorded) the swap's own next offset is the end, as in Kafka.
        """
        for base in swap_offsets:
            swap = self.segment_factory(base, suffix=files.SWAP_SUFFIX)
            swap.recover()
            end = files.read_swap_end(files.swap_end_path(self.directory, base))
            if end is None or end < base:
                end = swap.read_next_offset()
            for offset in self.log_file_offsets():
                if base <= offset < end:
                    self.segment_factory(offset).delete_files()
            if swap.size == 0 and any(offset < base for offset in self.log_file_offsets()):
                swap.delete_files()  # nothing left of those segments, as after a finished swap
            else:
                swap.change_suffix("")
                swap.close()
        self.remove_swap_ends()

    def remove_swap_ends(self, names: list[str] | None = None) -> None:
        """`.swapend` records of swaps that are finished (or were never committed)."""
        for name in os.listdir(self.directory) if names is None else names:
            if files.is_offset_file(name, files.SWAP_END_SUFFIX):
                files.remove_if_exists(os.path.join(self.directory, name))

    def remove_orphan_indexes(self, names: list[str], log_offsets: list[int]) -> None:
        logs = set(log_offsets)
        for name in names:
            for suffix in (files.INDEX_SUFFIX, files.TIME_INDEX_SUFFIX, files.TXN_INDEX_SUFFIX):
                if files.is_offset_file(name, suffix) and files.offset_from_file_name(name) not in logs:
                    files.remove_if_exists(os.path.join(self.directory, name))

    def log_file_offsets(self, names: list[str] | None = None) -> list[int]:
        """The base offsets of the `.log` files among `names` (the directory's, when None)."""
        return sorted(
            files.offset_from_file_name(name)
            for name in (os.listdir(self.directory) if names is None else names)
            if files.is_offset_file(name, files.LOG_SUFFIX)
        )

    # -- segments -------------------------------------------------------------------------

    def open_segments(self, log_offsets: list[int]) -> list[Segment]:
        segments = [self.segment_factory(offset) for offset in log_offsets]
        for segment in segments:
            if self.indexes_missing(segment):
                segment.recover()
        if segments and segments[-1].needs_index_rebuild():
            segments[-1].recover()
        return segments

    @staticmethod
    def indexes_missing(segment: Segment) -> bool:
        return not all(os.path.exists(path) for path in segment.paths()[1:3])

    def load_clean(self, segments: list[Segment], log_start_offset: int) -> tuple[list[Segment], int]:
        if not segments:
            segments = [self.segment_factory(log_start_offset, create=True)]
        log_end_offset = segments[-1].read_next_offset()
        rebuild_producer_state(
            self.producers, self.snapshots, LogSegments(segments), log_start_offset, log_end_offset, self.now_ms
        )
        return segments, log_end_offset

    def recover(
        self, segments: list[Segment], recovery_point: int, log_start_offset: int, stats: RecoveryStats
    ) -> tuple[list[Segment], int]:
        """Recover every segment from the one holding the recovery point (counted in `stats`)."""
        if not segments:
            segments = [self.segment_factory(log_start_offset, create=True)]
        first = max(LogSegments(segments).floor_index(recovery_point), 0)
        rebuild_producer_state(
            self.producers,
            self.snapshots,
            LogSegments(segments),
            log_start_offset,
            segments[first].base_offset,
            self.now_ms,
        )
        for index in range(first, len(segments)):
            truncated = segments[index].recover(self.recovery_observer(segments[index]))
            stats.segments_scanned += 1
            stats.bytes_truncated += truncated
            if truncated and index + 1 < len(segments):
                stats.segments_dropped += len(segments) - index - 1
                for dropped in segments[index + 1 :]:
                    dropped.delete_files()
                segments = segments[: index + 1]
                break
        log_end_offset = segments[-1].read_next_offset()
        self.producers.update_map_end_offset(log_end_offset)
        self.snapshots.delete_where(lambda offset: offset > log_end_offset)
        return segments, log_end_offset

    def recovery_observer(self, segment: Segment) -> Callable[[BatchHeader, StoredBatch], None]:
        """What each recovered batch updates: epoch cache, producer state, aborted txn index."""

        def on_batch(header: BatchHeader, batch: StoredBatch) -> None:
            epoch = header.partition_leader_epoch
            latest = self.epoch_cache.latest_epoch
            if epoch >= 0 and (latest is None or epoch > latest):
                self.epoch_cache.assign(epoch, header.base_offset)
            marker = read_marker(batch.data, header) if is_marker_candidate(header) else None
            completed = self.producers.apply_stored_batch(header, marker)
            if completed is not None and completed.is_aborted:
                segment.txn_index.append(
                    AbortedTxn(
                        completed.producer_id,
                        completed.first_offset,
                        completed.last_offset,
                        self.producers.last_stable_offset(completed),
                    )
                )

        return on_batch

    def rebuild_epoch_cache(self, segments: list[Segment]) -> None:
        """Re-derive every epoch's start offset from the batch headers (unreadable checkpoint)."""
        self.epoch_cache.clear()
        for segment in segments:
            for _, header in segment.iter_headers():
                latest = self.epoch_cache.latest_epoch
                if header.partition_leader_epoch >= 0 and (latest is None or header.partition_leader_epoch > latest):
                    self.epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
        self.epoch_cache.needs_rebuild = False

    def start_over_at(self, segments: list[Segment], offset: int) -> tuple[list[Segment], int]:
        """The checkpointed log start is past all data: drop it all and start empty there."""
        for segment in segments:
            segment.delete_files()
        self.producers.clear(offset)
        self.snapshots.delete_where(lambda _: True)
        self.epoch_cache.clear()
        return [self.segment_factory(offset, create=True)], offset
