"""A segment's `.txnindex`: the aborted transactions whose ABORT marker is in the segment.

Kafka's format, 34 bytes an entry, big-endian: version int16 (0), producer_id int64,
first_offset int64, last_offset int64 (the marker), last_stable_offset int64. The file is
created with its first entry. READ_COMMITTED fetches collect the entries that overlap the
fetched range.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Callable
from typing import NamedTuple

from .files import fsync_file, remove_if_exists, write_all

log = logging.getLogger(__name__)

VERSION = 0
_ENTRY = struct.Struct(">hqqqq")


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    """The entries are read once and kept until the segment's files are released; the file is
    opened only for the moment of a read, an append or a flush (no descriptor stays open).

    An entry that cannot be written at once (no descriptor left, disk full) is kept in memory
    and written by the next append, flush or close: the append it belongs to has already
    reached the log, and a crash rebuilds the active segment's index anyway.
    """

    __slots__ = ("path", "base_offset", "on_open", "_entries", "_written")

    def __init__(self, path: str, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.on_open: Callable[[], None] | None = None  # told whenever the file is read again
        self._entries: list[AbortedTxn] | None = None
        self._written = 0  # how many of `_entries` the file holds

    def release(self) -> None:
        """Forget the entries read (they are read again on the next use), unless some are not
        written yet."""
        if self._entries is not None and self._written == len(self._entries):
            self._entries = None

    def entries(self) -> list[AbortedTxn]:
        cached = self._entries
        if cached is None:
            cached = self._entries = self._read()
            self._written = len(cached)
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
        self._entries = [*existing, txn]
        try:
            self._write_pending()
        except OSError as exc:
            log.warning("Keeping aborted transactions of %s in memory until the next flush: %s", self.path, exc)

    def _write_pending(self) -> None:
        entries = self._entries or []
        if self._written >= len(entries):
            return
        data = b"".join(_ENTRY.pack(VERSION, *txn) for txn in entries[self._written :])
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            write_all(fd, data, self._written * _ENTRY.size)
        finally:
            os.close(fd)
        self._written = len(entries)

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
        if keep < self._written:
            self._truncate_file(keep)
            self._written = keep
        self._entries = entries[:keep]

    def reset(self) -> None:
        if os.path.exists(self.path):
            self._truncate_file(0)
        self._entries = []
        self._written = 0

    def _truncate_file(self, entries: int) -> None:
        try:
            os.truncate(self.path, entries * _ENTRY.size)
        except FileNotFoundError:
            pass

    def flush(self) -> None:
        """Write the entries not written yet, and fsync the file."""
        self._write_pending()
        fsync_file(self.path)

    def persist(self) -> None:
        """Write the entries not written yet (no fsync)."""
        self._write_pending()

    def rename(self, new_path: str) -> None:
        if os.path.exists(self.path):
            os.replace(self.path, new_path)
        self.path = new_path

    def delete(self) -> None:
        self._entries = None
        self._written = 0
        remove_if_exists(self.path)
