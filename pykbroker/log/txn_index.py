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

from .files import remove_if_exists, write_all

VERSION = 0
_ENTRY = struct.Struct(">hqqqq")


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    """The entries are read once and kept until the segment's files are released; the file is
    opened only for the moment of a read, an append or a flush (no descriptor stays open)."""

    __slots__ = ("path", "base_offset", "on_open", "_entries")

    def __init__(self, path: str, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.on_open: Callable[[], None] | None = None  # told whenever the file is read again
        self._entries: list[AbortedTxn] | None = None

    def release(self) -> None:
        """Forget the entries read (they are read again on the next use)."""
        self._entries = None

    def entries(self) -> list[AbortedTxn]:
        cached = self._entries
        if cached is None:
            cached = self._entries = self._read()
            if self.on_open is not None:
                self.on_open()
        return cached

    def _read(self) -> list[AbortedTxn]:
        try:
            with open(self.path, "rb") as file:
                data = file.read()
        except FileNotFoundError:
            return []
        usable = len(data) - len(data) % _ENTRY.size
        return [AbortedTxn(*entry[1:]) for entry in _ENTRY.iter_unpack(data[:usable])]

    def append(self, txn: AbortedTxn) -> None:
        existing = self.entries()
        last_offset = existing[-1].last_offset if existing else -1
        if txn.last_offset <= last_offset:
            raise ValueError(f"aborted transaction at {txn.last_offset} is not after {last_offset}")
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            write_all(fd, _ENTRY.pack(VERSION, *txn), len(existing) * _ENTRY.size)
        finally:
            os.close(fd)
        self._entries = [*existing, txn]

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
            self._truncate_file(keep)
        self._entries = entries[:keep]

    def reset(self) -> None:
        if os.path.exists(self.path):
            self._truncate_file(0)
        self._entries = []

    def _truncate_file(self, entries: int) -> None:
        try:
            os.truncate(self.path, entries * _ENTRY.size)
        except FileNotFoundError:
            pass

    def flush(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def rename(self, new_path: str) -> None:
        if os.path.exists(self.path):
            os.replace(self.path, new_path)
        self.path = new_path

    def delete(self) -> None:
        self.release()
        remove_if_exists(self.path)
