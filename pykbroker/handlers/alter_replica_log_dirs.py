"""AlterReplicaLogDirs (key 34), versions 0-2: move replicas between the log dirs of this broker.

Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED for every partition asked otherwise).
Each partition named under a dir's `path` (the last one wins when a partition is named twice, as
Kafka's request map) is moved there by the replica manager while it keeps serving: a future log
`<topic>-<partition>.<id>-future` is built in the destination, copied from the current log up to
its end, then swapped in (see `replication.log_dir_mover`). Per partition, as Kafka's
ReplicaManager.alterReplicaLogDirs answers:

- LOG_DIR_NOT_FOUND: the path is not one of `log.dirs` (absolute paths, as configured);
- KAFKA_STORAGE_ERROR: the destination dir or the partition's dir is offline, or a dir is offline
  when a new move would start;
- REPLICA_NOT_AVAILABLE: the partition exists but is not hosted here (yet), or
  UNKNOWN_TOPIC_OR_PARTITION: it does not exist (yet); either way the dir is remembered and the
  partition's log is created there when it comes here (what a reassignment with `log_dirs`
  relies on);
- INVALID_TOPIC_EXCEPTION: the future dir's name would be longer than 255 characters;
- NONE: the move started, is already going to that dir, or the replica is there already. A move
  to another dir than the one in progress cancels it first.

Results are grouped by topic. The response has no top-level error.
"""

from __future__ import annotations

from collections import defaultdict

from ..common.topic_partition import TopicPartition
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ALTER_REPLICA_LOG_DIRS
MIN_VERSION = 0
MAX_VERSION = 2

ALTER_CLUSTER = check(API_KEY, "cluster")
TopicResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirTopicResult
PartitionResult = AlterReplicaLogDirsResponse.AlterReplicaLogDirPartitionResult


async def handle(request: AlterReplicaLogDirsRequest, ctx: RequestContext) -> AlterReplicaLogDirsResponse:
    if not ALTER_CLUSTER.allows(ctx):
        return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=_denied(request, ALTER_CLUSTER.denied))
    results = ctx.services.replica_manager.alter_replica_log_dirs(_destinations(request))
    return AlterReplicaLogDirsResponse(throttle_time_ms=0, results=_by_topic(results))


def _destinations(request: AlterReplicaLogDirsRequest) -> dict[TopicPartition, str]:
    """Each partition's destination dir (the last one naming it wins)."""
    return {
        (topic.name, partition): entry.path
        for entry in request.dirs
        for topic in entry.topics
        for partition in topic.partitions
    }


def _by_topic(results: dict[TopicPartition, ErrorCode]) -> list[TopicResult]:
    topics: defaultdict[str, list[PartitionResult]] = defaultdict(list)
    for (topic, partition), error in results.items():
        topics[topic].append(PartitionResult(partition_index=partition, error_code=error))
    return [TopicResult(topic_name=topic, partitions=partitions) for topic, partitions in topics.items()]


def _denied(request: AlterReplicaLogDirsRequest, error: ErrorCode) -> list[TopicResult]:
    """Every partition of the request with `error`, one entry per topic of each dir (as Kafka)."""
    return [
        TopicResult(
            topic_name=topic.name,
            partitions=[PartitionResult(partition_index=partition, error_code=error) for partition in topic.partitions],
        )
        for entry in request.dirs
        for topic in entry.topics
    ]
