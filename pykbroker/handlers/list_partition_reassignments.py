"""ListPartitionReassignments (key 46), version 0: the ongoing partition reassignments, as Kafka
3.9's ZooKeeper-mode controller lists them.

With `topics` null, every partition being reassigned; otherwise those of the named partitions
that are being reassigned (others, known or not, are left out). Each with its replicas (the
original ones followed by the target ones it does not have yet), the replicas being added and
those being removed. Served by the controller (NOT_CONTROLLER at the top elsewhere); the caller
needs DESCRIBE on the cluster (CLUSTER_AUTHORIZATION_FAILED at the top otherwise). On a single
broker no reassignment is ever ongoing.
"""

from __future__ import annotations

from collections import defaultdict

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.LIST_PARTITION_REASSIGNMENTS
MIN_VERSION = 0
MAX_VERSION = 0

DESCRIBE_CLUSTER = check(API_KEY, "cluster")
TopicReassignment = ListPartitionReassignmentsResponse.OngoingTopicReassignment
PartitionReassignment = ListPartitionReassignmentsResponse.OngoingPartitionReassignment


async def handle(request: ListPartitionReassignmentsRequest, ctx: RequestContext) -> ListPartitionReassignmentsResponse:
    if not DESCRIBE_CLUSTER.allows(ctx):
        return _error(DESCRIBE_CLUSTER.denied)
    asked = (
        None
        if request.topics is None
        else list(dict.fromkeys((t.name, p) for t in request.topics for p in t.partition_indexes))
    )
    outcome = await ctx.services.controller.list_partition_reassignments(asked)
    if isinstance(outcome, ErrorCode):
        return _error(outcome)
    topics: defaultdict[str, list[PartitionReassignment]] = defaultdict(list)
    for (topic, partition), assignment in outcome.items():
        topics[topic].append(
            PartitionReassignment(
                partition_index=partition,
                replicas=list(assignment.replicas),
                adding_replicas=list(assignment.adding),
                removing_replicas=list(assignment.removing),
            )
        )
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0,
        error_code=ErrorCode.NONE,
        error_message=None,
        topics=[TopicReassignment(name=name, partitions=partitions) for name, partitions in topics.items()],
    )


def _error(error: ErrorCode) -> ListPartitionReassignmentsResponse:
    return ListPartitionReassignmentsResponse(
        throttle_time_ms=0, error_code=error, error_message=error.message, topics=[]
    )
