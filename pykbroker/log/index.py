"""A segment's sparse indexes, in Kafka's file formats (big-endian, fixed-size entries).

* `.index` (OffsetIndex): int32 offset relative to the segment's base, int32 file position.
  An entry (o, p) says the batch holding offset o starts at or after position p.
* `.timeindex` (TimeIndex): int64 timestamp, int32 relative offset. An entry (t, o) says
  no record at an offset up to o has a timestamp above t.

Files hold exactly their entries (no preallocation). Lookups read the file lazily with
`pread` (a binary search that finishes on one small block), so an inactive segment costs no
memory; the active segment keeps a mirror of its entries in two compact arrays (bounded by
`segment.index.bytes`) because tailing consumers look it up on every fetch.
"""

from __future__ import annotations

import os
import struct
from array import array
from bisect import bisect_right
from collections.abc import Callable
from typing import NamedTuple

from .files import OpenFile

SEARCH_BLOCK_BYTES = 4096


class IndexAppendError(ValueError):
    """An append that would break the index's ordering or overflow it."""


class OffsetPosition(NamedTuple):
    offset: int
    position: int


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int


class _IndexFile:
    """Fixed-size entries in an append-only file; field 0 of each entry is its search key."""

    ENTRY: struct.Struct
    TYPECODES: tuple[str, str]
    __slots__ = ("path", "base_offset", "max_entries", "on_open", "_file", "_entries", "_last_raw", "_mirror")

    def __init__(self, path: str, base_offset: int, max_index_bytes: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max(1, max_index_bytes // self.ENTRY.size)
        self.on_open: Callable[[], None] | None = None  # told whenever the file is (re)opened
        self._file: OpenFile | None = None
        self._entries: int | None = None
        self._last_raw: tuple | None = None
        self._mirror: tuple[array, array] | None = None

    # -- file and size --------------------------------------------------------------------

    def _open(self) -> OpenFile:
        file = self._file
        if file is None:
            file = self._file = OpenFile(self.path, writable=True, create=True)
            if self.on_open is not None:
                self.on_open()
        return file

    def release(self) -> None:
        """Drop the open file (it closes once nothing else holds it)."""
        self._file = None

    @property
    def entries(self) -> int:
        if self._entries is None:
            self._entries = self._open().size() // self.ENTRY.size
        return self._entries

    @property
    def size_in_bytes(self) -> int:
        return self.entries * self.ENTRY.size

    def is_full(self) -> bool:
        return self.entries >= self.max_entries

    def has_partial_entry(self) -> bool:
        return self._open().size() % self.ENTRY.size != 0

    # -- entries --------------------------------------------------------------------------

    def _raw(self, slot: int) -> tuple:
        if self._mirror is not None:
            return self._mirror[0][slot], self._mirror[1][slot]
        data = self._open().pread(self.ENTRY.size, slot * self.ENTRY.size)
        return self.ENTRY.unpack(data)

    def _last(self) -> tuple | None:
        if self.entries == 0:
            return None
        if self._last_raw is None:
            self._last_raw = self._raw(self.entries - 1)
        return self._last_raw

    def _append_raw(self, raw: tuple) -> None:
        entries = self.entries
        self._open().write_at(self.ENTRY.pack(*raw), entries * self.ENTRY.size)
        self._entries = entries + 1
        self._last_raw = raw
        if self._mirror is not None:
            self._mirror[0].append(raw[0])
            self._mirror[1].append(raw[1])

    def _slot_at_most(self, target: int, field: int) -> int:
        """The largest slot whose `field` is <= target, or -1."""
        if self._mirror is not None:
            return bisect_right(self._mirror[field], target) - 1
        lo, hi = 0, self.entries
        block = max(2, SEARCH_BLOCK_BYTES // self.ENTRY.size)
        while hi - lo > block:  # invariant: lo == 0 or slot lo qualifies
            mid = (lo + hi) // 2
            if self._raw(mid)[field] <= target:
                lo = mid
            else:
                hi = mid
        if hi == lo:
            return -1
        data = self._open().pread((hi - lo) * self.ENTRY.size, lo * self.ENTRY.size)
        keys = [entry[field] for entry in self.ENTRY.iter_unpack(data)]
        return lo + bisect_right(keys, target) - 1

    def _truncate_to_slots(self, slots: int) -> None:
        if slots >= self.entries:
            return
        self._open().truncate(slots * self.ENTRY.size)
        self._entries = slots
        self._last_raw = None
        if self._mirror is not None:
            del self._mirror[0][slots:]
            del self._mirror[1][slots:]

    def reset(self) -> None:
        """Remove every entry."""
        self._open().truncate(0)
        self._entries = 0
        self._last_raw = None
        if self._mirror is not None:
            self._mirror = (array(self.TYPECODES[0]), array(self.TYPECODES[1]))

    # -- active segment mirror ------------------------------------------------------------

    def warm(self) -> None:
        """Keep all entries in memory (for the active segment)."""
        if self._mirror is not None:
            return
        data = self._open().pread(self.entries * self.ENTRY.size, 0)
        first, second = array(self.TYPECODES[0]), array(self.TYPECODES[1])
        for a, b in self.ENTRY.iter_unpack(data):
            first.append(a)
            second.append(b)
        self._mirror = (first, second)

    def cool(self) -> None:
        """Drop the in-memory mirror (the segment is no longer active)."""
        self._mirror = None

    # -- durability and files -------------------------------------------------------------

    def flush(self) -> None:
        self._open().fsync()

    def rename(self, new_path: str) -> None:
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
