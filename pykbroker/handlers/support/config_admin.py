"""Config resources and the rules for changing them, shared by DescribeConfigs, AlterConfigs and
IncrementalAlterConfigs (not a handler itself).

Owns:

* `ConfigResourceType`: Kafka's resource type ids;
* the broker's effective config: the static config with the dynamic layers kept in the metadata
  store (`effective_broker_config`);
* validation of a topic's overrides as Kafka's controller does it (`check_topic_overrides`);
* validation of dynamic broker configs as Kafka's broker does it before accepting a change
  (`check_dynamic_broker_configs`);
* the incremental operations SET, DELETE, APPEND and SUBTRACT (`apply_operations`);
* the checks every alter request makes of its resources before anything else
  (`duplicated_resources`, `check_config_entries`, `parse_node_id`), and their answer for each
  resource (`resource_result`);
* what those checks read of the requests, as Protocols over the message structs
  (`ConfigResource`, `ConfigValue`, `AlterRequest`, `ResultClass`);
* the authorization of a config resource (`config_authorization_error`) through the checks of
  the handler's entry in the authorization table (`ConfigChecks`).

All checks raise KafkaError with Kafka's code and message.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import partial
from typing import TYPE_CHECKING, Protocol, TypeVar

from ...cluster.features import group_configs_enabled
from ...cluster.model import validate_topic_name
from ...config import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigError, ConfigType, validate_topic_configs
from ...config.broker import is_listener_config, listener_base_name
from ...config.definitions import LISTENER_RECONFIGURABLE_KEYS, SSL_RECONFIGURABLE_KEYS
from ...config.groups import validate_group_configs
from ...protocol.errors import ErrorCode, KafkaError
from ...security.sasl.errors import SaslConfigError
from .auth import CLUSTER, CLUSTER_NAME
from .authorization import Check
from .context import RequestContext
from .services import BrokerServices

if TYPE_CHECKING:
    from ...config import BrokerConfig
    from ...security.password_encoder import PasswordEncoder

logger = logging.getLogger(__name__)


class ConfigResourceType(IntEnum):
    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class OpType(IntEnum):
    """IncrementalAlterConfigs' operations."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class ConfigResource(Protocol):
    """A config resource as the config requests name it (type id and name)."""

    @property
    def resource_type(self) -> int: ...

    @property
    def resource_name(self) -> str: ...


class ConfigValue(Protocol):
    """A config entry of an alter request: its name and (nullable) value."""

    @property
    def name(self) -> str: ...

    @property
    def value(self) -> str | None: ...


_Resource = TypeVar("_Resource", bound=ConfigResource)
_Resource_co = TypeVar("_Resource_co", bound=ConfigResource, covariant=True)
_Entry = TypeVar("_Entry", bound=ConfigValue)
_Result = TypeVar("_Result")
_Result_co = TypeVar("_Result_co", covariant=True)


class AlterRequest(Protocol[_Resource_co]):
    """An AlterConfigs or IncrementalAlterConfigs request: the resources it alters."""

    @property
    def resources(self) -> Sequence[_Resource_co]: ...


class ResultClass(Protocol[_Result_co]):
    """An alter response's per-resource struct class (AlterConfigsResourceResponse)."""

    def __call__(
        self,
        *,
        error_code: int = ...,
        error_message: str | None = ...,
        resource_type: int = ...,
        resource_name: str = ...,
    ) -> _Result_co: ...


def resource_type_name(type_id: int) -> str:
    try:
        return ConfigResourceType(type_id).name
    except ValueError:
        return ConfigResourceType.UNKNOWN.name


# --------------------------------------------------------------------------------------------
# The broker's effective config


def effective_broker_config(services: BrokerServices) -> BrokerConfig:
    """The broker's static config under the dynamic layers the metadata store holds."""
    return services.config.with_dynamic(
        stored_broker_configs(services, services.broker_id), stored_broker_configs(services, None)
    )


_INT32 = re.compile(r"[+-]?[0-9]+")


def parse_int32(text: str | None) -> int | None:
    """`text` as Java's Integer.parseInt reads it, or None if it is not such a number."""
    if text is None or not _INT32.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**31) <= value < 2**31 else None


def parse_node_id(name: str, broker_id: int) -> int:
    """A broker resource's name that must be this broker's id (as alter requests check it)."""
    node_id = parse_int32(name)
    if node_id is None:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}")
    if node_id != broker_id:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {broker_id}, but received {name}")
    return node_id


# --------------------------------------------------------------------------------------------
# Checks every alter request makes first (duplicates, nulls)


def duplicated_resources(resources: Iterable[ConfigResource]) -> set[tuple[int, str]]:
    seen: set[tuple[int, str]] = set()
    twice: set[tuple[int, str]] = set()
    for resource in resources:
        key = (resource.resource_type, resource.resource_name)
        (twice if key in seen else seen).add(key)
    return twice


def alter_each_resource(
    request: AlterRequest[_Resource], result_class: ResultClass[_Result], alter: Callable[[_Resource], None]
) -> list[_Result]:
    """The per-resource answers of an alter request: a resource named twice gets INVALID_REQUEST,
    every other one the outcome of `alter(resource)`."""
    twice = duplicated_resources(request.resources)

    def checked(resource: _Resource) -> None:
        if (resource.resource_type, resource.resource_name) in twice:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
        alter(resource)

    return [resource_result(result_class, resource, partial(checked, resource)) for resource in request.resources]


def resource_result(
    result_class: ResultClass[_Result], resource: ConfigResource, action: Callable[[], None]
) -> _Result:
    """An alter request's answer for one resource: NONE if `action` succeeds, else its KafkaError."""
    try:
        action()
    except KafkaError as exc:
        return result_class(
            error_code=exc.code,
            error_message=exc.message,
            resource_type=resource.resource_type,
            resource_name=resource.resource_name,
        )
    return result_class(
        error_code=ErrorCode.NONE,
        error_message=None,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )


def check_config_entries(entries: Sequence[_Entry], value_required: Callable[[_Entry], bool]) -> None:
    """No config named twice, and no null value where one is required."""
    names = [entry.name for entry in entries]
    if len(names) != len(set(names)):
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    nulls = [entry.name for entry in entries if entry.value is None and value_required(entry)]
    if nulls:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {', '.join(nulls)}")


# --------------------------------------------------------------------------------------------
# Topic overrides

TIERED_STORAGE_DISABLED = (
    "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
)


def check_topic_name_for_configs(name: str) -> None:
    """The controller's check of a topic resource's name before its configs."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    validate_topic_name(name)


def check_topic_overrides(overrides: Mapping[str, str | None], altered_topic: str | None = None) -> None:
    """A topic's complete set of overrides: no nulls, known names, valid and consistent values.

    ConfigError (INVALID_CONFIG) with Kafka's message. This broker has no remote log storage,
    so a topic may not enable it. When the configs of an existing topic are altered
    (`altered_topic`), an invalid value's message names the resource first, as Kafka 3.9's
    ZooKeeper-mode ZkAdminManager says it.
    """
    nulls = [key for key, value in overrides.items() if value is None]
    if nulls:
        raise ConfigError(nulls[0], f"Null value not supported for topic configs: {','.join(nulls)}")
    for key in overrides:
        if key not in TOPIC_CONFIGS:
            raise ConfigError(key, f"Unknown topic config name: {key}")
    try:
        typed = validate_topic_configs(overrides)
    except ConfigError as error:
        if altered_topic is None or not error.message_or_default.startswith("Invalid value "):
            raise  # only a value its type or validator refuses (Kafka's ConfigException) is prefixed
        raise _naming_the_topic(error, altered_topic) from None
    if typed.get("remote.storage.enable"):
        refusal = ConfigError("remote.storage.enable", TIERED_STORAGE_DISABLED)
        raise refusal if altered_topic is None else _naming_the_topic(refusal, altered_topic)


def _naming_the_topic(error: ConfigError, topic: str) -> ConfigError:
    resource = f"ConfigResource(type=TOPIC, name='{topic}')"
    return ConfigError(error.key, f"Invalid config value for resource {resource}: {error.message}")


def topic_missing(name: str) -> KafkaError:
    return KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")


# --------------------------------------------------------------------------------------------
# Incremental operations


def apply_operations(
    current: Mapping[str, str],
    operations: Iterable[tuple[str, int, str | None]],
    list_default: Callable[[str], str | None],
    not_a_list: Callable[[str, OpType], KafkaError],
) -> dict[str, str]:
    """`current` after each (name, operation, value) in turn.

    APPEND adds the listed values not already there, SUBTRACT removes them, both starting from
    the default when the key is not set. `list_default(name)` is the default of a LIST config
    and raises for any other; `not_a_list` makes the error for APPEND/SUBTRACT on such a key.
    """
    result = dict(current)
    for name, op, value in operations:
        op = OpType(op)
        if op is OpType.DELETE:
            result.pop(name, None)
            continue
        if value is None:  # refused before, by check_config_entries: only DELETE goes without a value
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Null value not supported for : {name}")
        if op is OpType.SET:
            result[name] = value
        else:
            try:
                default = list_default(name)
            except KeyError:
                raise not_a_list(name, op) from None
            result[name] = _combine(_list_parts(result.get(name, default)), value.split(","), op)
    return result


def _list_parts(value: str | None) -> list[str]:
    return [part for part in (value or "").split(",") if part]


def _combine(parts: list[str], values: list[str], op: OpType) -> str:
    if op is OpType.APPEND:
        parts += [value for value in values if value not in parts]
    else:
        for value in values:
            if value in parts:
                parts.remove(value)
    return ",".join(parts)


def check_operation(op: int) -> None:
    if op not in OpType._value2member_map_:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op}")


def topic_list_default(name: str) -> str | None:
    """The default of a topic config of type LIST; KeyError for any other key."""
    definition = TOPIC_CONFIGS[name]
    if definition.type is not ConfigType.LIST:
        raise KeyError(name)
    return definition.format(definition.default)


def broker_list_default(name: str) -> str | None:
    """The default of a broker config of type LIST; KeyError for any other key."""
    definition = BROKER_CONFIGS[name]
    if definition.type is not ConfigType.LIST:
        raise KeyError(name)
    return definition.format(definition.default)


# --------------------------------------------------------------------------------------------
# Dynamic broker configs

# Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: only per listener ("listener.name.<l>.ssl....").
SSL_PER_LISTENER = SSL_RECONFIGURABLE_KEYS
# Listener settings a whole cluster may share (Kafka's ClusterLevelListenerConfigs).
CLUSTER_LEVEL_LISTENER_KEYS = frozenset({"max.connections", "max.connection.creation.rate", "num.network.threads"})
# Settings of a broker's listeners: per broker only, never cluster-wide (Kafka's PerBrokerConfigs).
PER_BROKER_ONLY = (SSL_RECONFIGURABLE_KEYS | LISTENER_RECONFIGURABLE_KEYS) - CLUSTER_LEVEL_LISTENER_KEYS
# Thread pools a running broker resizes: at most halved or doubled in one change.
THREAD_POOLS = (
    "num.io.threads",
    "num.network.threads",
    "num.replica.fetchers",
    "num.recovery.threads.per.data.dir",
    "background.threads",
)


def scala_set(names: Iterable[str]) -> str:
    """A set of names as Kafka's messages print it."""
    return f"Set({', '.join(names)})"


def check_dynamic_broker_configs(services: BrokerServices, node_id: int | None, proposed: Mapping[str, str]) -> None:
    """Whether `proposed` may become the dynamic configs of this broker (`node_id`) or of the
    cluster default (None). INVALID_REQUEST with Kafka's message when not."""
    _refuse(
        "Cannot update these configs dynamically",
        [key for key in proposed if not is_listener_config(key) and not _dynamically_updatable(key)],
    )
    _refuse(
        "These security configs can be dynamically updated only per-listener using the listener prefix",
        [key for key in proposed if key in SSL_PER_LISTENER],
    )
    for key, value in proposed.items():
        _parse_broker_value(key, value)
    if node_id is None:
        _refuse(
            "Cannot update these configs at default cluster level, broker id must be specified",
            [key for key in proposed if _per_broker_only(key)],
        )
    current = effective_broker_config(services)
    new = _config_with(services, node_id, proposed)
    _check_thread_pools(current, new)
    _check_listener_security(services, current, new)


def _per_broker_only(key: str) -> bool:
    base = listener_base_name(key)
    return key in PER_BROKER_ONLY or (base is not None and base not in CLUSTER_LEVEL_LISTENER_KEYS)


def _check_listener_security(services: BrokerServices, current: BrokerConfig, new: BrokerConfig) -> None:
    """Kafka's validation of the listeners' reconfiguration: every TLS listener whose `ssl.*`
    settings (or store files) changed must get a usable context that keeps its certificate's
    names (SslFactory.validateReconfiguration), every SASL listener usable settings."""
    security = services.listener_security
    if security is None:
        return
    try:
        security.validate(new)
    except (ConfigError, SaslConfigError) as exc:
        logger.info("Validation of dynamic config update of the listeners failed: %s", exc)
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid dynamic configuration") from None


def _refuse(reason: str, keys: list[str]) -> None:
    if keys:
        raise KafkaError(ErrorCode.INVALID_REQUEST, f"{reason}: {scala_set(keys)}")


def _dynamically_updatable(key: str) -> bool:
    """A dynamic broker config, or a key Kafka does not know (Kafka keeps those too, for plug-ins)."""
    definition = BROKER_CONFIGS.get(key)
    if definition is None:
        return not is_listener_config(key)
    return definition.kafka and definition.dynamic


def _parse_broker_value(key: str, value: str) -> None:
    """As Kafka's validateConfigTypes: a listener's key is checked as its base key (when that is a
    dynamic broker config; anything else under the listener prefix is kept as it is)."""
    base = listener_base_name(key)
    if base is not None:
        if not _dynamically_updatable(base):
            return
        key = base
    definition = BROKER_CONFIGS.get(key)
    if definition is None:
        return  # a key Kafka does not know is kept as it is
    try:
        definition.parse(value)
    except ConfigError as exc:
        raise KafkaError(ErrorCode.INVALID_REQUEST, exc.message) from None


def _config_with(services: BrokerServices, node_id: int | None, proposed: Mapping[str, str]) -> BrokerConfig:
    per_broker = stored_broker_configs(services, services.broker_id) if node_id is None else proposed
    cluster_default = proposed if node_id is None else stored_broker_configs(services, None)
    try:
        return services.config.with_dynamic(per_broker, cluster_default)
    except ConfigError as exc:
        raise KafkaError(ErrorCode.INVALID_REQUEST, exc.message) from None


def _check_thread_pools(current: BrokerConfig, proposed: BrokerConfig) -> None:
    for key in THREAD_POOLS:
        old, new = current[key], proposed[key]
        if new != old and (new < old // 2 or new > old * 2):
            raise KafkaError(ErrorCode.INVALID_REQUEST, "Invalid dynamic configuration")


# --------------------------------------------------------------------------------------------
# Sensitive dynamic configs in ZooKeeper (Kafka's toPersistentProps / fromPersistentProps)


def is_password_config(name: str) -> bool:
    """Kafka's DynamicBrokerConfig.isPasswordConfig: a key ending with a dynamic PASSWORD config
    (`listener.name.<l>.ssl.keystore.password`, `listener.name.<l>.plain.sasl.jaas.config`, ...)."""
    return any(name.endswith(key) for key in DYNAMIC_PASSWORD_KEYS)


DYNAMIC_PASSWORD_KEYS = tuple(
    sorted(name for name, d in BROKER_CONFIGS.items() if d.dynamic and d.type is ConfigType.PASSWORD)
)


def password_encoder(config: BrokerConfig, secret_key: str = "password.encoder.secret") -> PasswordEncoder | None:
    """The encoder of `password.encoder.secret` (or the old secret), None without one."""
    secret = config[secret_key]
    if secret is None:
        return None
    from ...security.password_encoder import PasswordEncoder  # cryptography: ZooKeeper mode only

    return PasswordEncoder(
        str(secret),
        config["password.encoder.keyfactory.algorithm"],
        config["password.encoder.cipher.algorithm"],
        config["password.encoder.key.length"],
        config["password.encoder.iterations"],
    )


def decoded_broker_configs(config: BrokerConfig, stored: Mapping[str, str]) -> dict[str, str]:
    """A broker's dynamic configs as ZooKeeper keeps them, with the passwords decoded (with the
    old secret when the current one cannot); a password that cannot be decoded is left out,
    as Kafka drops it with an error in its log."""
    if not config.get("zookeeper.connect"):
        return dict(stored)  # the embedded store keeps them as they were given
    from ...security.password_encoder import PasswordEncoderError

    encoders = [e for e in (password_encoder(config), password_encoder(config, "password.encoder.old.secret")) if e]
    decoded: dict[str, str] = {}
    for name, value in stored.items():
        if not is_password_config(name):
            decoded[name] = value
            continue
        for encoder in encoders:
            try:
                decoded[name] = encoder.decode(value)
                break
            except PasswordEncoderError:
                continue
        else:
            logger.error("Dynamic password config %s could not be decoded, ignoring it", name)
    return decoded


def stored_broker_configs(services: BrokerServices, node_id: int | None) -> dict[str, str]:
    """The dynamic configs of this broker (`node_id`) or the cluster default (None), decoded."""
    return decoded_broker_configs(services.config, services.metadata.broker_configs(node_id))


def store_broker_configs(services: BrokerServices, node_id: int | None, configs: Mapping[str, str]) -> None:
    """Keep the new dynamic configs. In a cluster the passwords are encoded with
    `password.encoder.secret` first, as Kafka's ZooKeeper-mode broker does (INVALID_REQUEST without
    a secret, or for a password at the cluster-default level)."""
    persistent = dict(configs)
    if services.config.get("zookeeper.connect"):
        for name, value in configs.items():
            if not is_password_config(name):
                continue
            if node_id is None:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Password config can be defined only at broker level")
            encoder = password_encoder(services.config)
            if encoder is None:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Password encoder secret not configured")
            persistent[name] = encoder.encode(value)
    services.metadata.set_broker_configs(node_id, persistent)


# Config resources Kafka 3.9 (ZooKeeper mode) knows but does not alter. Group configs (KIP-848) are
# a KRaft feature: it knows no such type ("Unknown resource type 32").
NOT_ALTERED_HERE = {ConfigResourceType.CLIENT_METRICS}


# --------------------------------------------------------------------------------------------
# Group configs (Kafka 4's GROUP config resource)


def serves_group_configs(services: BrokerServices) -> bool:
    return group_configs_enabled(services.config)


def check_group_name_for_configs(name: str) -> None:
    if not name:
        raise KafkaError(ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")


def store_group_configs(
    services: BrokerServices, group_id: str, proposed: Mapping[str, str], validate_only: bool
) -> None:
    """Validate a group's complete set of overrides (INVALID_CONFIG with Kafka's message) and,
    unless `validate_only`, keep them in the metadata store."""
    validate_group_configs(proposed, effective_broker_config(services))
    if not validate_only:
        services.metadata.set_group_configs(group_id, dict(proposed))


def not_altered_here(resource_type: int) -> KafkaError:
    """Kafka 3.9's refusal of a resource type it knows but does not alter."""
    name = resource_type_name(resource_type)
    return KafkaError(
        ErrorCode.INVALID_REQUEST, f"AlterConfigs is only supported for topics and brokers, but resource type is {name}"
    )


_ON_THE_CLUSTER = {ConfigResourceType.BROKER, ConfigResourceType.BROKER_LOGGER, ConfigResourceType.CLIENT_METRICS}


@dataclass(frozen=True)
class ConfigChecks:
    """A config API's checks from the authorization table, one per kind of config resource:
    DESCRIBE_CONFIGS or ALTER_CONFIGS on the topic, on the group (group configs, Kafka 4), or on
    the cluster (brokers, loggers, client metrics)."""

    topic: Check
    cluster: Check
    group: Check | None = None

    def of(self, resource_type: int) -> Check | None:
        """The check of a config resource type; None for a type Kafka does not authorize."""
        if resource_type == ConfigResourceType.TOPIC:
            return self.topic
        if resource_type == ConfigResourceType.GROUP:
            return self.group
        return self.cluster if resource_type in _ON_THE_CLUSTER else None


def config_authorization_error(ctx: RequestContext, checks: ConfigChecks, resource: ConfigResource) -> ErrorCode | None:
    """Kafka's check of a config resource (`checks.of` its type); the error to answer, or None."""
    if resource.resource_type == ConfigResourceType.GROUP and not group_configs_enabled(ctx.services.config):
        return None  # refused later as an unknown resource type, before any check (Kafka 3.9)
    check = checks.of(resource.resource_type)
    if check is None:
        return None
    name = CLUSTER_NAME if check.resource_type == CLUSTER else resource.resource_name
    return None if check.allows(ctx, name) else check.denied
