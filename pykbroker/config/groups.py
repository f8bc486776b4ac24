"""Group configs (the GROUP config resource, type 32), as Kafka 4's GroupConfig: the keys a group
may override, their types, their defaults from the broker's config and their validation.

    values = group_config_values({"share.session.timeout.ms": "50000"}, broker_config)
    validate_group_configs({"share.auto.offset.reset": "earliest"}, broker_config)   # KafkaError
    entries = describe_group_configs(overrides, broker_config)

A key set on the group is reported with source GROUP_CONFIG (and that value as its one synonym),
the others with their default (DEFAULT_CONFIG, no synonyms). Validation raises INVALID_CONFIG with
Kafka's messages: an unknown key, a value of the wrong type, a timeout outside the broker's bounds,
a heartbeat interval not below the session timeout.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..protocol.errors import ErrorCode, KafkaError
from .broker import BrokerConfig
from .describe import ConfigEntry, ConfigSynonym
from .types import ConfigSource, ConfigType

CONSUMER_SESSION_TIMEOUT = "consumer.session.timeout.ms"
CONSUMER_HEARTBEAT_INTERVAL = "consumer.heartbeat.interval.ms"
SHARE_SESSION_TIMEOUT = "share.session.timeout.ms"
SHARE_HEARTBEAT_INTERVAL = "share.heartbeat.interval.ms"
SHARE_RECORD_LOCK_DURATION = "share.record.lock.duration.ms"
SHARE_AUTO_OFFSET_RESET = "share.auto.offset.reset"
SHARE_ISOLATION_LEVEL = "share.isolation.level"
STREAMS_SESSION_TIMEOUT = "streams.session.timeout.ms"
STREAMS_HEARTBEAT_INTERVAL = "streams.heartbeat.interval.ms"
STREAMS_NUM_STANDBY_REPLICAS = "streams.num.standby.replicas"

_BY_DURATION = re.compile(r"by_duration:P(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?", re.IGNORECASE)


@dataclass(frozen=True)
class GroupConfigKey:
    name: str
    type: ConfigType
    default: Callable[[BrokerConfig], str]  # from the broker's config
    bounds: tuple[str, str] | None = None  # the broker keys of its minimum and maximum
    valid: Callable[[str], bool] | None = None  # for strings


def _broker(key: str) -> Callable[[BrokerConfig], str]:
    return lambda config: str(config[key])


def _fixed(value: str) -> Callable[[BrokerConfig], str]:
    return lambda _config: value


def _auto_offset_reset(value: str) -> bool:
    return value.lower() in ("latest", "earliest") or _BY_DURATION.fullmatch(value) is not None


GROUP_CONFIGS: dict[str, GroupConfigKey] = {
    key.name: key
    for key in (
        GroupConfigKey(
            CONSUMER_HEARTBEAT_INTERVAL,
            ConfigType.INT,
            _broker("group.consumer.heartbeat.interval.ms"),
            ("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"),
        ),
        GroupConfigKey(
            CONSUMER_SESSION_TIMEOUT,
            ConfigType.INT,
            _broker("group.consumer.session.timeout.ms"),
            ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
        ),
        GroupConfigKey(SHARE_AUTO_OFFSET_RESET, ConfigType.STRING, _fixed("latest"), valid=_auto_offset_reset),
        GroupConfigKey(
            SHARE_HEARTBEAT_INTERVAL,
            ConfigType.INT,
            _broker("group.share.heartbeat.interval.ms"),
            ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
        ),
        GroupConfigKey(
            SHARE_ISOLATION_LEVEL,
            ConfigType.STRING,
            _fixed("read_uncommitted"),
            valid=lambda v: v.lower() in ("read_committed", "read_uncommitted"),
        ),
        GroupConfigKey(
            SHARE_RECORD_LOCK_DURATION,
            ConfigType.INT,
            _broker("group.share.record.lock.duration.ms"),
            ("group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms"),
        ),
        GroupConfigKey(
            SHARE_SESSION_TIMEOUT,
            ConfigType.INT,
            _broker("group.share.session.timeout.ms"),
            ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
        ),
        GroupConfigKey(STREAMS_HEARTBEAT_INTERVAL, ConfigType.INT, _fixed("5000")),
        GroupConfigKey(STREAMS_NUM_STANDBY_REPLICAS, ConfigType.INT, _fixed("0")),
        GroupConfigKey(STREAMS_SESSION_TIMEOUT, ConfigType.INT, _fixed("45000")),
    )
}

# A heartbeat interval must stay below its session timeout (Kafka's GroupConfig.validate).
_INTERVAL_BELOW_TIMEOUT = (
    (CONSUMER_HEARTBEAT_INTERVAL, CONSUMER_SESSION_TIMEOUT),
    (SHARE_HEARTBEAT_INTERVAL, SHARE_SESSION_TIMEOUT),
    (STREAMS_HEARTBEAT_INTERVAL, STREAMS_SESSION_TIMEOUT),
)


def _invalid(message: str) -> KafkaError:
    return KafkaError(ErrorCode.INVALID_CONFIG, message)


def group_config_values(overrides: Mapping[str, str], broker: BrokerConfig) -> dict[str, str]:
    """Every group config's value: the group's override, or else its default."""
    return {name: overrides.get(name, key.default(broker)) for name, key in GROUP_CONFIGS.items()}


def validate_group_configs(overrides: Mapping[str, str], broker: BrokerConfig) -> None:
    """Raise KafkaError (INVALID_CONFIG) unless `overrides` are valid group configs."""
    for name, value in overrides.items():
        key = GROUP_CONFIGS.get(name)
        if key is None:
            raise _invalid(f"Unknown group config name: {name}")
        _validate_value(key, value, broker)
    values = group_config_values(overrides, broker)
    for interval, timeout in _INTERVAL_BELOW_TIMEOUT:
        if int(values[interval]) >= int(values[timeout]):
            raise _invalid(f"{interval} must be less than {timeout}")


def _validate_value(key: GroupConfigKey, value: str, broker: BrokerConfig) -> None:
    if key.type is ConfigType.INT:
        try:
            number = int(value.strip())
        except ValueError:
            raise _invalid(f"Invalid value {value} for configuration {key.name}: Not a number of type INT") from None
        if key.bounds is not None:
            low, high = (int(broker[bound]) for bound in key.bounds)
            if number < low:
                raise _invalid(f"{key.name} must be greater than or equal to {low}")
            if number > high:
                raise _invalid(f"{key.name} must be less than or equal to {high}")
        elif number < 0:
            raise _invalid(f"Invalid value {value} for configuration {key.name}: Value must be at least 0")
    elif key.valid is not None and not key.valid(value):
        raise _invalid(f"Invalid value {value} for configuration {key.name}")


def describe_group_configs(overrides: Mapping[str, str], broker: BrokerConfig) -> list[ConfigEntry]:
    """DescribeConfigs' entries for one group, in the order of Kafka's GroupConfig keys. A key the
    group sets has that value as its synonym (source GROUP_CONFIG), as Kafka reports it."""
    return [_group_entry(name, key, overrides, broker) for name, key in sorted(GROUP_CONFIGS.items())]


def _group_entry(name: str, key: GroupConfigKey, overrides: Mapping[str, str], broker: BrokerConfig) -> ConfigEntry:
    if name in overrides:
        value, source = overrides[name], ConfigSource.GROUP_CONFIG
        synonyms: tuple[ConfigSynonym, ...] = (ConfigSynonym(name, value, source),)
    else:
        value, source, synonyms = key.default(broker), ConfigSource.DEFAULT_CONFIG, ()
    return ConfigEntry(name, value, source, is_sensitive=False, read_only=False, synonyms=synonyms, type=key.type)
