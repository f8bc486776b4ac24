"""OffsetForLeaderEpoch (key 23), versions 0-4.

For each partition, the end offset of the requested leader epoch in the leader's log: the start
of the next larger epoch, or the log end offset for the current one, together with the largest
epoch at or below the requested one (v1+). Followers used it to find where their log diverges
from the leader's; consumers use it (v3+) to check their position after a leader change.

- (-1, -1) when the log knows no epoch at or below the requested one.
- v2+ fence a stale or future `current_leader_epoch` (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH).
- Only the leader answers (NOT_LEADER_OR_FOLLOWER otherwise), except for the debugging replica
  id -2 (the default before v3), which any replica answers, as in Kafka.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import ReplicaService

API_KEY = ApiKey.OFFSET_FOR_LEADER_EPOCH
MIN_VERSION = 0
MAX_VERSION = 4

TopicResult = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
EpochEndOffset = OffsetForLeaderEpochResponse.EpochEndOffset
CLUSTER_ACTION_FOR_FOLLOWER = check(API_KEY, "follower")
DESCRIBE_TOPIC = check(API_KEY, "topic")
DEBUGGING_REPLICA_ID = -2


async def handle(request: OffsetForLeaderEpochRequest, ctx: RequestContext) -> OffsetForLeaderEpochResponse:
    replica_id = request.replica_id if ctx.api_version >= 3 else DEBUGGING_REPLICA_ID
    leader_only = replica_id != DEBUGGING_REPLICA_ID
    replica_manager = ctx.services.replica_manager
    if CLUSTER_ACTION_FOR_FOLLOWER.allows(ctx, log_if_denied=False):
        describable = {topic.topic for topic in request.topics}
    else:  # KIP-320: consumers ask too, with DESCRIBE on the topic
        describable = DESCRIBE_TOPIC.allowed(ctx, (topic.topic for topic in request.topics))
    topics: list[TopicResult] = []
    denied: list[TopicResult] = []
    for topic in request.topics:
        if topic.topic not in describable:  # Kafka answers these last
            denied.append(
                TopicResult(
                    topic=topic.topic,
                    partitions=[
                        EpochEndOffset(
                            error_code=DESCRIBE_TOPIC.denied,
                            partition=p.partition,
                            leader_epoch=-1,
                            end_offset=-1,
                        )
                        for p in topic.partitions
                    ],
                )
            )
            continue
        topics.append(
            TopicResult(
                topic=topic.topic,
                partitions=[
                    _end_offset(replica_manager, topic.topic, p, ctx.api_version, leader_only) for p in topic.partitions
                ],
            )
        )
    return OffsetForLeaderEpochResponse(throttle_time_ms=0, topics=topics + denied)


def _end_offset(
    replica_manager: ReplicaService,
    topic: str,
    p: OffsetForLeaderEpochRequest.OffsetForLeaderPartition,
    version: int,
    leader_only: bool,
) -> EpochEndOffset:
    current = p.current_leader_epoch if version >= 2 else -1
    try:
        epoch, end_offset = replica_manager.end_offset_for_epoch(
            topic, p.partition, p.leader_epoch, current, leader_only=leader_only
        )
    except KafkaError as exc:
        return EpochEndOffset(error_code=exc.code, partition=p.partition, leader_epoch=-1, end_offset=-1)
    return EpochEndOffset(error_code=ErrorCode.NONE, partition=p.partition, leader_epoch=epoch, end_offset=end_offset)
