"""Producer state snapshots: `<offset>.snapshot` files in the partition directory.

The name is Kafka's; the content is this project's own format, which keeps all 5 remembered
batches of each producer (Kafka's keeps only the last), so duplicates are still detected
after a restart. All integers big-endian:

    magic        4 bytes  b"PKPS"
    version      int16    1
    crc          uint32   CRC32C of everything after this field
    count        int32    number of producers
    per producer:
      producer_id               int64
      producer_epoch            int16
      coordinator_epoch         int32
      last_timestamp            int64
      current_txn_first_offset  int64   (-1: none)
      batch_count               int8    (0..5)
      per batch: last_seq int32, last_offset int64, offset_delta int32, timestamp int64

The snapshot at offset N holds the state built from every batch below N. A snapshot that is
cut short or fails its CRC is ignored (and deleted); state is then rebuilt from the log.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Callable, Iterator

from ..common.files import write_atomically
from ..records.batch import crc32c_of
from . import files
from .producer_state import BatchMetadata, ProducerStateEntry

MAGIC = b"PKPS"
VERSION = 1
_PREFIX = struct.Struct(">4shI")
_COUNT = struct.Struct(">i")
_PRODUCER = struct.Struct(">qhiqqb")
_BATCH = struct.Struct(">iqiq")


class CorruptSnapshotError(ValueError):
    """A snapshot file that cannot be trusted."""


def encode(entries: list[ProducerStateEntry]) -> bytes:
    body = bytearray(_COUNT.pack(len(entries)))
    for entry in entries:
        body += _PRODUCER.pack(
            entry.producer_id,
            entry.producer_epoch,
            entry.coordinator_epoch,
            entry.last_timestamp,
            entry.current_txn_first_offset,
            len(entry.batches),
        )
        for batch in entry.batches:
            body += _BATCH.pack(*batch)
    return _PREFIX.pack(MAGIC, VERSION, crc32c_of(body)) + bytes(body)


def decode(data: bytes) -> list[ProducerStateEntry]:
    if len(data) < _PREFIX.size + _COUNT.size:
        raise CorruptSnapshotError("snapshot is shorter than its header")
    magic, version, crc = _PREFIX.unpack_from(data)
    if magic != MAGIC or version != VERSION:
        raise CorruptSnapshotError(f"unknown snapshot format {magic!r} version {version}")
    body = memoryview(data)[_PREFIX.size :]
    if crc32c_of(body) != crc:
        raise CorruptSnapshotError("snapshot CRC mismatch")
    try:
        return _decode_entries(body)
    except struct.error as error:
        raise CorruptSnapshotError(f"snapshot is truncated: {error}") from None


def _decode_entries(body: memoryview) -> list[ProducerStateEntry]:
    (count,), pos = _COUNT.unpack_from(body), _COUNT.size
    entries = []
    for _ in range(count):
        pid, epoch, coordinator_epoch, last_ts, txn_first, batch_count = _PRODUCER.unpack_from(body, pos)
        pos += _PRODUCER.size
        entry = ProducerStateEntry(
            pid, epoch, coordinator_epoch=coordinator_epoch, last_timestamp=last_ts, current_txn_first_offset=txn_first
        )
        for _ in range(batch_count):
            entry.batches.append(BatchMetadata(*_BATCH.unpack_from(body, pos)))
            pos += _BATCH.size
        entries.append(entry)
    if pos != len(body):
        raise CorruptSnapshotError("bytes left over after the last producer")
    return entries


class SnapshotFiles:
    """The `.snapshot` files of one partition directory."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        # the snapshot offsets while the log loads (`listed_while`): no directory listing each time
        self._known: set[int] | None = None

    def path(self, offset: int) -> str:
        return os.path.join(self.directory, files.file_name(offset, files.SNAPSHOT_SUFFIX))

    def offsets(self) -> list[int]:
        if self._known is not None:
            return sorted(self._known)
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return _snapshot_offsets(names)

    @contextlib.contextmanager
    def listed_while(self, names: list[str]) -> Iterator[None]:
        """Within the block, the snapshots are those among the directory's `names` plus the
        ones written and minus the ones deleted here (the loader lists a directory once)."""
        self._known = set(_snapshot_offsets(names))
        try:
            yield
        finally:
            self._known = None

    def write(self, offset: int, entries: list[ProducerStateEntry], *, fsync: bool = False) -> None:
        write_atomically(self.path(offset), encode(entries), fsync=fsync)
        if self._known is not None:
            self._known.add(offset)

    def read(self, offset: int) -> list[ProducerStateEntry]:
        with open(self.path(offset), "rb") as file:
            return decode(file.read())

    def fsync(self, offset: int) -> None:
        files.fsync_file(self.path(offset))

    def delete(self, offset: int) -> None:
        files.remove_if_exists(self.path(offset))
        if self._known is not None:
            self._known.discard(offset)

    def delete_where(self, predicate: Callable[[int], bool]) -> None:
        for offset in self.offsets():
            if predicate(offset):
                self.delete(offset)

    def latest_readable(self, max_offset: int) -> tuple[int, list[ProducerStateEntry]] | None:
        """The newest snapshot at or below `max_offset` that reads back intact; bad ones are deleted."""
        for offset in reversed(self.offsets()):
            if offset > max_offset:
                continue
            try:
                return offset, self.read(offset)
            except (OSError, CorruptSnapshotError):
                self.delete(offset)
        return None


def _snapshot_offsets(names: list[str]) -> list[int]:
    return sorted(
        files.offset_from_file_name(name) for name in names if files.is_offset_file(name, files.SNAPSHOT_SUFFIX)
    )
