"""CreateTopics (key 19), versions 0-7.

Creates topics with a partition count and replication factor (-1 takes num.partitions and
default.replication.factor) or with replica assignments chosen by the client, and with config
overrides, answering as Kafka 3.9's controller does. Checks, in order, for each topic:

1. it does not exist yet (TOPIC_ALREADY_EXISTS), its name is legal and does not collide with an
   existing topic's (INVALID_TOPIC_EXCEPTION);
2. its configs: no null values, known names, valid values (INVALID_CONFIG);
3. its assignments (INVALID_REQUEST when a count was given too, INVALID_REPLICA_ASSIGNMENT), or
   its replication factor (INVALID_REPLICATION_FACTOR) and partition count (INVALID_PARTITIONS).

Names given twice fail with INVALID_REQUEST, `__cluster_metadata` with TOPIC_AUTHORIZATION_FAILED.
A non-positive `timeout_ms` fails every topic with REQUEST_TIMED_OUT (controller_rules). With
`validate_only` (v1+) nothing is created. Error messages go out from v1; from v5 a created topic's
partition count, replication factor and effective configs, from v7 its id (a fresh random id for
`validate_only`, as Kafka's controller answers).

Authorization as Kafka: CREATE on the cluster, or else on each topic (TOPIC_AUTHORIZATION_FAILED,
"Authorization failed."); without DESCRIBE_CONFIGS on a topic its result carries no configs,
partition count or replication factor, and `topic_config_error_code` TOPIC_AUTHORIZATION_FAILED.

The client's `controller_mutation_rate` quota counts the partitions created; from v6 a topic is
refused with THROTTLING_QUOTA_EXCEEDED while the quota is exceeded, before v6 it is created and
the response throttled (Kafka's strict and permissive controller mutation quotas).
"""

from __future__ import annotations

import uuid
from collections.abc import Set

from ..cluster.model import new_topic_id
from ..config import describe_topic_configs
from ..protocol.api_keys import ApiKey
from ..protocol.codegen import ZERO_UUID
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import CreateTopicsRequest, CreateTopicsResponse
from .support.authorization import check
from .support.config_admin import check_topic_overrides, effective_broker_config
from .support.context import RequestContext
from .support.controller_rules import (
    CLUSTER_METADATA_TOPIC,
    check_manual_assignment,
    check_new_topic_name,
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

STRICT_QUOTA_SINCE_VERSION = 6  # the first version that knows THROTTLING_QUOTA_EXCEEDED
API_KEY = ApiKey.CREATE_TOPICS
MIN_VERSION = 0
MAX_VERSION = 7

Result = CreateTopicsResponse.CreatableTopicResult
CreatableTopic = CreateTopicsRequest.CreatableTopic
CREATE_ON_CLUSTER = check(API_KEY, "cluster")
CREATE_TOPIC = check(API_KEY, "topic")
DESCRIBE_TOPIC_CONFIGS = check(API_KEY, "configs")


async def handle(request: CreateTopicsRequest, ctx: RequestContext) -> CreateTopicsResponse:
    names = [topic.name for topic in request.topics]
    twice = duplicated(names)
    accepted = [topic for topic in request.topics if topic.name not in twice and topic.name != CLUSTER_METADATA_TOPIC]
    if accepted and deadline_passed(request.timeout_ms):
        return CreateTopicsResponse(topics=[_failure(name, KafkaError(ErrorCode.REQUEST_TIMED_OUT)) for name in names])
    existing = set(ctx.services.metadata.topics())
    creatable = set(names) if CREATE_ON_CLUSTER.allows(ctx, log_if_denied=False) else None
    if creatable is None:
        creatable = CREATE_TOPIC.allowed(ctx, names)
    quota = controller_mutation_quota(ctx, STRICT_QUOTA_SINCE_VERSION)
    created = [
        _authorized_result(topic.name, creatable, ctx) or _create(topic, existing, request.validate_only, ctx, quota)
        for topic in accepted
    ]
    throttle_mutations(ctx, quota)
    await ctx.services.metadata.wait_durable()  # the topics are on disk before they are acknowledged
    return CreateTopicsResponse(topics=created + _refused(names, twice))


def _refused(names: list[str], twice: set[str]) -> list[Result]:
    """The results of names given twice, and of Kafka's own metadata topic."""
    refused = [
        _failure(name, KafkaError(ErrorCode.INVALID_REQUEST, "Duplicate topic name."))
        for name in dict.fromkeys(names)
        if name in twice
    ]
    if CLUSTER_METADATA_TOPIC in names and CLUSTER_METADATA_TOPIC not in twice:
        refused.append(
            _failure(CLUSTER_METADATA_TOPIC, KafkaError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed."))
        )
    return refused


def _authorized_result(name: str, creatable: set[str], ctx: RequestContext) -> Result | None:
    """The result of a topic the caller may not create; None when it may."""
    if name in creatable:
        return None
    result = _failure(name, KafkaError(CREATE_TOPIC.denied, "Authorization failed."))
    if not DESCRIBE_TOPIC_CONFIGS.allows(ctx, name, log_if_denied=False):
        result.topic_config_error_code = DESCRIBE_TOPIC_CONFIGS.denied
    return result


def _create(
    topic: CreatableTopic,
    existing: set[str],
    validate_only: bool,
    ctx: RequestContext,
    quota: ControllerMutationQuota | None = None,
) -> Result:
    try:
        overrides = _checked_topic(topic, existing)
        assignments = _replica_assignments(topic, ctx)
        if validate_only:
            topic_id = new_topic_id()
        else:
            record_mutations(quota, len(assignments))
            topic_id = _create_in_store(topic.name, assignments, overrides, ctx)
    except KafkaError as exc:
        return _failure(topic.name, exc)
    return _success(topic.name, topic_id, assignments, overrides, ctx)


def _create_in_store(
    name: str, assignments: dict[int, list[int]], overrides: dict[str, str], ctx: RequestContext
) -> uuid.UUID:
    info = ctx.services.topic_creator.create(name, len(assignments), len(assignments[0]), overrides, assignments)
    return info.topic_id


def _checked_topic(topic: CreatableTopic, existing: set[str]) -> dict[str, str]:
    """The topic's config overrides, once its name and configs pass Kafka's checks."""
    if topic.name in existing:
        raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{topic.name}' already exists.")
    check_new_topic_name(topic.name, existing)
    given = {config.name: config.value for config in topic.configs}
    check_topic_overrides(given)  # it refuses null values (INVALID_CONFIG)
    return {name: value for name, value in given.items() if value is not None}  # all of them, once checked


# --------------------------------------------------------------------------------------------
# Replica assignments


def _replica_assignments(topic: CreatableTopic, ctx: RequestContext) -> dict[int, list[int]]:
    """{partition: replicas}, chosen by the client or placed on the brokers."""
    if topic.assignments:
        return _manual_assignments(topic, registered_brokers(ctx))
    if topic.replication_factor < -1 or topic.replication_factor == 0:
        raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
    if topic.num_partitions < -1 or topic.num_partitions == 0:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
    return _placed_assignments(topic, ctx)


def _refuse_duplicate_replicas(topic: CreatableTopic) -> None:
    """A broker named twice in one partition's replicas: Kafka 3.9's ZooKeeper-mode message shows
    the whole assignment as the Scala map it holds (partitions in ascending order)."""
    if all(len(set(a.broker_ids)) == len(a.broker_ids) for a in topic.assignments):
        return
    by_partition = {a.partition_index: a.broker_ids for a in topic.assignments}
    shown = ", ".join(
        f"{partition} -> ArrayBuffer({', '.join(map(str, by_partition[partition]))})"
        for partition in sorted(by_partition)
    )
    raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Duplicate replica assignment found: HashMap({shown})")


def _manual_assignments(topic: CreatableTopic, registered: Set[int]) -> dict[int, list[int]]:
    if topic.replication_factor != -1 or topic.num_partitions != -1:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            "Both numPartitions or replicationFactor and replicasAssignments were set. "
            "Both cannot be used at the same time.",
        )
    _refuse_duplicate_replicas(topic)
    replicas_by_partition: dict[int, list[int]] = {}
    replication_factor = None
    for assignment in topic.assignments:
        if assignment.partition_index in replicas_by_partition:
            raise KafkaError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Found multiple manual partition assignments for partition {assignment.partition_index}",
            )
        check_manual_assignment(assignment.broker_ids, registered, replication_factor)
        replication_factor = len(assignment.broker_ids)
        replicas_by_partition[assignment.partition_index] = list(assignment.broker_ids)
    if set(replicas_by_partition) != set(range(len(replicas_by_partition))):
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT, "partitions should be a consecutive 0-based integer sequence"
        )
    return dict(sorted(replicas_by_partition.items()))


def _placed_assignments(topic: CreatableTopic, ctx: RequestContext) -> dict[int, list[int]]:
    config = ctx.services.config
    num_partitions = config["num.partitions"] if topic.num_partitions == -1 else topic.num_partitions
    replication_factor = (
        config["default.replication.factor"] if topic.replication_factor == -1 else topic.replication_factor
    )
    return dict(enumerate(place_replicas(sorted(registered_brokers(ctx)), num_partitions, replication_factor)))


# --------------------------------------------------------------------------------------------
# Results


def _success(
    name: str, topic_id: uuid.UUID, assignments: dict[int, list[int]], overrides: dict[str, str], ctx: RequestContext
) -> Result:
    if not DESCRIBE_TOPIC_CONFIGS.allows(ctx, name, log_if_denied=False):
        return Result(
            name=name,
            topic_id=topic_id,
            error_code=ErrorCode.NONE,
            error_message=None,
            topic_config_error_code=DESCRIBE_TOPIC_CONFIGS.denied,
        )
    return Result(
        name=name,
        topic_id=topic_id,
        error_code=ErrorCode.NONE,
        error_message=None,
        num_partitions=len(assignments),
        replication_factor=len(assignments[0]),
        configs=_effective_configs(overrides, ctx),
    )


def _effective_configs(
    overrides: dict[str, str], ctx: RequestContext
) -> list[CreateTopicsResponse.CreatableTopicConfigs]:
    return [
        CreateTopicsResponse.CreatableTopicConfigs(
            name=entry.name,
            value=entry.value,
            read_only=entry.read_only,
            config_source=entry.source,
            is_sensitive=entry.is_sensitive,
        )
        for entry in describe_topic_configs(overrides, effective_broker_config(ctx.services))
    ]


def _failure(name: str, error: KafkaError) -> Result:
    return Result(name=name, topic_id=ZERO_UUID, error_code=error.code, error_message=error.message)
