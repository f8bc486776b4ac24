"""A segment's `.txnindex`: the aborted transactions whose ABORT marker is in the segment.

Kafka's format, 34 bytes an entry, big-endian: version int16 (0), producer_id int64,
first_offset int64, last_offset int64 (the marker), last_stable_offset int64. The file is
created with its first entry. READ_COMMITTED fetches collect the entries that overlap the
fetched range.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import NamedTuple

from .files import OpenFile, remove_if_exists

VERSION = 0
_ENTRY = struct.Struct(">hqqqq")


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    __slots__ = ("path", "base_offset", "on_open", "_file", "_last_offset")

    def __init__(self, path: str, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.on_open: Callable[[], None] | None = None  # told whenever the file is (re)opened
        self._file: OpenFile | None = None
        self._last_offset: int | None = None

    def _open(self, *, create: bool) -> OpenFile | None:
        """The file; None if it does not exist and `create` is false."""
        if self._file is None and not create and not os.path.exists(self.path):
            return None
        return self._writable()

    def _writable(self) -> OpenFile:
        """The file, opened (and created) if it is not open yet."""
        if self._file is None:
            self._file = OpenFile(self.path, writable=True, create=True)
            if self.on_open is not None:
                self.on_open()
        return self._file

    def release(self) -> None:
        self._file = None

    def entries(self) -> list[AbortedTxn]:
        file = self._open(create=False)
        if file is None:
            return []
        data = file.pread(file.size(), 0)
        usable = len(data) - len(data) % _ENTRY.size
        return [AbortedTxn(*entry[1:]) for entry in _ENTRY.iter_unpack(data[:usable])]

    def append(self, txn: AbortedTxn) -> None:
        if self._last_offset is None:
            existing = self.entries()
            self._last_offset = existing[-1].last_offset if existing else -1
        if txn.last_offset <= self._last_offset:
            raise ValueError(f"aborted transaction at {txn.last_offset} is not after {self._last_offset}")
        file = self._writable()
        file.write_at(_ENTRY.pack(VERSION, *txn), file.size())
        self._last_offset = txn.last_offset

    def collect(self, fetch_offset: int, upper_bound_offset: int) -> tuple[list[AbortedTxn], bool]:
        """Entries overlapping [fetch_offset, upper_bound_offset); True once none later can."""
        found = []
        for txn in self.entries():
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                found.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return found, True
        return found, False

    def truncate_to(self, offset: int) -> None:
        """Remove the entries of transactions ending at or after `offset`."""
        entries = self.entries()
        keep = sum(1 for txn in entries if txn.last_offset < offset)
        if keep < len(entries):
            self._writable().truncate(keep * _ENTRY.size)
        self._last_offset = None

    def reset(self) -> None:
        file = self._open(create=False)
        if file is not None:
            file.truncate(0)
        self._last_offset = -1

    def flush(self) -> None:
        file = self._open(create=False)
        if file is not None:
            file.fsync()

    def rename(self, new_path: str) -> None:
        if os.path.exists(self.path):
            os.replace(self.path, new_path)
        self.path = new_path

    def delete(self) -> None:
        self.release()
        remove_if_exists(self.path)
