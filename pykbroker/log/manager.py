"""All partition logs of a broker across its log directories, and their checkpoints.

    manager = LogManager(["/data/a", "/data/b"], LogConfig())
    log = manager.get_or_create("orders", 0, {"cleanup.policy": "compact"})
    ...
    manager.run_retention(now_ms)      # from a worker thread, periodically
    manager.close()                    # flush, checkpoints, clean shutdown marker

Each log directory holds Kafka's checkpoint files (recovery points, log start offsets, high
watermarks, cleaner offsets) and, while the broker is stopped cleanly, `.kafka_cleanshutdown`.
The marker is removed once the logs are loaded, so only a broker that did not close cleanly
makes the next start recover its logs.

A directory whose files fail (`dir_failures`, Kafka's LogDirFailureChannel) goes offline: once
`handle_log_dir_failure` has run, its logs are let go without another write, no checkpoint or
marker is written there, its partitions are never created again in another directory (until a
restart), and new partitions go to the online directories only.

Moving a replica to another directory (AlterReplicaLogDirs, as Kafka's future logs): the copy
is built in `<dir>/<topic>-<partition>.<id>-future` (`create_future_log`, filled by the
replication layer), then `replace_current_with_future` renames it to `<topic>-<partition>` and
the old directory to `-delete`, which is removed later. At start, a future directory beside a
current log is loaded as a future log (the move resumes); one whose current log is gone was cut
short between the two renames and becomes the current log; two current directories of one
partition (cut short the same way) keep the one holding more bytes. A partition not yet here
remembers the directory asked for (`maybe_update_preferred_log_dir`) and is created there.
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..common.files import write_atomically
from ..common.time import now_ms as wall_clock_ms
from . import checkpoint, files
from .checkpoint import CorruptCheckpointError, TopicPartition
from .config import DEFAULT_MAX_MAP_ENTRIES, LONG_MAX, LogConfig, as_log_config
from .deleter import DelayedDeleter
from .dir_failure import LogDirFailureChannel
from .dir_loader import PROGRESS_INTERVAL_S, LogDirLoad, PendingLog
from .errors import KafkaStorageError, LogError
from .files import HandleCache

if TYPE_CHECKING:
    from .log import Log
    from .results import CleanerStats

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"

# checkpoints whose entries of partitions not loaded yet are kept when the file is rewritten
PRESERVED_CHECKPOINTS = (
    checkpoint.RECOVERY_POINT_CHECKPOINT,
    checkpoint.LOG_START_OFFSET_CHECKPOINT,
    checkpoint.REPLICATION_OFFSET_CHECKPOINT,
    checkpoint.CLEANER_OFFSET_CHECKPOINT,
)


class LogLoadingError(LogError):
    """The partition's log is on disk but still loading: it cannot be created or used yet."""


logger = logging.getLogger(__name__)

ConfigProvider = Callable[[str], "LogConfig | Mapping[str, Any] | None"]


class LogManager:
    """Owns every `Log` of this broker; maintenance runs on the caller's worker thread."""

    def __init__(
        self,
        log_dirs: Iterable[str],
        default_config: LogConfig | Mapping[str, Any] | None = None,
        *,
        fsync_before_ack: bool = False,
        topic_configs: ConfigProvider | None = None,
        time_ms: Callable[[], int] | None = None,
        producer_id_expiration_ms: int = 86400000,
        max_open_segments: int = HandleCache.DEFAULT_CAPACITY,
        cleaner_max_map_entries: int = DEFAULT_MAX_MAP_ENTRIES,
        recovery_threads_per_data_dir: int = 1,
        load_logs: bool = True,
        progress_interval_s: float = PROGRESS_INTERVAL_S,
    ) -> None:
        """With `load_logs` (the default) every log is loaded before this returns; without,
        `start_loading()` loads them in the background (the broker's start)."""
        self.log_dirs = [os.path.abspath(path) for path in log_dirs]
        if not self.log_dirs:
            raise ValueError("at least one log directory is needed")
        self.default_config = as_log_config(default_config)
        self.fsync_before_ack = fsync_before_ack
        self.cleaner_max_map_entries = cleaner_max_map_entries
        self._topic_configs = topic_configs
        self._time_ms = time_ms or wall_clock_ms
        self._producer_id_expiration_ms = producer_id_expiration_ms
        self._handles = HandleCache(max_open_segments)
        # every I/O error on a log directory is reported here; the broker listens (see broker.py)
        self.dir_failures = LogDirFailureChannel()
        self._deleter = DelayedDeleter(on_error=self._deletion_failed)
        self._live_dirs = list(self.log_dirs)  # less the failed ones, once handled
        self._offline_keys: set[TopicPartition] = set()  # partitions whose log is in a failed dir
        # finishes topic deletions (directory fsync, checkpoints) off the caller's thread, in order
        self._deletions = ThreadPoolExecutor(max_workers=1, thread_name_prefix="log-deletions")
        self._roll_flushes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="log-flush")
        self._logs: dict[TopicPartition, Log] = {}
        self._futures: dict[TopicPartition, Log] = {}  # replicas being moved to another directory
        self._preferred_dirs: dict[TopicPartition, str] = {}  # where a partition not here yet goes
        self._dir_of: dict[TopicPartition, str] = {}
        self._uncleanable: set[TopicPartition] = set()
        self._checkpointed_log_starts: dict[TopicPartition, int] = {}
        self._lock = threading.RLock()
        self._checkpoint_lock = threading.Lock()
        self.closed = False
        self.recovery_threads_per_data_dir = recovery_threads_per_data_dir
        self.progress_interval_s = progress_interval_s
        self._loads: list[LogDirLoad] = []
        self._loading: dict[TopicPartition, PendingLog] = {}  # on disk, not loaded yet
        self._loading_futures: dict[TopicPartition, PendingLog] = {}
        self._doomed: set[TopicPartition] = set()  # deleted while loading: removed once loaded
        self._loading_configs: dict[str, LogConfig] = {}
        self._on_loaded: Callable[[TopicPartition], None] | None = None
        self.loading_stopped = threading.Event()
        if load_logs:
            self.start_loading()
            self.wait_until_loaded()

    # -- loading --------------------------------------------------------------------------

    def start_loading(
        self,
        on_loaded: Callable[[TopicPartition], None] | None = None,
        *,
        first: Callable[[TopicPartition], bool] | None = None,
    ) -> None:
        """Find every partition directory and start loading them in the background, on
        `recovery_threads_per_data_dir` worker threads per log directory; return at once.

        Each directory's `.kafka_cleanshutdown` marker is read and removed first: logs are
        appended to as soon as they are loaded, so a crash from here on must recover them.
        `on_loaded(key)` is called on the loading thread once a partition's log is in `get()`
        (or could not be opened); `first` picks partitions to load ahead of the others.
        """
        self._on_loaded = on_loaded
        self._settle_interrupted_moves()
        loads = [self._prepare_dir(log_dir) for log_dir in self.log_dirs]
        self._loads.extend(loads)
        for load in loads:
            load.start(first)

    def wait_until_loaded(self, which: Callable[[TopicPartition], bool] | None = None) -> None:
        """Block until the partitions `which` picks (every one when None) are loaded."""
        for load in self._loads:
            load.wait(which)

    def is_loading(self, topic: str, partition: int) -> bool:
        """Whether the partition's log is on disk but not loaded yet."""
        return (topic, partition) in self._loading

    def loading_partitions(self, topic: str) -> list[int]:
        """The partitions of `topic` on disk and not loaded yet."""
        with self._lock:
            return sorted(partition for name, partition in self._loading if name == topic)

    @property
    def loading_finished(self) -> bool:
        return all(load.finished.is_set() for load in self._loads)

    def _prepare_dir(self, log_dir: str) -> LogDirLoad:
        """Read a directory's marker and checkpoints and list its partitions (no log opened)."""
        os.makedirs(log_dir, exist_ok=True)
        marker = os.path.join(log_dir, CLEAN_SHUTDOWN_FILE)
        clean = os.path.exists(marker)
        checkpoints = {name: self._read_checkpoint(log_dir, name) for name in PRESERVED_CHECKPOINTS}
        pending = []
        with os.scandir(log_dir) as entries:
            names = sorted((entry.name, entry.is_dir()) for entry in entries)
        for name, is_dir in names:
            path = os.path.join(log_dir, name)
            if files.is_delete_dir(name):
                self._deleter.schedule(0, functools.partial(_remove_tree, path))
                continue
            future_key = files.parse_future_dir(name)
            if future_key is not None and is_dir:
                found = {name: offsets[future_key] for name, offsets in checkpoints.items() if future_key in offsets}
                future = PendingLog(future_key, path, found, future=True)
                pending.append(future)
                self._loading_futures[future_key] = future
                continue
            parsed = files.parse_partition_dir(name)
            if parsed is None or not is_dir:
                continue
            if parsed in self._logs or parsed in self._loading:
                raise RuntimeError(f"duplicate log directories for {parsed}: {self._dir_of[parsed]} and {log_dir}")
            found = {name: offsets[parsed] for name, offsets in checkpoints.items() if parsed in offsets}
            item = PendingLog(parsed, path, found)
            pending.append(item)
            self._loading[parsed] = item
            self._dir_of[parsed] = log_dir
        if clean:
            files.remove_if_exists(marker)
            files.fsync_dir(log_dir)
        return LogDirLoad(
            log_dir,
            pending,
            clean_shutdown=clean,
            threads=self.recovery_threads_per_data_dir,
            open_log=functools.partial(self._load_log, clean_shutdown=clean),
            publish=self._publish_loaded,
            progress_interval_s=self.progress_interval_s,
        )

    def _settle_interrupted_moves(self) -> None:
        """Before loading: finish what a move between directories left half done when the
        broker stopped between its two renames (see the module docstring)."""
        current: dict[TopicPartition, list[str]] = {}
        futures: dict[TopicPartition, list[str]] = {}
        for log_dir in self.log_dirs:
            if not os.path.isdir(log_dir):
                continue
            with os.scandir(log_dir) as entries:
                for entry in entries:
                    if not entry.is_dir():
                        continue
                    if (key := files.parse_partition_dir(entry.name)) is not None:
                        current.setdefault(key, []).append(entry.path)
                    elif (key := files.parse_future_dir(entry.name)) is not None:
                        futures.setdefault(key, []).append(entry.path)
        for key, paths in current.items():
            if len(paths) > 1:
                kept = max(paths, key=_bytes_of_segments)
                logger.warning(
                    "Two directories hold the log of %s-%d (a move between log directories was cut short): keeping %s",
                    *key,
                    kept,
                )
                for path in paths:
                    if path != kept:
                        self._set_aside(path, key)
        for key, paths in futures.items():
            if key not in current:
                promoted = max(paths, key=_bytes_of_segments)
                target = os.path.join(os.path.dirname(promoted), files.partition_dir_name(*key))
                logger.warning(
                    "The move of %s-%d to %s was cut short after the copy was complete: it is the current log now",
                    *key,
                    os.path.dirname(promoted),
                )
                os.replace(promoted, target)
                files.fsync_dir(os.path.dirname(target))
                paths = [path for path in paths if path != promoted]
            else:
                paths = paths[1:]  # one future log per partition is resumed
            for path in paths:
                self._set_aside(path, key)

    @staticmethod
    def _set_aside(path: str, key: TopicPartition) -> None:
        """Rename a partition directory that is not used to `-delete` (removed while loading)."""
        doomed = os.path.join(os.path.dirname(path), files.delete_dir_name(*key))
        os.replace(path, doomed)
        files.fsync_dir(os.path.dirname(path))

    def _load_log(self, item: PendingLog, *, clean_shutdown: bool) -> Log:
        """Open one partition found at start (a worker thread)."""
        offsets = item.checkpoints
        log = self._open_log(
            item.path,
            self._config_for(item.key[0]),
            clean_shutdown=clean_shutdown,
            recovery_point=offsets.get(checkpoint.RECOVERY_POINT_CHECKPOINT, 0),
            log_start_offset=offsets.get(checkpoint.LOG_START_OFFSET_CHECKPOINT, 0),
            high_watermark=offsets.get(checkpoint.REPLICATION_OFFSET_CHECKPOINT),
        )
        log.cleaner_checkpoint = offsets.get(checkpoint.CLEANER_OFFSET_CHECKPOINT)
        return log

    def _publish_loaded(self, item: PendingLog, log: Log | None) -> None:
        """A partition's load is over (a worker thread): its log joins the others, or goes at
        once if its topic was deleted meanwhile; then whoever waits for it is told."""
        key = item.key
        if item.future:
            self._publish_loaded_future(item, log)
            return
        with self._lock:
            self._loading.pop(key, None)
            doomed = key in self._doomed
            self._doomed.discard(key)
            if log is not None and key in self._offline_keys:  # its directory failed meanwhile
                log.close_handlers()
                log = None
            if log is None:
                self._dir_of.pop(key, None)
            else:
                self._logs[key] = log
            if doomed and log is not None:
                self.delete(*key)
        if self._on_loaded is not None:
            self._on_loaded(key)

    def _publish_loaded_future(self, item: PendingLog, log: Log | None) -> None:
        """A future log found at start is loaded: its move resumes once its partition is served."""
        with self._lock:
            self._loading_futures.pop(item.key, None)
            if log is not None and self.dir_failures.is_offline(log.parent_dir):
                log.close_handlers()
                log = None
            if log is not None:
                self._futures[item.key] = log
                logger.info("Loaded the future log of %s-%d in %s: its move resumes", *item.key, log.parent_dir)
        if self._on_loaded is not None:
            self._on_loaded(item.key)

    def stop_loading(self) -> None:
        """Start no more loads and wait for the running ones (shutting down); `loading_stopped`
        is set once no queued load can start any more."""
        for load in self._loads:
            load.cancel_queued()
        self.loading_stopped.set()
        for load in self._loads:
            load.wait_running()

    @staticmethod
    def _read_checkpoint(log_dir: str, name: str) -> dict[TopicPartition, int]:
        path = os.path.join(log_dir, name)
        try:
            return checkpoint.read_offsets(path)
        except CorruptCheckpointError as error:
            logger.warning("ignoring corrupt checkpoint %s: %s", path, error)
            return {}

    def _open_log(self, path: str, config: LogConfig, **kwargs: Any) -> Log:
        from .log import Log  # the log implementation loads with the first log

        log = Log.open(
            path,
            config,
            fsync_before_ack=self.fsync_before_ack,
            handles=self._handles,
            deleter=self._deleter,
            time_ms=self._time_ms,
            producer_id_expiration_ms=self._producer_id_expiration_ms,
            dir_failures=self.dir_failures,
            **kwargs,
        )
        log.roll_listener = self._flush_after_roll
        return log

    def _flush_after_roll(self, log: Log) -> None:
        """A segment of `log` was rolled (on the appending thread): flush it on a worker thread,
        so that the recovery point, checkpointed every `log.flush.offset.checkpoint.interval.ms`,
        keeps up and a restart after a crash recovers only the segments after it."""
        try:
            self._roll_flushes.submit(self._flush_rolled, log)
        except RuntimeError:  # closing: close() flushes everything
            pass

    @staticmethod
    def _flush_rolled(log: Log) -> None:
        try:
            log.flush_if_due()
        except KafkaStorageError:
            pass  # reported to the log directory failure channel
        except Exception:
            logger.exception("flushing the rolled segments of %r failed", log)

    def _config_for(self, topic: str) -> LogConfig:
        """The topic's log config (one lookup per topic while loading, not one per partition)."""
        if not self.loading_finished:
            cached = self._loading_configs.get(topic)
            if cached is None:
                cached = self._loading_configs[topic] = self._topic_config(topic)
            return cached
        self._loading_configs.clear()
        return self._topic_config(topic)

    def _topic_config(self, topic: str) -> LogConfig:
        provided = self._topic_configs(topic) if self._topic_configs is not None else None
        return as_log_config(provided, self.default_config)

    # -- access ---------------------------------------------------------------------------

    def get(self, topic: str, partition: int) -> Log | None:
        return self._logs.get((topic, partition))

    def get_or_create(self, topic: str, partition: int, config: LogConfig | Mapping[str, Any] | None = None) -> Log:
        """The partition's log, created in the least loaded log directory if it does not exist.

        A given `config` (Kafka-named overrides of the default, or a LogConfig) is applied
        to an existing log too.
        """
        with self._lock:
            key = (topic, partition)
            log = self._logs.get(key)
            if key in self._offline_keys:
                raise KafkaStorageError(
                    f"The log of {topic}-{partition} is in an offline log directory",
                    OSError(errno.EIO, "log directory offline"),
                )
            if log is None and key in self._loading:
                raise LogLoadingError(f"the log of {topic}-{partition} is still loading")
            if log is not None:
                if config is not None:
                    log.update_config(as_log_config(config, self.default_config))
                return log
            log_dir = self._preferred_dir(key) or self._least_loaded_dir(topic, partition)
            resolved = as_log_config(config, self.default_config) if config is not None else self._config_for(topic)
            path = os.path.join(log_dir, files.partition_dir_name(topic, partition))
            log = self._open_log(path, resolved, clean_shutdown=True)
            self._logs[key] = log
            self._dir_of[key] = log_dir
            return log

    def _preferred_dir(self, key: TopicPartition) -> str | None:
        """The directory AlterReplicaLogDirs asked for a partition created now, if online."""
        preferred = self._preferred_dirs.pop(key, None)
        return preferred if preferred is not None and preferred in self.online_dirs() else None

    # -- moving a replica between log directories ---------------------------------------

    def maybe_update_preferred_log_dir(self, topic: str, partition: int, log_dir: str) -> None:
        """Remember `log_dir` for the partition's log, unless its log or future log is there
        already (Kafka's maybeUpdatePreferredLogDir)."""
        key = (topic, partition)
        with self._lock:
            if self._dir_of.get(key) == log_dir and key in self._logs:
                return
            future = self._futures.get(key)
            if future is not None and future.parent_dir == log_dir:
                return
            self._preferred_dirs[key] = log_dir

    def get_future(self, topic: str, partition: int) -> Log | None:
        return self._futures.get((topic, partition))

    def futures(self) -> dict[TopicPartition, Log]:
        with self._lock:
            return dict(self._futures)

    def create_future_log(self, topic: str, partition: int, log_dir: str) -> Log:
        """An empty future log of the partition in `log_dir`, with the current log's config."""
        key = (topic, partition)
        with self._lock:
            current = self._logs.get(key)
            if current is None:
                raise LogError(f"no current log of {topic}-{partition} to move")
            if key in self._futures:
                raise LogError(f"a future log of {topic}-{partition} exists already")
            if log_dir not in self.online_dirs():
                raise KafkaStorageError(f"Log directory {log_dir} is offline", OSError(errno.EIO, "offline"))
            self._preferred_dirs.pop(key, None)
            path = os.path.join(log_dir, files.future_dir_name(topic, partition))
            future = self._open_log(path, current.config, clean_shutdown=True)
            self._futures[key] = future
            logger.info("Created the future log of %s-%d in %s", topic, partition, log_dir)
            return future

    def remove_future_log(self, topic: str, partition: int, *, delete: bool = True) -> None:
        """Drop the partition's future log (the move is cancelled or failed); its directory is
        deleted as a deleted partition's is, unless `delete` is false (its directory failed)."""
        key = (topic, partition)
        with self._lock:
            future = self._futures.pop(key, None)
        if future is None:
            return
        if not delete or self.dir_failures.is_offline(future.parent_dir):
            future.close_handlers()
            return
        future.mark_deleted()
        log_dir = future.parent_dir
        doomed = os.path.join(log_dir, files.delete_dir_name(topic, partition))
        try:
            os.replace(future.directory, doomed)
        except OSError as error:
            self.dir_failures.fail(log_dir, f"Error while deleting the future log of {topic}-{partition}", error)
            return
        self._finish_delete_soon(log_dir, key, doomed, self._time_ms() + future.config.file_delete_delay_ms)

    def replace_current_with_future(self, topic: str, partition: int) -> Log:
        """Swap the finished future log in (on the event loop, with nothing appended since the
        caller saw both logs end at the same offset): the future directory takes the
        partition's name, the old one becomes `-delete`; returns the new current log.
        Kafka's LogManager.replaceCurrentWithFutureLog."""
        key = (topic, partition)
        with self._lock:
            current, future = self._logs[key], self._futures.pop(key)
            source_dir, target_dir = current.parent_dir, future.parent_dir
            recovery_point, log_start = future.recovery_point, future.log_start_offset
            epochs = current.epoch_cache.entries()
            future.close()
            target = os.path.join(target_dir, files.partition_dir_name(topic, partition))
            try:
                os.replace(future.directory, target)
            except OSError as error:
                self.dir_failures.fail(target_dir, f"Error while renaming the future log of {topic}-{partition}", error)
                raise KafkaStorageError(f"Error while renaming the future log of {topic}-{partition}", error) from error
            replacement = self._open_log(
                target,
                current.config,
                clean_shutdown=True,
                recovery_point=recovery_point,
                log_start_offset=log_start,
                high_watermark=current.high_watermark,
            )
            for epoch, start in epochs:  # epochs begun with no batch yet (a new leader's)
                if start >= replacement.log_start_offset:
                    replacement.maybe_assign_epoch_start_offset(epoch, start)
            replacement.cleaner_checkpoint = current.cleaner_checkpoint
            self._logs[key] = replacement
            self._dir_of[key] = target_dir
            current.mark_deleted()
            doomed = os.path.join(source_dir, files.delete_dir_name(topic, partition))
            try:
                os.replace(current.directory, doomed)
            except OSError as error:  # the replacement serves; the old directory's disk failed
                self.dir_failures.fail(source_dir, f"Error while deleting the log of {topic}-{partition}", error)
                return replacement
        logger.info("The current replica is successfully replaced with the future replica for %s-%d", topic, partition)
        try:
            self._deletions.submit(files.fsync_dir, target_dir)
        except RuntimeError:
            pass
        self._finish_delete_soon(source_dir, key, doomed, self._time_ms() + current.config.file_delete_delay_ms)
        return replacement

    def _finish_delete_soon(self, log_dir: str, key: TopicPartition, doomed: str, due: int) -> None:
        try:
            self._deletions.submit(self._finish_delete, log_dir, key, doomed, due)
        except RuntimeError:  # closing: the worker is gone
            self._finish_delete(log_dir, key, doomed, due)

    def _least_loaded_dir(self, topic: str, partition: int) -> str:
        """The online log directory holding the fewest partitions (never an offline one)."""
        online = self.online_dirs()
        if not online:
            raise KafkaStorageError(
                f"Can not create log for {topic}-{partition} because log directories "
                f"{','.join(self.log_dirs)} are offline",
                OSError(errno.EIO, "every log directory is offline"),
            )
        counts = {log_dir: 0 for log_dir in online}
        for log_dir in self._dir_of.values():
            if log_dir in counts:
                counts[log_dir] += 1
        return min(online, key=lambda log_dir: counts[log_dir])

    # -- offline log directories ----------------------------------------------------------

    def _deletion_failed(self, error: OSError) -> None:
        """A delayed file deletion failed: its log directory goes offline."""
        path = os.path.abspath(str(error.filename)) if error.filename is not None else ""
        log_dir = next((d for d in self.log_dirs if path.startswith(d + os.sep)), None)
        if log_dir is None:
            logger.warning("Deleting a file failed: %s", error)
            return
        self.dir_failures.fail(log_dir, "Error while deleting log files", error)

    def online_dirs(self) -> list[str]:
        """The log directories that have not failed (Kafka's liveLogDirs): neither reported to
        the failure channel nor handled already."""
        offline = self.dir_failures.offline_dirs()
        return [log_dir for log_dir in self._live_dirs if log_dir not in offline]

    def is_in_offline_dir(self, topic: str, partition: int) -> bool:
        """Whether the partition's log is in a failed directory (loaded or not)."""
        return (topic, partition) in self._offline_keys

    def is_log_dir_online(self, log_dir: str) -> bool:
        """Whether the directory's failure, if any, has not been handled yet (Kafka's isLogDirOnline)."""
        return os.path.abspath(log_dir) in self._live_dirs

    def handle_log_dir_failure(self, log_dir: str) -> list[TopicPartition]:
        """Stop using a failed directory (Kafka's LogManager.handleLogDirFailure): its logs
        leave the manager and are closed without flushing or writing anything, its pending
        loads are dropped and no checkpoint of it is written any more. Returns the partitions
        whose logs were there."""
        log_dir = os.path.abspath(log_dir)
        with self._lock:
            if log_dir not in self._live_dirs:
                return []
            self._live_dirs.remove(log_dir)
            offline = sorted(key for key, where in self._dir_of.items() if where == log_dir)
            logs = [self._logs.pop(key) for key in offline if key in self._logs]
            logs += [self._futures.pop(key) for key, f in list(self._futures.items()) if f.parent_dir == log_dir]
            logs += [self._futures.pop(key) for key in offline if key in self._futures]
            self._offline_keys.update(offline)  # a log still loading there is dropped once loaded
            for key in offline:
                self._uncleanable.discard(key)
                self._checkpointed_log_starts.pop(key, None)
        for log in logs:
            log.close_handlers()
        if offline:
            logger.warning(
                "Logs for partitions %s are offline due to failure on log directory %s",
                ",".join(f"{topic}-{partition}" for topic, partition in offline),
                log_dir,
            )
        return offline

    def all_logs(self) -> list[Log]:
        with self._lock:
            return list(self._logs.values())

    def log_dir_of(self, topic: str, partition: int) -> str | None:
        return self._dir_of.get((topic, partition))

    def update_topic_config(self, topic: str, config: LogConfig | Mapping[str, Any]) -> None:
        """AlterConfigs: apply `config` to every partition of `topic` this broker holds."""
        for (log_topic, _), log in list(self._logs.items()):
            if log_topic == topic:
                log.update_config(as_log_config(config, self.default_config))

    def delete(self, topic: str, partition: int) -> bool:
        """Remove the partition: its directory becomes `<tp>.<uuid>-delete`, removed later.

        Called on the event loop: the log leaves the manager and its directory is renamed at
        once (a partition of the same name can be created right away); the directory fsync
        that makes the rename durable, the scheduling of the removal and the rewrite of the
        directory's checkpoints run on a worker thread, in order (`wait_for_deletions`)."""
        with self._lock:
            key = (topic, partition)
            if key in self._loading:
                self._doomed.add(key)  # deleted when its load is over (`_publish_loaded`)
                return True
            log = self._logs.pop(key, None)
            log_dir = self._dir_of.pop(key, None)
            self._uncleanable.discard(key)
            self._preferred_dirs.pop(key, None)
            if key in self._futures:
                self.remove_future_log(topic, partition)
            if log is None:
                return False
            if log_dir is None:
                raise RuntimeError(f"no log directory recorded for {topic}-{partition}")
            log.mark_deleted()
            doomed = os.path.join(log_dir, files.delete_dir_name(topic, partition))
            try:
                os.replace(log.directory, doomed)
            except OSError as error:  # the log is let go; its directory stays in the failed dir
                self.dir_failures.fail(log_dir, f"Error while deleting the log of {topic}-{partition}", error)
                return True
            due = self._time_ms() + log.config.file_delete_delay_ms
            try:
                self._deletions.submit(self._finish_delete, log_dir, key, doomed, due)
                return True
            except RuntimeError:  # closing: the worker is gone
                pass
        self._finish_delete(log_dir, key, doomed, due)
        return True

    def _finish_delete(self, log_dir: str, key: TopicPartition, doomed: str, due: int) -> None:
        """The disk work of `delete` (worker thread)."""
        try:
            self._deleter.schedule(due, lambda: _remove_tree(doomed))  # even if the fsync fails
            files.fsync_dir(log_dir)
            self._write_dir_checkpoints(log_dir, forget=key)
        except OSError as error:
            self.dir_failures.fail(log_dir, f"Error while deleting the log of {key[0]}-{key[1]}", error)
        except Exception:
            logger.exception("Finishing the deletion of %s-%d failed", *key)

    def wait_for_deletions(self) -> None:
        """Block until every deletion handed to the worker so far is finished (not on the loop)."""
        self._deletions.submit(lambda: None).result()

    # -- checkpoints ----------------------------------------------------------------------

    def _logs_in(self, log_dir: str) -> dict[TopicPartition, Log]:
        """The logs of a directory, future ones too (a partition has at most one per directory)."""
        with self._lock:
            logs = {key: log for key, log in self._logs.items() if self._dir_of.get(key) == log_dir}
            logs.update((key, log) for key, log in self._futures.items() if log.parent_dir == log_dir)
            return logs

    def checkpoint_recovery_points(self) -> None:
        for log_dir in self.online_dirs():
            offsets = {key: log.recovery_point for key, log in self._logs_in(log_dir).items()}
            self._write_checkpoint(log_dir, checkpoint.RECOVERY_POINT_CHECKPOINT, offsets)

    def checkpoint_log_start_offsets(self) -> None:
        for log_dir in self.online_dirs():
            offsets = {
                key: log.log_start_offset
                for key, log in self._logs_in(log_dir).items()
                if log.log_start_offset > log.segments.first.base_offset
            }
            self._write_checkpoint(log_dir, checkpoint.LOG_START_OFFSET_CHECKPOINT, offsets)

    def checkpoint_cleaner_offsets(self) -> None:
        for log_dir in self.online_dirs():
            offsets = {
                key: log.cleaner_checkpoint
                for key, log in self._logs_in(log_dir).items()
                if log.cleaner_checkpoint is not None
            }
            self._write_checkpoint(log_dir, checkpoint.CLEANER_OFFSET_CHECKPOINT, offsets)

    def checkpoint_high_watermarks(self, high_watermarks: Mapping[TopicPartition, int] | None = None) -> None:
        """Write `replication-offset-checkpoint` in each directory.

        `high_watermarks` ({(topic, partition): hw}) are first set on the logs; logs not
        mentioned are written with their current high watermark.
        """
        for key, value in (high_watermarks or {}).items():
            log = self._logs.get(key)
            if log is not None:
                log.high_watermark = value
        for log_dir in self.online_dirs():
            offsets = {key: log.high_watermark for key, log in self._logs_in(log_dir).items()}
            self._write_checkpoint(log_dir, checkpoint.REPLICATION_OFFSET_CHECKPOINT, offsets)

    def read_high_watermarks(self) -> dict[TopicPartition, int]:
        result: dict[TopicPartition, int] = {}
        for log_dir in self.log_dirs:
            result.update(self._read_checkpoint(log_dir, checkpoint.REPLICATION_OFFSET_CHECKPOINT))
        return result

    def _write_dir_checkpoints(self, log_dir: str, forget: TopicPartition) -> None:
        """Rewrite a directory's checkpoints without a partition that was deleted."""
        logs = self._logs_in(log_dir)
        for name, value in (
            (checkpoint.RECOVERY_POINT_CHECKPOINT, lambda log: log.recovery_point),
            (checkpoint.LOG_START_OFFSET_CHECKPOINT, lambda log: log.log_start_offset),
        ):
            self._write_checkpoint(log_dir, name, {key: value(log) for key, log in logs.items()})
        for name in (checkpoint.REPLICATION_OFFSET_CHECKPOINT, checkpoint.CLEANER_OFFSET_CHECKPOINT):
            with self._checkpoint_lock:
                existing = self._read_checkpoint(log_dir, name)
                if existing.pop(forget, None) is not None:
                    self._write_checkpoint_file(log_dir, name, existing)

    def _write_checkpoint(self, log_dir: str, name: str, offsets: Mapping[TopicPartition, int]) -> None:
        offsets = {**self._unloaded_entries(log_dir, name), **offsets}
        with self._checkpoint_lock:
            self._write_checkpoint_file(log_dir, name, offsets)

    def _write_checkpoint_file(self, log_dir: str, name: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Write one checkpoint file (lock held); a failure takes the directory offline, as
        Kafka's CheckpointFileWithFailureHandler, and the file keeps its last content."""
        if self.dir_failures.is_offline(log_dir):
            return
        path = os.path.join(log_dir, name)
        try:
            checkpoint.write_offsets(path, offsets)
        except OSError as error:
            self.dir_failures.fail(log_dir, f"Error while writing to checkpoint file {path}", error)

    def _unloaded_entries(self, log_dir: str, name: str) -> dict[TopicPartition, int]:
        """What checkpoint `name` said at start of the directory's partitions still loading:
        rewriting a checkpoint must not make a crash forget them."""
        with self._lock:
            pending = [item for key, item in self._loading.items() if self._dir_of.get(key) == log_dir]
            pending += [item for item in self._loading_futures.values() if os.path.dirname(item.path) == log_dir]
        return {item.key: item.checkpoints[name] for item in pending if name in item.checkpoints}

    def write_all_checkpoints(self) -> None:
        self.checkpoint_recovery_points()
        self.checkpoint_log_start_offsets()
        self.checkpoint_cleaner_offsets()
        self.checkpoint_high_watermarks()

    # -- maintenance (worker thread) ------------------------------------------------------

    def run_retention(self, now_ms: int | None = None) -> int:
        """Delete segments by retention and log start offset, expire producers, remove files
        whose deletion delay is over, checkpoint log start offsets that moved. Returns the
        number of segments deleted."""
        now = self._time_ms() if now_ms is None else now_ms
        deleted = 0
        for log in self.all_logs():
            try:
                deleted += log.delete_old_segments(now)
                log.remove_expired_producers(now)
            except KafkaStorageError:
                continue  # reported to the log directory failure channel
            except Exception:  # one failing log must not stop the others
                logger.exception("retention failed for %r", log)
        self._deleter.run_due(now)
        self._checkpoint_log_starts_if_moved()
        return deleted

    def _checkpoint_log_starts_if_moved(self) -> None:
        current = {key: log.log_start_offset for key, log in list(self._logs.items())}
        if current != self._checkpointed_log_starts:
            self.checkpoint_log_start_offsets()
            self._checkpointed_log_starts = current

    def run_compaction(self, now_ms: int | None = None) -> dict[TopicPartition, CleanerStats]:
        """Compact every compacted log dirty enough (min.cleanable.dirty.ratio) or overdue
        (max.compaction.lag.ms); a log whose compaction fails is not tried again."""
        now = self._time_ms() if now_ms is None else now_ms
        results = {}
        for key, log in list(self._logs.items()):
            if key in self._futures:  # paused while the replica moves, as Kafka's abortAndPauseCleaning
                continue
            if not log.config.compact or key in self._uncleanable or not self._needs_compaction(log, now):
                continue
            try:
                stats = log.compact(now, max_map_entries=self.cleaner_max_map_entries)
            except KafkaStorageError:
                continue  # reported to the log directory failure channel, which takes the log away
            except Exception:
                logger.exception("compaction failed for %r; marking it uncleanable", log)
                self._uncleanable.add(key)
                continue
            if stats is not None:
                results[key] = stats
        if results:
            self.checkpoint_cleaner_offsets()
        return results

    @staticmethod
    def _needs_compaction(log: Log, now: int) -> bool:
        ratio, dirty_bytes = log.cleanable_ratio(now)
        if dirty_bytes <= 0:
            return False
        return ratio > log.config.min_cleanable_dirty_ratio or compaction_overdue(log, now)

    def run_flush(self, now_ms: int | None = None) -> int:
        """Flush logs with rolled segments or past flush.ms; checkpoint recovery points if any."""
        now = self._time_ms() if now_ms is None else now_ms
        flushed = 0
        for log in self.all_logs() + list(self.futures().values()):
            try:
                flushed += bool(log.flush_if_due(now))
            except KafkaStorageError:
                continue  # reported to the log directory failure channel
            except Exception:
                logger.exception("flush failed for %r", log)
        if flushed:
            self.checkpoint_recovery_points()
        return flushed

    # -- shutdown -------------------------------------------------------------------------

    def close(self, broker_epoch: int = -1) -> None:
        """Flush and close every log, write all checkpoints, then the clean shutdown markers."""
        self.stop_loading()  # before the lock: a finishing load takes it
        self._deletions.shutdown(wait=True)  # before the lock: a pending deletion takes it
        self._roll_flushes.shutdown(wait=True)
        with self._lock:
            if self.closed:
                return
            for log in [*self._logs.values(), *self._futures.values()]:
                try:
                    log.flush()
                    log.close()
                except KafkaStorageError:  # reported: its directory gets no clean shutdown marker
                    log.close_handlers()
            self.write_all_checkpoints()
            self._deleter.run_all()
            for log_dir in self.online_dirs():
                if self._fully_loaded(log_dir):  # a log never loaded may still need recovery
                    self._mark_clean_shutdown(log_dir, broker_epoch)
            self.closed = True

    def _mark_clean_shutdown(self, log_dir: str, broker_epoch: int) -> None:
        try:
            write_clean_shutdown_marker(log_dir, broker_epoch)
        except OSError as error:
            self.dir_failures.fail(log_dir, "Error while writing the clean shutdown marker", error)

    def _fully_loaded(self, log_dir: str) -> bool:
        if any(os.path.dirname(item.path) == log_dir for item in self._loading_futures.values()):
            return False
        return not any(self._dir_of.get(key) == log_dir for key in self._loading)


def compaction_overdue(log: Log, now: int) -> bool:
    """A dirty segment whose first batch is older than max.compaction.lag.ms."""
    lag = log.config.max_compaction_lag_ms
    if lag == LONG_MAX:
        return False
    segments = log.segments
    first_dirty, _ = log.cleanable_offsets(now)
    for segment in segments.overlapping(first_dirty, segments.active.base_offset):
        timestamp = segment.first_batch_timestamp()
        if timestamp is not None and 0 < timestamp < now - max(lag, 0):
            return True
    return False


def _remove_tree(path: str) -> None:
    """Remove a deleted partition's directory with all in it, ignoring what fails."""
    import shutil  # with bz2 and lzma: loaded with the first directory removed

    shutil.rmtree(path, ignore_errors=True)


def _bytes_of_segments(path: str) -> int:
    """The bytes of a partition directory's `.log` files."""
    with os.scandir(path) as entries:
        return sum(entry.stat().st_size for entry in entries if entry.name.endswith(files.LOG_SUFFIX))


def write_clean_shutdown_marker(log_dir: str, broker_epoch: int = -1) -> None:
    """`.kafka_cleanshutdown` with Kafka's JSON content."""
    payload = json.dumps({"version": "0", "broker_epoch": str(broker_epoch)}).encode("utf-8")
    write_atomically(os.path.join(log_dir, CLEAN_SHUTDOWN_FILE), payload, fsync=True)
