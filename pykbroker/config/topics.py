"""A topic's configs: validating its overrides and the effective values its log uses.

topic_config_values({"retention.ms": "1000"}, broker_config)["retention.ms"]   # 1000
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .broker import BrokerConfig
from .definitions import TOPIC_CONFIGS, ConfigDefinition
from .types import ConfigError


def validate_topic_configs(configs: Mapping[str, Any]) -> dict[str, Any]:
    """Check a topic's overrides (e.g. from CreateTopics) and return their typed values.

    ConfigError (INVALID_CONFIG) for an unknown key, a null or invalid value, or
    min.compaction.lag.ms above max.compaction.lag.ms.
    """
    nulls = sorted(key for key, value in configs.items() if value is None)
    if nulls:
        raise ConfigError(nulls[0], f"Null value not supported for topic configs: {','.join(nulls)}")
    typed = {key: _topic_definition(key).parse(value) for key, value in configs.items()}
    _check_compaction_lags(typed)
    return typed


def _topic_definition(key: str) -> ConfigDefinition:
    if key not in TOPIC_CONFIGS:
        raise ConfigError(key, f"Unknown topic config name: {key}")
    return TOPIC_CONFIGS[key]


def _check_compaction_lags(typed: Mapping[str, Any]) -> None:
    low = typed.get("min.compaction.lag.ms", TOPIC_CONFIGS["min.compaction.lag.ms"].default)
    high = typed.get("max.compaction.lag.ms", TOPIC_CONFIGS["max.compaction.lag.ms"].default)
    if low > high:
        raise ConfigError(
            "min.compaction.lag.ms",
            f"conflict topic config setting min.compaction.lag.ms ({low}) > max.compaction.lag.ms ({high})",
        )


def topic_config_values(overrides: Mapping[str, Any], broker: BrokerConfig) -> dict[str, Any]:
    """Every topic config's effective typed value: the topic's override, else the broker's default."""
    typed = validate_topic_configs(overrides)
    return {key: typed[key] if key in typed else broker.topic_default(key) for key in TOPIC_CONFIGS}
