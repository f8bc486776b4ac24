"""AlterClientQuotas (key 49), versions 0-1.

Sets and removes client quotas as Kafka 3.9's ZkAdminManager.alterClientQuotas does, on any
broker: each entry names an entity (`user`, `client-id`, both, or `ip`; a null name is the default
entity) and its operations; the entity's configs are read, changed and written back whole (a user's
SCRAM credentials, in the same configs, stay), then every broker hears of it (in a cluster:
`/config/users/<user>[/clients/<client>]`, `/config/clients/<client>` or `/config/ips/<ip>`, and
a `/config/changes` notification). Each entry succeeds or fails alone; `validate_only` checks
without writing.

Errors per entry, with Kafka's messages: CLUSTER_AUTHORIZATION_FAILED for every entry without
ALTER_CONFIGS on the cluster; INVALID_REQUEST for an empty entity, an unknown entity type, an empty
name, an IP with a user or client id, an IP that is neither an address nor a resolvable host,
an unknown key ("Invalid configuration key ..."), a fractional value of an integer quota
(`producer_byte_rate`, `consumer_byte_rate`: "... must be a LONG value"). Removing a key that is not
set is no error. Integer quotas are stored as integers, the others as Java prints a double.
"""

from __future__ import annotations

import ipaddress
import logging
import socket

import anyio

from ..cluster.store import MetadataStore
from ..config.types import java_double_string
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import AlterClientQuotasRequest, AlterClientQuotasResponse
from ..quota.client_quotas import CLIENT_QUOTA_KEYS, IP_QUOTA_KEYS
from ..quota.entities import (
    CLIENT_ID,
    CLIENTS,
    DEFAULT_ENTITY,
    IP,
    IPS,
    USER,
    USERS,
    entity_in_java_order,
    sanitize_entity_name,
    store_path,
)
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ALTER_CLIENT_QUOTAS
MIN_VERSION = 0
MAX_VERSION = 1

Entry = AlterClientQuotasResponse.EntryData
EntityData = AlterClientQuotasResponse.EntityData
ALTER_CLUSTER_CONFIGS = check(API_KEY, "cluster")
SCRAM_KEYS = ("SCRAM-SHA-256", "SCRAM-SHA-512")  # user config keys of Kafka's, but no quotas (PASSWORD)
EPSILON = 1e-6

log = logging.getLogger(__name__)


async def handle(request: AlterClientQuotasRequest, ctx: RequestContext) -> AlterClientQuotasResponse:
    if not ALTER_CLUSTER_CONFIGS.allows(ctx):
        denied = ALTER_CLUSTER_CONFIGS.denied  # with its default message, as Kafka's getErrorResponse
        return AlterClientQuotasResponse(
            entries=[_entry(_request_entity(e), denied, denied.message) for e in request.entries]
        )
    store = ctx.services.metadata
    entries = []
    for entry in request.entries:
        entity = _request_entity(entry)
        try:
            await _alter(store, entity, entry.ops, request.validate_only)
        except KafkaError as exc:
            log.info("Error encountered while updating client quotas: %s", exc)
            entries.append(_entry(entity, exc.code, exc.message_or_default))
            continue
        entries.append(_entry(entity, ErrorCode.NONE, None))
    await store.wait_durable()
    return AlterClientQuotasResponse(entries=entries)


def _request_entity(entry: AlterClientQuotasRequest.EntryData) -> dict[str, str | None]:
    """The entry's entity as Kafka's map of it (a type named twice keeps its last name)."""
    return {data.entity_type: data.entity_name for data in entry.entity}


def _entry(entity: dict[str, str | None], code: ErrorCode, message: str | None) -> Entry:
    return Entry(
        error_code=code,
        error_message=message,
        entity=[EntityData(entity_type=t, entity_name=n) for t, n in entity_in_java_order(entity)],
    )


async def _alter(
    store: MetadataStore, entity: dict[str, str | None], ops: list[AlterClientQuotasRequest.OpData], validate_only: bool
) -> None:
    entity_type, path, keys = await _locate(entity)
    configs = store.quota_entity_configs(entity_type).get(path, {})
    for op in ops:
        if op.remove:
            configs.pop(op.key, None)
            continue
        if entity_type == USERS and op.key in SCRAM_KEYS:
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)  # Kafka: "Unexpected config type PASSWORD"
        key_type = keys.get(op.key)
        if key_type is None:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Invalid configuration key {op.key}")
        configs[op.key] = _stored_value(op.key, key_type, op.value)
    if not validate_only:
        store.set_quota_entity_configs(entity_type, path, configs)


async def _locate(entity: dict[str, str | None]) -> tuple[str, str, dict[str, str]]:
    """Kafka's parseAndSanitizeQuotaEntity: the store's entity type, the entity's sanitized
    name there, and the keys it takes."""
    if not entity:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid empty client quota entity")
    for entity_type, name in entity.items():
        if entity_type not in (USER, CLIENT_ID, IP):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unhandled client quota entity type: {entity_type}")
        if name == "":
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Empty {entity_type} not supported")
    user = sanitize_entity_name(entity[USER]) if USER in entity else None
    client = sanitize_entity_name(entity[CLIENT_ID]) if CLIENT_ID in entity else None
    if IP in entity:
        if user is not None or client is not None:
            raise KafkaError(
                ErrorCode.INVALID_REQUEST,
                "Invalid quota entity combination, IP entity should not be used with user/client ID entity.",
            )
        ip = sanitize_entity_name(entity[IP])
        if not await _valid_ip_entity(entity[IP]):
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"{ip} is not a valid IP or resolvable host.")
        return IPS, ip, IP_QUOTA_KEYS
    if user is not None:
        return USERS, store_path(user, client), CLIENT_QUOTA_KEYS
    if client is not None:
        return CLIENTS, client, CLIENT_QUOTA_KEYS
    raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid client quota entity")


async def _valid_ip_entity(ip: str | None) -> bool:
    """Kafka's DynamicConfig.Ip.isValidIpEntity: the default, an address, or a resolvable host."""
    if ip is None or ip == DEFAULT_ENTITY:
        return True
    try:
        ipaddress.ip_address(ip)
        return True
    except ValueError:
        pass
    try:
        await anyio.to_thread.run_sync(socket.gethostbyname, ip)
    except OSError:
        return False
    return True


def _stored_value(key: str, key_type: str, value: float) -> str:
    """The value as Kafka stores it: a LONG or INT quota as an integer (refusing a fraction), a
    DOUBLE as Java prints it."""
    if key_type == "DOUBLE":
        return java_double_string(value)
    whole = int(value + EPSILON)
    if abs(whole - value) > EPSILON:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Configuration {key} must be a {key_type} value")
    return str(whole)
