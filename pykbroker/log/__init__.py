"""Partition logs on disk in Kafka's layout: segments, indexes, checkpoints, recovery,
retention, compaction, and the LogManager that owns them all.

    from pykbroker.log import LogManager, LogConfig
    manager = LogManager(["/var/lib/pykbroker"], LogConfig())
    log = manager.get_or_create("orders", 0)
    info = log.append_as_leader(bytearray(batch), leader_epoch=0)
    fetched = log.read(info.first_offset, 1 << 20, max_offset=log.high_watermark)
"""

from .config import LogConfig
from .errors import (
    LogClosedError,
    LogError,
    OffsetsOutOfOrderError,
    RecordValidationError,
    UnexpectedAppendOffsetError,
)
from .log import Log
from .lookups import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
)
from .manager import LogManager
from .producer_state import CLIENT, COORDINATOR, REPLICATION
from .results import AbortedTransaction, CleanerStats, FetchDataInfo, FileRegion, LogAppendInfo, TimestampAndOffset

__all__ = [
    "LogConfig",
    "Log",
    "LogManager",
    "LogAppendInfo",
    "FetchDataInfo",
    "FileRegion",
    "TimestampAndOffset",
    "AbortedTransaction",
    "CleanerStats",
    "LogError",
    "LogClosedError",
    "OffsetsOutOfOrderError",
    "UnexpectedAppendOffsetError",
    "RecordValidationError",
    "CLIENT",
    "COORDINATOR",
    "REPLICATION",
    "EARLIEST_TIMESTAMP",
    "LATEST_TIMESTAMP",
    "MAX_TIMESTAMP",
    "EARLIEST_LOCAL_TIMESTAMP",
    "LATEST_TIERED_TIMESTAMP",
]
