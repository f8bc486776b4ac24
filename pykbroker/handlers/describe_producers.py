"""DescribeProducers (key 61), version 0.

The active producers of each requested partition, from the producer state of its local replica
(leader or follower, as Kafka: the admin client asks the leader unless told otherwise): producer
id, epoch, last sequence, last timestamp, coordinator epoch of its last transaction marker, and
the first offset of its ongoing transaction (-1 when none).

- Errors as Kafka's: an illegal topic name is INVALID_TOPIC_EXCEPTION and an unknown topic
  UNKNOWN_TOPIC_OR_PARTITION (both with a message, for every partition asked); a partition this
  broker hosts no replica of is NOT_LEADER_OR_FOLLOWER, or UNKNOWN_TOPIC_OR_PARTITION when the
  topic has no such partition.
"""

from __future__ import annotations

from ..cluster.model import validate_topic_name
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import DescribeProducersRequest, DescribeProducersResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import ReplicaService

API_KEY = ApiKey.DESCRIBE_PRODUCERS
MIN_VERSION = 0
MAX_VERSION = 0

READ_TOPIC = check(API_KEY, "topic")


async def handle(request: DescribeProducersRequest, ctx: RequestContext) -> DescribeProducersResponse:
    topics: list[DescribeProducersResponse.TopicResponse] = []
    for topic in request.topics:
        topic_error = _topic_error(topic.name, ctx)
        topics.append(
            DescribeProducersResponse.TopicResponse(
                name=topic.name,
                partitions=[
                    _partition(ctx.services.replica_manager, topic.name, index, topic_error)
                    for index in topic.partition_indexes
                ],
            )
        )
    return DescribeProducersResponse(throttle_time_ms=0, topics=topics)


def _topic_error(name: str, ctx: RequestContext) -> KafkaError | None:
    if not READ_TOPIC.allows(ctx, name):
        return KafkaError(READ_TOPIC.denied)
    try:
        validate_topic_name(name)
    except KafkaError as exc:
        return exc
    if ctx.services.metadata.topic(name) is None:
        return KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    return None


def _partition(
    replica_manager: ReplicaService, topic: str, index: int, topic_error: KafkaError | None
) -> DescribeProducersResponse.PartitionResponse:
    if topic_error is not None:
        return DescribeProducersResponse.PartitionResponse(
            partition_index=index, error_code=topic_error.code, error_message=topic_error.message_or_default
        )
    try:
        producers = replica_manager.active_producers(topic, index)
    except KafkaError as exc:
        return DescribeProducersResponse.PartitionResponse(partition_index=index, error_code=exc.code)
    return DescribeProducersResponse.PartitionResponse(
        partition_index=index,
        error_code=ErrorCode.NONE,
        active_producers=[
            DescribeProducersResponse.ProducerState(
                producer_id=p.producer_id,
                producer_epoch=p.producer_epoch,
                last_sequence=p.last_seq,
                last_timestamp=p.last_timestamp,
                coordinator_epoch=p.coordinator_epoch,
                current_txn_start_offset=p.current_txn_first_offset,
            )
            for p in producers
        ],
    )
