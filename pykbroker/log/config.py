"""Per-topic log configuration, built from the one topic-config table (`TOPIC_CONFIGS` in
`pykbroker/config/definitions.py`): its names, Kafka 3.9's defaults and its parsing.

Every topic config is a declared, typed attribute, named as the key with '.' as '_'
(`segment.bytes` is `segment_bytes`); its default comes from the table, and a test holds the
declared attributes equal to the table's keys and types. List values (`cleanup.policy`) are
tuples, so a config stays hashable.

    config = LogConfig.from_dict({"segment.bytes": "1048576", "cleanup.policy": "compact"})
    config.segment_bytes            # 1048576
    config = config.updated({"retention.ms": 1000})   # AlterConfigs: a new immutable config

A value the table rejects raises ValueError. Keys that are not topic configs are kept in
`extra` (so they survive a round trip).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..config.definitions import TIMESTAMP_TYPES, TOPIC_CONFIGS, ConfigDefinition
from ..config.types import LONG_MAX, ConfigError

# The cleaner's offset map holds at most this many keys per pass (cleaner.py's default).
DEFAULT_MAX_MAP_ENTRIES = 250_000

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


def _default(key: str) -> Any:
    """Kafka's default of topic config `key`, as stored."""
    return _stored(TOPIC_CONFIGS[key].default)


@dataclasses.dataclass(frozen=True)
class _Fields:
    """One attribute per entry of TOPIC_CONFIGS, in its order, and `extra`."""

    cleanup_policy: tuple[str, ...] = _default("cleanup.policy")
    compression_gzip_level: int = _default("compression.gzip.level")
    compression_lz4_level: int = _default("compression.lz4.level")
    compression_type: str = _default("compression.type")
    compression_zstd_level: int = _default("compression.zstd.level")
    delete_retention_ms: int = _default("delete.retention.ms")
    file_delete_delay_ms: int = _default("file.delete.delay.ms")
    flush_messages: int = _default("flush.messages")
    flush_ms: int = _default("flush.ms")
    follower_replication_throttled_replicas: tuple[str, ...] = _default("follower.replication.throttled.replicas")
    index_interval_bytes: int = _default("index.interval.bytes")
    leader_replication_throttled_replicas: tuple[str, ...] = _default("leader.replication.throttled.replicas")
    local_retention_bytes: int = _default("local.retention.bytes")
    local_retention_ms: int = _default("local.retention.ms")
    max_compaction_lag_ms: int = _default("max.compaction.lag.ms")
    max_message_bytes: int = _default("max.message.bytes")
    message_downconversion_enable: bool = _default("message.downconversion.enable")
    message_format_version: str = _default("message.format.version")
    message_timestamp_after_max_ms: int = _default("message.timestamp.after.max.ms")
    message_timestamp_before_max_ms: int = _default("message.timestamp.before.max.ms")
    message_timestamp_difference_max_ms: int = _default("message.timestamp.difference.max.ms")
    message_timestamp_type: str = _default("message.timestamp.type")
    min_cleanable_dirty_ratio: float = _default("min.cleanable.dirty.ratio")
    min_compaction_lag_ms: int = _default("min.compaction.lag.ms")
    min_insync_replicas: int = _default("min.insync.replicas")
    preallocate: bool = _default("preallocate")
    remote_log_copy_disable: bool = _default("remote.log.copy.disable")
    remote_log_delete_on_disable: bool = _default("remote.log.delete.on.disable")
    remote_storage_enable: bool = _default("remote.storage.enable")
    retention_bytes: int = _default("retention.bytes")
    retention_ms: int = _default("retention.ms")
    segment_bytes: int = _default("segment.bytes")
    segment_index_bytes: int = _default("segment.index.bytes")
    segment_jitter_ms: int = _default("segment.jitter.ms")
    segment_ms: int = _default("segment.ms")
    unclean_leader_election_enable: bool = _default("unclean.leader.election.enable")
    extra: Mapping[str, str] = dataclasses.field(default_factory=dict)


_UPDATED: dict[tuple[Any, ...], LogConfig] = {}  # see LogConfig.updated; cleared when it holds this many
_UPDATED_LIMIT = 4096


def _hashable(values: Mapping[str, Any]) -> tuple[Any, ...]:
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

    def _identity(self) -> tuple[Any, ...]:
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
