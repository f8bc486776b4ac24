"""Broker and topic configuration under Kafka 3.9's names, types, defaults and validators.

One module per concern:

| module | owns |
|---|---|
| `types.py` | config types and sources, parsing and formatting values by type, validators, `ConfigError` |
| `definitions.py` | the tables: `BROKER_CONFIGS` and `TOPIC_CONFIGS` (the one topic-config table), broker synonyms |
| `properties.py` | the server.properties parser (Java properties syntax) |
| `listeners.py` | listeners and the listener security protocol map |
| `broker.py` | `BrokerConfig`: static, `--override` and dynamic layers; typed access and sources |
| `topics.py` | a topic's overrides validated, and the effective values its log uses |
| `describe.py` | the entries DescribeConfigs answers with (value, source, synonyms) |

The names other modules use are re-exported here (those of `describe.py` imported on first use:
only DescribeConfigs and CreateTopics need them):

    config = BrokerConfig({"log.dirs": tmp, "listeners": "PLAINTEXT://127.0.0.1:0"})
    config["num.partitions"]                  # 1
    topic = topic_config_values({"retention.ms": "1000"}, config)
    entries = describe_topic_configs({"retention.ms": "1000"}, config)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..common.lazy_names import names_from_modules
from .broker import BrokerConfig
from .definitions import (
    BROKER_CONFIGS,
    DYNAMIC_BROKER_KEYS,
    TOPIC_CONFIGS,
    ConfigDefinition,
    Synonym,
    broker_synonyms,
)
from .listeners import Listener, parse_listeners, parse_security_protocol_map
from .properties import load_properties, parse_properties
from .topics import topic_config_values, validate_topic_configs
from .types import (
    ConfigError,
    ConfigSource,
    ConfigType,
    format_value,
    java_double_string,
    parse_typed,
    to_raw,
)

if TYPE_CHECKING:
    from .describe import (
        ConfigEntry,
        ConfigSynonym,
        broker_config_synonyms,
        describe_broker_configs,
        describe_topic_configs,
    )

_MODULE_OF = dict.fromkeys(
    ("ConfigEntry", "ConfigSynonym", "broker_config_synonyms", "describe_broker_configs", "describe_topic_configs"),
    "describe",
)
__getattr__ = names_from_modules(__name__, _MODULE_OF)


__all__ = [
    "BROKER_CONFIGS",
    "DYNAMIC_BROKER_KEYS",
    "TOPIC_CONFIGS",
    "BrokerConfig",
    "ConfigDefinition",
    "ConfigEntry",
    "ConfigError",
    "ConfigSource",
    "ConfigSynonym",
    "ConfigType",
    "Listener",
    "Synonym",
    "broker_config_synonyms",
    "broker_synonyms",
    "describe_broker_configs",
    "describe_topic_configs",
    "format_value",
    "java_double_string",
    "load_properties",
    "parse_listeners",
    "parse_properties",
    "parse_security_protocol_map",
    "parse_typed",
    "to_raw",
    "topic_config_values",
    "validate_topic_configs",
]
