"""The entries DescribeConfigs answers with, for topics and brokers: value, source, synonyms.

entries = describe_topic_configs({"retention.ms": "1000"}, broker_config)
entries = describe_broker_configs(broker_config)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..common.java_order import scala_hash_map_order
from .broker import BrokerConfig, is_listener_config, listener_base_name
from .definitions import (
    AUTHORIZER_KEYS,
    BROKER_CONFIGS,
    DYNAMIC_ONLY_BROKER_KEYS,
    LISTENER_MECHANISM_KEYS,
    TOPIC_CONFIGS,
    ConfigDefinition,
    broker_synonyms,
)
from .topics import topic_config_values
from .types import ConfigSource, ConfigType


class ConfigSynonym(NamedTuple):
    """One DescribeConfigs synonym: a key that sets this config, its value and its source."""

    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    """One DescribeConfigs result entry."""

    name: str
    value: str | None
    source: ConfigSource
    is_sensitive: bool
    read_only: bool
    synonyms: tuple[ConfigSynonym, ...]
    type: ConfigType

    @property
    def is_default(self) -> bool:
        return self.source is ConfigSource.DEFAULT_CONFIG


def describe_topic_configs(overrides: Mapping[str, Any], broker: BrokerConfig) -> list[ConfigEntry]:
    """Every topic config as DescribeConfigs reports it for a topic with these overrides, by name."""
    values = topic_config_values(overrides, broker)
    return [_topic_entry(TOPIC_CONFIGS[key], values[key], key in overrides, broker) for key in sorted(TOPIC_CONFIGS)]


def _topic_entry(definition: ConfigDefinition, value: Any, overridden: bool, broker: BrokerConfig) -> ConfigEntry:
    shown = None if definition.sensitive else definition.format(value)
    synonyms = [ConfigSynonym(definition.name, shown, ConfigSource.DYNAMIC_TOPIC_CONFIG)] if overridden else []
    if definition.synonyms:
        server_key = definition.synonyms[0].name
        synonyms += broker_config_synonyms(broker, server_key, definition.sensitive)
    return ConfigEntry(
        definition.name, shown, _source(synonyms), definition.sensitive, False, tuple(synonyms), definition.type
    )


def broker_config_synonyms(
    broker: BrokerConfig, key: str, sensitive: bool = False, names: list[str] | None = None
) -> list[ConfigSynonym]:
    """The layers' values for `key` and its broker synonyms, highest precedence first.

    Each layer lists its synonyms in precedence order; Kafka's defaults are the last layer.
    Entries before the first one for `key` itself are dropped, so a key whose own value is unset
    (e.g. log.retention.ms while log.retention.hours is set) reports no synonyms at all, exactly
    as Kafka does.
    """
    names = names or broker_synonyms(key)
    synonyms = [
        ConfigSynonym(name, None if sensitive else values[name], source)
        for source, values in _layers_with_defaults(broker)
        for name in names
        if name in values
    ]
    while synonyms and synonyms[0].name != key:
        synonyms.pop(0)
    return synonyms


def _layers_with_defaults(broker: BrokerConfig) -> list[tuple[ConfigSource, Mapping[str, str]]]:
    sources = (
        ConfigSource.DYNAMIC_BROKER_CONFIG,
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
        ConfigSource.STATIC_BROKER_CONFIG,
    )
    layers: list[tuple[ConfigSource, Mapping[str, str]]] = [(source, broker.layer(source)) for source in sources]
    layers[-1] = (ConfigSource.STATIC_BROKER_CONFIG, _with_id_copied(layers[-1][1]))
    layers.append((ConfigSource.DEFAULT_CONFIG, _DEFAULT_STRINGS))
    return layers


_ID_KEYS = {"node.id": "broker.id", "broker.id": "node.id"}


def _with_id_copied(static: Mapping[str, str]) -> Mapping[str, str]:
    """The static settings as Kafka's KafkaConfig holds them: broker.id and node.id name the same
    thing, so the one given is also the other's static value."""
    copies = {key: static[other] for key, other in _ID_KEYS.items() if key not in static and other in static}
    return {**static, **copies} if copies else static


_DEFAULT_STRINGS: dict[str, str] = {
    name: text
    for name, definition in BROKER_CONFIGS.items()
    if (text := definition.format(definition.default)) is not None  # None only for no default
}


def _source(synonyms: list[ConfigSynonym]) -> ConfigSource:
    return synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG


# --------------------------------------------------------------------------------------------
# Broker configs for DescribeConfigs


def describe_broker_configs(broker: BrokerConfig, per_broker: bool = True) -> list[ConfigEntry]:
    """The broker's configs as DescribeConfigs reports them, in the order of the Scala hash map
    Kafka collects them in.

    `per_broker` describes this broker (resource name = its id): every Kafka key plus the
    supplied unknown keys and authorizer settings (of unknown type, so sensitive: no value).
    Otherwise it describes the cluster-wide default resource (empty resource name): only the keys
    that have a dynamic cluster-wide default.
    """
    if per_broker:
        listed = [name for name, definition in BROKER_CONFIGS.items() if definition.kafka and not definition.internal]
        keys = listed + broker.unknown_keys + [key for key in broker.supplied_keys if key in AUTHORIZER_KEYS]
        keys += [key for key in broker.supplied_keys if key in DYNAMIC_ONLY_BROKER_KEYS]
        keys += [key for key in broker.supplied_keys if is_listener_config(key) and key not in keys]
    else:
        keys = list(broker.layer(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
    return [_broker_entry(broker, key, per_broker) for key in scala_hash_map_order(keys)]


def _listener_synonyms(key: str) -> list[str] | None:
    """Kafka's synonyms of `listener.name.<l>.<key>`: itself, then `<key>` (the base of a
    per-mechanism key such as `<mechanism>.sasl.jaas.config`); None for any other key."""
    base = listener_base_name(key)
    if base is None:
        return None
    mechanism_key = next((name for name in LISTENER_MECHANISM_KEYS if base.endswith(name)), None)
    return [key, mechanism_key or base]


def _broker_entry(broker: BrokerConfig, key: str, per_broker: bool) -> ConfigEntry:
    listener_synonyms = _listener_synonyms(key)
    if listener_synonyms is not None:
        return _listener_entry(broker, key, listener_synonyms, per_broker)
    definition = BROKER_CONFIGS.get(key)
    sensitive = definition is None or definition.sensitive  # Kafka hides a key of unknown type too
    synonyms = [
        synonym
        for synonym in broker_config_synonyms(broker, key, sensitive)
        if per_broker or synonym.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    ]
    value = _broker_value(broker, key, definition, per_broker)
    if key in _ID_KEYS and per_broker and synonyms:
        value = synonyms[0].value  # the id given under either name
    return ConfigEntry(
        key,
        None if sensitive else value,
        _source(synonyms),
        sensitive,
        definition is None or not definition.dynamic,
        tuple(synonyms),
        definition.type if definition else ConfigType.UNKNOWN,
    )


def _broker_value(broker: BrokerConfig, key: str, definition: ConfigDefinition | None, per_broker: bool) -> Any:
    if not per_broker:
        return broker.layer(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)[key]
    if definition is None:
        return broker.raw(key)
    return definition.format(broker[key])


def _listener_entry(broker: BrokerConfig, key: str, names: list[str], per_broker: bool) -> ConfigEntry:
    """A listener's own setting, as Kafka describes it: the base key's type (sensitive when it is a
    PASSWORD or unknown), the synonyms of both, and read-only (only base keys are dynamic)."""
    definition = BROKER_CONFIGS.get(names[1])
    sensitive = definition is None or definition.sensitive
    synonyms = [
        synonym
        for synonym in broker_config_synonyms(broker, key, sensitive, names)
        if per_broker or synonym.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    ]
    return ConfigEntry(
        key,
        None if sensitive else broker.raw(key),
        _source(synonyms),
        sensitive,
        True,
        tuple(synonyms),
        definition.type if definition else ConfigType.UNKNOWN,
    )
