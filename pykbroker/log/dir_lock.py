"""One broker per log directory: the `.lock` file Kafka keeps in each directory of `log.dirs`.

    locks = LogDirLocks.acquire(["/data/a", "/data/b"])   # before anything reads or writes them
    ...
    locks.release()                                        # when the broker has closed its logs

Each directory is created if missing, then its `.lock` file is locked for the broker's life with
both kinds of Linux lock: a POSIX record lock (the kind Kafka's `FileChannel.tryLock` takes, so a
Kafka broker and a pykbroker exclude each other) and a `flock` (which, unlike a POSIX lock, also
excludes a second broker inside the same process). The holder's process id is written into the
file, so the error a second broker gets can name it.
"""

from __future__ import annotations

import fcntl
import os

LOCK_FILE = ".lock"


class LogDirUnusable(OSError):
    """A log directory that cannot be created, opened or locked; names the directory."""

    def __init__(self, directory: str, reason: str) -> None:
        super().__init__(f"{directory}: {reason}")
        self.directory = directory
        self.reason = reason


class LogDirInUse(LogDirUnusable):
    """Another broker holds the directory's lock."""


class LogDirLocks:
    """The locks this broker holds on its log directories."""

    def __init__(self, fds: list[int]) -> None:
        self._fds = fds

    @classmethod
    def acquire(cls, log_dirs: list[str]) -> LogDirLocks:
        """Lock every directory or none: on a failure the locks already taken are released."""
        locks = cls([])
        try:
            for directory in log_dirs:
                locks._fds.append(_lock_dir(os.path.abspath(directory)))
        except BaseException:
            locks.release()
            raise
        return locks

    def release(self) -> None:
        for fd in self._fds:
            os.close(fd)  # closing the descriptor drops both locks
        self._fds = []


def _lock_dir(directory: str) -> int:
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise LogDirUnusable(directory, "it exists and is not a directory")
    try:
        os.makedirs(directory, exist_ok=True)
        fd = os.open(os.path.join(directory, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise LogDirUnusable(directory, error.strerror or str(error)) from error
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = _recorded_holder(fd)
        os.close(fd)
        raise LogDirInUse(
            directory, "another broker is using this directory" + (f" (process {holder})" if holder else "")
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _recorded_holder(fd: int) -> str | None:
    """The process id the holder wrote into the lock file, if it did (Kafka leaves it empty)."""
    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    return text if text.isdigit() else None
