"""IncrementalAlterConfigs (key 44), versions 0-1.

Changes single keys of a resource: SET (0) a value, DELETE (1) an override, APPEND (2) values to
or SUBTRACT (3) values from a LIST config (starting from its default when it is not set).

* Topics (resource type 2): the resulting overrides must be valid topic configs (INVALID_CONFIG;
  APPEND/SUBTRACT on a key that is not a LIST fails the same way) of an existing topic
  (UNKNOWN_TOPIC_OR_PARTITION); they are kept in the metadata store.
* This broker (4, named by its id) or the cluster-wide default (the empty name): the resulting
  dynamic configs must be dynamically updatable with valid values (INVALID_REQUEST with Kafka's
  message otherwise); they are kept in the metadata store.
* Groups (32, Kafka 4's group configs, with the Kafka 4 group protocols on): valid group configs
  (INVALID_CONFIG with Kafka's message); they are kept in the metadata store, the group need not exist.
* This broker's loggers (8): SET a log4j level name or DELETE a logger's own level; not kept
  across restarts (broker_loggers).

Before that, every resource is checked as Kafka's broker checks it: each resource at most once,
no config named twice, a value for every operation but DELETE, and a known resource type
(INVALID_REQUEST otherwise). With `validate_only` nothing changes.
"""

from __future__ import annotations

from functools import partial

from ..config import BROKER_CONFIGS
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse
from .support import broker_loggers
from .support.authorization import check
from .support.config_admin import (
    NOT_ALTERED_HERE,
    ConfigChecks,
    ConfigResourceType,
    OpType,
    alter_each_resource,
    apply_operations,
    broker_list_default,
    check_config_entries,
    check_dynamic_broker_configs,
    check_group_name_for_configs,
    check_operation,
    check_topic_name_for_configs,
    check_topic_overrides,
    config_authorization_error,
    not_altered_here,
    parse_int32,
    parse_node_id,
    serves_group_configs,
    store_broker_configs,
    store_group_configs,
    stored_broker_configs,
    topic_list_default,
    topic_missing,
)
from .support.context import RequestContext

API_KEY = ApiKey.INCREMENTAL_ALTER_CONFIGS
MIN_VERSION = 0
MAX_VERSION = 1

AlterConfigsResource = IncrementalAlterConfigsRequest.AlterConfigsResource
Result = IncrementalAlterConfigsResponse.AlterConfigsResourceResponse
CONFIG_CHECKS = ConfigChecks(
    topic=check(API_KEY, "topic"), cluster=check(API_KEY, "cluster"), group=check(API_KEY, "group")
)


Operation = tuple[str, int, "str | None"]  # (config name, operation, value)


async def handle(request: IncrementalAlterConfigsRequest, ctx: RequestContext) -> IncrementalAlterConfigsResponse:
    alter = partial(_alter, validate_only=request.validate_only, ctx=ctx)
    responses = alter_each_resource(request, Result, alter)
    await ctx.services.metadata.wait_durable()  # the new configs are on disk before they are acknowledged
    return IncrementalAlterConfigsResponse(responses=responses)


def _alter(resource: AlterConfigsResource, *, validate_only: bool, ctx: RequestContext) -> None:
    denied = config_authorization_error(ctx, CONFIG_CHECKS, resource)
    if denied is not None:
        raise KafkaError(denied, None)
    check_config_entries(resource.configs, value_required=lambda entry: entry.config_operation != OpType.DELETE)
    operations = [(entry.name, entry.config_operation, entry.value) for entry in resource.configs]
    kind = resource.resource_type
    if kind == ConfigResourceType.BROKER_LOGGER:
        _alter_loggers(resource.resource_name, operations, validate_only, ctx)
    elif kind == ConfigResourceType.BROKER:
        _alter_broker(resource.resource_name, operations, validate_only, ctx)
    elif kind == ConfigResourceType.TOPIC:
        _alter_topic(resource.resource_name, operations, validate_only, ctx)
    elif kind == ConfigResourceType.GROUP and serves_group_configs(ctx.services):
        _alter_group(resource.resource_name, operations, validate_only, ctx)
    elif kind in NOT_ALTERED_HERE:
        raise not_altered_here(kind)
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {kind}")


def _alter_loggers(name: str, operations: list[Operation], validate_only: bool, ctx: RequestContext) -> None:
    node_id, broker_id = parse_int32(name), ctx.services.broker_id
    if node_id is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}")
    if node_id != broker_id:
        # Kafka's message names this broker's id twice
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"Unexpected node id. Expected {broker_id}, but received {broker_id}"
        )
    broker_loggers.check_changes(operations)
    if not validate_only:
        broker_loggers.apply_changes(operations)


def _alter_broker(name: str, operations: list[Operation], validate_only: bool, ctx: RequestContext) -> None:
    node_id = parse_node_id(name, ctx.services.broker_id) if name else None
    for _, op, _ in operations:
        check_operation(op)
    current = stored_broker_configs(ctx.services, node_id)
    proposed = apply_operations(current, operations, broker_list_default, _broker_key_not_a_list)
    check_dynamic_broker_configs(ctx.services, node_id, proposed)
    if not validate_only:
        store_broker_configs(ctx.services, node_id, proposed)


def _broker_key_not_a_list(key: str, op: OpType) -> KafkaError:
    if key not in BROKER_CONFIGS:
        return KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)  # Kafka fails on the unknown key this way
    return KafkaError(ErrorCode.INVALID_CONFIG, f"Config value {op.name.lower()} is not allowed for config key: {key}")


def _alter_topic(name: str, operations: list[Operation], validate_only: bool, ctx: RequestContext) -> None:
    for _, op, _ in operations:
        check_operation(op)
    check_topic_name_for_configs(name)
    info = ctx.services.metadata.topic(name)
    current = info.configs if info is not None else {}
    proposed = apply_operations(current, operations, topic_list_default, _topic_key_not_a_list)
    check_topic_overrides(proposed, altered_topic=name)
    if info is None:
        raise topic_missing(name)
    if not validate_only:
        ctx.services.metadata.set_topic_configs(name, proposed)


def _alter_group(name: str, operations: list[Operation], validate_only: bool, ctx: RequestContext) -> None:
    for _, op, _ in operations:
        check_operation(op)
    check_group_name_for_configs(name)
    current = ctx.services.metadata.group_configs(name)
    proposed = apply_operations(current, operations, _no_list_default, _group_key_not_a_list)
    store_group_configs(ctx.services, name, proposed, validate_only)


def _no_list_default(key: str) -> str | None:
    raise KeyError(key)  # no group config is a LIST


def _group_key_not_a_list(key: str, op: OpType) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_CONFIG, f"Config value {op.name.lower()} is not allowed for config key: {key}")


def _topic_key_not_a_list(key: str, op: OpType) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_CONFIG, f"Can't {op.name} to key {key} because its type is not LIST.")
