"""A segment's sparse indexes, in Kafka's file formats (big-endian, fixed-size entries).

* `.index` (OffsetIndex): int32 offset relative to the segment's base, int32 file position.
  An entry (o, p) says the batch holding offset o starts at or after position p.
* `.timeindex` (TimeIndex): int64 timestamp, int32 relative offset. An entry (t, o) says
  no record at an offset up to o has a timestamp above t.

Files hold exactly their entries (no preallocation), and no index keeps a file descriptor
open (Kafka's indexes are memory-mapped and opened lazily for the same reason): a partition
costs one descriptor, its active segment's `.log`.

* An inactive segment's index is opened for the time of one lookup and closed after it:
  a binary search with `pread` that finishes on one small block, so an inactive segment
  costs no memory either. (A memory map would not do: before 3.13 and its `trackfd=False`,
  Python keeps a descriptor open for each map.)
* The active segment keeps a mirror of its entries in two compact arrays (bounded by
  `segment.index.bytes`), because tailing consumers look it up on every fetch. Appends go to
  the mirror; the entries not yet in the file are written at the next flush, roll or close
  (a crash loses only those, and recovery rebuilds the active segment's indexes anyway).
"""

from __future__ import annotations

import logging
import os
import struct
import threading
from array import array
from bisect import bisect_right
from typing import NamedTuple

from .dir_failure import is_dir_failure
from .files import naming_file, write_all

log = logging.getLogger(__name__)

SEARCH_BLOCK_BYTES = 4096


class IndexAppendError(ValueError):
    """An append that would break the index's ordering or overflow it."""


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


RawEntry = tuple[int, int]  # an entry as stored: (search key, value), relative to the base offset


class _IndexFile:
    """Fixed-size entries in an append-only file; field 0 of each entry is its search key.

    With a mirror (the active segment) the file holds the mirror's first `_persisted`
    entries; `_lock` keeps that true between the appending thread and a flush on a worker
    thread.
    """

    ENTRY: struct.Struct
    TYPECODES: tuple[str, str]
    __slots__ = ("path", "base_offset", "max_entries", "_entries", "_last_raw", "_mirror", "_persisted", "_lock")

    def __init__(self, path: str, base_offset: int, max_index_bytes: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_index_bytes // self.ENTRY.size)
        self._entries: int | None = None
        self._last_raw: RawEntry | None = None
        self._mirror: tuple[array[int], array[int]] | None = None
        self._persisted = 0
        self._lock = threading.Lock()

    # -- file and size --------------------------------------------------------------------

    def _file_size(self) -> int:
        try:
            return os.path.getsize(self.path)
        except FileNotFoundError:
            return 0

    @property
    def entries(self) -> int:
        mirror = self._mirror
        if mirror is not None:
            return len(mirror[1])  # appended second: both arrays hold that many
        if self._entries is None:
            self._entries = self._file_size() // self.ENTRY.size
        return self._entries

    @property
    def size_in_bytes(self) -> int:
        return self.entries * self.ENTRY.size

    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def has_partial_entry(self) -> bool:
        return self._file_size() % self.ENTRY.size != 0

    # -- reading the file -----------------------------------------------------------------

    def _open_for_reading(self) -> int | None:
        try:
            return os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None

    def _read_entries(self, fd: int, first: int, end: int) -> list[RawEntry]:
        """Entries [first, end) of the open file (fewer if the file is shorter)."""
        size = self.ENTRY.size
        data = os.pread(fd, (end - first) * size, first * size)
        return list(self.ENTRY.iter_unpack(data[: len(data) - len(data) % size]))

    # -- entries --------------------------------------------------------------------------

    def _raw(self, slot: int) -> RawEntry:
        mirror = self._mirror
        if mirror is not None:
            return mirror[0][slot], mirror[1][slot]
        fd = self._open_for_reading()
        found = []
        if fd is not None:
            try:
                found = self._read_entries(fd, slot, slot + 1)
            finally:
                os.close(fd)
        if not found:
            raise IndexError(f"no slot {slot} in {self.path}")
        return found[0]

    def _last(self) -> RawEntry | None:
        if self.entries == 0:
            return None
        if self._last_raw is None:
            self._last_raw = self._raw(self.entries - 1)
        return self._last_raw

    def _append_raw(self, raw: RawEntry) -> None:
        mirror = self._mirror
        if mirror is not None:
            mirror[0].append(raw[0])
            mirror[1].append(raw[1])
        else:  # an index without a mirror (rare): straight to the file
            with self._lock:
                self._write_at(self.ENTRY.pack(*raw), self.entries)
            self._entries = self.entries + 1
        self._last_raw = raw

    def _write_at(self, data: bytes, slot: int) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            write_all(fd, data, slot * self.ENTRY.size)
        except OSError as error:
            raise naming_file(error, self.path) from None
        finally:
            os.close(fd)

    def _slot_at_most(self, target: int, field: int) -> int:
        """The largest slot whose `field` is <= target, or -1."""
        if self._mirror is not None:
            return bisect_right(self._mirror[field], target) - 1
        lo, hi = 0, self.entries
        if hi == 0:
            return -1
        fd = self._open_for_reading()
        if fd is None:
            return -1
        try:
            block = max(2, SEARCH_BLOCK_BYTES // self.ENTRY.size)
            while hi - lo > block:  # invariant: lo == 0 or slot lo qualifies
                mid = (lo + hi) // 2
                probe = self._read_entries(fd, mid, mid + 1)
                if probe and probe[0][field] <= target:
                    lo = mid
                else:
                    hi = mid
            keys = [entry[field] for entry in self._read_entries(fd, lo, hi)]
        finally:
            os.close(fd)
        return lo + bisect_right(keys, target) - 1

    def _truncate_to_slots(self, slots: int) -> None:
        if slots >= self.entries:
            return
        with self._lock:
            mirror = self._mirror
            if mirror is not None:
                del mirror[0][slots:]
                del mirror[1][slots:]
                self._persisted = min(self._persisted, slots)
            else:
                self._entries = slots
            if self._file_size() > slots * self.ENTRY.size:
                os.truncate(self.path, slots * self.ENTRY.size)
            self._last_raw = None

    def reset(self) -> None:
        """Remove every entry; the index is then held in memory (as by `warm`) until `cool`."""
        with self._lock:
            self._mirror = self._empty_mirror()
            self._persisted = 0
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
            self._entries = 0
            self._last_raw = None

    # -- active segment mirror ------------------------------------------------------------

    def _empty_mirror(self) -> tuple[array[int], array[int]]:
        return array(self.TYPECODES[0]), array(self.TYPECODES[1])

    def _packed(self, first: int, end: int) -> bytes:
        """Mirror entries [first, end) in the file format."""
        assert self._mirror is not None
        keys, values = self._mirror
        pack = self.ENTRY.pack
        return b"".join(pack(keys[slot], values[slot]) for slot in range(first, end))

    def warm(self) -> None:
        """Keep all entries in memory (for the active segment)."""
        if self._mirror is not None:
            return
        mirror = self._empty_mirror()
        fd = self._open_for_reading()
        if fd is not None:
            try:
                for a, b in self._read_entries(fd, 0, self._file_size() // self.ENTRY.size):
                    mirror[0].append(a)
                    mirror[1].append(b)
            finally:
                os.close(fd)
        self._persisted = len(mirror[1])
        self._mirror = mirror

    def cool(self) -> None:
        """Write what the mirror holds beyond the file, then drop it (the segment is inactive).

        When the file cannot be opened now (no descriptor left) the mirror stays, and the next
        flush or close writes it: nothing is lost, and the roll that made the segment inactive
        does not fail for it. A failure of the directory itself (disk full, I/O error) is raised."""
        if self._mirror is None:
            return
        try:
            self.persist()
        except OSError as exc:
            if is_dir_failure(exc):
                raise  # the log directory failed: whoever rolled reports it
            log.warning("Keeping the entries of %s in memory until the next flush: %s", self.path, exc)
            return
        self._entries = self.entries
        self._mirror = None

    def persist(self) -> None:
        """Write the mirror's entries that the file does not hold yet (no fsync)."""
        with self._lock:
            mirror = self._mirror
            if mirror is None:
                return
            end = len(mirror[1])
            if end > self._persisted:
                self._write_at(self._packed(self._persisted, end), self._persisted)
                self._persisted = end

    # -- durability and files -------------------------------------------------------------

    def flush(self) -> None:
        """Write pending entries and fsync the file."""
        self.persist()
        fd = self._open_for_reading()
        if fd is None:
            return  # deleted meanwhile
        try:
            os.fsync(fd)
        except OSError as error:
            raise naming_file(error, self.path) from None
        finally:
            os.close(fd)

    def rename(self, new_path: str) -> None:
        with self._lock:
            if os.path.exists(self.path):
                os.replace(self.path, new_path)
            self.path = new_path

    def _relative(self, offset: int) -> int:
        return offset - self.base_offset


class OffsetIndex(_IndexFile):
    """offset -> file position, sparse."""

    ENTRY = struct.Struct(">ii")
    TYPECODES = ("i", "i")
    __slots__ = ()

    @property
    def last_offset(self) -> int:
        last = self._last()
        return self.base_offset if last is None else self.base_offset + last[0]

    def entry(self, slot: int) -> OffsetPosition:
        relative, position = self._raw(slot)
        return OffsetPosition(self.base_offset + relative, position)

    def append(self, offset: int, position: int) -> None:
        if self.is_full():
            raise IndexAppendError(f"offset index {self.path} is full")
        if self.entries and offset <= self.last_offset:
            raise IndexAppendError(f"offset {offset} is not above the last indexed offset {self.last_offset}")
        self._append_raw((self._relative(offset), position))

    def lookup(self, offset: int) -> OffsetPosition:
        """The last entry at or below `offset`; (base offset, 0) when there is none."""
        slot = self._slot_at_most(self._relative(offset), 0)
        if slot < 0:
            return OffsetPosition(self.base_offset, 0)
        return self.entry(slot)

    def truncate_to(self, offset: int) -> None:
        """Remove the entries for offsets >= `offset`."""
        self._truncate_to_slots(self._slot_at_most(self._relative(offset) - 1, 0) + 1)

    def first_entry_at_or_after_position(self, position: int) -> OffsetPosition | None:
        slot = self._slot_at_most(position - 1, 1) + 1
        return self.entry(slot) if slot < self.entries else None

    def can_append_offset(self, offset: int) -> bool:
        return 0 <= offset - self.base_offset <= 0x7FFFFFFF

    def is_sane(self, log_size: int) -> bool:
        """Whole entries, in range of the segment and its file."""
        if self.has_partial_entry():
            return False
        last = self._last()
        return last is None or (last[0] >= 0 and 0 <= last[1] <= log_size)


class TimeIndex(_IndexFile):
    """timestamp -> offset, sparse; entries only ever grow in timestamp."""

    ENTRY = struct.Struct(">qi")
    TYPECODES = ("q", "i")
    __slots__ = ()

    @property
    def last_entry(self) -> TimestampOffset:
        last = self._last()
        if last is None:
            return TimestampOffset(-1, self.base_offset)
        return TimestampOffset(last[0], self.base_offset + last[1])

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> None:
        """Add (timestamp, offset) if the timestamp is above the last entry's."""
        if not skip_full_check and self.is_full():
            raise IndexAppendError(f"time index {self.path} is full")
        last = self.last_entry
        if self.entries and offset < last.offset:
            raise IndexAppendError(f"offset {offset} is below the last time-indexed offset {last.offset}")
        if timestamp > last.timestamp:
            self._append_raw((timestamp, self._relative(offset)))

    def lookup(self, timestamp: int) -> TimestampOffset:
        """The last entry at or below `timestamp`; (-1, base offset) when there is none."""
        slot = self._slot_at_most(timestamp, 0)
        if slot < 0:
            return TimestampOffset(-1, self.base_offset)
        ts, relative = self._raw(slot)
        return TimestampOffset(ts, self.base_offset + relative)

    def truncate_to(self, offset: int) -> None:
        """Remove the entries for offsets >= `offset`."""
        self._truncate_to_slots(self._slot_at_most(self._relative(offset) - 1, 1) + 1)

    def is_sane(self) -> bool:
        if self.has_partial_entry():
            return False
        last = self._last()
        return last is None or last[1] >= 0
