"""DescribeConfigs (key 32), versions 0-4.

Describes the configs of topics (resource type 2), of this broker (4, named by its id; the empty
name describes the cluster-wide dynamic defaults), of its loggers (8) and of client metrics
subscriptions (16; this broker keeps none, so they have no configs) and of groups (32, Kafka 4's
group configs: every key, GROUP_CONFIG where the group sets it, else its default; served with the
Kafka 4 group protocols on, see cluster/features.py). Each entry has its value
(null for sensitive configs), whether it is read-only, its source (v1+; `is_default` in v0),
its synonyms (v1+, when asked), its type (v3+) and documentation (v3+, when asked; null where
this project has none).

`configuration_keys` null or empty asks for every config.
Failures are per resource, as in Kafka: an illegal topic name (INVALID_TOPIC_EXCEPTION), an
unknown topic (UNKNOWN_TOPIC_OR_PARTITION), another broker's id or a name that is not a number
(INVALID_REQUEST). A resource type Kafka does
not describe fails the whole request: every resource gets INVALID_REQUEST. Resources the caller
may not DESCRIBE_CONFIGS (on the topic; on the cluster for brokers, loggers and client metrics)
come last with TOPIC_/CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cluster.model import validate_topic_name
from ..config import (
    BROKER_CONFIGS,
    TOPIC_CONFIGS,
    ConfigEntry,
    ConfigSource,
    describe_broker_configs,
    describe_topic_configs,
)
from ..config.groups import describe_group_configs
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import DescribeConfigsRequest, DescribeConfigsResponse
from .support.authorization import check
from .support.broker_loggers import logger_levels
from .support.config_admin import (
    ConfigChecks,
    ConfigResourceType,
    config_authorization_error,
    effective_broker_config,
    parse_int32,
    serves_group_configs,
)
from .support.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CONFIGS
MIN_VERSION = 0
MAX_VERSION = 4

DescribeConfigsResource = DescribeConfigsRequest.DescribeConfigsResource
Result = DescribeConfigsResponse.DescribeConfigsResult
Entry = DescribeConfigsResponse.DescribeConfigsResourceResult
Synonym = DescribeConfigsResponse.DescribeConfigsSynonym
CONFIG_CHECKS = ConfigChecks(
    topic=check(API_KEY, "topic"), cluster=check(API_KEY, "cluster"), group=check(API_KEY, "group")
)

DESCRIBABLE = {
    ConfigResourceType.TOPIC,
    ConfigResourceType.BROKER,
    ConfigResourceType.BROKER_LOGGER,
    ConfigResourceType.CLIENT_METRICS,
}


@dataclass(frozen=True)
class Options:
    include_synonyms: bool
    include_documentation: bool


async def handle(request: DescribeConfigsRequest, ctx: RequestContext) -> DescribeConfigsResponse:
    describable = DESCRIBABLE | ({ConfigResourceType.GROUP} if serves_group_configs(ctx.services) else set())
    if any(resource.resource_type not in describable for resource in request.resources):
        return DescribeConfigsResponse(
            results=[
                _failure(resource, KafkaError(ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST.message))
                for resource in request.resources
            ]
        )
    options = Options(
        include_synonyms=ctx.api_version >= 1 and request.include_synonyms,
        include_documentation=ctx.api_version >= 3 and request.include_documentation,
    )
    allowed, denied = [], []
    for resource in request.resources:
        error = config_authorization_error(ctx, CONFIG_CHECKS, resource)
        if error is None:
            allowed.append(_describe(resource, options, ctx))
        else:
            denied.append(_failure(resource, KafkaError(error, error.message)))
    return DescribeConfigsResponse(results=allowed + denied)  # Kafka answers the denied resources last


def _describe(resource: DescribeConfigsResource, options: Options, ctx: RequestContext) -> Result:
    try:
        entries = _entries(resource, options, ctx)
    except KafkaError as exc:
        return _failure(resource, exc)
    wanted = resource.configuration_keys
    if wanted:
        entries = [entry for entry in entries if entry.name in wanted]
    return Result(
        error_code=ErrorCode.NONE,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        configs=entries,
    )


def _failure(resource: DescribeConfigsResource, error: KafkaError) -> Result:
    return Result(
        error_code=error.code,
        error_message=error.message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
        configs=[],
    )


def _entries(resource: DescribeConfigsResource, options: Options, ctx: RequestContext) -> list[Entry]:
    kind = ConfigResourceType(resource.resource_type)
    if kind is ConfigResourceType.TOPIC:
        return _topic_entries(resource.resource_name, options, ctx)
    if kind is ConfigResourceType.BROKER:
        return _broker_entries(resource.resource_name, options, ctx)
    if kind is ConfigResourceType.BROKER_LOGGER:
        return _logger_entries(resource.resource_name, ctx.services.broker_id)
    if kind is ConfigResourceType.GROUP:
        return _group_entries(resource.resource_name, options, ctx)
    return _client_metrics_entries(resource.resource_name)


def _topic_entries(name: str, options: Options, ctx: RequestContext) -> list[Entry]:
    validate_topic_name(name)
    info = ctx.services.metadata.topic(name)
    if info is None:
        raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "")  # Kafka leaves the message empty
    entries = describe_topic_configs(info.configs, effective_broker_config(ctx.services))
    return [_entry(entry, options, TOPIC_CONFIGS[entry.name].doc) for entry in entries]


def _broker_entries(name: str, options: Options, ctx: RequestContext) -> list[Entry]:
    broker_id = ctx.services.broker_id
    if name:
        node_id = parse_int32(name)
        if node_id is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
        if node_id != broker_id:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                f"Unexpected broker id, expected {broker_id} or empty string, but received {name}",
            )
    entries = describe_broker_configs(effective_broker_config(ctx.services), per_broker=bool(name))
    return [_entry(entry, options, _broker_doc(entry.name)) for entry in entries]


def _group_entries(name: str, options: Options, ctx: RequestContext) -> list[Entry]:
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Group name must not be empty")
    overrides = ctx.services.metadata.group_configs(name)
    entries = describe_group_configs(overrides, effective_broker_config(ctx.services))
    return [_entry(entry, options, "") for entry in entries]


def _broker_doc(name: str) -> str:
    definition = BROKER_CONFIGS.get(name)
    return definition.doc if definition is not None else ""


def _logger_entries(name: str, broker_id: int) -> list[Entry]:
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Broker id must not be empty")
    node_id = parse_int32(name)
    if node_id is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Broker id must be an integer, but it is: {name}")
    if node_id != broker_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {broker_id} but received {name}")
    return [
        Entry(
            name=logger,
            value=level,
            read_only=False,
            is_sensitive=False,
            synonyms=[],
            config_source=ConfigSource.DYNAMIC_BROKER_LOGGER_CONFIG,
        )
        for logger, level in logger_levels().items()
    ]


def _client_metrics_entries(name: str) -> list[Entry]:
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Client metrics subscription name must not be empty")
    return []


def _entry(entry: ConfigEntry, options: Options, documentation: str) -> Entry:
    synonyms = [Synonym(name=s.name, value=s.value, source=s.source) for s in entry.synonyms]
    return Entry(
        name=entry.name,
        value=entry.value,
        read_only=entry.read_only,
        is_default=entry.is_default,
        config_source=entry.source,
        is_sensitive=entry.is_sensitive,
        synonyms=synonyms if options.include_synonyms else [],
        config_type=entry.type,
        documentation=(documentation or None) if options.include_documentation else None,
    )
