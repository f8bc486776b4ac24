"""ListOffsets (key 2), versions 0-9.

Per partition, the offset for a timestamp: -2 earliest (the log start offset), -1 latest (the high
watermark, or the last stable offset for read_committed), -3 the record with the largest timestamp
(v7+), -4 earliest local (v8+, the log start offset here), -5 latest tiered (v9+, nothing is
tiered: -1). For a real timestamp, the earliest offset whose record timestamp is at or after it,
which may lie inside a batch; -1 when there is none below the high watermark.

A negative timestamp other than these, or one newer than the request's version, gets
UNSUPPORTED_VERSION (v1+), as from Kafka.

v0 answers with a list of offsets (`old_style_offsets`): for latest, as Kafka's legacy lookup,
the high watermark and then the base offset of each segment below it, newest first, at most
`max_num_offsets`; v1+ with one offset and its timestamp;
v4+ with the leader epoch of that offset and fencing by `current_leader_epoch`. A partition named
twice in one request gets INVALID_REQUEST (v1+). A replica (replica id other than -1: a
follower, or -2 for debugging) reads past the high watermark: latest is the log end offset; the
debugging replica id may ask any replica, not only the leader. Topics the caller may not
DESCRIBE come last, each partition with TOPIC_AUTHORIZATION_FAILED (as Kafka).
"""

from collections import Counter

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import ListOffsetsRequest, ListOffsetsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.LIST_OFFSETS
MIN_VERSION = 0
MAX_VERSION = 9

DESCRIBE_TOPIC = check(API_KEY, "topic")
LATEST = -1
MAX_TIMESTAMP = -3
# the negative timestamps with a meaning, and the first version that knows each
SPECIAL_TIMESTAMPS = {LATEST: 0, -2: 0, MAX_TIMESTAMP: 7, -4: 8, -5: 9}


async def handle(request: ListOffsetsRequest, ctx: RequestContext) -> ListOffsetsResponse:
    version = ctx.api_version
    named = Counter((t.name, p.partition_index) for t in request.topics for p in t.partitions)
    isolation = request.isolation_level if version >= 2 else 0
    topics, denied = [], []
    describable = DESCRIBE_TOPIC.allowed(ctx, (t.name for t in request.topics))
    for topic in request.topics:
        if topic.name not in describable:  # Kafka answers these last
            errors = [_error(p.partition_index, DESCRIBE_TOPIC.denied) for p in topic.partitions]
            denied.append(ListOffsetsResponse.ListOffsetsTopicResponse(name=topic.name, partitions=errors))
            continue
        partitions = []
        for p in topic.partitions:
            if version >= 1 and named[(topic.name, p.partition_index)] > 1:
                partitions.append(_error(p.partition_index, ErrorCode.INVALID_REQUEST))
                continue
            if version >= 1 and not _known_timestamp(p.timestamp, version):
                partitions.append(_error(p.partition_index, ErrorCode.UNSUPPORTED_VERSION))
                continue
            partitions.append(_lookup(ctx, request.replica_id, isolation, topic.name, p, version))
        topics.append(ListOffsetsResponse.ListOffsetsTopicResponse(name=topic.name, partitions=partitions))
    return ListOffsetsResponse(topics=topics + denied)


def _lookup(
    ctx: RequestContext,
    replica_id: int,
    isolation: int,
    topic: str,
    p: ListOffsetsRequest.ListOffsetsPartition,
    version: int,
) -> ListOffsetsResponse.ListOffsetsPartitionResponse:
    replica_manager = ctx.services.replica_manager
    try:
        found = replica_manager.fetch_offset_for_timestamp(
            topic,
            p.partition_index,
            p.timestamp,
            replica_id=replica_id,
            isolation_level=isolation,
            current_leader_epoch=p.current_leader_epoch if version >= 4 else -1,
        )
    except KafkaError as exc:
        return _error(p.partition_index, exc.code)
    if found is None:
        return ListOffsetsResponse.ListOffsetsPartitionResponse(partition_index=p.partition_index, old_style_offsets=[])
    old_style = [found.offset]
    if version == 0 and p.timestamp == LATEST:
        old_style = replica_manager.legacy_fetch_offsets(
            topic, p.partition_index, p.max_num_offsets, replica_id=replica_id, isolation_level=isolation
        )
    return ListOffsetsResponse.ListOffsetsPartitionResponse(
        partition_index=p.partition_index,
        old_style_offsets=old_style,
        timestamp=found.timestamp,
        offset=found.offset,
        leader_epoch=found.leader_epoch,
    )


def _known_timestamp(timestamp: int, version: int) -> bool:
    return timestamp >= 0 or SPECIAL_TIMESTAMPS.get(timestamp, version + 1) <= version


def _error(index: int, code: ErrorCode) -> ListOffsetsResponse.ListOffsetsPartitionResponse:
    return ListOffsetsResponse.ListOffsetsPartitionResponse(partition_index=index, error_code=code)
