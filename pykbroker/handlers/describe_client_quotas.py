"""DescribeClientQuotas (key 48), versions 0-1.

The client quotas set for users, client ids, (user, client id) pairs and IPs, and their defaults,
as Kafka 3.9's ZkAdminManager.describeClientQuotas answers on any broker, from the entity configs
the metadata store keeps (`/config/users/...`, `/config/clients/...`, `/config/ips/...` in a
cluster). Only the quota keys are shown (`producer_byte_rate`, `consumer_byte_rate`,
`request_percentage`, `controller_mutation_rate`; `connection_creation_rate` for IPs), never a
user's SCRAM credentials, and an entity with none is left out.

The filter: at most one component per entity type (`user`, `client-id`, `ip`); a component
matches a name exactly (match type 0), the default entity (1), or any named entity (2); with
`strict`, entities with an entity type the filter does not name are left out. Errors (for the whole
request, no entries): CLUSTER_AUTHORIZATION_FAILED without DESCRIBE_CONFIGS on the cluster,
INVALID_REQUEST for a duplicate or empty entity type or an IP component with a user or client-id
one, UNSUPPORTED_VERSION for another entity type, with Kafka's messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cluster.store import MetadataStore
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import DescribeClientQuotasRequest, DescribeClientQuotasResponse
from ..quota.client_quotas import CLIENT_QUOTA_KEYS, IP_QUOTA_KEYS
from ..quota.entities import (
    CLIENT_ID,
    CLIENTS,
    CLIENTS_OF_USER,
    IP,
    IPS,
    USER,
    USERS,
    desanitize_entity_name,
    sanitize_entity_name,
)
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CLIENT_QUOTAS
MIN_VERSION = 0
MAX_VERSION = 1

MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2
Entry = DescribeClientQuotasResponse.EntryData
EntityData = DescribeClientQuotasResponse.EntityData
ValueData = DescribeClientQuotasResponse.ValueData
DESCRIBE_CLUSTER_CONFIGS = check(API_KEY, "cluster")

# An entity: its names by entity type (a None name is the default entity), user before client id
# (the order of Kafka's entity map here, a two-entry Scala map)
Entity = dict[str, "str | None"]


@dataclass(frozen=True)
class Component:
    """One filter component: `exact` names one entity (`name`; None: the default), else any named one."""

    exact: bool
    name: str | None


async def handle(request: DescribeClientQuotasRequest, ctx: RequestContext) -> DescribeClientQuotasResponse:
    if not DESCRIBE_CLUSTER_CONFIGS.allows(ctx):
        return _error(DESCRIBE_CLUSTER_CONFIGS.denied, None)
    try:
        found = describe(ctx.services.metadata, request.components, request.strict)
    except KafkaError as exc:
        return _error(exc.code, exc.message_or_default)
    entries = [
        Entry(
            entity=[EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
            values=[ValueData(key=key, value=value) for key, value in values.items()],
        )
        for entity, values in found
    ]
    return DescribeClientQuotasResponse(error_code=ErrorCode.NONE, entries=entries)


def _error(code: ErrorCode, message: str | None) -> DescribeClientQuotasResponse:
    return DescribeClientQuotasResponse(error_code=code, error_message=message, entries=None)


def describe(
    store: MetadataStore, components: list[DescribeClientQuotasRequest.ComponentData], strict: bool
) -> list[tuple[Entity, dict[str, float]]]:
    """Every entity the filter matches, with its quota values."""
    by_type = _components(components)
    user, client, ip = by_type.get(USER), by_type.get(CLIENT_ID), by_type.get(IP)
    if (user is not None or client is not None) and ip is not None:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST,
            "Invalid entity filter component combination, IP filter component should not be used with "
            "user or clientId filter component.",
        )
    found: list[tuple[Entity, dict[str, float]]] = []
    if ip is None:
        found += _user_client_quotas(store, user, client, strict)
    if user is None and client is None:
        found += _ip_quotas(store, ip, strict)
    return found


def _components(components: list[DescribeClientQuotasRequest.ComponentData]) -> dict[str, Component]:
    by_type: dict[str, Component] = {}
    names = {USER: "user", CLIENT_ID: "client", IP: "ip"}
    for component in components:
        entity_type = component.entity_type
        if entity_type in by_type:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Duplicate {names[entity_type]} filter component entity type")
        if entity_type == "":
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Unexpected empty filter component entity type")
        if entity_type not in names:
            raise KafkaError(ErrorCode.UNSUPPORTED_VERSION, f"Custom entity type '{entity_type}' not supported")
        if component.match_type == MATCH_EXACT:
            if component.match is None:  # Java's ofEntity refuses a null name
                raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)
            by_type[entity_type] = Component(True, component.match)
        elif component.match_type == MATCH_DEFAULT:
            by_type[entity_type] = Component(True, None)
        elif component.match_type == MATCH_SPECIFIED:
            by_type[entity_type] = Component(False, None)
        else:
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)  # Kafka: "Unexpected match type"
    return by_type


def _matches(component: Component | None, name_present: bool, name: str | None, strict: bool) -> bool:
    if component is None:
        return not name_present or not strict
    if component.exact:
        return name_present and name == component.name
    return name_present


def _user_client_quotas(
    store: MetadataStore, user: Component | None, client: Component | None, strict: bool
) -> list[tuple[Entity, dict[str, float]]]:
    """Kafka's handleDescribeClientQuotas: the candidate entities read (all of a type, or one
    exactly), then each kept when it matches the filter and has a quota."""
    exclude_user = strict and user is None
    exclude_client = strict and client is None
    exact_user = user is not None and user.exact
    exact_client = client is not None and client.exact
    users = store.quota_entity_configs(USERS)
    candidates: list[tuple[Entity, dict[str, str]]] = []
    if exact_user and exclude_client:
        assert user is not None
        candidates.append(({USER: user.name}, users.get(sanitize_entity_name(user.name), {})))
    elif not exclude_user and not exact_client:
        for name, configs in users.items():
            if CLIENTS_OF_USER not in name:
                candidates.append(({USER: desanitize_entity_name(name)}, configs))
    if exclude_user and exact_client:
        assert client is not None
        clients = store.quota_entity_configs(CLIENTS)
        candidates.append(({CLIENT_ID: client.name}, clients.get(sanitize_entity_name(client.name), {})))
    elif not exact_user and not exclude_client:
        for name, configs in store.quota_entity_configs(CLIENTS).items():
            candidates.append(({CLIENT_ID: desanitize_entity_name(name)}, configs))
    if exact_user and exact_client:
        assert user is not None and client is not None
        path = f"{sanitize_entity_name(user.name)}{CLIENTS_OF_USER}{sanitize_entity_name(client.name)}"
        candidates.append(({USER: user.name, CLIENT_ID: client.name}, users.get(path, {})))
    elif not exclude_user and not exclude_client:
        for name, configs in users.items():
            user_name, sep, client_name = name.partition(CLIENTS_OF_USER)
            if sep:
                entity: Entity = {
                    USER: desanitize_entity_name(user_name),
                    CLIENT_ID: desanitize_entity_name(client_name),
                }
                candidates.append((entity, configs))
    found = []
    for entity, configs in candidates:
        values = _quota_values(configs, CLIENT_QUOTA_KEYS)
        if (
            values
            and _matches(user, USER in entity, entity.get(USER), strict)
            and _matches(client, CLIENT_ID in entity, entity.get(CLIENT_ID), strict)
        ):
            found.append((entity, values))
    return found


def _ip_quotas(store: MetadataStore, ip: Component | None, strict: bool) -> list[tuple[Entity, dict[str, float]]]:
    ips = store.quota_entity_configs(IPS)
    candidates: list[tuple[Entity, dict[str, str]]] = []
    if ip is not None and ip.exact:
        candidates.append(({IP: ip.name}, ips.get(sanitize_entity_name(ip.name), {})))
    elif ip is not None or not strict:
        candidates += [({IP: desanitize_entity_name(name)}, configs) for name, configs in ips.items()]
    found = []
    for entity, configs in candidates:
        values = _quota_values(configs, IP_QUOTA_KEYS)
        if values:
            found.append((entity, values))
    return found


def _quota_values(configs: dict[str, str], keys: dict[str, str]) -> dict[str, float]:
    values = {}
    for key, value in configs.items():
        if key in keys:
            try:
                values[key] = float(value)
            except ValueError:
                raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR) from None  # Kafka's IllegalStateException
    return values
