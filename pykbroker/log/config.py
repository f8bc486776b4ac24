"""Per-topic log configuration: Kafka's topic config names, defaults and value parsing.

    config = LogConfig.from_dict({"segment.bytes": "1048576", "cleanup.policy": "compact"})
    config.segment_bytes            # 1048576
    config = config.updated({"retention.ms": 1000})   # AlterConfigs: a new immutable config

Unknown keys are kept in `extra` (so configs the log does not act on survive a round trip).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

LONG_MAX = 2**63 - 1

CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"


def _parse_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected an integer, got {value!r}")
    return int(value)


def _parse_float(value: Any) -> float:
    return float(value)


def _parse_str(value: Any) -> str:
    return str(value).strip()


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"expected true or false, got {value!r}")
    return text == "true"


def _parse_policy(value: Any) -> str:
    if isinstance(value, (list, tuple, set, frozenset)):
        parts = [str(part).strip() for part in value]
    else:
        parts = [part.strip() for part in str(value).split(",")]
    parts = [part for part in parts if part]
    for part in parts:
        if part not in ("delete", "compact"):
            raise ValueError(f"unknown cleanup.policy {part!r}")
    return ",".join(parts)


def _parse_timestamp_type(value: Any) -> str:
    text = str(value).strip()
    if text not in (CREATE_TIME, LOG_APPEND_TIME):
        raise ValueError(f"message.timestamp.type must be CreateTime or LogAppendTime, not {value!r}")
    return text


# Kafka name -> (attribute, parser)
_KEYS = {
    "segment.bytes": ("segment_bytes", _parse_int),
    "segment.ms": ("segment_ms", _parse_int),
    "segment.jitter.ms": ("segment_jitter_ms", _parse_int),
    "segment.index.bytes": ("segment_index_bytes", _parse_int),
    "index.interval.bytes": ("index_interval_bytes", _parse_int),
    "retention.ms": ("retention_ms", _parse_int),
    "retention.bytes": ("retention_bytes", _parse_int),
    "cleanup.policy": ("cleanup_policy", _parse_policy),
    "delete.retention.ms": ("delete_retention_ms", _parse_int),
    "min.compaction.lag.ms": ("min_compaction_lag_ms", _parse_int),
    "max.compaction.lag.ms": ("max_compaction_lag_ms", _parse_int),
    "min.cleanable.dirty.ratio": ("min_cleanable_dirty_ratio", _parse_float),
    "max.message.bytes": ("max_message_bytes", _parse_int),
    "message.timestamp.type": ("message_timestamp_type", _parse_timestamp_type),
    "message.timestamp.difference.max.ms": ("message_timestamp_difference_max_ms", _parse_int),
    "message.timestamp.before.max.ms": ("message_timestamp_before_max_ms", _parse_int),
    "message.timestamp.after.max.ms": ("message_timestamp_after_max_ms", _parse_int),
    "flush.messages": ("flush_messages", _parse_int),
    "flush.ms": ("flush_ms", _parse_int),
    "file.delete.delay.ms": ("file_delete_delay_ms", _parse_int),
    "compression.type": ("compression_type", _parse_str),
    "preallocate": ("preallocate", _parse_bool),
}


@dataclass(frozen=True)
class LogConfig:
    """The topic configs a partition's log acts on, with Kafka 3.9's defaults."""

    segment_bytes: int = 1073741824
    segment_ms: int = 604800000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    retention_ms: int = 604800000
    retention_bytes: int = -1
    cleanup_policy: str = "delete"
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    max_message_bytes: int = 1048588
    message_timestamp_type: str = CREATE_TIME
    message_timestamp_difference_max_ms: int = LONG_MAX
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = LONG_MAX
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    file_delete_delay_ms: int = 60000
    compression_type: str = "producer"
    preallocate: bool = False
    extra: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None = None) -> "LogConfig":
        """A config from Kafka-named keys (values as strings or numbers); defaults for the rest."""
        return cls().updated(values or {})

    def updated(self, values: Mapping[str, Any]) -> "LogConfig":
        """A copy with `values` (Kafka names, or attribute names) applied."""
        changes: dict[str, Any] = {}
        extra = dict(self.extra)
        for key, value in values.items():
            if key in _KEYS:
                attribute, parse = _KEYS[key]
                changes[attribute] = parse(value)
            elif key in _ATTRIBUTES:
                changes[key] = _ATTRIBUTE_PARSERS[key](value)
            else:
                extra[key] = str(value)
        return dataclasses.replace(self, **changes, extra=extra)

    def to_dict(self) -> dict[str, str]:
        """Kafka-named keys and string values (DescribeConfigs style)."""
        result = {key: _format(getattr(self, attribute)) for key, (attribute, _) in _KEYS.items()}
        result.update(self.extra)
        return result

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy.split(",")

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy.split(",")

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


_ATTRIBUTES = {attribute for attribute, _ in _KEYS.values()}
_ATTRIBUTE_PARSERS = {attribute: parse for attribute, parse in _KEYS.values()}


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def as_log_config(config: "LogConfig | Mapping[str, Any] | None", default: LogConfig | None = None) -> LogConfig:
    """`config` as a LogConfig: a mapping is applied over `default` (or Kafka's defaults)."""
    if isinstance(config, LogConfig):
        return config
    base = default or LogConfig()
    return base.updated(config or {})
