"""Partition logs on disk in Kafka's layout: segments, indexes, checkpoints, recovery,
retention, compaction, and the LogManager that owns them all.

    from pykbroker.log import LogManager, LogConfig
    manager = LogManager(["/var/lib/pykbroker"], LogConfig())
    log = manager.get_or_create("orders", 0)
    info = log.append_as_leader(bytearray(batch), leader_epoch=0)
    fetched = log.read(info.first_offset, 1 << 20, max_offset=log.high_watermark)

The package names only what a broker loads at start: a broker without a partition here never
imports the log implementation (`log.Log` and what it uses), which loads with the first log
created or found on disk. Import the rest from its module: `log.Log`, the results of `results`,
the timestamps of `lookups`, `producer_state`'s CLIENT, COORDINATOR and REPLICATION.
"""

from .config import LogConfig
from .errors import (
    LogClosedError,
    LogError,
    OffsetsOutOfOrderError,
    RecordValidationError,
    UnexpectedAppendOffsetError,
)
from .manager import LogManager

__all__ = [
    "LogConfig",
    "LogManager",
    "LogError",
    "LogClosedError",
    "OffsetsOutOfOrderError",
    "UnexpectedAppendOffsetError",
    "RecordValidationError",
]
