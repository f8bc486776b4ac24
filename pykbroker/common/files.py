"""Durable file writes shared by the rooms that keep state in files: the log's checkpoints and
snapshots, `meta.properties` and the cluster's state file, the producer id block.

    write_atomically(path, b"42\n")                  # readers see the old or the new content
    write_atomically(path, "text", fsync=False)      # atomic, durable only at the OS's leisure

`write_atomically` writes `<path>.tmp`, fsyncs it, renames it over `path` and fsyncs the
directory (Kafka's `Utils.atomicMoveWithFallback`): readers never see a torn file, and after
a crash or a power loss the file holds either the old content or the new one.
"""

from __future__ import annotations

import os

TMP_SUFFIX = ".tmp"

Bytes = bytes | bytearray | memoryview


def write_atomically(
    path: str | os.PathLike[str], data: Bytes | str, *, fsync: bool = True, flush_parent_dir: bool = True
) -> None:
    """Replace `path` with `data` (str is written as UTF-8) through a temporary file and a rename.

    With `fsync` the new content and the rename are durable when this returns: the file is
    fsynced before the rename and its directory after it, unless `flush_parent_dir` is False
    (the caller fsyncs the directory itself, as Kafka's `needFlushParentDir`).
    """
    path = os.fspath(path)
    tmp = path + TMP_SUFFIX
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        try:
            write_all(fd, data.encode() if isinstance(data, str) else data, 0)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        if error.filename is None:
            error.filename = tmp  # a write on a descriptor names no file
        _remove_quietly(tmp)  # a half-written file only takes room
        raise
    os.replace(tmp, path)
    if fsync and flush_parent_dir:
        fsync_dir(os.path.dirname(path) or ".")


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_all(fd: int, data: Bytes, position: int) -> None:
    """pwrite all of `data` at `position` (a write may take only part of it)."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, position)
        view = view[written:]
        position += written


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make renames and file creations in directory `path` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError as error:
        error.filename = os.fspath(path)
        raise
    finally:
        os.close(fd)
