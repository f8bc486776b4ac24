"""A broker's periodic background work: retention, compaction, flushing and checkpoints.

Each job runs in a worker thread (disk scans, fsync and compaction never block the event loop)
at Kafka's intervals: `log.retention.check.interval.ms`, `log.cleaner.backoff.ms`,
`log.flush.scheduler.interval.ms`, `replica.high.watermark.checkpoint.interval.ms`,
`log.flush.offset.checkpoint.interval.ms` and `log.flush.start.offset.checkpoint.interval.ms`.
A job that fails logs its error and runs again at its next interval.

The three offset checkpoints (high watermarks, recovery points, log start offsets) are written
only when an offset they record changed since their last write (`CheckpointIfChanged`): an idle
broker with thousands of partitions rewrites and fsyncs no file. Noticing a change reads one
number per partition on the worker thread; the write itself, as in Kafka, is the whole file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from .common.topic_partition import TopicPartition

if TYPE_CHECKING:
    from .config import BrokerConfig
    from .log.manager import LogManager
    from .replication.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

NEVER = 2**63 - 1

Offsets = Mapping[TopicPartition, int]


class CheckpointIfChanged:
    """A checkpoint job that writes only when the offsets it records differ from those it last
    wrote. `offsets()` reads them now; `write()` writes the checkpoint (reading them again)."""

    def __init__(self, offsets: Callable[[], Offsets], write: Callable[[], object]) -> None:
        self.offsets = offsets
        self.write = write
        self.writes = 0  # how many times the checkpoint was written (tests count them)
        self._written: Offsets | None = None

    def __call__(self) -> bool:
        """Write if something changed; True when it wrote."""
        current = dict(self.offsets())
        if current == self._written:
            return False
        self.write()
        self._written = current
        self.writes += 1
        return True


def retention_job(log_manager: LogManager) -> Callable[[], list[TopicPartition]]:
    """Retention (`LogManager.run_retention`); returns the partitions whose log start offset it
    moved, which the broker tells fetch sessions about."""

    def log_starts() -> dict[TopicPartition, int]:
        return {(log_.topic, log_.partition): log_.log_start_offset for log_ in log_manager.all_logs()}

    def run() -> list[TopicPartition]:
        before = log_starts()
        log_manager.run_retention()
        return [key for key, start in log_starts().items() if before.get(key, start) != start]

    return run


def checkpoint_jobs(log_manager: LogManager) -> dict[str, CheckpointIfChanged]:
    """The offset checkpoints of `log_manager`'s logs, each written only when it changed."""

    def offsets_of(attribute: str) -> Callable[[], Offsets]:
        return lambda: {(log_.topic, log_.partition): getattr(log_, attribute) for log_ in log_manager.all_logs()}

    return {
        "high watermark checkpoint": CheckpointIfChanged(
            offsets_of("high_watermark"), log_manager.checkpoint_high_watermarks
        ),
        "recovery point checkpoint": CheckpointIfChanged(
            offsets_of("recovery_point"), log_manager.checkpoint_recovery_points
        ),
        "log start offset checkpoint": CheckpointIfChanged(
            offsets_of("log_start_offset"), log_manager.checkpoint_log_start_offsets
        ),
    }


async def run_maintenance(config: BrokerConfig, log_manager: LogManager, replica_manager: ReplicaManager) -> None:
    """The periodic jobs of a serving broker, each on a worker thread, until cancelled."""
    checkpoints = checkpoint_jobs(log_manager)
    jobs: list[tuple[str, int, Callable[[], object]]] = [
        (
            "retention",
            config["log.retention.check.interval.ms"],
            _then_on_loop(retention_job(log_manager), replica_manager),
        ),
        ("flush", config["log.flush.scheduler.interval.ms"], log_manager.run_flush),
        (
            "high watermark checkpoint",
            config["replica.high.watermark.checkpoint.interval.ms"],
            checkpoints["high watermark checkpoint"],
        ),
        (
            "recovery point checkpoint",
            config["log.flush.offset.checkpoint.interval.ms"],
            checkpoints["recovery point checkpoint"],
        ),
        (
            "log start offset checkpoint",
            config["log.flush.start.offset.checkpoint.interval.ms"],
            checkpoints["log start offset checkpoint"],
        ),
    ]
    if config["log.cleaner.enable"]:
        jobs.append(("compaction", config["log.cleaner.backoff.ms"], log_manager.run_compaction))
    async with anyio.create_task_group() as tasks:
        for name, interval_ms, job in jobs:
            if 0 < interval_ms < NEVER:
                tasks.start_soon(_every, name, interval_ms, job)


def _then_on_loop(
    retention: Callable[[], list[TopicPartition]], replica_manager: ReplicaManager
) -> Callable[[], object]:
    """Retention on the worker thread, then its moved log start offsets told to the replica
    manager on the event loop."""

    def run() -> None:
        moved = retention()
        if moved:
            from anyio.from_thread import run_sync  # loaded with the first offsets moved

            run_sync(replica_manager.log_start_offsets_moved, moved)

    return run


async def _every(name: str, interval_ms: int, job: Callable[[], object]) -> None:
    while True:
        await anyio.sleep(interval_ms / 1000)
        try:
            await anyio.to_thread.run_sync(job)
        except Exception:  # keep the broker and the other jobs running
            log.exception("Background %s failed", name)
