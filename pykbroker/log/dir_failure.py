"""Kafka's LogDirFailureChannel: where an I/O error on a log directory is reported, once.

    channel = LogDirFailureChannel()
    channel.add_listener(on_offline)                 # told once per failed directory
    try:
        segment.append(data)
    except OSError as error:
        channel.fail(log_dir, f"Error while appending records to {name} in dir {log_dir}", error)
        raise KafkaStorageError(...) from error

Whoever touches a log directory's files (a partition's log, the checkpoint writers, producer
snapshots, the cleaner, the fsyncs before acknowledging) reports an `OSError` here. The first
failure of a directory logs one ERROR line naming the directory, the file and the errno, marks
the directory offline and calls every listener with it (in the calling thread: a listener that
needs the event loop hands the work over). Later failures of the same directory are logged at
DEBUG only. Running out of descriptors (EMFILE, ENFILE) is no failure of the directory
(`is_dir_failure`): only the request that needed a file fails. The channel never brings a
directory back online: that takes a restart, as in Kafka.
"""

from __future__ import annotations

import errno as errno_names
import logging
import os
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

LogDirListener = Callable[[str], None]


class LogDirFailureChannel:
    """Kafka's LogDirFailureChannel: the one place an I/O error on a log directory is reported."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offline: set[str] = set()
        self._listeners: list[LogDirListener] = []

    def fail(self, log_dir: str, message: str, error: OSError) -> None:
        """Report `error` on `log_dir` (any thread). The directory's first failure logs one
        ERROR line, takes the directory offline and tells every listener; later ones are DEBUG."""
        log_dir = os.path.abspath(log_dir)
        with self._lock:
            first = log_dir not in self._offline
            self._offline.add(log_dir)
            listeners = list(self._listeners) if first else []
        if not first:
            log.debug("Log directory %s is offline already; %s: %s", log_dir, message, describe_os_error(error))
            return
        log.error(
            "Log directory %s failed and goes offline: %s: %s",
            log_dir,
            message,
            describe_os_error(error),
        )
        for listener in listeners:
            try:
                listener(log_dir)
            except Exception:
                log.exception("A listener of the failure of log directory %s failed", log_dir)

    def is_offline(self, log_dir: str) -> bool:
        with self._lock:
            return os.path.abspath(log_dir) in self._offline

    def offline_dirs(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._offline)

    def add_listener(self, listener: LogDirListener) -> None:
        """`listener(log_dir)` is called once for each directory that goes offline."""
        with self._lock:
            self._listeners.append(listener)


def describe_os_error(error: OSError) -> str:
    """The file, errno name and text of an OSError ("file /d/x.log: ENOSPC (No space left on device)")."""
    code = error.errno
    name = errno_names.errorcode.get(code, str(code)) if code is not None else "no errno"
    text = error.strerror or str(error)
    where = f"file {error.filename}: " if error.filename is not None else ""
    return f"{where}{name} ({text})"


# running out of descriptors is the process's limit, not the directory's fault: the request that
# needed a file fails (KAFKA_STORAGE_ERROR) and the directory keeps serving
_NOT_THE_DIRECTORY = frozenset({errno_names.EMFILE, errno_names.ENFILE})


def is_dir_failure(error: OSError) -> bool:
    """Whether `error` means the log directory itself failed (ENOSPC, EIO, EROFS, ...)."""
    return error.errno not in _NOT_THE_DIRECTORY
