"""The tables of config definitions under Kafka 3.9's names, types, defaults and validators.

* `TOPIC_CONFIGS`: per-topic keys, each with the broker keys that supply its default, in Kafka's
  order of precedence. This is the one topic-config table: the log's `LogConfig` is built from
  it (`pykbroker/log/config.py`).
* `BROKER_CONFIGS`: server.properties keys, each marked dynamic when a running broker can
  change it.

Project-specific keys use the `pykbroker.` prefix and are not Kafka keys; DescribeConfigs never
reports them. There are three:

* `pykbroker.fsync.before.ack` (boolean, default false): when true, the broker fsyncs a
  partition's log before acknowledging a produce to it. Kafka itself acknowledges once the
  data is in the page cache (and, for acks=all, on the in-sync replicas), leaving flushes to
  `log.flush.interval.*`.
* `pykbroker.metrics.listener` (string, default unset): `http://host:port` where the broker
  serves Prometheus metrics (`/metrics`) and its health (`/health`); port 0 picks a free port.
  Unset, nothing is served.
* `pykbroker.fetch.response.max.bytes` (int, default 8 MiB, at least 1024): a consumer's fetch
  response carries no more record bytes than this (besides the first batch, always whole), on
  top of the request's `max_bytes` and the broker's `fetch.max.bytes`. A client asking for 64 MiB
  thus gets its data in responses that it starts to parse sooner and that pipeline with its
  processing; the Kafka protocol lets a broker return less than asked (Kafka itself stops a
  partition's read at its segment's end). Followers are not capped.

Where this project departs from Kafka's defaults it says so on the definition: `broker.id`
keeps Kafka's default -1, but `BrokerConfig.broker_id` resolves an unset id (no node.id, no
broker.id) to 0, because a standalone broker has no ZooKeeper to generate one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .types import (
    DOUBLE_MAX,
    INT_MAX,
    LONG_MAX,
    MS_PER_HOUR,
    MS_PER_MINUTE,
    ConfigType,
    Validator,
    at_least,
    between,
    each_one_of,
    format_value,
    gzip_level,
    http_listener,
    non_empty_list,
    one_of,
    one_of_ignoring_case,
    parse_typed,
    provided_class,
    throttled_replicas,
    to_raw,
)


class Synonym(NamedTuple):
    """A broker key that supplies a topic config's default; `unit_ms` converts hours or minutes."""

    name: str
    unit_ms: int = 1


@dataclass(frozen=True)
class ConfigDefinition:
    """One config key: its type, Kafka's default (as a parsed value) and its validator.

    Topic configs list their broker `synonyms` in Kafka's order of precedence. Broker configs
    say whether they are `dynamic` (updatable at runtime; DescribeConfigs reports the others
    read-only). `kafka` is False for this project's own keys; `internal` marks Kafka's internal
    keys (`defineInternal`), which are read but which DescribeConfigs does not list.
    """

    name: str
    type: ConfigType
    default: Any = None
    validator: Validator | None = None
    synonyms: tuple[Synonym, ...] = ()
    dynamic: bool = False
    kafka: bool = True
    internal: bool = False
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
    """The definitions by name; a name defined twice is a mistake in these tables."""
    indexed: dict[str, ConfigDefinition] = {}
    for definition in definitions:
        if definition.name in indexed:
            raise ValueError(f"config {definition.name} is defined twice")
        indexed[definition.name] = definition
    return indexed


BOOLEAN, SHORT, INT, LONG = ConfigType.BOOLEAN, ConfigType.SHORT, ConfigType.INT, ConfigType.LONG
DOUBLE, STRING, LIST, CLASS, PASSWORD = (
    ConfigType.DOUBLE,
    ConfigType.STRING,
    ConfigType.LIST,
    ConfigType.CLASS,
    ConfigType.PASSWORD,
)
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
CLEANUP_POLICIES = ("compact", "delete")
SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
DEFAULT_LISTENER_SECURITY_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT"
MIN_SEGMENT_BYTES = 14  # the size of the smallest possible record: Kafka 3.9's lower bound
ZSTD_MIN_LEVEL = -131072
FETCH_RESPONSE_MAX_BYTES = 8 * 1024 * 1024  # pykbroker.fetch.response.max.bytes: see the module docstring


def _topic(
    name: str, config_type: ConfigType, default: Any, validator: Validator | None = None, *synonyms: Synonym | str
) -> ConfigDefinition:
    as_synonyms = tuple(s if isinstance(s, Synonym) else Synonym(s) for s in synonyms)
    return ConfigDefinition(name, config_type, default, validator, synonyms=as_synonyms)


TOPIC_CONFIGS: dict[str, ConfigDefinition] = _index(
    [
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
        _topic(
            "message.timestamp.difference.max.ms",
            LONG,
            LONG_MAX,
            at_least(0),
            "log.message.timestamp.difference.max.ms",
        ),
        _topic("message.timestamp.type", STRING, "CreateTime", one_of(*TIMESTAMP_TYPES), "log.message.timestamp.type"),
        _topic("min.cleanable.dirty.ratio", DOUBLE, 0.5, between(0, 1), "log.cleaner.min.cleanable.ratio"),
        _topic("min.compaction.lag.ms", LONG, 0, at_least(0), "log.cleaner.min.compaction.lag.ms"),
        _topic("min.insync.replicas", INT, 1, at_least(1), "min.insync.replicas"),
        _topic("preallocate", BOOLEAN, False, None, "log.preallocate"),
        _topic("remote.log.copy.disable", BOOLEAN, False),
        _topic("remote.log.delete.on.disable", BOOLEAN, False),
        _topic("remote.storage.enable", BOOLEAN, False),
        _topic("retention.bytes", LONG, -1, None, "log.retention.bytes"),
        _topic(
            "retention.ms",
            LONG,
            604800000,
            at_least(-1),
            "log.retention.ms",
            Synonym("log.retention.minutes", MS_PER_MINUTE),
            Synonym("log.retention.hours", MS_PER_HOUR),
        ),
        _topic("segment.bytes", INT, 1073741824, at_least(MIN_SEGMENT_BYTES), "log.segment.bytes"),
        _topic("segment.index.bytes", INT, 10485760, at_least(4), "log.index.size.max.bytes"),
        _topic(
            "segment.jitter.ms",
            LONG,
            0,
            at_least(0),
            "log.roll.jitter.ms",
            Synonym("log.roll.jitter.hours", MS_PER_HOUR),
        ),
        _topic("segment.ms", LONG, 604800000, at_least(1), "log.roll.ms", Synonym("log.roll.hours", MS_PER_HOUR)),
        _topic("unclean.leader.election.enable", BOOLEAN, False, None, "unclean.leader.election.enable"),
    ]
)

# Kafka's SslConfigs.RECONFIGURABLE_CONFIGS: a running broker takes them only per listener
# ("listener.name.<l>.ssl...."), never without the prefix.
SSL_RECONFIGURABLE_KEYS = frozenset(
    {
        "ssl.keystore.type",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.key.password",
        "ssl.truststore.type",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.keystore.certificate.chain",
        "ssl.keystore.key",
        "ssl.truststore.certificates",
    }
)
# The broker keys a running broker can change (DescribeConfigs reports the rest read-only):
# the first synonym of each topic config (but message format), plus these.
DYNAMIC_BROKER_KEYS = frozenset(
    {definition.synonyms[0].name for definition in TOPIC_CONFIGS.values() if definition.synonyms}
    - {"log.message.format.version"}
    | {
        "message.max.bytes",
        "num.network.threads",
        "num.io.threads",
        "background.threads",
        "num.replica.fetchers",
        "num.recovery.threads.per.data.dir",
        "log.cleaner.threads",
        "log.cleaner.dedupe.buffer.size",
        "log.cleaner.io.buffer.size",
        "log.cleaner.io.buffer.load.factor",
        "log.cleaner.io.max.bytes.per.second",
        "log.cleaner.backoff.ms",
        "listeners",
        "advertised.listeners",
        "listener.security.protocol.map",
        "max.connections",
        "max.connections.per.ip",
        "max.connections.per.ip.overrides",
        "max.connection.creation.rate",
        "producer.id.expiration.ms",
        "transaction.partition.verification.enable",
        "sasl.enabled.mechanisms",
        "sasl.mechanism.inter.broker.protocol",
        *SSL_RECONFIGURABLE_KEYS,
        # the rest of Kafka's DynamicListenerConfig.ReconfigurableConfigs (per broker, per listener)
        "principal.builder.class",
        "ssl.protocol",
        "ssl.provider",
        "ssl.cipher.suites",
        "ssl.enabled.protocols",
        "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm",
        "ssl.endpoint.identification.algorithm",
        "ssl.secure.random.implementation",
        "ssl.client.auth",
        "ssl.engine.factory.class",
        "sasl.jaas.config",
        "sasl.kerberos.service.name",
        "sasl.kerberos.kinit.cmd",
        "sasl.kerberos.ticket.renew.window.factor",
        "sasl.kerberos.ticket.renew.jitter",
        "sasl.kerberos.min.time.before.relogin",
        "sasl.kerberos.principal.to.local.rules",
        "sasl.login.refresh.window.factor",
        "sasl.login.refresh.window.jitter",
        "sasl.login.refresh.min.period.seconds",
        "sasl.login.refresh.buffer.seconds",
        *(
            "leader.replication.throttled.rate",
            "follower.replication.throttled.rate",
            "replica.alter.log.dirs.io.max.bytes.per.second",
        ),
        # Kafka's dynamic keys among the INERT_BROKER_CONFIGS below
        "metric.reporters",
        "remote.fetch.max.wait.ms",
        "remote.log.index.file.cache.total.size.bytes",
        "remote.log.manager.copy.max.bytes.per.second",
        "remote.log.manager.fetch.max.bytes.per.second",
    }
)
# Kafka's broker quota configs (DynamicConfig.Broker): they can only be set dynamically, so
# DescribeConfigs lists them only when they are set (Kafka's describe lists the configs a broker
# was given, and these are never in its static file)
DYNAMIC_ONLY_BROKER_KEYS = frozenset(
    {
        "leader.replication.throttled.rate",
        "follower.replication.throttled.rate",
        "replica.alter.log.dirs.io.max.bytes.per.second",
    }
)

# Kafka's DynamicListenerConfig.ReconfigurableConfigs (with the SSL keys above: per broker only)
LISTENER_RECONFIGURABLE_KEYS = frozenset(
    DYNAMIC_BROKER_KEYS
    & (
        {"listeners", "advertised.listeners", "listener.security.protocol.map", "principal.builder.class"}
        | {key for key in DYNAMIC_BROKER_KEYS if key.startswith(("ssl.", "sasl."))}
        | {"max.connections", "max.connection.creation.rate", "num.network.threads"}
    )
)
# Settings of Kafka's AclAuthorizer: not broker configs, but read by the authorizer the broker
# loads (`authorizer.class.name`), so a broker given them has nothing to warn about
AUTHORIZER_KEYS = frozenset({"super.users", "allow.everyone.if.no.acl.found"})
# Listener settings Kafka keeps per SASL mechanism: "listener.name.<l>.<mechanism>.<key>"
LISTENER_MECHANISM_KEYS = (
    "sasl.jaas.config",
    "sasl.login.callback.handler.class",
    "sasl.login.class",
    "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
)


def _broker(
    name: str, config_type: ConfigType, default: Any = None, validator: Validator | None = None, doc: str = ""
) -> ConfigDefinition:
    return ConfigDefinition(name, config_type, default, validator, dynamic=name in DYNAMIC_BROKER_KEYS, doc=doc)


def _inert(name: str, config_type: ConfigType, default: Any = None) -> ConfigDefinition:
    return _broker(name, config_type, default, doc=INERT_DOC)


INERT_DOC = "Accepted with Kafka's type and default and described as Kafka does; this broker does not act on it."
# Kafka 3.9 keys that a Kafka 3.9.0 broker in ZooKeeper mode lists in DescribeConfigs, which this
# broker accepts, validates by type and describes with Kafka's defaults but does not act on: KRaft's
# quorum and metadata log, tiered storage, JMX and metrics reporters, the client quota callback,
# Kerberos/OAUTHBEARER/SASL login plug-ins, TLS to ZooKeeper. Those among them that ask for a
# capability the broker lacks stop it at start when set to anything but Kafka's default
# (`UNHONOURED_WHEN_SET`); the rest (KRaft's, which Kafka in ZooKeeper mode ignores too, and tuning
# of what is absent) only log that they have no effect.
# (Whoever implements one of them moves it to BROKER_CONFIGS proper: a key defined twice fails.)
INERT_BROKER_CONFIGS = [
    _inert("auto.include.jmx.reporter", BOOLEAN, True),
    _inert("client.quota.callback.class", CLASS),
    _inert("controller.quorum.append.linger.ms", INT, 25),
    _inert("controller.quorum.election.backoff.max.ms", INT, 1000),
    _inert("controller.quorum.election.timeout.ms", INT, 1000),
    _inert("controller.quorum.fetch.timeout.ms", INT, 2000),
    _inert("controller.quorum.request.timeout.ms", INT, 2000),
    _inert("controller.quorum.retry.backoff.ms", INT, 20),
    _inert("early.start.listeners", STRING),
    _inert("eligible.leader.replicas.enable", BOOLEAN, False),
    _inert("group.coordinator.append.linger.ms", INT, 10),
    _inert("group.share.max.groups", SHORT, 10),
    _inert("kafka.metrics.polling.interval.secs", INT, 10),
    _inert("kafka.metrics.reporters", LIST, []),
    _inert("log.dir.failure.timeout.ms", LONG, 30000),
    _inert("metadata.log.max.record.bytes.between.snapshots", LONG, 20971520),
    _inert("metadata.log.max.snapshot.interval.ms", LONG, 3600000),
    _inert("metadata.log.segment.bytes", INT, 1073741824),
    _inert("metadata.log.segment.ms", LONG, 604800000),
    _inert("metadata.max.idle.interval.ms", INT, 500),
    _inert("metadata.max.retention.bytes", LONG, 104857600),
    _inert("metadata.max.retention.ms", LONG, 604800000),
    _inert("metric.reporters", LIST, []),
    _inert("metrics.num.samples", INT, 2),
    _inert("metrics.recording.level", STRING, "INFO"),
    _inert("metrics.sample.window.ms", LONG, 30000),
    _inert("remote.fetch.max.wait.ms", INT, 500),
    _inert("remote.log.index.file.cache.total.size.bytes", LONG, 1073741824),
    _inert("remote.log.manager.copier.thread.pool.size", INT, -1),
    _inert("remote.log.manager.copy.max.bytes.per.second", LONG, LONG_MAX),
    _inert("remote.log.manager.copy.quota.window.num", INT, 11),
    _inert("remote.log.manager.copy.quota.window.size.seconds", INT, 1),
    _inert("remote.log.manager.expiration.thread.pool.size", INT, -1),
    _inert("remote.log.manager.fetch.max.bytes.per.second", LONG, LONG_MAX),
    _inert("remote.log.manager.fetch.quota.window.num", INT, 11),
    _inert("remote.log.manager.fetch.quota.window.size.seconds", INT, 1),
    _inert("remote.log.manager.task.interval.ms", LONG, 30000),
    _inert("remote.log.manager.thread.pool.size", INT, 10),
    _inert("remote.log.metadata.custom.metadata.max.bytes", INT, 128),
    _inert(
        "remote.log.metadata.manager.class.name",
        STRING,
        "org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager",
    ),
    _inert("remote.log.metadata.manager.class.path", STRING),
    _inert("remote.log.metadata.manager.impl.prefix", STRING, "rlmm.config."),
    _inert("remote.log.metadata.manager.listener.name", STRING),
    _inert("remote.log.reader.max.pending.tasks", INT, 100),
    _inert("remote.log.reader.threads", INT, 10),
    _inert("remote.log.storage.manager.class.name", STRING),
    _inert("remote.log.storage.manager.class.path", STRING),
    _inert("remote.log.storage.manager.impl.prefix", STRING, "rsm.config."),
    _inert("remote.log.storage.system.enable", BOOLEAN, False),
    _inert("sasl.client.callback.handler.class", CLASS),
    _inert("sasl.login.callback.handler.class", CLASS),
    _inert("sasl.login.class", CLASS),
    _inert("sasl.login.connect.timeout.ms", INT),
    _inert("sasl.login.read.timeout.ms", INT),
    _inert("sasl.login.retry.backoff.max.ms", LONG, 10000),
    _inert("sasl.login.retry.backoff.ms", LONG, 100),
    _inert("sasl.mechanism.controller.protocol", STRING, "GSSAPI"),
    _inert("sasl.oauthbearer.clock.skew.seconds", INT, 30),
    _inert("sasl.oauthbearer.expected.audience", LIST),
    _inert("sasl.oauthbearer.expected.issuer", STRING),
    _inert("sasl.oauthbearer.jwks.endpoint.refresh.ms", LONG, 3600000),
    _inert("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", LONG, 10000),
    _inert("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", LONG, 100),
    _inert("sasl.oauthbearer.jwks.endpoint.url", STRING),
    _inert("sasl.oauthbearer.scope.claim.name", STRING, "scope"),
    _inert("sasl.oauthbearer.sub.claim.name", STRING, "sub"),
    _inert("sasl.oauthbearer.token.endpoint.url", STRING),
    _inert("sasl.server.callback.handler.class", CLASS),
    _inert("security.providers", STRING),
    _inert("telemetry.max.bytes", INT, 1048576),
    _inert("zookeeper.clientCnxnSocket", STRING),
    _inert("zookeeper.metadata.migration.enable", BOOLEAN, False),
    _inert("zookeeper.ssl.cipher.suites", LIST),
    _inert("zookeeper.ssl.client.enable", BOOLEAN, False),
    _inert("zookeeper.ssl.crl.enable", BOOLEAN, False),
    _inert("zookeeper.ssl.enabled.protocols", LIST),
    _inert("zookeeper.ssl.endpoint.identification.algorithm", STRING, "HTTPS"),
    _inert("zookeeper.ssl.keystore.location", STRING),
    _inert("zookeeper.ssl.keystore.password", PASSWORD),
    _inert("zookeeper.ssl.keystore.type", STRING),
    _inert("zookeeper.ssl.ocsp.enable", BOOLEAN, False),
    _inert("zookeeper.ssl.protocol", STRING, "TLSv1.2"),
    _inert("zookeeper.ssl.truststore.location", STRING),
    _inert("zookeeper.ssl.truststore.password", PASSWORD),
    _inert("zookeeper.ssl.truststore.type", STRING),
]

INERT_BROKER_KEYS = frozenset(definition.name for definition in INERT_BROKER_CONFIGS)
# Inert keys whose non-default value asks for something this broker cannot do: the reason it says
# when it refuses to start with one
_JAVA_PLUG_IN = "Java plug-in classes cannot be loaded by this broker"
UNHONOURED_WHEN_SET = {
    "remote.log.storage.system.enable": "tiered storage (KIP-405) is not served",
    "zookeeper.ssl.client.enable": "TLS to ZooKeeper is not served",
    "client.quota.callback.class": _JAVA_PLUG_IN,
    "metric.reporters": _JAVA_PLUG_IN,
    "kafka.metrics.reporters": _JAVA_PLUG_IN,
    "sasl.server.callback.handler.class": _JAVA_PLUG_IN,
    "sasl.client.callback.handler.class": _JAVA_PLUG_IN,
    "sasl.login.class": _JAVA_PLUG_IN,
    "sasl.login.callback.handler.class": _JAVA_PLUG_IN,
    "security.providers": _JAVA_PLUG_IN,
}

BROKER_CONFIGS: dict[str, ConfigDefinition] = _index(
    [
        # General
        _broker(
            "broker.id", INT, -1, at_least(-1), doc="Kafka's default -1; BrokerConfig.broker_id resolves unset to 0."
        ),
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
        # Client quotas (Kafka's QuotaConfigs): the sampled windows of the quota managers
        _broker("quota.window.num", INT, 11, at_least(1)),
        _broker("quota.window.size.seconds", INT, 1, at_least(1)),
        _broker("controller.quota.window.num", INT, 11, at_least(1)),
        _broker("controller.quota.window.size.seconds", INT, 1, at_least(1)),
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
        _broker("connections.max.reauth.ms", LONG, 0),
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
        _broker("num.replica.alter.log.dirs.threads", INT),
        _broker("replica.high.watermark.checkpoint.interval.ms", LONG, 5000),
        _broker(
            "replica.selector.class",
            STRING,
            None,
            provided_class(
                "org.apache.kafka.common.replica.RackAwareReplicaSelector",
                "org.apache.kafka.common.replica.LeaderSelector",
            ),
        ),
        _broker("replication.quota.window.num", INT, 11, at_least(1)),
        _broker("replication.quota.window.size.seconds", INT, 1, at_least(1)),
        _broker("alter.log.dirs.replication.quota.window.num", INT, 11, at_least(1)),
        _broker("alter.log.dirs.replication.quota.window.size.seconds", INT, 1, at_least(1)),
        *(
            ConfigDefinition(name, LONG, LONG_MAX, at_least(0), dynamic=True, internal=True)
            for name in sorted(DYNAMIC_ONLY_BROKER_KEYS)
        ),
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
        _broker(
            "group.coordinator.rebalance.protocols",
            LIST,
            ["classic", "consumer", "share"],
            each_one_of("classic", "consumer", "share"),
        ),
        _broker("group.coordinator.threads", INT, 1, at_least(1)),
        _broker("group.consumer.session.timeout.ms", INT, 45000, at_least(1)),
        _broker("group.consumer.min.session.timeout.ms", INT, 45000, at_least(1)),
        _broker("group.consumer.max.session.timeout.ms", INT, 60000, at_least(1)),
        _broker("group.consumer.heartbeat.interval.ms", INT, 5000, at_least(1)),
        _broker("group.consumer.min.heartbeat.interval.ms", INT, 5000, at_least(1)),
        _broker("group.consumer.max.heartbeat.interval.ms", INT, 15000, at_least(1)),
        _broker("group.consumer.max.size", INT, INT_MAX, at_least(1)),
        _broker(
            "group.consumer.assignors",
            LIST,
            [
                "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
                "org.apache.kafka.coordinator.group.assignor.RangeAssignor",
            ],
            non_empty_list,
        ),
        _broker(
            "group.consumer.migration.policy",
            STRING,
            "bidirectional",
            one_of_ignoring_case("bidirectional", "upgrade", "downgrade", "disabled"),
        ),
        # Share groups (KIP-932), as Kafka 4.1's GroupCoordinatorConfig and ShareGroupConfig
        _broker("group.share.session.timeout.ms", INT, 45000, at_least(1)),
        _broker("group.share.min.session.timeout.ms", INT, 45000, at_least(1)),
        _broker("group.share.max.session.timeout.ms", INT, 60000, at_least(1)),
        _broker("group.share.heartbeat.interval.ms", INT, 5000, at_least(1)),
        _broker("group.share.min.heartbeat.interval.ms", INT, 5000, at_least(1)),
        _broker("group.share.max.heartbeat.interval.ms", INT, 15000, at_least(1)),
        _broker("group.share.max.size", SHORT, 200, between(1, 1000)),
        _broker("group.share.record.lock.duration.ms", INT, 30000, between(1000, 3600000)),
        _broker("group.share.min.record.lock.duration.ms", INT, 15000, at_least(1000)),
        _broker("group.share.max.record.lock.duration.ms", INT, 60000, at_least(1000)),
        # Share partitions (KIP-932)
        _broker("group.share.delivery.count.limit", INT, 5, between(2, 10)),
        _broker("group.share.partition.max.record.locks", INT, 2000, between(100, 10000)),
        _broker("group.share.max.share.sessions", INT, 2000, at_least(1)),
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
        # Share coordinator (KIP-932)
        _broker("share.coordinator.state.topic.num.partitions", INT, 50, at_least(1)),
        _broker("share.coordinator.state.topic.replication.factor", SHORT, 3, at_least(1)),
        _broker("share.coordinator.state.topic.min.isr", SHORT, 2, at_least(1)),
        _broker("share.coordinator.state.topic.segment.bytes", INT, 104857600, at_least(1)),
        _broker("share.coordinator.state.topic.compression.codec", INT, 0),
        _broker("share.coordinator.threads", INT, 1, at_least(1)),
        _broker("share.coordinator.snapshot.update.records.per.snapshot", INT, 500, between(0, 500)),
        _broker("share.coordinator.load.buffer.size", INT, 5242880, at_least(1)),
        _broker("share.coordinator.append.linger.ms", INT, -1, at_least(-1)),
        _broker("share.coordinator.write.timeout.ms", INT, 5000, at_least(1)),
        ConfigDefinition("share.coordinator.state.topic.prune.interval.ms", INT, 300000, at_least(1), internal=True),
        ConfigDefinition(
            "share.coordinator.cold.partition.snapshot.interval.ms", INT, 300000, at_least(1), internal=True
        ),
        # ZooKeeper
        _broker("zookeeper.connect", STRING),
        _broker("zookeeper.session.timeout.ms", INT, 18000),
        _broker("zookeeper.connection.timeout.ms", INT),
        _broker("zookeeper.set.acl", BOOLEAN, False),
        _broker("zookeeper.max.in.flight.requests", INT, 10, at_least(1)),
        # Security
        _broker("sasl.enabled.mechanisms", LIST, ["GSSAPI"]),
        _broker("sasl.mechanism.inter.broker.protocol", STRING, "GSSAPI"),
        _broker("sasl.jaas.config", PASSWORD),
        _broker("sasl.server.max.receive.size", INT, 524288),
        _broker("sasl.kerberos.service.name", STRING),
        _broker("sasl.kerberos.kinit.cmd", STRING, "/usr/bin/kinit"),
        _broker("sasl.kerberos.ticket.renew.window.factor", DOUBLE, 0.8),
        _broker("sasl.kerberos.ticket.renew.jitter", DOUBLE, 0.05),
        _broker("sasl.kerberos.min.time.before.relogin", LONG, 60000),
        _broker("sasl.kerberos.principal.to.local.rules", LIST, ["DEFAULT"]),
        _broker("sasl.login.refresh.window.factor", DOUBLE, 0.8, between(0.5, 1.0)),
        _broker("sasl.login.refresh.window.jitter", DOUBLE, 0.05, between(0.0, 0.25)),
        _broker("sasl.login.refresh.min.period.seconds", SHORT, 60, between(0, 900)),
        _broker("sasl.login.refresh.buffer.seconds", SHORT, 300, between(0, 3600)),
        _broker(
            "principal.builder.class",
            CLASS,
            "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
        ),
        # Delegation tokens (Kafka's DelegationTokenManager): enabled by a secret key
        _broker("delegation.token.master.key", PASSWORD),  # the secret key's old name
        _broker("delegation.token.secret.key", PASSWORD),
        _broker("delegation.token.max.lifetime.ms", LONG, 604800000, at_least(1)),
        _broker("delegation.token.expiry.time.ms", LONG, 86400000, at_least(1)),
        _broker("delegation.token.expiry.check.interval.ms", LONG, 3600000, at_least(1)),
        # Kafka's PasswordEncoder of sensitive dynamic configs kept in ZooKeeper
        _broker("password.encoder.secret", PASSWORD),
        _broker("password.encoder.old.secret", PASSWORD),
        _broker("password.encoder.keyfactory.algorithm", STRING),
        _broker("password.encoder.cipher.algorithm", STRING, "AES/CBC/PKCS5Padding"),
        _broker("password.encoder.key.length", INT, 128, at_least(8)),
        _broker("password.encoder.iterations", INT, 4096, at_least(1024)),
        _broker("ssl.client.auth", STRING, "none", one_of("required", "requested", "none")),
        _broker("ssl.protocol", STRING, "TLSv1.3"),
        _broker("ssl.provider", STRING),
        _broker("ssl.enabled.protocols", LIST, ["TLSv1.2", "TLSv1.3"]),
        _broker("ssl.cipher.suites", LIST, []),
        _broker("ssl.keystore.type", STRING, "JKS"),
        _broker("ssl.keystore.location", STRING),
        _broker("ssl.keystore.password", PASSWORD),
        _broker("ssl.key.password", PASSWORD),
        _broker("ssl.keystore.key", PASSWORD),
        _broker("ssl.keystore.certificate.chain", PASSWORD),
        _broker("ssl.truststore.type", STRING, "JKS"),
        _broker("ssl.truststore.location", STRING),
        _broker("ssl.truststore.password", PASSWORD),
        _broker("ssl.truststore.certificates", PASSWORD),
        _broker("ssl.keymanager.algorithm", STRING, "SunX509"),
        _broker("ssl.trustmanager.algorithm", STRING, "PKIX"),
        _broker("ssl.endpoint.identification.algorithm", STRING, "https"),
        _broker("ssl.secure.random.implementation", STRING),
        _broker("ssl.engine.factory.class", CLASS),
        _broker("ssl.principal.mapping.rules", STRING, "DEFAULT"),
        _broker("ssl.allow.dn.changes", BOOLEAN, False),
        _broker("ssl.allow.san.changes", BOOLEAN, False),
        # This project's own keys (not Kafka's)
        ConfigDefinition(
            "pykbroker.fsync.before.ack",
            BOOLEAN,
            False,
            kafka=False,
            doc="fsync a partition's log before acknowledging a produce to it",
        ),
        ConfigDefinition(
            "pykbroker.metrics.listener",
            STRING,
            None,
            http_listener,
            kafka=False,
            doc="http://host:port serving /metrics (Prometheus) and /health; unset serves nothing",
        ),
        ConfigDefinition(
            "pykbroker.fetch.response.max.bytes",
            INT,
            FETCH_RESPONSE_MAX_BYTES,
            at_least(1024),
            kafka=False,
            doc="the most record bytes in one consumer fetch response (the first batch is always whole)",
        ),
        *INERT_BROKER_CONFIGS,
    ]
)

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
