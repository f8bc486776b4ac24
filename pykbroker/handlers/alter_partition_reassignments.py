"""AlterPartitionReassignments (key 45), version 0: start, replace or cancel partition
reassignments (KIP-455), served by the controller as Kafka 3.9's ZooKeeper-mode controller does.

For each partition, `replicas` is the target replica list, or null to cancel the partition's
reassignment (back to its original replicas). A target asked while a reassignment runs replaces
it. Errors per partition, with Kafka's messages: INVALID_REPLICA_ASSIGNMENT for an empty list,
duplicate or negative broker ids, or new replicas on brokers that are not alive;
NO_REASSIGNMENT_IN_PROGRESS for a cancellation with nothing to cancel; UNKNOWN_TOPIC_OR_PARTITION
("The partition does not exist.") for a partition the cluster does not have. The answer comes
once the reassignment has started (the assignment written), not when it completes: the
controller completes it in the background once the target replicas are in sync
(ListPartitionReassignments shows it meanwhile).

The caller needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED at the top and for each
partition otherwise); a broker that is not the controller answers NOT_CONTROLLER at the top (the
admin client then asks the controller). On a single broker (no ZooKeeper) the one broker is the
controller: a reassignment to its own replica completes at once, one to another broker is
INVALID_REPLICA_ASSIGNMENT.
"""

from __future__ import annotations

from collections import defaultdict

from ..common.topic_partition import TopicPartition
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ALTER_PARTITION_REASSIGNMENTS
MIN_VERSION = 0
MAX_VERSION = 0

ALTER_CLUSTER = check(API_KEY, "cluster")
TopicResponse = AlterPartitionReassignmentsResponse.ReassignableTopicResponse
PartitionResponse = AlterPartitionReassignmentsResponse.ReassignablePartitionResponse
Results = dict[TopicPartition, tuple[ErrorCode, str | None]]


async def handle(
    request: AlterPartitionReassignmentsRequest, ctx: RequestContext
) -> AlterPartitionReassignmentsResponse:
    asked: dict[TopicPartition, list[int] | None] = {
        (topic.name, partition.partition_index): None if partition.replicas is None else list(partition.replicas)
        for topic in request.topics
        for partition in topic.partitions
    }
    if not ALTER_CLUSTER.allows(ctx):
        return _refused(asked, ALTER_CLUSTER.denied)
    outcome = await ctx.services.controller.alter_partition_reassignments(asked)
    if isinstance(outcome, ErrorCode):
        return AlterPartitionReassignmentsResponse(
            throttle_time_ms=0, error_code=outcome, error_message=outcome.message, responses=[]
        )
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE, error_message=None, responses=_by_topic(outcome)
    )


def _refused(asked: dict[TopicPartition, list[int] | None], error: ErrorCode) -> AlterPartitionReassignmentsResponse:
    """Kafka's getErrorResponse: the error at the top and for every partition."""
    results: Results = dict.fromkeys(asked, (error, error.message))
    return AlterPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=error, error_message=error.message, responses=_by_topic(results)
    )


def _by_topic(results: Results) -> list[TopicResponse]:
    topics: defaultdict[str, list[PartitionResponse]] = defaultdict(list)
    for (topic, partition), (error, message) in results.items():
        topics[topic].append(PartitionResponse(partition_index=partition, error_code=error, error_message=message))
    return [TopicResponse(name=topic, partitions=partitions) for topic, partitions in topics.items()]
