"""`BrokerConfig`: a broker's settings from file + `--override` values + dynamic layers, with
typed access, the source of each value, listeners, advertised listeners, log dirs and the
broker id.

    config = BrokerConfig({"log.dirs": tmp, "listeners": "PLAINTEXT://127.0.0.1:0"})
    config["num.partitions"]                  # 1
    config.listeners                          # [Listener('PLAINTEXT', '127.0.0.1', 0)]
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .definitions import (
    AUTHORIZER_KEYS,
    BROKER_CONFIGS,
    INERT_BROKER_KEYS,
    LISTENER_MECHANISM_KEYS,
    TOPIC_CONFIGS,
    UNHONOURED_WHEN_SET,
)
from .listeners import Listener, parse_listeners, parse_security_protocol_map
from .properties import load_properties
from .types import ConfigError, ConfigSource, parse_http_listener, to_raw

logger = logging.getLogger(__name__)


def _stringify(values: Mapping[str, Any] | None) -> dict[str, str]:
    """Supplied values as strings; a None value means the key is not set."""
    return {str(key): to_raw(value) for key, value in (values or {}).items() if value is not None}


class BrokerConfig:
    """A broker's configuration: Kafka keys with defaults, typed values and their sources.

    Layers, highest precedence first: dynamic per-broker values, dynamic cluster-wide defaults,
    static values (`props`, e.g. from server.properties, updated by `overrides`, e.g. from
    --override), then Kafka's defaults. Unknown keys are kept as strings and logged.
    """

    def __init__(
        self,
        props: Mapping[str, Any] | None = None,
        overrides: Mapping[str, Any] | None = None,
        *,
        dynamic_broker: Mapping[str, Any] | None = None,
        dynamic_default: Mapping[str, Any] | None = None,
    ) -> None:
        static = {**_stringify(props), **_stringify(overrides)}
        self._layers: list[tuple[ConfigSource, dict[str, str]]] = [
            (ConfigSource.DYNAMIC_BROKER_CONFIG, _stringify(dynamic_broker)),
            (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, _stringify(dynamic_default)),
            (ConfigSource.STATIC_BROKER_CONFIG, static),
        ]
        self._check_dynamic_keys()
        self._values = self._parse_all()
        self._broker_id = self._resolve_broker_id()
        self._log_dirs = self._resolve_log_dirs()
        self._protocols = parse_security_protocol_map(
            "listener.security.protocol.map", self["listener.security.protocol.map"]
        )
        self._listeners = parse_listeners("listeners", self["listeners"])
        self._advertised = self._resolve_advertised_listeners()
        self._check_listeners_have_protocols()
        self._check_advertised_listeners()
        self._check_group_coordinator()
        self._check_connection_limits()
        self._check_unhonoured_settings()

    @classmethod
    def from_file(cls, path: str | Path, overrides: Mapping[str, Any] | None = None) -> BrokerConfig:
        """Load server.properties; `overrides` (e.g. from --override key=value) win."""
        return cls(load_properties(path), overrides)

    def with_dynamic(
        self, per_broker: Mapping[str, Any] | None = None, cluster_default: Mapping[str, Any] | None = None
    ) -> BrokerConfig:
        """A copy with these dynamic values replacing the current dynamic layers."""
        return BrokerConfig(self.static_values, dynamic_broker=per_broker, dynamic_default=cluster_default)

    # Construction -----------------------------------------------------------------------

    def _check_dynamic_keys(self) -> None:
        for _, values in self._layers[:2]:
            for key in values:
                if is_listener_config(key):  # Kafka keeps any listener.name.<l>.<key> dynamically
                    continue
                definition = BROKER_CONFIGS.get(key)
                if definition is None:  # a key Kafka does not know: kept as Kafka keeps it (for plug-ins)
                    continue
                if not definition.dynamic:
                    raise ConfigError(key, f"Cannot update these configs dynamically: {{{key}}}")

    def _parse_all(self) -> dict[str, Any]:
        """Defaults, then each layer from the lowest up; every supplied value is validated."""
        values = {name: definition.default for name, definition in BROKER_CONFIGS.items()}
        for _, layer in reversed(self._layers):
            for key, raw in layer.items():
                values[key] = BROKER_CONFIGS[key].parse(raw) if key in BROKER_CONFIGS else raw
        return values

    def warn_unknown_keys(self) -> None:
        """Log each supplied key that is not a broker config, with the closest known key, and each
        one this broker accepts but does not act on (`INERT_BROKER_KEYS`); once, at start: the
        dynamic layers a running broker rebuilds its config with cannot add any."""
        if self.unknown_keys:
            import difflib  # only to name the closest key of a mistyped one

        for key in self.unknown_keys:
            closest = difflib.get_close_matches(key, BROKER_CONFIGS, n=1)
            hint = f"; did you mean {closest[0]!r}?" if closest else ""
            logger.warning("The configuration %r was supplied but isn't a known config%s", key, hint)
        for key in self.supplied_keys:
            if key in INERT_BROKER_KEYS:
                logger.warning("The configuration %r was supplied but has no effect on this broker", key)

    def _resolve_broker_id(self) -> int:
        """node.id if set, else broker.id if set, else 0 (this project's standalone default)."""
        node_id, broker_id = self["node.id"], self["broker.id"]
        if node_id >= 0 and broker_id >= 0 and node_id != broker_id:
            raise ConfigError(
                "broker.id",
                f"If both broker.id and node.id are set, they must match (broker.id={broker_id}, node.id={node_id})",
            )
        if node_id >= 0:
            return node_id
        return broker_id if broker_id >= 0 else 0

    @property
    def log_dirs_key(self) -> str:
        """The key the log directories come from: log.dirs if set, else log.dir."""
        return "log.dirs" if self["log.dirs"] is not None else "log.dir"

    def _resolve_log_dirs(self) -> list[str]:
        """log.dirs if set, else log.dir, split on commas."""
        key = self.log_dirs_key
        dirs = [item for item in re.split(r"\s*,\s*", self[key].strip()) if item]
        if not dirs:
            raise ConfigError(key, f"{key} must contain at least one directory")
        return dirs

    def _resolve_advertised_listeners(self) -> list[Listener]:
        if self["advertised.listeners"] is None:
            return list(self._listeners)
        return parse_listeners("advertised.listeners", self["advertised.listeners"])

    def _check_listeners_have_protocols(self) -> None:
        protocols = self.security_protocol_map
        for listener in self.listeners:
            if listener.name not in protocols:
                raise ConfigError(
                    "listener.security.protocol.map", f"No security protocol defined for listener {listener.name}"
                )

    def _check_advertised_listeners(self) -> None:
        names = {listener.name for listener in self.listeners}
        for listener in self.advertised_listeners:
            if listener.host == "0.0.0.0":
                raise ConfigError(
                    "advertised.listeners", "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0"
                )
            if listener.name not in names:
                raise ConfigError(
                    "advertised.listeners",
                    f"advertised listener {listener.name} is not one of the listeners {sorted(names)}",
                )

    def _check_group_coordinator(self) -> None:
        """Kafka's GroupCoordinatorConfig checks: the classic protocol stays on, and the consumer
        groups' session timeout and heartbeat interval lie within their bounds."""
        if "classic" not in self["group.coordinator.rebalance.protocols"]:
            raise ConfigError(
                "group.coordinator.rebalance.protocols", "Disabling the 'classic' protocol is not supported."
            )
        for kind in ("session.timeout.ms", "heartbeat.interval.ms"):
            key, low, high = (f"group.consumer.{kind}", f"group.consumer.min.{kind}", f"group.consumer.max.{kind}")
            if self[high] < self[low]:
                raise ConfigError(high, f"{high} must be greater than or equal to {low}")
            if self[key] < self[low]:
                raise ConfigError(key, f"{key} must be greater than or equal to {low}")
            if self[key] > self[high]:
                raise ConfigError(key, f"{key} must be less than or equal to {high}")
        if self["group.consumer.heartbeat.interval.ms"] >= self["group.consumer.session.timeout.ms"]:
            raise ConfigError(
                "group.consumer.heartbeat.interval.ms",
                "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms",
            )

    def _check_connection_limits(self) -> None:
        """Kafka's rule: no connection from anywhere is allowed only per address, through overrides."""
        if self["max.connections.per.ip"] == 0 and not (self["max.connections.per.ip.overrides"] or "").strip():
            raise ConfigError(
                "max.connections.per.ip",
                "max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set.",
            )

    def _check_unhonoured_settings(self) -> None:
        """A key Kafka acts on but this broker cannot, set to anything but Kafka's default, stops
        the broker rather than being ignored."""
        for key, reason in UNHONOURED_WHEN_SET.items():
            value = self[key]
            if value not in (None, [], BROKER_CONFIGS[key].default) and value != "":
                raise ConfigError(key, f"{key}={self.raw(key)} cannot be honoured: {reason}")

    # Access ------------------------------------------------------------------------------

    def __getitem__(self, key: str) -> Any:
        """The typed value (None for a key without default); a supplied unknown key's string."""
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def get(self, key: str, default: Any = None) -> Any:
        """The typed value, or `default` if the key is unknown or has no value."""
        value = self._values.get(key)
        return default if value is None else value

    def raw(self, key: str) -> str | None:
        """The supplied string of the highest layer that sets `key` (None if none does)."""
        for _, values in self._layers:
            if key in values:
                return values[key]
        return None

    def source_of(self, key: str) -> ConfigSource:
        """The layer the value of `key` comes from; KeyError for an unknown key nobody set."""
        for source, values in self._layers:
            if key in values:
                return source
        if key in BROKER_CONFIGS:
            return ConfigSource.DEFAULT_CONFIG
        raise KeyError(key)

    def layer(self, source: ConfigSource) -> dict[str, str]:
        """The supplied strings of one layer (dynamic per-broker, dynamic default or static)."""
        return dict(next(values for layer_source, values in self._layers if layer_source is source))

    @property
    def static_values(self) -> dict[str, str]:
        return self.layer(ConfigSource.STATIC_BROKER_CONFIG)

    @property
    def supplied_keys(self) -> list[str]:
        keys: dict[str, None] = {}
        for _, values in self._layers:
            keys.update(dict.fromkeys(values))
        return list(keys)

    @property
    def unknown_keys(self) -> list[str]:
        """Supplied keys that are not broker configs; `listener.name.<listener>.<key>` of a
        known key is a per-listener override (Kafka's), and the authorizer's settings
        (`super.users`, ...) are its own: neither is unknown."""
        return [
            key
            for key in self.supplied_keys
            if key not in BROKER_CONFIGS and key not in AUTHORIZER_KEYS and not _is_listener_override(key)
        ]

    # Derived values ------------------------------------------------------------------------

    @property
    def broker_id(self) -> int:
        """node.id if set, else broker.id if set, else 0 (this project's standalone default)."""
        return self._broker_id

    @property
    def log_dirs(self) -> list[str]:
        """log.dirs if set, else log.dir, split on commas."""
        return list(self._log_dirs)

    @property
    def listeners(self) -> list[Listener]:
        return list(self._listeners)

    @property
    def advertised_listeners(self) -> list[Listener]:
        """advertised.listeners if set, else the listeners (an empty host is left to the server)."""
        return list(self._advertised)

    @property
    def metrics_listener(self) -> tuple[str, int] | None:
        """(host, port) of `pykbroker.metrics.listener`; None when unset (nothing is served)."""
        value = self["pykbroker.metrics.listener"]
        return parse_http_listener("pykbroker.metrics.listener", value) if value else None

    @property
    def security_protocol_map(self) -> dict[str, str]:
        """{listener name: security protocol} from listener.security.protocol.map."""
        return dict(self._protocols)

    def security_protocol_of(self, listener_name: str) -> str:
        return self._protocols[listener_name.upper()]

    def topic_default(self, topic_key: str) -> Any:
        """The value a topic without an override gets for `topic_key`, from its broker synonyms."""
        definition = TOPIC_CONFIGS[topic_key]
        for synonym in definition.synonyms:
            value = self[synonym.name]
            if value is not None:
                return _clamp_retention(topic_key, value * synonym.unit_ms if synonym.unit_ms != 1 else value)
        return definition.default

    def __repr__(self) -> str:
        return f"BrokerConfig({self.static_values!r})"


_LISTENER_OVERRIDE = re.compile(r"listener\.name\.[^.]+\.(.+)")
_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]*\.(.*)")  # Kafka's ListenerConfigRegex


def is_listener_config(key: str) -> bool:
    """`listener.name.<listener>.<anything>`, as Kafka's ListenerConfigRegex matches it."""
    return _LISTENER_CONFIG.fullmatch(key) is not None


def listener_base_name(key: str) -> str | None:
    """The `<key>` of `listener.name.<listener>.<key>` (None for any other key)."""
    match = _LISTENER_CONFIG.fullmatch(key)
    return None if match is None else match.group(1)


def _is_listener_override(key: str) -> bool:
    match = _LISTENER_OVERRIDE.fullmatch(key)
    if match is None:
        return False
    base = match.group(1)
    # "<mechanism>.sasl.jaas.config" and the other per-mechanism listener keys
    return base in BROKER_CONFIGS or any(base.endswith("." + key) for key in LISTENER_MECHANISM_KEYS)


def _clamp_retention(topic_key: str, value: Any) -> Any:
    """Any negative broker retention time means 'forever', i.e. -1."""
    return -1 if topic_key == "retention.ms" and value < 0 else value
