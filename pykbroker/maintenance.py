"""A broker's periodic background work: retention, compaction, flushing and checkpoints.

Each job runs in a worker thread (disk scans, fsync and compaction never block the event loop)
at Kafka's intervals: `log.retention.check.interval.ms`, `log.cleaner.backoff.ms`,
`log.flush.scheduler.interval.ms`, `replica.high.watermark.checkpoint.interval.ms`,
`log.flush.offset.checkpoint.interval.ms` and `log.flush.start.offset.checkpoint.interval.ms`.
A job that fails logs its error and runs again at its next interval.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
import anyio.to_thread

log = logging.getLogger(__name__)

NEVER = 2**63 - 1


async def run_maintenance(broker) -> None:
    config = broker.config
    log_manager = broker.log_manager
    jobs: list[tuple[str, int, Callable[[], object]]] = [
        ("retention", config["log.retention.check.interval.ms"], log_manager.run_retention),
        ("flush", config["log.flush.scheduler.interval.ms"], log_manager.run_flush),
        (
            "high watermark checkpoint",
            config["replica.high.watermark.checkpoint.interval.ms"],
            lambda: log_manager.checkpoint_high_watermarks(broker.replica_manager.high_watermarks()),
        ),
        (
            "recovery point checkpoint",
            config["log.flush.offset.checkpoint.interval.ms"],
            log_manager.checkpoint_recovery_points,
        ),
        (
            "log start offset checkpoint",
            config["log.flush.start.offset.checkpoint.interval.ms"],
            log_manager.checkpoint_log_start_offsets,
        ),
    ]
    if config["log.cleaner.enable"]:
        jobs.append(("compaction", config["log.cleaner.backoff.ms"], log_manager.run_compaction))
    async with anyio.create_task_group() as tasks:
        for name, interval_ms, job in jobs:
            if 0 < interval_ms < NEVER:
                tasks.start_soon(_every, name, interval_ms, job)


async def _every(name: str, interval_ms: int, job: Callable[[], object]) -> None:
    while True:
        await anyio.sleep(interval_ms / 1000)
        try:
            await anyio.to_thread.run_sync(job)
        except Exception:  # keep the broker and the other jobs running
            log.exception("Background %s failed", name)
