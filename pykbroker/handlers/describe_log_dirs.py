"""DescribeLogDirs (key 35), versions 0-4.

Every log dir of this broker (absolute path) with the partitions it holds: size in bytes, offset
lag and is_future_key. A replica being moved to another dir (AlterReplicaLogDirs) is listed
twice, as in Kafka: its current log (offset lag 0) and, under the destination dir, its future log
with is_future_key true and the offsets it still has to copy as its offset lag. `topics` null asks
for every partition; otherwise only the listed ones are described, but, as in Kafka, every topic
with a log in a dir is still listed under it (with an empty partition list if none was asked for).
From v3 the response has a top-level error code, from v4 each dir's total and usable bytes. A
dir that failed (offline, see `log.dir_failure`) or cannot be read answers KAFKA_STORAGE_ERROR
with no partitions.

The partitions come from the replica manager (`describe_log_dirs()`).
"""

from __future__ import annotations

import os

from ..common.topic_partition import TopicPartition
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DescribeLogDirsRequest, DescribeLogDirsResponse
from ..replication.replica_manager import LogDirEntry
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DESCRIBE_LOG_DIRS
MIN_VERSION = 0
MAX_VERSION = 4

DESCRIBE_CLUSTER = check(API_KEY, "cluster")
DirResult = DescribeLogDirsResponse.DescribeLogDirsResult
TopicResult = DescribeLogDirsResponse.DescribeLogDirsTopic
PartitionResult = DescribeLogDirsResponse.DescribeLogDirsPartition

LONG_MAX = 2**63 - 1


async def handle(request: DescribeLogDirsRequest, ctx: RequestContext) -> DescribeLogDirsResponse:
    if not DESCRIBE_CLUSTER.allows(ctx):
        return DescribeLogDirsResponse(error_code=DESCRIBE_CLUSTER.denied, results=[])
    wanted = _wanted_partitions(request.topics)
    replicas = ctx.services.replica_manager
    return DescribeLogDirsResponse(
        error_code=ErrorCode.NONE,
        results=[
            _describe_dir(path, logs, wanted) if replicas.is_log_dir_online(path) else _offline_dir(path)
            for path, logs in replicas.describe_log_dirs()
        ],
    )


def _wanted_partitions(
    topics: list[DescribeLogDirsRequest.DescribableLogDirTopic] | None,
) -> set[TopicPartition] | None:
    """The (topic, partition) pairs asked for; None for all of them."""
    if topics is None:
        return None
    return {(topic.topic, partition) for topic in topics for partition in topic.partitions}


def _describe_dir(path: str, logs: list[LogDirEntry], wanted: set[TopicPartition] | None) -> DirResult:
    absolute = os.path.abspath(path)
    try:
        total_bytes, usable_bytes = _space(absolute)
    except OSError:
        return _offline_dir(absolute)
    return DirResult(
        error_code=ErrorCode.NONE,
        log_dir=absolute,
        topics=_topics(logs, wanted),
        total_bytes=total_bytes,
        usable_bytes=usable_bytes,
    )


def _offline_dir(path: str) -> DirResult:
    """A failed (offline) or unreadable dir: KAFKA_STORAGE_ERROR and nothing else, as Kafka."""
    return DirResult(error_code=ErrorCode.KAFKA_STORAGE_ERROR, log_dir=os.path.abspath(path), topics=[])


def _topics(logs: list[LogDirEntry], wanted: set[TopicPartition] | None) -> list[TopicResult]:
    by_topic: dict[str, list[PartitionResult]] = {}
    for topic, partition, size, lag, is_future in logs:
        partitions = by_topic.setdefault(topic, [])
        if wanted is None or (topic, partition) in wanted:
            partitions.append(
                PartitionResult(partition_index=partition, partition_size=size, offset_lag=lag, is_future_key=is_future)
            )
    return [
        TopicResult(name=topic, partitions=partitions)
        for topic, partitions in by_topic.items()
        if partitions or wanted is None  # asked for some partitions: the other topics are left out, as Kafka
    ]


def _space(path: str) -> tuple[int, int]:
    """(total, usable) bytes of the file system holding `path`, as Java's FileStore reports them."""
    stats = os.statvfs(path)
    return _clamp(stats.f_blocks * stats.f_frsize), _clamp(stats.f_bavail * stats.f_frsize)


def _clamp(value: int) -> int:
    """Kafka reports sizes beyond a long as Long.MAX_VALUE."""
    return value if 0 <= value <= LONG_MAX else LONG_MAX
