"""AlterConfigs (key 33), versions 0-2.

Replaces the whole set of overrides of a resource, as Kafka's (deprecated) AlterConfigs does:
keys the request leaves out go back to their defaults.

* Topics (resource type 2): the overrides must be valid topic configs (INVALID_CONFIG) of an
  existing topic (UNKNOWN_TOPIC_OR_PARTITION); they are kept in the metadata store.
* This broker (4, named by its id) or the cluster-wide default (the empty name): the keys must be
  dynamically updatable broker configs with valid values (INVALID_REQUEST with Kafka's message
  otherwise); they become the dynamic broker configs kept in the metadata store.

Before that, every resource is checked as Kafka's broker checks it: each resource at most once,
no config named twice, no null value, and a resource type AlterConfigs handles (INVALID_REQUEST
otherwise; BROKER_LOGGER needs IncrementalAlterConfigs). With `validate_only` nothing changes.
"""

from __future__ import annotations

from functools import partial

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import AlterConfigsRequest, AlterConfigsResponse
from .support.authorization import check
from .support.config_admin import (
    NOT_ALTERED_HERE,
    ConfigChecks,
    ConfigResourceType,
    alter_each_resource,
    check_config_entries,
    check_dynamic_broker_configs,
    check_group_name_for_configs,
    check_topic_name_for_configs,
    check_topic_overrides,
    config_authorization_error,
    not_altered_here,
    parse_node_id,
    serves_group_configs,
    store_broker_configs,
    store_group_configs,
    topic_missing,
)
from .support.context import RequestContext

API_KEY = ApiKey.ALTER_CONFIGS
MIN_VERSION = 0
MAX_VERSION = 2

AlterConfigsResource = AlterConfigsRequest.AlterConfigsResource
Result = AlterConfigsResponse.AlterConfigsResourceResponse
CONFIG_CHECKS = ConfigChecks(
    topic=check(API_KEY, "topic"), cluster=check(API_KEY, "cluster"), group=check(API_KEY, "group")
)


async def handle(request: AlterConfigsRequest, ctx: RequestContext) -> AlterConfigsResponse:
    responses = alter_each_resource(request, Result, partial(_alter, validate_only=request.validate_only, ctx=ctx))
    await ctx.services.metadata.wait_durable()  # the new configs are on disk before they are acknowledged
    return AlterConfigsResponse(responses=responses)


def _alter(resource: AlterConfigsResource, *, validate_only: bool, ctx: RequestContext) -> None:
    if resource.resource_type != ConfigResourceType.BROKER_LOGGER:  # refused below whoever asks
        denied = config_authorization_error(ctx, CONFIG_CHECKS, resource)
        if denied is not None:
            raise KafkaError(denied, None)
    check_config_entries(resource.configs, value_required=lambda entry: True)
    # every value is given (the nulls were refused just above)
    proposed = {entry.name: entry.value for entry in resource.configs if entry.value is not None}
    if resource.resource_type == ConfigResourceType.BROKER:
        _alter_broker(resource.resource_name, proposed, validate_only, ctx)
    elif resource.resource_type == ConfigResourceType.TOPIC:
        _alter_topic(resource.resource_name, proposed, validate_only, ctx)
    elif resource.resource_type == ConfigResourceType.GROUP and serves_group_configs(ctx.services):
        check_group_name_for_configs(resource.resource_name)
        store_group_configs(ctx.services, resource.resource_name, proposed, validate_only)
    elif resource.resource_type in NOT_ALTERED_HERE:
        raise not_altered_here(resource.resource_type)
    else:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {resource.resource_type}")


def _alter_broker(name: str, proposed: dict[str, str], validate_only: bool, ctx: RequestContext) -> None:
    node_id = parse_node_id(name, ctx.services.broker_id) if name else None
    check_dynamic_broker_configs(ctx.services, node_id, proposed)
    if not validate_only:
        store_broker_configs(ctx.services, node_id, proposed)


def _alter_topic(name: str, proposed: dict[str, str], validate_only: bool, ctx: RequestContext) -> None:
    check_topic_name_for_configs(name)
    check_topic_overrides(proposed, altered_topic=name)
    if ctx.services.metadata.topic(name) is None:
        raise topic_missing(name)
    if not validate_only:
        ctx.services.metadata.set_topic_configs(name, proposed)
