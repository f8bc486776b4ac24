"""DeleteRecords (key 21), versions 0-2.

Moves the log start offset of partitions this broker leads up to the requested offset (-1: the
high watermark) and answers each partition with its new low watermark. A partition that does not
exist answers UNKNOWN_TOPIC_OR_PARTITION, one of an internal topic INVALID_TOPIC_EXCEPTION, one
whose cleanup.policy does not include "delete" POLICY_VIOLATION, and the replica manager's
refusals (OFFSET_OUT_OF_RANGE, NOT_LEADER_OR_FOLLOWER, ...) pass through; a failed partition's
low watermark is -1.

The deletion itself is the replica manager's (`delete_records(topic, partition, offset)`).

Authorization as Kafka: DELETE on each topic (TOPIC_AUTHORIZATION_FAILED before anything else).
"""

from __future__ import annotations

from ..cluster.model import INTERNAL_TOPICS
from ..config import topic_config_values
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import DeleteRecordsRequest, DeleteRecordsResponse
from .support.authorization import check
from .support.config_admin import effective_broker_config
from .support.context import RequestContext

API_KEY = ApiKey.DELETE_RECORDS
MIN_VERSION = 0
MAX_VERSION = 2

DELETE_TOPIC = check(API_KEY, "topic")
TopicResult = DeleteRecordsResponse.DeleteRecordsTopicResult
PartitionResult = DeleteRecordsResponse.DeleteRecordsPartitionResult

INVALID_LOW_WATERMARK = -1


async def handle(request: DeleteRecordsRequest, ctx: RequestContext) -> DeleteRecordsResponse:
    by_topic: dict[str, list[PartitionResult]] = {}
    for topic in request.topics:
        by_topic.setdefault(topic.name, []).extend(
            _delete(topic.name, partition, ctx) for partition in topic.partitions
        )
    return DeleteRecordsResponse(
        topics=[TopicResult(name=name, partitions=partitions) for name, partitions in by_topic.items()]
    )


def _delete(topic: str, partition: DeleteRecordsRequest.DeleteRecordsPartition, ctx: RequestContext) -> PartitionResult:
    try:
        low_watermark = _delete_before(topic, partition.partition_index, partition.offset, ctx)
    except KafkaError as exc:
        return PartitionResult(
            partition_index=partition.partition_index, low_watermark=INVALID_LOW_WATERMARK, error_code=exc.code
        )
    return PartitionResult(
        partition_index=partition.partition_index, low_watermark=low_watermark, error_code=ErrorCode.NONE
    )


def _delete_before(topic: str, index: int, offset: int, ctx: RequestContext) -> int:
    if not DELETE_TOPIC.allows(ctx, topic):
        raise KafkaError(DELETE_TOPIC.denied)
    info = ctx.services.metadata.topic(topic)
    if info is None or index not in info.partitions:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    if topic in INTERNAL_TOPICS:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Cannot delete records of internal topic {topic}")
    if "delete" not in topic_config_values(info.configs, effective_broker_config(ctx.services))["cleanup.policy"]:
        raise KafkaError(
            ErrorCode.POLICY_VIOLATION,
            f"Records of partition {topic}-{index} can not be deleted due to the configured policy",
        )
    return ctx.services.replica_manager.delete_records(topic, index, offset)
