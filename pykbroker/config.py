"""Broker and topic configuration under Kafka 3.9's names, types, defaults and validators.

This module owns:

* the tables of config definitions: `BROKER_CONFIGS` (server.properties keys) and
  `TOPIC_CONFIGS` (per-topic keys, each with the broker keys that supply its default, in
  Kafka's order of precedence);
* the parser of server.properties files (Java properties syntax);
* `BrokerConfig`: file + `--override` values + dynamic layers, with typed access, the source of
  each value, listeners, advertised listeners, log dirs and the broker id;
* topic configs: validation of a topic's overrides, the effective values a log uses, and the
  entries DescribeConfigs answers with (value, source, synonyms), for brokers too.

    config = BrokerConfig({"log.dirs": tmp, "listeners": "PLAINTEXT://127.0.0.1:0"})
    config["num.partitions"]                  # 1
    config.listeners                          # [Listener('PLAINTEXT', '127.0.0.1', 0)]
    topic = topic_config_values({"retention.ms": "1000"}, config)
    entries = describe_topic_configs({"retention.ms": "1000"}, config)

Values are parsed the way Kafka parses them: strings are trimmed, booleans are true/false in
any case, lists are comma separated (an empty string is an empty list), numbers are decimal.

Project-specific keys use the `pykbroker.` prefix and are not Kafka keys; DescribeConfigs never
reports them. There is one:

* `pykbroker.fsync.before.ack` (boolean, default false): when true, the broker fsyncs a
  partition's log before acknowledging a produce to it. Kafka itself acknowledges once the
  data is in the page cache (and, for acks=all, on the in-sync replicas), leaving flushes to
  `log.flush.interval.*`.

Where this project departs from Kafka's defaults it says so on the definition: `broker.id`
keeps Kafka's default -1, but `BrokerConfig.broker_id` resolves an unset id (no node.id, no
broker.id) to 0, because a standalone broker has no ZooKeeper to generate one.
"""
from __future__ import annotations

import difflib
import logging
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from .protocol.errors import ErrorCode, KafkaError

logger = logging.getLogger(__name__)

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
DOUBLE_MAX = 1.7976931348623157e308
MS_PER_MINUTE = 60 * 1000
MS_PER_HOUR = 60 * MS_PER_MINUTE


class ConfigType(IntEnum):
    """A config's type; the values are the ids DescribeConfigs (v3+) reports."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """Where a config value comes from; the values are DescribeConfigs' config_source ids."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigError(KafkaError):
    """An invalid or unknown config; names the key. Answers requests with INVALID_CONFIG."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(ErrorCode.INVALID_CONFIG, message)
        self.key = key


def invalid_value(key: str, raw: Any, reason: str) -> ConfigError:
    return ConfigError(key, f"Invalid value {raw} for configuration {key}: {reason}")


# --------------------------------------------------------------------------------------------
# Parsing and formatting values by type

_INTEGER = re.compile(r"[+-]?[0-9]+")
_INTEGER_RANGES = {
    ConfigType.SHORT: (-(2**15), 2**15 - 1),
    ConfigType.INT: (-(2**31), INT_MAX),
    ConfigType.LONG: (-(2**63), LONG_MAX),
}


def to_raw(value: Any) -> str:
    """A Python value given for a config (e.g. an --override) as the string a file would hold."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_string(value)
    if isinstance(value, (list, tuple)):
        return ",".join(to_raw(item) for item in value)
    return str(value)


def parse_typed(key: str, config_type: ConfigType, raw: str) -> Any:
    """Parse a config's string value into its Python value; ConfigError naming the key if malformed."""
    text = raw.strip()
    if config_type is ConfigType.BOOLEAN:
        return _parse_boolean(key, raw, text)
    if config_type in _INTEGER_RANGES:
        return _parse_integer(key, config_type, raw, text)
    if config_type is ConfigType.DOUBLE:
        return _parse_double(key, raw, text)
    if config_type is ConfigType.LIST:
        return [] if not text else re.split(r"\s*,\s*", text)
    return text


def _parse_boolean(key: str, raw: str, text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise invalid_value(key, raw, "Expected value to be either true or false")
    return text.lower() == "true"


def _parse_integer(key: str, config_type: ConfigType, raw: str, text: str) -> int:
    low, high = _INTEGER_RANGES[config_type]
    if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
        raise invalid_value(key, raw, f"Not a number of type {config_type.name}")
    return int(text)


def _parse_double(key: str, raw: str, text: str) -> float:
    try:
        if "_" in text:
            raise ValueError(text)
        return float(text)
    except ValueError:
        raise invalid_value(key, raw, "Not a number of type DOUBLE") from None


def format_value(config_type: ConfigType, value: Any) -> str | None:
    """A parsed value in the string form Kafka reports it (e.g. in DescribeConfigs)."""
    if value is None:
        return None
    if config_type is ConfigType.BOOLEAN:
        return "true" if value else "false"
    if config_type is ConfigType.LIST:
        return ",".join(str(item) for item in value)
    if config_type is ConfigType.DOUBLE:
        return java_double_string(float(value))
    return str(value)


def java_double_string(value: float) -> str:
    """A double as Java prints it: 0.5, 1.0, 1.0E7, 1.7976931348623157E308."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(value)  # plain decimal notation in this range, as in Java
    return _java_scientific(value)


def _java_scientific(value: float) -> str:
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    digits_text = "".join(map(str, digits)).rstrip("0") or "0"
    power = exponent + len(digits) - 1
    mantissa = digits_text[0] + "." + (digits_text[1:] or "0")
    return ("-" if sign else "") + f"{mantissa}E{power}"


# --------------------------------------------------------------------------------------------
# Validators: callables (key, value) that raise ConfigError for a value out of bounds

Validator = Callable[[str, Any], None]


def at_least(minimum: float) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and value < minimum:
            raise invalid_value(key, value, f"Value must be at least {minimum}")
    return check


def between(minimum: float, maximum: float) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and not minimum <= value <= maximum:
            raise invalid_value(key, value, f"Value must be in the range [{minimum}, {maximum}]")
    return check


def one_of(*allowed: str) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and value not in allowed:
            raise invalid_value(key, value, f"String must be one of: {', '.join(allowed)}")
    return check


def each_one_of(*allowed: str) -> Validator:
    def check(key: str, value: Any) -> None:
        for item in value or ():
            if item not in allowed:
                raise invalid_value(key, item, f"String must be one of: {', '.join(allowed)}")
    return check


def gzip_level(key: str, value: Any) -> None:
    if value != -1 and not 1 <= value <= 9:
        raise invalid_value(key, value, "Value must be -1 or in the range [1, 9]")


_THROTTLED_REPLICA = re.compile(r"[0-9]+:[0-9]+")


def throttled_replicas(key: str, value: Any) -> None:
    """Either ['*'] or a list of partition:broker pairs."""
    if value == ["*"] or all(_THROTTLED_REPLICA.fullmatch(item.strip()) for item in value):
        return
    raise invalid_value(key, ",".join(value), "must be the literal '*' or a list of replicas in the "
                                              "form partitionId:brokerId")


# --------------------------------------------------------------------------------------------
# Definitions

class Synonym(NamedTuple):
    """A broker key that supplies a topic config's default; `unit_ms` converts hours or minutes."""

    name: str
    unit_ms: int = 1


@dataclass(frozen=True)
class ConfigDefinition:
    """One config key: its type, Kafka's default (as a parsed value) and its validator.

    Topic configs list their broker `synonyms` in Kafka's order of precedence. Broker configs
    say whether they are `dynamic` (updatable at runtime; DescribeConfigs reports the others
    read-only). `kafka` is False for this project's own keys.
    """

    name: str
    type: ConfigType
    default: Any = None
    validator: Validator | None = None
    synonyms: tuple[Synonym, ...] = ()
    dynamic: bool = False
    kafka: bool = True
    doc: str = field(default="", compare=False)

    @property
    def sensitive(self) -> bool:
        return self.type is ConfigType.PASSWORD

    def parse(self, raw: Any) -> Any:
        """A supplied value (string or Python value) as this config's validated Python value."""
        value = parse_typed(self.name, self.type, to_raw(raw))
        if self.validator is not None:
            self.validator(self.name, value)
        return value

    def format(self, value: Any) -> str | None:
        return format_value(self.type, value)


def _index(definitions: Iterable[ConfigDefinition]) -> dict[str, ConfigDefinition]:
    return {definition.name: definition for definition in definitions}


BOOLEAN, SHORT, INT, LONG = ConfigType.BOOLEAN, ConfigType.SHORT, ConfigType.INT, ConfigType.LONG
DOUBLE, STRING, LIST, CLASS, PASSWORD = (ConfigType.DOUBLE, ConfigType.STRING, ConfigType.LIST, ConfigType.CLASS,
                                         ConfigType.PASSWORD)
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
CLEANUP_POLICIES = ("compact", "delete")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
MIN_SEGMENT_BYTES = 14  # the size of the smallest possible record: Kafka 3.9's lower bound
ZSTD_MIN_LEVEL = -131072


def _topic(name: str, config_type: ConfigType, default: Any, validator: Validator | None = None,
           *synonyms: Synonym | str) -> ConfigDefinition:
    as_synonyms = tuple(s if isinstance(s, Synonym) else Synonym(s) for s in synonyms)
    return ConfigDefinition(name, config_type, default, validator, synonyms=as_synonyms)


TOPIC_CONFIGS: dict[str, ConfigDefinition] = _index([
    _topic("cleanup.policy", LIST, ["delete"], each_one_of(*CLEANUP_POLICIES), "log.cleanup.policy"),
    _topic("compression.gzip.level", INT, -1, gzip_level, "compression.gzip.level"),
    _topic("compression.lz4.level", INT, 9, between(1, 17), "compression.lz4.level"),
    _topic("compression.type", STRING, "producer", one_of(*COMPRESSION_TYPES), "compression.type"),
    _topic("compression.zstd.level", INT, 3, between(ZSTD_MIN_LEVEL, 22), "compression.zstd.level"),
    _topic("delete.retention.ms", LONG, 86400000, at_least(0), "log.cleaner.delete.retention.ms"),
    _topic("file.delete.delay.ms", LONG, 60000, at_least(0), "log.segment.delete.delay.ms"),
    _topic("flush.messages", LONG, LONG_MAX, at_least(1), "log.flush.interval.messages"),
    _topic("flush.ms", LONG, LONG_MAX, at_least(0), "log.flush.interval.ms", "log.flush.scheduler.interval.ms"),
    _topic("follower.replication.throttled.replicas", LIST, [], throttled_replicas),
    _topic("index.interval.bytes", INT, 4096, at_least(0), "log.index.interval.bytes"),
    _topic("leader.replication.throttled.replicas", LIST, [], throttled_replicas),
    _topic("local.retention.bytes", LONG, -2, at_least(-2), "log.local.retention.bytes"),
    _topic("local.retention.ms", LONG, -2, at_least(-2), "log.local.retention.ms"),
    _topic("max.compaction.lag.ms", LONG, LONG_MAX, at_least(1), "log.cleaner.max.compaction.lag.ms"),
    _topic("max.message.bytes", INT, 1048588, at_least(0), "message.max.bytes"),
    _topic("message.downconversion.enable", BOOLEAN, True, None, "log.message.downconversion.enable"),
    _topic("message.format.version", STRING, "3.0-IV1", None, "log.message.format.version"),
    _topic("message.timestamp.after.max.ms", LONG, LONG_MAX, at_least(0), "log.message.timestamp.after.max.ms"),
    _topic("message.timestamp.before.max.ms", LONG, LONG_MAX, at_least(0), "log.message.timestamp.before.max.ms"),
    _topic("message.timestamp.difference.max.ms", LONG, LONG_MAX, at_least(0),
           "log.message.timestamp.difference.max.ms"),
    _topic("message.timestamp.type", STRING, "CreateTime", one_of(*TIMESTAMP_TYPES), "log.message.timestamp.type"),
    _topic("min.cleanable.dirty.ratio", DOUBLE, 0.5, between(0, 1), "log.cleaner.min.cleanable.ratio"),
    _topic("min.compaction.lag.ms", LONG, 0, at_least(0), "log.cleaner.min.compaction.lag.ms"),
    _topic("min.insync.replicas", INT, 1, at_least(1), "min.insync.replicas"),
    _topic("preallocate", BOOLEAN, False, None, "log.preallocate"),
    _topic("remote.log.copy.disable", BOOLEAN, False),
    _topic("remote.log.delete.on.disable", BOOLEAN, False),
    _topic("remote.storage.enable", BOOLEAN, False),
    _topic("retention.bytes", LONG, -1, None, "log.retention.bytes"),
    _topic("retention.ms", LONG, 604800000, at_least(-1), "log.retention.ms",
           Synonym("log.retention.minutes", MS_PER_MINUTE), Synonym("log.retention.hours", MS_PER_HOUR)),
    _topic("segment.bytes", INT, 1073741824, at_least(MIN_SEGMENT_BYTES), "log.segment.bytes"),
    _topic("segment.index.bytes", INT, 10485760, at_least(4), "log.index.size.max.bytes"),
    _topic("segment.jitter.ms", LONG, 0, at_least(0), "log.roll.jitter.ms",
           Synonym("log.roll.jitter.hours", MS_PER_HOUR)),
    _topic("segment.ms", LONG, 604800000, at_least(1), "log.roll.ms", Synonym("log.roll.hours", MS_PER_HOUR)),
    _topic("unclean.leader.election.enable", BOOLEAN, False, None, "unclean.leader.election.enable"),
])

# The broker keys a running broker can change (DescribeConfigs reports the rest read-only):
# the first synonym of each topic config (but message format), plus these.
DYNAMIC_BROKER_KEYS = frozenset(
    {definition.synonyms[0].name for definition in TOPIC_CONFIGS.values() if definition.synonyms}
    - {"log.message.format.version"}
    | {
        "message.max.bytes", "num.network.threads", "num.io.threads", "background.threads",
        "num.replica.fetchers", "num.recovery.threads.per.data.dir",
        "log.cleaner.threads", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.size",
        "log.cleaner.io.buffer.load.factor", "log.cleaner.io.max.bytes.per.second", "log.cleaner.backoff.ms",
        "listeners", "advertised.listeners", "listener.security.protocol.map",
        "max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
        "max.connection.creation.rate", "producer.id.expiration.ms", "transaction.partition.verification.enable",
        "sasl.enabled.mechanisms", "sasl.mechanism.inter.broker.protocol",
        "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
        "ssl.truststore.location", "ssl.truststore.password",
    }
)


def _broker(name: str, config_type: ConfigType, default: Any = None, validator: Validator | None = None,
            doc: str = "") -> ConfigDefinition:
    return ConfigDefinition(name, config_type, default, validator, dynamic=name in DYNAMIC_BROKER_KEYS, doc=doc)


BROKER_CONFIGS: dict[str, ConfigDefinition] = _index([
    # General
    _broker("broker.id", INT, -1, at_least(-1), doc="Kafka's default -1; BrokerConfig.broker_id resolves unset to 0."),
    _broker("node.id", INT, -1, at_least(-1)),
    _broker("process.roles", LIST, [], each_one_of("broker", "controller")),
    _broker("broker.id.generation.enable", BOOLEAN, True),
    _broker("reserved.broker.max.id", INT, 1000, at_least(0)),
    _broker("broker.rack", STRING),
    _broker("message.max.bytes", INT, 1048588, at_least(0)),
    _broker("num.network.threads", INT, 3, at_least(1)),
    _broker("num.io.threads", INT, 8, at_least(1)),
    _broker("background.threads", INT, 10, at_least(1)),
    _broker("queued.max.requests", INT, 500, at_least(1)),
    _broker("queued.max.request.bytes", LONG, -1),
    _broker("request.timeout.ms", INT, 30000),
    _broker("socket.connection.setup.timeout.ms", LONG, 10000),
    _broker("socket.connection.setup.timeout.max.ms", LONG, 30000),
    _broker("authorizer.class.name", STRING, ""),
    _broker("delete.topic.enable", BOOLEAN, True),
    _broker("compression.type", STRING, "producer", one_of(*COMPRESSION_TYPES)),
    _broker("compression.gzip.level", INT, -1, gzip_level),
    _broker("compression.lz4.level", INT, 9, between(1, 17)),
    _broker("compression.zstd.level", INT, 3, between(ZSTD_MIN_LEVEL, 22)),
    _broker("controlled.shutdown.enable", BOOLEAN, True),
    _broker("controlled.shutdown.max.retries", INT, 3),
    _broker("controlled.shutdown.retry.backoff.ms", LONG, 5000),
    _broker("max.incremental.fetch.session.cache.slots", INT, 1000, at_least(0)),
    _broker("fetch.max.bytes", INT, 57671680, at_least(1024)),
    _broker("max.request.partition.size.limit", INT, 2000, at_least(1)),
    # KRaft
    _broker("controller.listener.names", STRING),
    _broker("controller.quorum.voters", LIST, []),
    _broker("controller.quorum.bootstrap.servers", LIST, []),
    _broker("metadata.log.dir", STRING),
    _broker("initial.broker.registration.timeout.ms", INT, 60000),
    _broker("broker.heartbeat.interval.ms", INT, 2000),
    _broker("broker.session.timeout.ms", INT, 9000),
    # Socket server
    _broker("listeners", STRING, "PLAINTEXT://:9092"),
    _broker("advertised.listeners", STRING),
    _broker("listener.security.protocol.map", STRING, DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP),
    _broker("inter.broker.listener.name", STRING),
    _broker("security.inter.broker.protocol", STRING, "PLAINTEXT", one_of(*SECURITY_PROTOCOLS)),
    _broker("control.plane.listener.name", STRING),
    _broker("socket.send.buffer.bytes", INT, 102400),
    _broker("socket.receive.buffer.bytes", INT, 102400),
    _broker("socket.request.max.bytes", INT, 104857600, at_least(1)),
    _broker("socket.listen.backlog.size", INT, 50, at_least(1)),
    _broker("max.connections.per.ip", INT, INT_MAX, at_least(0)),
    _broker("max.connections.per.ip.overrides", STRING, ""),
    _broker("max.connections", INT, INT_MAX, at_least(0)),
    _broker("max.connection.creation.rate", INT, INT_MAX, at_least(0)),
    _broker("connections.max.idle.ms", LONG, 600000),
    _broker("connection.failed.authentication.delay.ms", INT, 100, at_least(0)),
    # Log
    _broker("num.partitions", INT, 1, at_least(1)),
    _broker("log.dir", STRING, "/tmp/kafka-logs"),
    _broker("log.dirs", STRING),
    _broker("log.segment.bytes", INT, 1073741824, at_least(MIN_SEGMENT_BYTES)),
    _broker("log.roll.ms", LONG),
    _broker("log.roll.hours", INT, 168, at_least(1)),
    _broker("log.roll.jitter.ms", LONG),
    _broker("log.roll.jitter.hours", INT, 0, at_least(0)),
    _broker("log.retention.ms", LONG),
    _broker("log.retention.minutes", INT),
    _broker("log.retention.hours", INT, 168),
    _broker("log.retention.bytes", LONG, -1),
    _broker("log.retention.check.interval.ms", LONG, 300000, at_least(1)),
    _broker("log.cleanup.policy", LIST, ["delete"], each_one_of(*CLEANUP_POLICIES)),
    _broker("log.cleaner.enable", BOOLEAN, True),
    _broker("log.cleaner.threads", INT, 1, at_least(0)),
    _broker("log.cleaner.io.max.bytes.per.second", DOUBLE, DOUBLE_MAX),
    _broker("log.cleaner.dedupe.buffer.size", LONG, 134217728),
    _broker("log.cleaner.io.buffer.size", INT, 524288, at_least(0)),
    _broker("log.cleaner.io.buffer.load.factor", DOUBLE, 0.9),
    _broker("log.cleaner.backoff.ms", LONG, 15000, at_least(0)),
    _broker("log.cleaner.min.cleanable.ratio", DOUBLE, 0.5, between(0, 1)),
    _broker("log.cleaner.delete.retention.ms", LONG, 86400000, at_least(0)),
    _broker("log.cleaner.min.compaction.lag.ms", LONG, 0, at_least(0)),
    _broker("log.cleaner.max.compaction.lag.ms", LONG, LONG_MAX, at_least(1)),
    _broker("log.index.size.max.bytes", INT, 10485760, at_least(4)),
    _broker("log.index.interval.bytes", INT, 4096, at_least(0)),
    _broker("log.flush.interval.messages", LONG, LONG_MAX, at_least(1)),
    _broker("log.flush.interval.ms", LONG),
    _broker("log.flush.scheduler.interval.ms", LONG, LONG_MAX),
    _broker("log.flush.offset.checkpoint.interval.ms", INT, 60000, at_least(0)),
    _broker("log.flush.start.offset.checkpoint.interval.ms", INT, 60000, at_least(0)),
    _broker("log.segment.delete.delay.ms", LONG, 60000, at_least(0)),
    _broker("log.preallocate", BOOLEAN, False),
    _broker("log.message.format.version", STRING, "3.0-IV1"),
    _broker("log.message.timestamp.type", STRING, "CreateTime", one_of(*TIMESTAMP_TYPES)),
    _broker("log.message.timestamp.difference.max.ms", LONG, LONG_MAX, at_least(0)),
    _broker("log.message.timestamp.before.max.ms", LONG, LONG_MAX, at_least(0)),
    _broker("log.message.timestamp.after.max.ms", LONG, LONG_MAX, at_least(0)),
    _broker("log.message.downconversion.enable", BOOLEAN, True),
    _broker("log.local.retention.ms", LONG, -2, at_least(-2)),
    _broker("log.local.retention.bytes", LONG, -2, at_least(-2)),
    _broker("num.recovery.threads.per.data.dir", INT, 1, at_least(1)),
    _broker("auto.create.topics.enable", BOOLEAN, True),
    _broker("min.insync.replicas", INT, 1, at_least(1)),
    _broker("create.topic.policy.class.name", CLASS),
    _broker("alter.config.policy.class.name", CLASS),
    # Replication
    _broker("default.replication.factor", INT, 1),
    _broker("unclean.leader.election.enable", BOOLEAN, False),
    _broker("controller.socket.timeout.ms", INT, 30000),
    _broker("replica.lag.time.max.ms", LONG, 30000),
    _broker("replica.socket.timeout.ms", INT, 30000),
    _broker("replica.socket.receive.buffer.bytes", INT, 65536),
    _broker("replica.fetch.max.bytes", INT, 1048576, at_least(0)),
    _broker("replica.fetch.wait.max.ms", INT, 500),
    _broker("replica.fetch.backoff.ms", INT, 1000, at_least(0)),
    _broker("replica.fetch.min.bytes", INT, 1),
    _broker("replica.fetch.response.max.bytes", INT, 10485760, at_least(0)),
    _broker("num.replica.fetchers", INT, 1),
    _broker("replica.high.watermark.checkpoint.interval.ms", LONG, 5000),
    _broker("replica.selector.class", STRING),
    _broker("fetch.purgatory.purge.interval.requests", INT, 1000),
    _broker("producer.purgatory.purge.interval.requests", INT, 1000),
    _broker("delete.records.purgatory.purge.interval.requests", INT, 1),
    _broker("auto.leader.rebalance.enable", BOOLEAN, True),
    _broker("leader.imbalance.per.broker.percentage", INT, 10),
    _broker("leader.imbalance.check.interval.seconds", LONG, 300, at_least(1)),
    _broker("inter.broker.protocol.version", STRING, "3.9-IV0"),
    # Group coordinator
    _broker("group.min.session.timeout.ms", INT, 6000),
    _broker("group.max.session.timeout.ms", INT, 1800000),
    _broker("group.initial.rebalance.delay.ms", INT, 3000),
    _broker("group.max.size", INT, INT_MAX, at_least(1)),
    _broker("group.coordinator.rebalance.protocols", LIST, ["classic"], each_one_of("classic", "consumer", "share")),
    _broker("group.coordinator.threads", INT, 1, at_least(1)),
    _broker("group.consumer.session.timeout.ms", INT, 45000, at_least(1)),
    _broker("group.consumer.min.session.timeout.ms", INT, 45000, at_least(1)),
    _broker("group.consumer.max.session.timeout.ms", INT, 60000, at_least(1)),
    _broker("group.consumer.heartbeat.interval.ms", INT, 5000, at_least(1)),
    _broker("group.consumer.min.heartbeat.interval.ms", INT, 5000, at_least(1)),
    _broker("group.consumer.max.heartbeat.interval.ms", INT, 15000, at_least(1)),
    _broker("group.consumer.max.size", INT, INT_MAX, at_least(1)),
    # Offsets
    _broker("offset.metadata.max.bytes", INT, 4096),
    _broker("offsets.load.buffer.size", INT, 5242880, at_least(1)),
    _broker("offsets.topic.replication.factor", SHORT, 3, at_least(1)),
    _broker("offsets.topic.num.partitions", INT, 50, at_least(1)),
    _broker("offsets.topic.segment.bytes", INT, 104857600, at_least(1)),
    _broker("offsets.topic.compression.codec", INT, 0),
    _broker("offsets.retention.minutes", INT, 10080, at_least(1)),
    _broker("offsets.retention.check.interval.ms", LONG, 600000, at_least(1)),
    _broker("offsets.commit.timeout.ms", INT, 5000, at_least(1)),
    _broker("offsets.commit.required.acks", SHORT, -1),
    # Transactions
    _broker("transactional.id.expiration.ms", INT, 604800000, at_least(1)),
    _broker("transaction.max.timeout.ms", INT, 900000, at_least(1)),
    _broker("transaction.state.log.min.isr", INT, 2, at_least(1)),
    _broker("transaction.state.log.load.buffer.size", INT, 5242880, at_least(1)),
    _broker("transaction.state.log.replication.factor", SHORT, 3, at_least(1)),
    _broker("transaction.state.log.num.partitions", INT, 50, at_least(1)),
    _broker("transaction.state.log.segment.bytes", INT, 104857600, at_least(1)),
    _broker("transaction.abort.timed.out.transaction.cleanup.interval.ms", INT, 10000, at_least(1)),
    _broker("transaction.remove.expired.transaction.cleanup.interval.ms", INT, 3600000, at_least(1)),
    _broker("transaction.partition.verification.enable", BOOLEAN, True),
    _broker("producer.id.expiration.ms", INT, 86400000, at_least(1)),
    # ZooKeeper
    _broker("zookeeper.connect", STRING),
    _broker("zookeeper.session.timeout.ms", INT, 18000),
    _broker("zookeeper.connection.timeout.ms", INT),
    _broker("zookeeper.set.acl", BOOLEAN, False),
    _broker("zookeeper.max.in.flight.requests", INT, 10, at_least(1)),
    # Security
    _broker("sasl.enabled.mechanisms", LIST, ["GSSAPI"]),
    _broker("sasl.mechanism.inter.broker.protocol", STRING, "GSSAPI"),
    _broker("ssl.client.auth", STRING, "none", one_of("required", "requested", "none")),
    _broker("ssl.keystore.location", STRING),
    _broker("ssl.keystore.password", PASSWORD),
    _broker("ssl.key.password", PASSWORD),
    _broker("ssl.truststore.location", STRING),
    _broker("ssl.truststore.password", PASSWORD),
    # This project's own keys (not Kafka's)
    ConfigDefinition("pykbroker.fsync.before.ack", BOOLEAN, False, kafka=False,
                     doc="fsync a partition's log before acknowledging a produce to it"),
])

_BROKER_SYNONYM_GROUPS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)


def broker_synonyms(name: str) -> list[str]:
    """The broker keys that set the same thing as `name`, highest precedence first."""
    if name == "log.flush.interval.ms":
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    for group in _BROKER_SYNONYM_GROUPS:
        if name in group:
            return list(group)
    return [name]


# --------------------------------------------------------------------------------------------
# server.properties (Java properties syntax)

_WHITESPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def load_properties(path: str | Path) -> dict[str, str]:
    """Read a properties file. Bytes are ISO-8859-1 as for Java; use \\u escapes for other characters."""
    return parse_properties(Path(path).read_text(encoding="iso-8859-1"))


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java properties text: `key=value`, `key: value` or `key value`; later keys win."""
    properties = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        properties[_unescape(key)] = _unescape(value)
    return properties


def _logical_lines(text: str) -> Iterable[str]:
    """Non-blank, non-comment lines with continuations (odd trailing backslashes) joined."""
    pending: str | None = None
    for natural in re.split(r"\r\n|\r|\n", text):
        line = natural.lstrip(_WHITESPACE)
        if pending is None and (not line or line[0] in "#!"):
            continue
        continues = _ends_with_continuation(line)
        line = (pending or "") + (line[:-1] if continues else line)
        if continues:
            pending = line
        else:
            pending = None
            yield line
    if pending:
        yield pending


def _ends_with_continuation(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    key_end = _key_end(line)
    rest = line[key_end:]
    stripped = rest.lstrip(_WHITESPACE)
    if stripped[:1] in ("=", ":"):
        stripped = stripped[1:].lstrip(_WHITESPACE)
    return line[:key_end], stripped


def _key_end(line: str) -> int:
    escaped = False
    for index, char in enumerate(line):
        if not escaped and (char in "=:" or char in _WHITESPACE):
            return index
        escaped = char == "\\" and not escaped
    return len(line)


def _unescape(text: str) -> str:
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char != "\\" or index + 1 == len(text):
            out.append("" if char == "\\" else char)
            index += 1
            continue
        escaped = text[index + 1]
        if escaped == "u":
            out.append(_unicode_escape(text, index))
            index += 6
        else:
            out.append(_ESCAPES.get(escaped, escaped))
            index += 2
    return "".join(out)


def _unicode_escape(text: str, index: int) -> str:
    digits = text[index + 2:index + 6]
    if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
        raise ValueError(f"Malformed \\uxxxx encoding: \\u{digits}")
    return chr(int(digits, 16))


# --------------------------------------------------------------------------------------------
# Listeners

class Listener(NamedTuple):
    """One listener: name (upper case), host ('' = all interfaces), port (0 = any free port)."""

    name: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


_LISTENER = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")


def parse_listeners(key: str, text: str | None) -> list[Listener]:
    """Parse a comma separated listener list such as 'PLAINTEXT://127.0.0.1:9092,SSL://:9093'."""
    listeners = [_parse_listener(key, item) for item in re.split(r"\s*,\s*", (text or "").strip()) if item]
    names = [listener.name for listener in listeners]
    if len(names) != len(set(names)):
        raise invalid_value(key, text, "Each listener must have a different name")
    return listeners


def _parse_listener(key: str, text: str) -> Listener:
    match = _LISTENER.fullmatch(text)
    if match is None:
        raise invalid_value(key, text, "Unable to parse as a listener (NAME://host:port)")
    name, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
    if not 0 <= port <= 65535:
        raise invalid_value(key, text, f"Port {port} is out of range")
    return Listener(name, host, port)


def parse_security_protocol_map(key: str, text: str) -> dict[str, str]:
    """Parse 'NAME:PROTOCOL,...' into {listener name: security protocol}, both upper case."""
    mapping = {}
    for item in re.split(r"\s*,\s*", text.strip()):
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or not name.strip() or protocol not in SECURITY_PROTOCOLS:
            raise invalid_value(key, text, f"Map entry '{item}' is not NAME:PROTOCOL with a known protocol")
        mapping[name.strip().upper()] = protocol
    return mapping


# --------------------------------------------------------------------------------------------
# BrokerConfig

def _stringify(values: Mapping[str, Any] | None) -> dict[str, str]:
    """Supplied values as strings; a None value means the key is not set."""
    return {str(key): to_raw(value) for key, value in (values or {}).items() if value is not None}


class BrokerConfig:
    """A broker's configuration: Kafka keys with defaults, typed values and their sources.

    Layers, highest precedence first: dynamic per-broker values, dynamic cluster-wide defaults,
    static values (`props`, e.g. from server.properties, updated by `overrides`, e.g. from
    --override), then Kafka's defaults. Unknown keys are kept as strings and logged.
    """

    def __init__(self, props: Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None, *,
                 dynamic_broker: Mapping[str, Any] | None = None,
                 dynamic_default: Mapping[str, Any] | None = None) -> None:
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
        self._protocols = parse_security_protocol_map("listener.security.protocol.map",
                                                      self["listener.security.protocol.map"])
        self._listeners = parse_listeners("listeners", self["listeners"])
        self._advertised = self._resolve_advertised_listeners()
        self._check_listeners_have_protocols()
        self._check_advertised_listeners()

    @classmethod
    def from_file(cls, path: str | Path, overrides: Mapping[str, Any] | None = None) -> BrokerConfig:
        """Load server.properties; `overrides` (e.g. from --override key=value) win."""
        return cls(load_properties(path), overrides)

    def with_dynamic(self, per_broker: Mapping[str, Any] | None = None,
                     cluster_default: Mapping[str, Any] | None = None) -> BrokerConfig:
        """A copy with these dynamic values replacing the current dynamic layers."""
        return BrokerConfig(self.static_values, dynamic_broker=per_broker, dynamic_default=cluster_default)

    # Construction -----------------------------------------------------------------------

    def _check_dynamic_keys(self) -> None:
        for _, values in self._layers[:2]:
            for key in values:
                definition = BROKER_CONFIGS.get(key)
                if definition is None or not definition.dynamic:
                    raise ConfigError(key, f"Cannot update these configs dynamically: {{{key}}}")

    def _parse_all(self) -> dict[str, Any]:
        """Defaults, then each layer from the lowest up; every supplied value is validated."""
        values = {name: definition.default for name, definition in BROKER_CONFIGS.items()}
        for _, layer in reversed(self._layers):
            for key, raw in layer.items():
                values[key] = BROKER_CONFIGS[key].parse(raw) if key in BROKER_CONFIGS else raw
        return values

    def warn_unknown_keys(self) -> None:
        """Log each supplied key that is not a broker config, with the closest known key (once,
        at start: the dynamic layers a running broker rebuilds its config with cannot add any)."""
        for key in self.unknown_keys:
            closest = difflib.get_close_matches(key, BROKER_CONFIGS, n=1)
            hint = f"; did you mean {closest[0]!r}?" if closest else ""
            logger.warning("The configuration %r was supplied but isn't a known config%s", key, hint)

    def _resolve_broker_id(self) -> int:
        """node.id if set, else broker.id if set, else 0 (this project's standalone default)."""
        node_id, broker_id = self["node.id"], self["broker.id"]
        if node_id >= 0 and broker_id >= 0 and node_id != broker_id:
            raise ConfigError("broker.id", f"If both broker.id and node.id are set, they must match "
                                           f"(broker.id={broker_id}, node.id={node_id})")
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
                raise ConfigError("listener.security.protocol.map",
                                  f"No security protocol defined for listener {listener.name}")

    def _check_advertised_listeners(self) -> None:
        names = {listener.name for listener in self.listeners}
        for listener in self.advertised_listeners:
            if listener.host == "0.0.0.0":
                raise ConfigError("advertised.listeners",
                                  "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0")
            if listener.name not in names:
                raise ConfigError("advertised.listeners", f"advertised listener {listener.name} is not one of "
                                                          f"the listeners {sorted(names)}")

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
        return [key for key in self.supplied_keys if key not in BROKER_CONFIGS]

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


def _clamp_retention(topic_key: str, value: Any) -> Any:
    """Any negative broker retention time means 'forever', i.e. -1."""
    return -1 if topic_key == "retention.ms" and value < 0 else value


# --------------------------------------------------------------------------------------------
# Topic configs

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
        raise ConfigError("min.compaction.lag.ms", f"conflict topic config setting min.compaction.lag.ms ({low}) "
                                                   f"> max.compaction.lag.ms ({high})")


def topic_config_values(overrides: Mapping[str, Any], broker: BrokerConfig) -> dict[str, Any]:
    """Every topic config's effective typed value: the topic's override, else the broker's default."""
    typed = validate_topic_configs(overrides)
    return {key: typed[key] if key in typed else broker.topic_default(key) for key in TOPIC_CONFIGS}


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
    return ConfigEntry(definition.name, shown, _source(synonyms), definition.sensitive, False, tuple(synonyms),
                       definition.type)


def broker_config_synonyms(broker: BrokerConfig, key: str, sensitive: bool = False) -> list[ConfigSynonym]:
    """The layers' values for `key` and its broker synonyms, highest precedence first.

    Each layer lists its synonyms in precedence order; Kafka's defaults are the last layer.
    Entries before the first one for `key` itself are dropped, so a key whose own value is unset
    (e.g. log.retention.ms while log.retention.hours is set) reports no synonyms at all, exactly
    as Kafka does.
    """
    names = broker_synonyms(key)
    synonyms = [ConfigSynonym(name, None if sensitive else values[name], source)
                for source, values in _layers_with_defaults(broker) for name in names if name in values]
    while synonyms and synonyms[0].name != key:
        synonyms.pop(0)
    return synonyms


def _layers_with_defaults(broker: BrokerConfig) -> list[tuple[ConfigSource, Mapping[str, str]]]:
    sources = (ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
               ConfigSource.STATIC_BROKER_CONFIG)
    return [(source, broker.layer(source)) for source in sources] + [(ConfigSource.DEFAULT_CONFIG, _DEFAULT_STRINGS)]


_DEFAULT_STRINGS: dict[str, str] = {
    name: definition.format(definition.default)
    for name, definition in BROKER_CONFIGS.items() if definition.default is not None
}


def _source(synonyms: list[ConfigSynonym]) -> ConfigSource:
    return synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG


# --------------------------------------------------------------------------------------------
# Broker configs for DescribeConfigs

def describe_broker_configs(broker: BrokerConfig, per_broker: bool = True) -> list[ConfigEntry]:
    """The broker's configs as DescribeConfigs reports them, by name.

    `per_broker` describes this broker (resource name = its id): every Kafka key plus the
    supplied unknown keys. Otherwise it describes the cluster-wide default resource (empty
    resource name): only the keys that have a dynamic cluster-wide default.
    """
    if per_broker:
        keys = [name for name, definition in BROKER_CONFIGS.items() if definition.kafka] + broker.unknown_keys
    else:
        keys = list(broker.layer(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
    return [_broker_entry(broker, key, per_broker) for key in sorted(keys)]


def _broker_entry(broker: BrokerConfig, key: str, per_broker: bool) -> ConfigEntry:
    definition = BROKER_CONFIGS.get(key)
    sensitive = definition is not None and definition.sensitive
    synonyms = [synonym for synonym in broker_config_synonyms(broker, key, sensitive)
                if per_broker or synonym.source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
    value = _broker_value(broker, key, definition, per_broker)
    return ConfigEntry(key, None if sensitive else value, _source(synonyms), sensitive,
                       definition is None or not definition.dynamic, tuple(synonyms),
                       definition.type if definition else ConfigType.UNKNOWN)


def _broker_value(broker: BrokerConfig, key: str, definition: ConfigDefinition | None, per_broker: bool) -> Any:
    if not per_broker:
        return broker.layer(ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)[key]
    if definition is None:
        return broker.raw(key)
    return definition.format(broker[key])
