"""`LocalLog`: a partition's segments on disk (Kafka's LocalLog).

It owns the segment files of one partition directory and the offsets that describe them:
the log end offset and the recovery point (everything below is on disk). It appends stored
bytes to the active segment, rolls new segments, reads file regions, truncates, deletes
segments (renamed `.deleted`, removed after `file.delete.delay.ms`), swaps compacted segments
in, and fsyncs. It knows nothing of producers, leader epochs or the high watermark: the
partition-level `Log` (Kafka's UnifiedLog) holds those and drives this class.

Locking: the `lock` is the partition log's, shared with `Log`. Methods documented "lock held"
are called with it held; `sync_below` and `replace_segments` take it themselves, only
briefly, and fsync outside it; `flush_segments` and `fsync_dir` need no lock. Reads take no
lock: they work on the immutable `LogSegments` current when they start.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from . import files
from .config import LogConfig
from .deleter import DelayedDeleter
from .files import HandleCache
from .loader import LoadedLog
from .results import AbortedTransaction, FetchDataInfo
from .segment import Segment
from .segments import LogSegments

SegmentsDeleted = Callable[[list[Segment]], None]


class LocalLog:
    """The segments of one partition directory, and the offsets that describe them."""

    def __init__(
        self,
        directory: str,
        config: LogConfig,
        *,
        topic: str,
        partition: int,
        lock: threading.RLock,
        handles: HandleCache,
        deleter: DelayedDeleter,
        time_ms: Callable[[], int],
        fsync_before_ack: bool,
        on_segments_deleted: SegmentsDeleted,
    ) -> None:
        self.directory = directory
        self.config = config
        self.topic = topic
        self.partition = partition
        self.lock = lock
        self.fsync_before_ack = fsync_before_ack
        self._handles = handles
        self._deleter = deleter
        self._time_ms = time_ms
        # told of segments removed from the log, under the lock (the partition log drops their
        # producer snapshots, as Kafka's UnifiedLog does after LocalLog deletes segments)
        self._on_segments_deleted = on_segments_deleted
        self.segments = LogSegments()
        self.log_end_offset = 0
        self.recovery_point = 0
        self.truncations = 0  # changes with every truncation: work begun before one is void
        self.last_flush_ms = time_ms()
        self.closed = False
        self._sync_lock = threading.Lock()  # one `sync_below` at a time
        self._synced_offset = 0  # fsync before ack: everything below is on disk
        self._dir_sync_owed = False  # fsync before ack: a segment file was created since
        self._limit_position: tuple[int, Segment, int] | None = None  # see `_max_position`
        # a swap committed on disk (renamed to .swap) whose install waits for the directory fsync
        self._pending_swap: tuple[Segment, list[Segment]] | None = None

    def load(self, loaded: LoadedLog) -> None:
        """Take over what `LogLoader` found in the directory."""
        self.segments = loaded.segments
        self.recovery_point = loaded.recovery_point
        self.log_end_offset = loaded.log_end_offset
        self._synced_offset = loaded.log_end_offset
        self.segments.active.pin()

    def new_segment(self, base_offset: int, *, suffix: str = "", create: bool = False) -> Segment:
        """A segment of this directory at `base_offset` (its files created when `create`)."""
        make = Segment.create if create else Segment
        return make(
            self.directory,
            base_offset,
            index_interval_bytes=self.config.index_interval_bytes,
            max_index_bytes=self.config.segment_index_bytes,
            suffix=suffix,
            handles=self._handles,
            created_ms=self._time_ms(),
        )

    @property
    def size(self) -> int:
        return self.segments.size_in_bytes()

    def name_in_dir(self) -> str:
        """Kafka's way of naming a partition in storage errors: `<topic>-<partition> in dir <log dir>`."""
        return f"{self.topic}-{self.partition} in dir {os.path.dirname(os.path.normpath(self.directory))}"

    # -- appending and rolling (lock held) ----------------------------------------------

    def append(self, last_offset: int, max_timestamp: int, offset_of_max: int, data: memoryview | bytes) -> Segment:
        """Write stored batches to the active segment; returns that segment."""
        segment = self.segments.active
        segment.append(last_offset, max_timestamp, offset_of_max, data)
        self.log_end_offset = last_offset + 1
        return segment

    def roll(self, base_offset: int) -> Segment:
        """Make a new segment at `base_offset` the active one (lock held)."""
        active = self.segments.active
        segment = self._new_active_segment(base_offset)
        active.on_become_inactive()
        if self.fsync_before_ack:
            self._dir_sync_owed = True  # synced by the next `sync_below`
        self.segments = self.segments.with_segment(segment)
        return segment

    def _new_active_segment(self, base: int) -> Segment:
        """A new segment at `base`, created and pinned; when its files cannot be opened, an
        OSError and no file left behind."""
        segment = self.new_segment(base, create=True)
        try:
            segment.pin()
        except OSError:
            segment.delete_files()
            raise
        return segment

    # -- reads ----------------------------------------------------------------------------

    def read(
        self,
        segments: LogSegments,
        fetch_offset: int,
        max_bytes: int,
        *,
        limit: int,
        log_end_offset: int,
        min_one_message: bool,
        read_committed: bool,
    ) -> FetchDataInfo:
        """File regions of `segments` (the list current when the read began) from the batch
        holding `fetch_offset`, never past offset `limit`; no record is decoded. A file that
        cannot be read raises its OSError (the log reports it)."""
        for index in range(max(segments.floor_index(fetch_offset), 0), len(segments)):
            segment = segments[index]
            max_position = self._max_position(segments, index, limit, log_end_offset)
            info = segment.read(fetch_offset, max_bytes, max_position, min_one_message)
            if info is not None:
                if read_committed:
                    info.aborted_transactions = self._aborted_transactions(segments, index, info, log_end_offset)
                return info
        return FetchDataInfo(fetch_offset)

    def _max_position(self, segments: LogSegments, index: int, limit: int, log_end_offset: int) -> int:
        """Where a read of segment `index` must stop so that it stays below offset `limit`."""
        segment = segments[index]
        if limit >= segments.upper_bound(index, log_end_offset):
            return segment.size
        cached = self._limit_position
        if cached is not None and cached[0] == limit and cached[1] is segment:
            return cached[2]
        located = segment.translate_offset(limit)
        position = segment.size if located is None else located[1]
        self._limit_position = (limit, segment, position)
        return position

    def _aborted_transactions(
        self, segments: LogSegments, index: int, info: FetchDataInfo, log_end_offset: int
    ) -> list[AbortedTransaction]:
        segment = segments[index]
        upper = segment.fetch_upper_bound_offset(info.position, info.size)
        if upper is None:
            upper = segments.upper_bound(index, log_end_offset)
        found: list[AbortedTransaction] = []
        for later in range(index, len(segments)):
            txns, complete = segments[later].txn_index.collect(info.fetch_offset, upper)
            found.extend(AbortedTransaction(txn.producer_id, txn.first_offset) for txn in txns)
            if complete:
                break
        return found

    # -- truncation and deletion (lock held) ----------------------------------------------

    def truncate_to(self, target_offset: int) -> None:
        """Remove everything at or above `target_offset`, which is inside the log (lock held)."""
        self.withdraw_pending_swap()
        doomed = [s for s in self.segments if s.base_offset > target_offset]
        self.segments = self.segments.without(doomed)
        self.delete_segment_files(doomed)
        active = self.segments.active
        active.truncate_to(target_offset)
        active.pin()
        self.log_end_offset = target_offset
        self._after_truncation()

    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        """Delete every segment; the log restarts empty at `new_offset` (lock held)."""
        self.withdraw_pending_swap()
        self.delete_segment_files(list(self.segments))
        segment = self.new_segment(new_offset, create=True)
        segment.pin()
        self.segments = LogSegments([segment])
        self.log_end_offset = new_offset
        self._after_truncation()

    def _after_truncation(self) -> None:
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self._limit_position = None
        self._synced_offset = min(self._synced_offset, self.log_end_offset)
        self.truncations += 1

    def remove_and_delete_segments(self, segments: list[Segment], now: int | None = None) -> None:
        """Take the oldest `segments` out of the log and delete their files (lock held)."""
        self.segments = self.segments.without(segments)
        self.delete_segment_files(segments, now)

    def delete_segment_files(self, segments: list[Segment], now: int | None = None) -> None:
        """Rename to .deleted now, remove after file.delete.delay.ms (lock held)."""
        self.withdraw_pending_swap(segments)
        due = (self._time_ms() if now is None else now) + self.config.file_delete_delay_ms
        for segment in segments:
            segment.change_suffix(files.DELETED_SUFFIX)
            self._deleter.schedule(due, segment.delete_files)
        self._on_segments_deleted(segments)
        self._limit_position = None

    def raise_recovery_point(self, offset: int) -> None:
        """Nothing below the log start offset needs recovery (lock held)."""
        self.recovery_point = max(self.recovery_point, offset)

    # -- compaction's swap ----------------------------------------------------------------

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

        The lock is held only for the renames and the in-memory swap, not across the
        directory fsync (appends on the event loop take that lock): the commit rename is made
        under the lock, the fsync runs outside it, and the install re-checks the log under the
        lock. Meanwhile the swap is *pending*: a truncation, or a deletion of any of `old`,
        withdraws it first (`withdraw_pending_swap`: the `.swap` files go before anything of
        `old` is touched), so a restart can never install a swap over a log that changed.
        """
        with self.lock:
            if not self._still_replaceable(old, truncations):
                return False
            cleaned.change_suffix(files.SWAP_SUFFIX)
            self._pending_swap = (cleaned, old)
        try:
            files.fsync_dir(self.directory)  # the commit is durable before `old` is touched
        except FileNotFoundError:
            if not self.closed:  # the directory only goes away with a deleted (closed) log
                raise
        with self.lock:
            if self._pending_swap is None or self._pending_swap[0] is not cleaned:
                return False  # withdrawn meanwhile (its files are gone)
            if not self._still_replaceable(old, truncations):
                self.withdraw_pending_swap()
                return False
            self._install_swap(cleaned, old)
            return True

    def _install_swap(self, cleaned: Segment, old: list[Segment]) -> None:
        self._pending_swap = None
        keep = cleaned.size > 0 or old[0] is self.segments.first
        self.remove_and_delete_segments(old)
        if keep:
            cleaned.change_suffix("")
            cleaned.close()
            self.segments = self.segments.with_segment(cleaned)
        else:
            cleaned.delete_files()
        files.remove_if_exists(files.swap_end_path(self.directory, cleaned.base_offset))

    def _still_replaceable(self, old: list[Segment], truncations: int) -> bool:
        """Under the lock: the log is open, not truncated since, and still holds all of `old`."""
        if self.closed or truncations != self.truncations:
            return False
        return all(segment in self.segments for segment in old)

    def withdraw_pending_swap(self, touched: list[Segment] | None = None) -> None:
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

    # -- durability -----------------------------------------------------------------------

    def flush_segments(self, segments: list[Segment]) -> None:
        """fsync `segments` (taken under the lock by the caller); the ones deleted meanwhile are skipped."""
        for segment in segments:
            try:
                segment.flush()
            except FileNotFoundError:
                pass  # deleted meanwhile

    def fsync_dir(self) -> None:
        files.fsync_dir(self.directory)

    def mark_flushed(self, offset: int, truncations: int, now: int) -> None:
        """Everything below `offset` is on disk, unless a truncation came since `truncations`
        was read (lock held)."""
        if truncations == self.truncations:
            self.recovery_point = max(self.recovery_point, offset)
        self.last_flush_ms = now

    def flush_messages_reached(self) -> bool:
        return self.log_end_offset - self.recovery_point >= self.config.flush_messages

    def sync_below(self, end_offset: int) -> None:
        """fsync before ack: fdatasync the segments holding appends below `end_offset` that are
        not on disk yet, and the directory when a segment was created since the last sync.
        Blocks; calls that find their appends synced by another return at once."""
        with self._sync_lock:
            with self.lock:
                if self.closed or end_offset <= self._synced_offset:
                    return
                target = self.log_end_offset
                segments = self.segments.overlapping(self._synced_offset, target)
                dir_owed, self._dir_sync_owed = self._dir_sync_owed, False
                truncations = self.truncations
            for segment in segments:
                try:
                    segment.fdatasync_log()
                except FileNotFoundError:
                    pass  # deleted meanwhile
                except OSError:
                    if not self.closed:
                        raise
                    return  # closed meanwhile (deleted, or the broker stopping): nothing to ack
            if dir_owed:
                files.fsync_dir(self.directory)  # acknowledged data must be findable after a crash
            with self.lock:
                if truncations == self.truncations:
                    self._synced_offset = max(self._synced_offset, target)

    # -- closing (lock held) --------------------------------------------------------------

    def close(self) -> None:
        for segment in self.segments:
            segment.close()
        self.closed = True

    def mark_deleted(self) -> None:
        self.close_handlers()

    def close_handlers(self) -> None:
        """Let go of the files without writing to them (deleted, or its log directory failed)."""
        for segment in self.segments:
            segment.abandon()
        self.closed = True
