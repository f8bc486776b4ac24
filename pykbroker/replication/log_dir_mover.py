"""Moving replicas between the log directories of this broker (Kafka's ReplicaAlterLogDirsManager
and ReplicaAlterLogDirsThread), for AlterReplicaLogDirs.

    movers = LogDirMovers(replica_manager)
    movers.start(partition)        # its future log exists (LogManager.create_future_log)
    movers.stop(("orders", 0))     # the move was cancelled or the partition left
    await movers.run()             # in the replica manager's task group, until cancelled

One task per moving partition copies the current log into its future log while the partition
keeps serving: slices of up to `SLICE_BYTES` are read from the current log and appended to the
future one as a follower appends (offsets, epochs and producer state kept) on a worker thread,
so the event loop goes on serving everyone else; `replica.alter.log.dirs.io.max.bytes.per.second`
(a broker's dynamic config, unset: no limit) holds the steps back while the bytes copied lately
by all moves are above it, as Kafka's alter-log-dirs quota. The future log follows the current one: a
truncation of the current log (a follower's) truncates the future log at its next step, a log
start offset that moved (retention, DeleteRecords) moves the future's, and one the copy fell
behind restarts it there. When the rest to copy is small, the last slice is copied on the loop
and the future log is swapped in at once (`LogManager.replace_current_with_future`): nothing can
be appended in between, so nothing acknowledged is left behind.

A destination directory that fails (an I/O error on the future log, reported to the log
directory failure channel) ends the move, not the broker: the future log is dropped and the
partition keeps serving from its current log.
"""

from __future__ import annotations

import functools
import logging
import time
from collections import deque
from collections.abc import Mapping
from typing import Any, Protocol

import anyio
import anyio.abc

from ..common.topic_partition import TopicPartition
from ..log.errors import KafkaError, KafkaStorageError, LogError
from ..log.log import Log
from ..log.manager import LogManager
from ..records.batch import iter_headers
from .partition import Partition

logger = logging.getLogger(__name__)

SLICE_BYTES = 1 << 20  # read and appended on a worker thread per step
LAST_SLICE_BYTES = 256 << 10  # the rest is copied on the loop, and the future log swapped in
IDLE_WAIT_S = 0.05  # how often a copy that caught up looks for new data
MAX_SETBACKS = 100  # steps in a row that failed before the move is given up
THROTTLE = "replica.alter.log.dirs.io.max.bytes.per.second"  # a broker's dynamic config, as Kafka's
LONG_MAX = 2**63 - 1


class Settings(Protocol):
    def get(self, key: str, default: Any = None) -> Any: ...


class HostedReplicas(Protocol):
    """What the movers need of the replica manager."""

    @property
    def config(self) -> Settings: ...

    @property
    def partitions(self) -> Mapping[TopicPartition, Partition]: ...

    @property
    def log_manager(self) -> LogManager: ...

    def replaced_log(self, partition: Partition, replacement: Log) -> None: ...


class LogDirMovers:
    """The copy tasks of the replicas being moved between log directories."""

    def __init__(self, replica_manager: HostedReplicas) -> None:
        self._replicas = replica_manager
        self._tasks: anyio.abc.TaskGroup | None = None
        self._waiting: set[TopicPartition] = set()  # asked for before `run` started
        self._running: dict[TopicPartition, anyio.CancelScope] = {}
        self._truncated: dict[TopicPartition, int] = {}  # the lowest end a current log was truncated to
        self._copied: deque[tuple[float, int]] = deque()  # (monotonic time, bytes) of the recent steps
        self.moves_completed = 0

    async def run(self) -> None:
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            for key in sorted(self._waiting):
                tasks.start_soon(self._move, key)
            self._waiting.clear()
            await anyio.sleep_forever()

    def is_moving(self, key: TopicPartition) -> bool:
        return key in self._running or key in self._waiting

    def start(self, partition: Partition) -> None:
        """Copy the partition's current log into its future log, then swap it in."""
        key = partition.key
        if self.is_moving(key):
            return
        if self._tasks is None:
            self._waiting.add(key)
            return
        self._running[key] = anyio.CancelScope()
        self._tasks.start_soon(self._move, key)

    def stop(self, key: TopicPartition) -> None:
        """Stop copying (the caller removes or keeps the future log)."""
        self._waiting.discard(key)
        scope = self._running.pop(key, None)
        if scope is not None:
            scope.cancel()
        self._truncated.pop(key, None)
        partition = self._replicas.partitions.get(key)
        if partition is not None:
            partition.log.truncation_listener = None

    async def _move(self, key: TopicPartition) -> None:
        scope = self._running.setdefault(key, anyio.CancelScope())
        with scope:
            try:
                await self._copy_until_swapped(key)
            except KafkaStorageError as error:  # reported to the failure channel already
                logger.error("The move of %s-%d between log directories failed: %s", *key, error)
                self._replicas.log_manager.remove_future_log(*key, delete=False)
            except Exception:
                logger.exception("The move of %s-%d between log directories failed", *key)
                self._replicas.log_manager.remove_future_log(*key)
            finally:
                if self._running.get(key) is scope:
                    self.stop(key)

    async def _copy_until_swapped(self, key: TopicPartition) -> None:
        log_manager = self._replicas.log_manager
        watched: Log | None = None
        setbacks = 0
        while True:
            partition = self._replicas.partitions.get(key)
            future = log_manager.get_future(*key)
            if partition is None or future is None:
                return  # the partition left, or the future log was dropped
            current = partition.log
            if current is not watched:
                watched = current
                current.truncation_listener = functools.partial(self._note_truncation, key)
            try:
                self._follow_current(key, current, future)
                if self._copy_last_slice_and_swap(partition, current, future):
                    return
                if future.log_end_offset >= current.log_end_offset:
                    await anyio.sleep(IDLE_WAIT_S)
                    continue
                if self._throttled():
                    await anyio.sleep(IDLE_WAIT_S)
                    continue
                copied = await anyio.to_thread.run_sync(copy_slice, current, future, SLICE_BYTES)
                self._copied.append((time.monotonic(), copied))
                setbacks = 0
            except KafkaStorageError:
                raise
            except (KafkaError, LogError) as error:  # the current log moved under the copy (retention, truncation)
                setbacks += 1
                if setbacks > MAX_SETBACKS:
                    raise
                logger.debug("Copying %s-%d to its future log: %s; trying again", *key, error)
                await anyio.sleep(IDLE_WAIT_S)

    def _throttled(self) -> bool:
        """Whether the bytes copied lately, by every move of this broker, are above
        `replica.alter.log.dirs.io.max.bytes.per.second` (Kafka's alter-log-dirs quota: a rate
        over `alter.log.dirs.replication.quota.window.num` windows of `...window.size.seconds`)."""
        config = self._replicas.config
        limit = config.get(THROTTLE)
        if limit is None or int(limit) >= LONG_MAX:
            return False
        window_s = float(config.get("alter.log.dirs.replication.quota.window.size.seconds", 1))
        windows = int(config.get("alter.log.dirs.replication.quota.window.num", 11))
        now = time.monotonic()
        while self._copied and self._copied[0][0] <= now - windows * window_s:
            self._copied.popleft()
        if not self._copied:
            return False
        span = max(now - self._copied[0][0], (windows - 1) * window_s)
        return sum(size for _, size in self._copied) / span > int(limit)

    def _note_truncation(self, key: TopicPartition, end: int) -> None:
        self._truncated[key] = min(end, self._truncated.get(key, end))

    def _follow_current(self, key: TopicPartition, current: Log, future: Log) -> None:
        """Bring the future log in line with what happened to the current one since the last step."""
        truncated = self._truncated.pop(key, None)
        if truncated is not None and truncated < future.log_end_offset:
            future.truncate_to(truncated)
        if future.log_end_offset > current.log_end_offset:
            future.truncate_to(current.log_end_offset)
        if future.log_end_offset < current.log_start_offset or (
            future.log_end_offset == future.log_start_offset and future.log_start_offset != current.log_start_offset
        ):
            future.truncate_fully_and_start_at(current.log_start_offset)
        elif future.log_start_offset < current.log_start_offset:
            future.maybe_increment_log_start_offset(current.log_start_offset)

    def _copy_last_slice_and_swap(self, partition: Partition, current: Log, future: Log) -> bool:
        """On the loop: when what is left to copy is one small slice, copy it and swap the
        future log in (no append can come in between); False when more is left."""
        end = current.log_end_offset
        if future.log_end_offset < end:
            data = current.read(future.log_end_offset, LAST_SLICE_BYTES)  # file regions: nothing read yet
            active = current.segments.active
            if data.segment_base_offset != active.base_offset or data.position + data.size < active.size:
                return False  # more than one small slice is left
            records = data.read_bytes()
            if _next_offset(records) < end:
                return False
            future.append_as_follower(records)
            if future.log_end_offset < end:
                return False
        current.truncation_listener = None
        replacement = self._replicas.log_manager.replace_current_with_future(partition.topic, partition.index)
        self._replicas.replaced_log(partition, replacement)
        self.moves_completed += 1
        return True


def _next_offset(records: bytes) -> int:
    """The offset after the last complete batch of `records` (-1 without one)."""
    last = -1
    for _, header in iter_headers(records):
        last = header.next_offset
    return last


def copy_slice(current: Log, future: Log, max_bytes: int) -> int:
    """Append up to `max_bytes` of the current log, from the future log's end on, to the
    future log (a worker thread); returns the bytes appended."""
    records = current.read(future.log_end_offset, max_bytes).read_bytes()
    if not records:
        return 0
    return future.append_as_follower(records).valid_bytes
