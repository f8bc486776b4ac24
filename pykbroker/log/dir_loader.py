"""Loading the partitions of one log directory on its own worker threads, as Kafka's
LogManager.loadLogs does: `num.recovery.threads.per.data.dir` threads per directory, each
opening (and, after an unclean shutdown, recovering) one partition at a time.

    load = LogDirLoad(log_dir, pending, clean_shutdown=False, threads=1,
                      open_log=..., publish=...)
    load.start(first=lambda key: key[0].startswith("__"))   # these are queued first
    load.wait(lambda key: key[0].startswith("__"))          # block until those are in
    ...
    load.cancel_queued(); load.wait_running()               # at shutdown: queued ones never start

Each loaded log is handed to `publish` on the loading thread, as soon as it is open: the broker
serves a partition while the rest of the directory still loads. Progress is logged per
directory, never per partition: where it starts, every `progress_interval_s` how many logs of
how many are in, and one line at the end (with what recovery did after an unclean shutdown).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from .log import Log
    from .results import RecoveryStats

logger = logging.getLogger(__name__)

PROGRESS_INTERVAL_S = 10.0


@dataclass(frozen=True, eq=False)  # one partition directory to load, never compared
class PendingLog:
    """A partition directory found at start, with what the directory's checkpoints say of it."""

    key: TopicPartition
    path: str
    # checkpoint file name -> this partition's entry, for the checkpoints that have one
    checkpoints: dict[str, int] = field(default_factory=dict)
    # a future replica (`<tp>.<id>-future`, a move between log directories cut short)
    future: bool = False


class LogDirLoad:
    """The loading of one log directory's partitions (see the module docstring)."""

    def __init__(
        self,
        log_dir: str,
        pending: list[PendingLog],
        *,
        clean_shutdown: bool,
        threads: int,
        open_log: Callable[[PendingLog], Log],
        publish: Callable[[PendingLog, Log | None], None],
        progress_interval_s: float = PROGRESS_INTERVAL_S,
    ) -> None:
        self.log_dir = log_dir
        self.pending = pending
        self.clean_shutdown = clean_shutdown
        self.recovery: RecoveryStats | None = None  # summed over the logs recovered, if any
        self._open_log = open_log
        self._publish = publish
        self._threads = max(int(threads), 1)
        self._progress_interval_s = progress_interval_s
        self._executor: ThreadPoolExecutor | None = None
        self._futures: dict[TopicPartition, Future[None]] = {}
        self._lock = threading.Lock()
        self._loaded = 0
        self._started_at = 0.0
        self._reported_at = 0.0
        self._reported_count = 0
        self.finished = threading.Event()

    def start(self, first: Callable[[TopicPartition], bool] | None = None) -> None:
        """Queue every partition (those `first` picks ahead of the others) and return."""
        self._started_at = self._reported_at = time.monotonic()
        logger.info("Loading logs from log dir %s", self.log_dir)
        if self.clean_shutdown:
            logger.info(
                "Skipping recovery of %d logs from %s since clean shutdown file was found",
                len(self.pending),
                self.log_dir,
            )
        elif self.pending:
            logger.info("Attempting recovery for all logs in %s since no clean shutdown file was found", self.log_dir)
        if not self.pending:
            self._finish()
            return
        from ..records.batch import load_crc32c  # the records load with the first log

        load_crc32c()
        ordered = sorted(self.pending, key=lambda item: not first(item.key)) if first else self.pending
        self._executor = ThreadPoolExecutor(self._threads, thread_name_prefix=f"log-recovery-{self.log_dir}")
        for item in ordered:
            self._futures[item.key] = self._executor.submit(self._load_one, item)

    def wait(self, which: Callable[[TopicPartition], bool] | None = None) -> None:
        """Block until the partitions `which` picks (all when None) are loaded (or failed)."""
        wait([future for key, future in self._futures.items() if which is None or which(key)])

    def cancel_queued(self) -> None:
        """Start no more loads (broker shutdown); the running ones go on (`wait_running`)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    def wait_running(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    # -- worker threads -------------------------------------------------------------------

    def _load_one(self, item: PendingLog) -> None:
        log: Log | None = None
        try:
            log = self._open_log(item)
        except Exception:
            logger.exception("Error while loading log dir %s: %s-%d could not be opened", self.log_dir, *item.key)
        if log is not None and log.recovery is not None:
            self._add_recovery(log.recovery)
        self._publish(item, log)
        self._count_loaded()

    def _add_recovery(self, recovery: RecoveryStats) -> None:
        from .results import RecoveryStats  # loaded with the log

        with self._lock:
            if self.recovery is None:
                self.recovery = RecoveryStats()
            self.recovery.add(recovery)

    def _count_loaded(self) -> None:
        with self._lock:
            self._loaded += 1
            loaded, now = self._loaded, time.monotonic()
            report = now - self._reported_at >= self._progress_interval_s and loaded < len(self.pending)
            if report:
                interval, since = now - self._reported_at, self._reported_count
                self._reported_at, self._reported_count = now, loaded
        if report:
            logger.info(
                "In the last %.0f seconds, %d of %d logs were loaded in log dir %s (%d in all)",
                interval,
                loaded - since,
                len(self.pending),
                self.log_dir,
                loaded,
            )
        if loaded == len(self.pending):
            self._finish()

    def _finish(self) -> None:
        elapsed_ms = (time.monotonic() - self._started_at) * 1000
        recovery = self.recovery
        if recovery is not None and recovery.logs:
            logger.info(
                "Recovered %d logs in %s after an unclean shutdown: %d segments scanned, "
                "%d bytes truncated, %d segments dropped",
                recovery.logs,
                self.log_dir,
                recovery.segments_scanned,
                recovery.bytes_truncated,
                recovery.segments_dropped,
            )
        logger.info("Loaded %d logs in %.0fms in log dir %s", len(self.pending), elapsed_ms, self.log_dir)
        self.finished.set()
        if self._executor is not None:
            self._executor.shutdown(wait=False)  # its threads end once idle
