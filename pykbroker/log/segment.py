"""One log segment: `<base>.log` holding record batches byte for byte, and its two indexes.

Appends go to the end of the `.log` file with an offset index entry (and a time index entry
when the max timestamp grew) after every `index.interval.bytes` of data, as Kafka does.
Reads locate the batch holding an offset through the offset index and a short header scan,
and return a file region. Nothing of an inactive segment but a handful of integers stays in
memory; its `.log` is opened on demand and closed by the shared `HandleCache`. The active
segment keeps its `.log` open, and only that: indexes keep no descriptor (see `index.py`),
so a partition costs one descriptor.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from pykbroker.common.time import now_ms
from pykbroker.records.batch import BatchHeader, is_crc_valid
from pykbroker.records.records import decode_batch, offset_of, timestamp_of

from ..common.files import Bytes
from . import files
from .files import HandleCache, OpenFile
from .index import OffsetIndex, TimeIndex, TimestampOffset
from .results import FetchDataInfo, FileRegion, TimestampAndOffset
from .scan import StoredBatch, iter_batches, iter_headers
from .txn_index import TransactionIndex


def leader_epoch_of(header: BatchHeader) -> int:
    return header.partition_leader_epoch if header.partition_leader_epoch >= 0 else -1


class Segment:
    """A segment's files and the little state kept about them."""

    __slots__ = (
        "directory",
        "base_offset",
        "suffix",
        "index_interval_bytes",
        "offset_index",
        "time_index",
        "txn_index",
        "created_ms",
        "_handles",
        "_file",
        "_size",
        "_pinned",
        "_bytes_since_last_index_entry",
        "_max_timestamp",
        "_rolling_timestamp",
        "_next_offset",
    )

    def __init__(
        self,
        directory: str,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_bytes: int,
        suffix: str = "",
        handles: HandleCache | None = None,
        created_ms: int | None = None,
    ) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.suffix = suffix
        self.index_interval_bytes = index_interval_bytes
        self.offset_index = OffsetIndex(self._path(files.INDEX_SUFFIX), base_offset, max_index_bytes)
        self.time_index = TimeIndex(self._path(files.TIME_INDEX_SUFFIX), base_offset, max_index_bytes)
        self.txn_index = TransactionIndex(self._path(files.TXN_INDEX_SUFFIX), base_offset)
        self.txn_index.on_open = self._touch
        self.created_ms = now_ms() if created_ms is None else created_ms
        self._handles = handles
        self._file: OpenFile | None = None
        self._size: int | None = None
        self._pinned = False
        self._bytes_since_last_index_entry = 0
        self._max_timestamp: TimestampOffset | None = None
        self._rolling_timestamp: int | None = None
        self._next_offset: int | None = None

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        directory: str,
        base_offset: int,
        *,
        index_interval_bytes: int,
        max_index_bytes: int,
        suffix: str = "",
        handles: HandleCache | None = None,
        created_ms: int | None = None,
    ) -> Segment:
        """A new empty segment (any files of that name are emptied), its indexes held in
        memory until it becomes inactive."""
        segment = cls(
            directory,
            base_offset,
            index_interval_bytes=index_interval_bytes,
            max_index_bytes=max_index_bytes,
            suffix=suffix,
            handles=handles,
            created_ms=created_ms,
        )
        try:
            segment.txn_index.delete()
            os.close(os.open(segment.log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
            segment.offset_index.reset()  # new empty files
            segment.time_index.reset()
        except OSError:
            segment.delete_files()  # none of it, rather than a segment without its indexes
            raise
        segment._size = 0
        return segment

    def _path(self, kind: str) -> str:
        return os.path.join(self.directory, files.file_name(self.base_offset, kind) + self.suffix)

    @property
    def log_path(self) -> str:
        return self._path(files.LOG_SUFFIX)

    def paths(self) -> list[str]:
        """The log, offset index, time index and transaction index paths (the last may not exist)."""
        return [self.log_path, self.offset_index.path, self.time_index.path, self.txn_index.path]

    def __repr__(self) -> str:
        return f"Segment({self.log_path!r}, size={self._size})"

    # -- open files -----------------------------------------------------------------------

    def _log(self) -> OpenFile:
        file = self._file
        if file is None:
            file = self._file = OpenFile(self.log_path, writable=True)
        self._touch()
        return file

    def _touch(self) -> None:
        """Note a use of the files: an inactive segment's count against the HandleCache."""
        if not self._pinned and self._handles is not None:
            self._handles.touch(self)

    def release_files(self) -> None:
        if self._pinned:
            return
        self._file = None
        self.txn_index.release()

    def pin(self) -> None:
        """Make this the active segment: its `.log` stays open, indexes mirrored in memory."""
        self._pinned = True
        if self._handles is not None:
            self._handles.forget(self)
        self._log()  # opened now: appends never have to open a file
        self.offset_index.warm()
        self.time_index.warm()
        if self._max_timestamp is None:
            self._max_timestamp = self._scan_max_timestamp()

    def unpin(self) -> None:
        self._pinned = False
        self.offset_index.cool()
        self.time_index.cool()
        self._touch()

    # -- size and offsets -----------------------------------------------------------------

    @property
    def size(self) -> int:
        if self._size is None:
            self._size = os.path.getsize(self.log_path)
        return self._size

    def can_convert_to_relative_offset(self, offset: int) -> bool:
        return self.offset_index.can_append_offset(offset)

    def read_next_offset(self) -> int:
        """The offset after this segment's last batch (its base offset when empty)."""
        if self._next_offset is None:
            start = self.offset_index.lookup(self.offset_index.last_offset).position
            next_offset = self.base_offset
            for _, header in iter_headers(self._log(), start, self.size):
                next_offset = header.next_offset
            self._next_offset = next_offset
        return self._next_offset

    def iter_headers(self, start: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        return iter_headers(self._log(), start, self.size)

    def iter_batches(self, start: int = 0) -> Iterator[StoredBatch]:
        return iter_batches(self._log(), start, self.size)

    # -- timestamps -----------------------------------------------------------------------

    @property
    def max_timestamp_and_offset(self) -> TimestampOffset:
        """The largest batch max timestamp, and the last offset of that batch."""
        if self._max_timestamp is None:
            self._max_timestamp = self.time_index.last_entry
        return self._max_timestamp

    @property
    def max_timestamp_so_far(self) -> int:
        return self.max_timestamp_and_offset.timestamp

    def largest_timestamp(self) -> int:
        """What retention and ListOffsets go by: the max timestamp, else the file's mtime."""
        timestamp = self.max_timestamp_so_far
        return timestamp if timestamp >= 0 else self.last_modified_ms()

    def last_modified_ms(self) -> int:
        return os.stat(self.log_path).st_mtime_ns // 1_000_000

    def set_last_modified_ms(self, ms: int) -> None:
        os.utime(self.log_path, ns=(ms * 1_000_000, ms * 1_000_000))

    def _scan_max_timestamp(self) -> TimestampOffset:
        """The time index's last entry, raised by any larger timestamp stored after it."""
        best = self.time_index.last_entry
        start = self.offset_index.lookup(best.offset).position
        for _, header in iter_headers(self._log(), start, self.size):
            if header.max_timestamp > best.timestamp:
                best = TimestampOffset(header.max_timestamp, header.last_offset)
        return best

    def first_batch_timestamp(self) -> int | None:
        """The first batch's max timestamp (what segment.ms rolling counts from)."""
        if self._rolling_timestamp is None and self.size > 0:
            for _, header in iter_headers(self._log(), 0, self.size):
                self._rolling_timestamp = header.max_timestamp
                break
        return self._rolling_timestamp

    def time_waited_for_roll(self, now: int, message_timestamp: int) -> int:
        first = self.first_batch_timestamp()
        if first is not None and first >= 0:
            return message_timestamp - first
        return max(now - self.created_ms, 0)

    def should_roll(
        self,
        *,
        segment_bytes: int,
        segment_ms: int,
        messages_size: int,
        max_timestamp_in_messages: int,
        max_offset_in_messages: int,
        now: int,
    ) -> bool:
        """Kafka's roll conditions: size, age, full indexes, or an offset the index cannot hold."""
        size = self.size
        reached_roll_ms = self.time_waited_for_roll(now, max_timestamp_in_messages) > segment_ms
        return (
            size > segment_bytes - messages_size
            or (size > 0 and reached_roll_ms)
            or self.offset_index.is_full()
            or self.time_index.is_full()
            or not self.can_convert_to_relative_offset(max_offset_in_messages)
        )

    # -- append ---------------------------------------------------------------------------

    def append(self, largest_offset: int, largest_timestamp: int, offset_of_max_timestamp: int, data: Bytes) -> None:
        """Write batches (already validated, offsets assigned) at the end of the segment."""
        if not len(data):
            return
        position = self.size
        if not self.can_convert_to_relative_offset(largest_offset):
            raise ValueError(f"offset {largest_offset} does not fit segment {self.base_offset}")
        if position == 0:
            self._rolling_timestamp = largest_timestamp
        file = self._log()
        try:
            file.write_at(data, position)
        except OSError:
            file.truncate(position)
            raise
        self._size = position + len(data)
        self._next_offset = largest_offset + 1
        if largest_timestamp > self.max_timestamp_so_far:
            self._max_timestamp = TimestampOffset(largest_timestamp, offset_of_max_timestamp)
        if self._bytes_since_last_index_entry > self.index_interval_bytes:
            self.offset_index.append(largest_offset, position)
            self.time_index.maybe_append(*self.max_timestamp_and_offset)
            self._bytes_since_last_index_entry = 0
        self._bytes_since_last_index_entry += len(data)

    def on_become_inactive(self) -> None:
        """Record the segment's max timestamp as the last time index entry, as Kafka does."""
        if self.max_timestamp_so_far >= 0:
            self.time_index.maybe_append(*self.max_timestamp_and_offset, skip_full_check=True)
        self.unpin()

    # -- reads ----------------------------------------------------------------------------

    def translate_offset(self, offset: int, start_position: int = 0) -> tuple[BatchHeader, int] | None:
        """(header, position) of the first batch whose last offset is >= `offset`."""
        start = max(self.offset_index.lookup(offset).position, start_position)
        for position, header in iter_headers(self._log(), start, self.size):
            if header.last_offset >= offset:
                return header, position
        return None

    def read(
        self, start_offset: int, max_size: int, max_position: int | None = None, min_one_message: bool = False
    ) -> FetchDataInfo | None:
        """Batches from the one holding `start_offset`, up to `max_size` bytes and `max_position`.

        None when no batch in this segment reaches `start_offset`.
        """
        located = self.translate_offset(start_offset)
        if located is None:
            return None
        header, start = located
        limit = self.size if max_position is None else max_position
        adjusted_max = max(max_size, header.size) if min_one_message else max_size
        info = FetchDataInfo(start_offset, self.base_offset, start)
        if adjusted_max == 0:
            return info
        info.first_entry_incomplete = adjusted_max < header.size
        length = min(limit - start, adjusted_max)
        if length > 0:
            info.regions = [FileRegion(self._log(), start, length)]
        return info

    def fetch_upper_bound_offset(self, start_position: int, fetch_size: int) -> int | None:
        """An offset surely past a fetch of `fetch_size` bytes from `start_position` (index-based)."""
        entry = self.offset_index.first_entry_at_or_after_position(start_position + fetch_size)
        return None if entry is None else entry.offset

    def read_batch(self, position: int, size: int) -> bytes:
        return self._log().pread(size, position)

    def find_offset_by_timestamp(self, timestamp: int, starting_offset: int) -> TimestampAndOffset | None:
        """The first record at or after `starting_offset` whose timestamp is >= `timestamp`."""
        entry = self.time_index.lookup(timestamp)
        position = self.offset_index.lookup(max(entry.offset, starting_offset)).position
        for pos, header in iter_headers(self._log(), position, self.size):
            if header.max_timestamp < timestamp:
                continue
            _, records = decode_batch(self.read_batch(pos, header.size), verify_crc=False)
            for record in records:
                if timestamp_of(record) >= timestamp and offset_of(record) >= starting_offset:
                    return TimestampAndOffset(offset_of(record), timestamp_of(record), leader_epoch_of(header))
        return None

    def find_max_timestamp_record(self) -> TimestampAndOffset | None:
        """The first record carrying this segment's max timestamp (ListOffsets MAX_TIMESTAMP)."""
        best = self.max_timestamp_and_offset
        position = self.offset_index.lookup(best.offset).position
        for pos, header in iter_headers(self._log(), position, self.size):
            if header.max_timestamp != best.timestamp:
                continue
            _, records = decode_batch(self.read_batch(pos, header.size), verify_crc=False)
            for record in records:
                if record.timestamp == best.timestamp:
                    return TimestampAndOffset(offset_of(record), best.timestamp, leader_epoch_of(header))
            return None
        return None

    # -- recovery and truncation ----------------------------------------------------------

    def recover(self, on_batch: Callable[[BatchHeader, StoredBatch], None] | None = None) -> int:
        """Re-read every batch, rebuild both indexes, cut the file at the first bad batch.

        A batch is bad if its framing or CRC is broken or its offsets go backwards or out of
        the segment's range. Returns the number of bytes cut off. The transaction index is
        emptied only when `on_batch` is given (its caller rebuilds it from the batches).
        """
        self.offset_index.reset()  # rebuilt in memory, written at the end
        self.time_index.reset()
        if on_batch is not None:
            self.txn_index.reset()
        best = TimestampOffset(-1, self.base_offset)
        valid = last_index_entry = 0
        expected_offset = self.base_offset
        for batch in iter_batches(self._log(), 0, self.size):
            header = batch.header
            if not self._is_recoverable(batch, expected_offset):
                break
            if header.max_timestamp > best.timestamp:
                best = TimestampOffset(header.max_timestamp, header.last_offset)
            if valid - last_index_entry > self.index_interval_bytes:
                self.offset_index.append(header.last_offset, valid)
                self.time_index.maybe_append(*best)
                last_index_entry = valid
            valid += header.size
            expected_offset = header.next_offset
            if on_batch is not None:
                on_batch(header, batch)
        truncated = self.size - valid
        if truncated:
            self._log().truncate(valid)
            self._size = valid
        self._max_timestamp = best
        if best.timestamp >= 0:
            self.time_index.maybe_append(*best, skip_full_check=True)
        self._bytes_since_last_index_entry = valid - last_index_entry
        self._next_offset = expected_offset
        self._rolling_timestamp = None
        self._write_rebuilt_indexes()
        return truncated

    def _write_rebuilt_indexes(self) -> None:
        for index in (self.offset_index, self.time_index):
            if self._pinned:
                index.persist()
            else:
                index.cool()

    def _is_recoverable(self, batch: StoredBatch, expected_offset: int) -> bool:
        header = batch.header
        return (
            header.base_offset >= expected_offset
            and header.last_offset_delta >= 0
            and self.can_convert_to_relative_offset(header.last_offset)
            and is_crc_valid(batch.data, 0, header)
        )

    def truncate_to(self, offset: int) -> int:
        """Drop the batch holding `offset` and everything after it; returns bytes removed."""
        located = self.translate_offset(offset)
        self.offset_index.truncate_to(offset)
        self.time_index.truncate_to(offset)
        self.txn_index.truncate_to(offset)
        truncated = 0
        if located is not None:
            position = located[1]
            truncated = self.size - position
            self._log().truncate(position)
            self._size = position
        if self.size == 0:
            self.created_ms = now_ms()
        self._rolling_timestamp = None
        self._next_offset = None
        self._bytes_since_last_index_entry = 0
        self._max_timestamp = self._scan_max_timestamp()
        return truncated

    def needs_index_rebuild(self) -> bool:
        """Whether an index file is missing or inconsistent with the log file."""
        if not all(os.path.exists(path) for path in self.paths()[1:3]):
            return True
        return not (self.offset_index.is_sane(self.size) and self.time_index.is_sane())

    # -- durability and files -------------------------------------------------------------

    def flush(self) -> None:
        self._log().fsync()
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def fdatasync_log(self) -> None:
        self._log().fdatasync()

    def close(self) -> None:
        """Cleanly close: final time index entry, indexes written, file cut to the appended
        size, files released."""
        if self._file is not None and self._file.size() != self.size:
            self._file.truncate(self.size)
        if self._max_timestamp is not None and self._max_timestamp.timestamp >= 0:
            self.time_index.maybe_append(*self._max_timestamp, skip_full_check=True)
        for index in (self.offset_index, self.time_index, self.txn_index):
            index.persist()  # raises rather than close cleanly without them
        self.offset_index.cool()
        self.time_index.cool()
        self._pinned = False
        self.release_files()
        if self._handles is not None:
            self._handles.forget(self)

    def change_suffix(self, new_suffix: str) -> None:
        """Rename the segment's files from its current suffix to `new_suffix`."""
        old_log = self.log_path
        self.suffix = new_suffix
        if os.path.exists(old_log):
            os.replace(old_log, self.log_path)
        self.offset_index.rename(self._path(files.INDEX_SUFFIX))
        self.time_index.rename(self._path(files.TIME_INDEX_SUFFIX))
        self.txn_index.rename(self._path(files.TXN_INDEX_SUFFIX))

    def abandon(self) -> None:
        """Let go of the open files without touching them (the directory is going away)."""
        self._pinned = False
        self.release_files()
        if self._handles is not None:
            self._handles.forget(self)

    def delete_files(self) -> None:
        """Remove the segment's files (an open region keeps its descriptor readable)."""
        self.abandon()
        for path in self.paths():
            files.remove_if_exists(path)
