"""ElectLeaders (key 43), versions 0-2: preferred (and, from v1, unclean) leader elections.

Served by the controller. For each named partition (all partitions when the list is null):

- PREFERRED (0; the only type before v1): make the first replica of the assignment the leader
  when it is alive and in the ISR (PREFERRED_LEADER_NOT_AVAILABLE otherwise); ELECTION_NOT_NEEDED
  when it already leads.
- UNCLEAN (1): elect a leader for a partition that has none, from the ISR if possible, otherwise
  any live replica (ELIGIBLE_LEADERS_NOT_AVAILABLE when none is alive); ELECTION_NOT_NEEDED when
  it has a live leader.

Unknown partitions get UNKNOWN_TOPIC_OR_PARTITION ("The partition does not exist.", Kafka 3.9's
ZooKeeper-mode controller's words), a broker that is not the controller answers
NOT_CONTROLLER for each, and an unknown election type is INVALID_REQUEST. When every partition
was asked for, those that needed no election are left out of the answer. The top-level error
(v1+) is NONE.
"""

from collections import defaultdict

from ..common.topic_partition import TopicPartition
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ElectLeadersRequest, ElectLeadersResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ELECT_LEADERS
MIN_VERSION = 0
MAX_VERSION = 2

ALTER_CLUSTER = check(API_KEY, "cluster")
PREFERRED, UNCLEAN = 0, 1
NO_SUCH_PARTITION = "The partition does not exist."
ElectionResults = dict[TopicPartition, tuple[ErrorCode, str | None]]  # (error, message) of each partition


async def handle(request: ElectLeadersRequest, ctx: RequestContext) -> ElectLeadersResponse:
    election_type = request.election_type if ctx.api_version >= 1 else PREFERRED
    asked = (
        None
        if request.topic_partitions is None
        else [(entry.topic, partition) for entry in request.topic_partitions for partition in entry.partitions]
    )
    results: ElectionResults
    if not ALTER_CLUSTER.allows(ctx):
        denied = ALTER_CLUSTER.denied
        results = dict.fromkeys(asked or [], (denied, None))
        return ElectLeadersResponse(throttle_time_ms=0, error_code=denied, replica_election_results=_by_topic(results))
    if election_type not in (PREFERRED, UNCLEAN):
        results = {tp: (ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}") for tp in asked or []}
    else:
        results = _with_kafkas_messages(await ctx.services.controller.elect_leaders(election_type, asked))
    if asked is None:
        results = {tp: r for tp, r in results.items() if r[0] != ErrorCode.ELECTION_NOT_NEEDED}
    return ElectLeadersResponse(
        throttle_time_ms=0, error_code=ErrorCode.NONE, replica_election_results=_by_topic(results)
    )


def _with_kafkas_messages(results: ElectionResults) -> ElectionResults:
    unknown = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)
    return {
        tp: (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, NO_SUCH_PARTITION) if r == unknown else r
        for tp, r in results.items()
    }


def _by_topic(results: ElectionResults) -> list[ElectLeadersResponse.ReplicaElectionResult]:
    topics: defaultdict[str, list[ElectLeadersResponse.PartitionResult]] = defaultdict(list)
    for (topic, partition), (error, message) in results.items():
        topics[topic].append(
            ElectLeadersResponse.PartitionResult(partition_id=partition, error_code=error, error_message=message)
        )
    return [
        ElectLeadersResponse.ReplicaElectionResult(topic=topic, partition_result=partitions)
        for topic, partitions in topics.items()
    ]
