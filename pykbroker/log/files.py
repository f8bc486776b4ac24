"""Names of the files in a log directory (Kafka's layout) and the open-file objects behind them.

A partition lives in `<log.dir>/<topic>-<partition>`; each segment is `<20-digit base offset>`
plus `.log`, `.index`, `.timeindex` and `.txnindex`, and producer state snapshots are
`<offset>.snapshot`. Suffixes `.cleaned`, `.swap` and `.deleted` mark files of a compaction in
progress, of a compaction being committed, and of files waiting to be removed.
A replica being moved to another log directory (AlterReplicaLogDirs) is built in
`<topic>-<partition>.<32 hex>-future` there until it replaces the current one.
`<base>.swapend` goes with a compaction's `<base>.log.swap`: it holds the offset where the
offset range that the swap replaces ends (see `write_swap_end`).

`OpenFile` keeps a descriptor open for as long as any object holds it, so a file region
handed to the network layer (a `sendfile` in flight) stays readable after its segment is
closed, renamed or deleted. `HandleCache` bounds how many inactive segments keep their `.log`
open (the least recently read are closed; indexes keep no descriptor at all).
"""

from __future__ import annotations

import os
import re
import threading
import uuid
from collections import OrderedDict
from typing import Protocol

from ..common.files import TMP_SUFFIX as TMP_SUFFIX  # the log's layout names it too
from ..common.files import Bytes, fsync_dir, write_all, write_atomically

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
TXN_INDEX_SUFFIX = ".txnindex"
SNAPSHOT_SUFFIX = ".snapshot"
CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"
SWAP_END_SUFFIX = ".swapend"

DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

SEGMENT_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_DELETE_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.[0-9a-f]{32}-delete$")
_FUTURE_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.[0-9a-f]{32}-future$")


def file_name(offset: int, suffix: str) -> str:
    """`00000000000000000042.log` for offset 42 and suffix `.log`."""
    return f"{offset:020d}{suffix}"


def offset_from_file_name(name: str) -> int:
    return int(name.split(".", 1)[0])


def is_offset_file(name: str, suffix: str) -> bool:
    """Whether `name` is `<20 digits><suffix>` exactly."""
    return len(name) == 20 + len(suffix) and name.endswith(suffix) and name[:20].isdigit()


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a live partition directory; None for anything else."""
    if name.endswith((DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)):
        return None
    match = _PARTITION_DIR.match(name)
    if match is None:
        return None
    return match.group("topic"), int(match.group("partition"))


def delete_dir_name(topic: str, partition: int) -> str:
    """Where a deleted partition's directory is moved before it is removed (Kafka's naming)."""
    return f"{topic}-{partition}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"


def is_delete_dir(name: str) -> bool:
    return _DELETE_DIR.match(name) is not None


def future_dir_name(topic: str, partition: int) -> str:
    """Where a replica being moved to another log directory is built (Kafka's naming)."""
    return f"{topic}-{partition}.{uuid.uuid4().hex}{FUTURE_DIR_SUFFIX}"


def parse_future_dir(name: str) -> tuple[str, int] | None:
    """(topic, partition) of a future replica's directory (`<tp>.<32 hex>-future`); None otherwise."""
    match = _FUTURE_DIR.match(name)
    if match is None:
        return None
    return match.group("topic"), int(match.group("partition"))


def fsync_file(path: str) -> None:
    """Make the bytes written to file `path` durable; nothing when the file is gone."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def swap_end_path(directory: str, base_offset: int) -> str:
    return os.path.join(directory, file_name(base_offset, SWAP_END_SUFFIX))


def write_swap_end(directory: str, base_offset: int, end_offset: int) -> None:
    """Durably record that the swap of `base_offset` replaces the segments in [base, end).

    A cleaned segment may end well before the segments it replaces did (its last batches
    can all be gone), so its own next offset cannot tell which old segments it covers.
    """
    write_atomically(swap_end_path(directory, base_offset), b"%d\n" % end_offset, flush_parent_dir=False)
    fsync_dir(directory)  # the log's directory fsyncs all go through `files.fsync_dir`


def read_swap_end(path: str) -> int | None:
    """The end offset a `.swapend` file records; None when it is missing or unreadable."""
    try:
        with open(path, "rb") as file:
            return int(file.read().strip())
    except (OSError, ValueError):
        return None


def remove_if_exists(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def naming_file(error: OSError, path: str) -> OSError:
    """`error` with `path` as its file name when it has none (a write on a descriptor names no
    file): the log directory failure report names the file."""
    if error.filename is None:
        error.filename = path
    return error


class OpenFile:
    """One open file descriptor, closed when the last holder lets go of this object (or by close())."""

    __slots__ = ("fd", "path")

    def __init__(self, path: str, *, writable: bool = False, create: bool = False) -> None:
        flags = os.O_RDWR if writable else os.O_RDONLY
        if create:
            flags |= os.O_CREAT
        self.fd = os.open(path, flags, 0o644)
        self.path = path

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def pread(self, length: int, position: int) -> bytes:
        """Up to `length` bytes at `position` (fewer only at the end of the file)."""
        try:
            data = os.pread(self.fd, length, position)
            if len(data) == length or not data:
                return data
            parts = [data]
            got = len(data)
            while got < length:
                more = os.pread(self.fd, length - got, position + got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            return b"".join(parts)
        except OSError as error:
            raise naming_file(error, self.path) from None

    def write_at(self, data: Bytes, position: int) -> None:
        try:
            write_all(self.fd, data, position)
        except OSError as error:
            raise naming_file(error, self.path) from None

    def truncate(self, size: int) -> None:
        try:
            os.ftruncate(self.fd, size)
        except OSError as error:
            raise naming_file(error, self.path) from None

    def fsync(self) -> None:
        try:
            os.fsync(self.fd)
        except OSError as error:
            raise naming_file(error, self.path) from None

    def fdatasync(self) -> None:
        try:
            if hasattr(os, "fdatasync"):
                os.fdatasync(self.fd)
            else:  # pragma: no cover - macOS
                os.fsync(self.fd)
        except OSError as error:
            raise naming_file(error, self.path) from None

    def close(self) -> None:
        fd, self.fd = getattr(self, "fd", -1), -1  # no fd when opening it failed
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except OSError:
            pass


class FileOwner(Protocol):
    """What a HandleCache keeps: something that can drop its open files (a `Segment`)."""

    def release_files(self) -> None: ...


class HandleCache:
    """Keeps at most `capacity` inactive segments with open files; evicts the least recently used.

    Eviction only drops the segment's references (`release_files()`): anything still holding
    an `OpenFile` (a pending fetch region, a cleaner) keeps it open until it is done.
    """

    DEFAULT_CAPACITY = 256

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self.capacity = capacity
        self._owners: OrderedDict[int, FileOwner] = OrderedDict()
        self._lock = threading.Lock()

    def touch(self, owner: FileOwner) -> None:
        evicted = []
        with self._lock:
            key = id(owner)
            if key in self._owners:
                self._owners.move_to_end(key)
                return
            self._owners[key] = owner
            while len(self._owners) > self.capacity:
                _, oldest = self._owners.popitem(last=False)
                evicted.append(oldest)
        for oldest in evicted:
            oldest.release_files()

    def forget(self, owner: FileOwner) -> None:
        with self._lock:
            self._owners.pop(id(owner), None)

    def __len__(self) -> int:
        return len(self._owners)
