"""CreatePartitions (key 37), versions 0-3.

Grows topics to a new partition count, with replicas chosen by the client (one list per new
partition) or placed on the brokers with the topic's replication factor, answering as Kafka
3.9's controller does:

* a name given twice: INVALID_REQUEST "Duplicate topic name.";
* a non-positive `timeout_ms` fails every topic with REQUEST_TIMED_OUT (controller_rules);
* an unknown topic: UNKNOWN_TOPIC_OR_PARTITION "The topic 'T' does not exist.";
* the same count: INVALID_PARTITIONS "Topic already has N partitions.", a lower one:
  INVALID_PARTITIONS "Topic currently has N partitions, which is higher than the requested C.";
* as many assignments as new partitions ("Increasing the number of partitions by A but B
  assignments provided." otherwise), each valid (INVALID_REPLICA_ASSIGNMENT).

These messages are Kafka 3.9.0's in ZooKeeper mode (ZkAdminManager, AdminZkClient), which Kafka's
tools print.

With `validate_only` nothing changes.

Authorization as Kafka: ALTER on each topic (TOPIC_AUTHORIZATION_FAILED, "The topic
authorization is failed.").

The client's `controller_mutation_rate` quota counts the partitions created; from v3 a topic is refused
with THROTTLING_QUOTA_EXCEEDED while the quota is exceeded, before v3 the change is made and the
response throttled (Kafka's strict and permissive controller mutation quotas).
"""

from __future__ import annotations

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import CreatePartitionsRequest, CreatePartitionsResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.controller_rules import (
    check_manual_assignment,
    deadline_passed,
    duplicated,
    place_replicas,
    registered_brokers,
)
from .support.quota_requests import (
    ControllerMutationQuota,
    controller_mutation_quota,
    record_mutations,
    throttle_mutations,
)

STRICT_QUOTA_SINCE_VERSION = 3  # the first version that knows THROTTLING_QUOTA_EXCEEDED
API_KEY = ApiKey.CREATE_PARTITIONS
MIN_VERSION = 0
MAX_VERSION = 3

ALTER_TOPIC = check(API_KEY, "topic")
Result = CreatePartitionsResponse.CreatePartitionsTopicResult
CreatePartitionsTopic = CreatePartitionsRequest.CreatePartitionsTopic


async def handle(request: CreatePartitionsRequest, ctx: RequestContext) -> CreatePartitionsResponse:
    names = [topic.name for topic in request.topics]
    twice = duplicated(names)
    accepted = [topic for topic in request.topics if topic.name not in twice]
    if accepted and deadline_passed(request.timeout_ms):
        return CreatePartitionsResponse(
            results=[Result(name=name, error_code=ErrorCode.REQUEST_TIMED_OUT) for name in names]
        )
    results = [
        Result(name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name.")
        for name in dict.fromkeys(names)
        if name in twice
    ]
    quota = controller_mutation_quota(ctx, STRICT_QUOTA_SINCE_VERSION)
    results += [_grow(topic, request.validate_only, ctx, quota) for topic in accepted]
    throttle_mutations(ctx, quota)
    await ctx.services.metadata.wait_durable()  # the new partitions are on disk before they are acknowledged
    return CreatePartitionsResponse(results=results)


def _grow(
    topic: CreatePartitionsTopic, validate_only: bool, ctx: RequestContext, quota: ControllerMutationQuota | None = None
) -> Result:
    if not ALTER_TOPIC.allows(ctx, topic.name):
        return Result(
            name=topic.name,
            error_code=ALTER_TOPIC.denied,
            error_message="The topic authorization is failed.",
        )
    try:
        new_replicas = _new_partitions(topic, ctx)
    except KafkaError as exc:
        return Result(name=topic.name, error_code=exc.code, error_message=exc.message)
    if not validate_only:
        try:
            record_mutations(quota, len(new_replicas))
            ctx.services.metadata.add_partitions(topic.name, topic.count, new_replicas)
        except KafkaError as exc:  # KAFKA_STORAGE_ERROR: their logs could not be created (none was added)
            return Result(name=topic.name, error_code=exc.code, error_message=exc.message)
    return Result(name=topic.name, error_code=ErrorCode.NONE)


def _new_partitions(topic: CreatePartitionsTopic, ctx: RequestContext) -> list[list[int]]:
    """The replicas of each partition to add, once the request passes Kafka's checks."""
    info = ctx.services.metadata.topic(topic.name)
    if info is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{topic.name}' does not exist.")
    current = len(info.partitions)
    if topic.count == current:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partitions.")
    if topic.count < current:
        raise KafkaError(
            ErrorCode.INVALID_PARTITIONS,
            f"Topic currently has {current} partitions, which is higher than the requested {topic.count}.",
        )
    added = topic.count - current
    if topic.assignments is None:
        return place_replicas(sorted(registered_brokers(ctx)), added, info.replication_factor, current)
    if len(topic.assignments) != added:
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Increasing the number of partitions by {added} but {len(topic.assignments)} assignments provided.",
        )
    registered = registered_brokers(ctx)
    for assignment in topic.assignments:
        check_manual_assignment(assignment.broker_ids, registered, info.replication_factor)
    return [list(assignment.broker_ids) for assignment in topic.assignments]
