"""Per-topic log configuration, built from the one topic-config table (`TOPIC_CONFIGS` in
`pykbroker/config/definitions.py`): its names, Kafka 3.9's defaults and its parsing.

Every topic config is an attribute, named as the key with '.' as '_' (`segment.bytes` is
`segment_bytes`); list values (`cleanup.policy`) are tuples, so a config stays hashable.

    config = LogConfig.from_dict({"segment.bytes": "1048576", "cleanup.policy": "compact"})
    config.segment_bytes            # 1048576
    config = config.updated({"retention.ms": 1000})   # AlterConfigs: a new immutable config

A value the table rejects raises ValueError. Keys that are not topic configs are kept in
`extra` (so they survive a round trip).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..config.definitions import TIMESTAMP_TYPES, TOPIC_CONFIGS, ConfigDefinition
from ..config.types import LONG_MAX, ConfigError

CREATE_TIME, LOG_APPEND_TIME = TIMESTAMP_TYPES

__all__ = ["CREATE_TIME", "LOG_APPEND_TIME", "LONG_MAX", "LogConfig", "as_log_config"]


def attribute_of(key: str) -> str:
    """The LogConfig attribute of a topic config: 'segment.bytes' -> 'segment_bytes'."""
    return key.replace(".", "_")


_DEFINITIONS: dict[str, ConfigDefinition] = {attribute_of(key): d for key, d in TOPIC_CONFIGS.items()}


def _stored(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _parse(definition: ConfigDefinition, value: Any) -> Any:
    try:
        return _stored(definition.parse(value))
    except ConfigError as error:
        raise ValueError(str(error)) from error


if TYPE_CHECKING:

    @dataclasses.dataclass(frozen=True)
    class _Fields:
        """What the checker sees of the generated dataclass below: `extra`, and one attribute
        (of its config's type, hence Any) per topic config."""

        extra: Mapping[str, str] = dataclasses.field(default_factory=dict)

        def __getattr__(self, attribute: str) -> Any: ...
else:
    _Fields = dataclasses.make_dataclass(
        "_Fields",
        [
            (attribute, Any, dataclasses.field(default=_stored(definition.default)))
            for attribute, definition in _DEFINITIONS.items()
        ]
        + [("extra", Mapping[str, str], dataclasses.field(default_factory=dict))],
        frozen=True,
    )


_UPDATED: dict[tuple, LogConfig] = {}  # see LogConfig.updated; cleared when it holds this many
_UPDATED_LIMIT = 4096


def _hashable(values: Mapping[str, Any]) -> tuple:
    """`values` as a key: its items in order, lists as tuples (TypeError for what cannot hash)."""
    items = tuple(sorted((key, tuple(value) if isinstance(value, list) else value) for key, value in values.items()))
    hash(items)
    return items


class LogConfig(_Fields):
    """The topic configs of a partition's log (one attribute per entry of TOPIC_CONFIGS)."""

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None = None) -> LogConfig:
        """A config from Kafka-named keys (values as strings or numbers); defaults for the rest."""
        return cls().updated(values or {})

    def updated(self, values: Mapping[str, Any]) -> LogConfig:
        """A copy with `values` (Kafka names, or attribute names) applied.

        Configs are immutable, so the same values over the same config give an equal config:
        the result is remembered (the partitions of a topic, and the thousands of logs a
        broker loads at start, share one parse instead of one per partition)."""
        try:
            key = (self._identity(), _hashable(values))
        except TypeError:  # a value that cannot be a key: parse without remembering
            return self._parsed(values)
        cached = _UPDATED.get(key)
        if cached is None:
            cached = self._parsed(values)
            if len(_UPDATED) >= _UPDATED_LIMIT:
                _UPDATED.clear()
            _UPDATED[key] = cached
        return cached

    def _identity(self) -> tuple:
        """Every value of this config, as a hashable tuple (the dataclass hash skips `extra`)."""
        return tuple(getattr(self, attribute) for attribute in _DEFINITIONS) + (_hashable(self.extra),)

    def _parsed(self, values: Mapping[str, Any]) -> LogConfig:
        changes: dict[str, Any] = {}
        extra = dict(self.extra)
        for key, value in values.items():
            attribute = attribute_of(key) if key in TOPIC_CONFIGS else key
            if attribute in _DEFINITIONS:
                changes[attribute] = _parse(_DEFINITIONS[attribute], value)
            else:
                extra[key] = str(value)
        return dataclasses.replace(self, **changes, extra=extra)

    def to_dict(self) -> dict[str, str | None]:
        """Kafka-named keys and string values (DescribeConfigs style; None for a null value)."""
        result = {key: definition.format(getattr(self, attribute_of(key))) for key, definition in TOPIC_CONFIGS.items()}
        result.update(self.extra)
        return result

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def log_append_time(self) -> bool:
        return self.message_timestamp_type == LOG_APPEND_TIME

    @property
    def timestamp_before_max_ms(self) -> int:
        """The before bound, falling back to the deprecated difference config when it is unset."""
        if self.message_timestamp_before_max_ms != LONG_MAX:
            return self.message_timestamp_before_max_ms
        return self.message_timestamp_difference_max_ms

    @property
    def timestamp_after_max_ms(self) -> int:
        if self.message_timestamp_after_max_ms != LONG_MAX:
            return self.message_timestamp_after_max_ms
        return self.message_timestamp_difference_max_ms


def as_log_config(config: LogConfig | Mapping[str, Any] | None, default: LogConfig | None = None) -> LogConfig:
    """`config` as a LogConfig: a mapping is applied over `default` (or Kafka's defaults)."""
    if isinstance(config, LogConfig):
        return config
    base = default or LogConfig()
    return base.updated(config or {})
