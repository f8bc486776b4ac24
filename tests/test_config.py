"""Broker and topic configuration: properties parsing, typed values, validation, listeners,
topic config resolution and the entries DescribeConfigs reports."""
import logging

import pytest

from pykbroker.config import (
    BROKER_CONFIGS,
    TOPIC_CONFIGS,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    Listener,
    broker_synonyms,
    describe_broker_configs,
    describe_topic_configs,
    java_double_string,
    load_properties,
    parse_listeners,
    parse_properties,
    topic_config_values,
    validate_topic_configs,
)
from pykbroker.protocol.errors import ErrorCode, KafkaError

STATIC = ConfigSource.STATIC_BROKER_CONFIG
DEFAULT = ConfigSource.DEFAULT_CONFIG
TOPIC = ConfigSource.DYNAMIC_TOPIC_CONFIG

# Kafka 3.9's topic-level configs (LogConfig).
KAFKA_39_TOPIC_CONFIGS = {
    "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
    "compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages", "flush.ms",
    "follower.replication.throttled.replicas", "index.interval.bytes", "leader.replication.throttled.replicas",
    "local.retention.bytes", "local.retention.ms", "max.compaction.lag.ms", "max.message.bytes",
    "message.downconversion.enable", "message.format.version", "message.timestamp.after.max.ms",
    "message.timestamp.before.max.ms", "message.timestamp.difference.max.ms", "message.timestamp.type",
    "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
    "remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable", "retention.bytes",
    "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
    "unclean.leader.election.enable",
}


@pytest.fixture
def test_config(tmp_path):
    return BrokerConfig({"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0"})


def entry_by_name(entries, name):
    return next(entry for entry in entries if entry.name == name)


# --- properties files -------------------------------------------------------------------------

def test_properties_separators():
    text = "a=1\nb: 2\nc 3\nd   =   4\ne\t:\t5\nf==6\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "5", "f": "=6"}


def test_properties_comments_and_blank_lines():
    text = "# comment\n  ! another\n\n   \nkey=value # not a comment\n"
    assert parse_properties(text) == {"key": "value # not a comment"}


def test_properties_keep_trailing_whitespace_of_values_and_allow_empty_values():
    assert parse_properties("a=x  \nb=\nc\n") == {"a": "x  ", "b": "", "c": ""}


def test_properties_line_continuation():
    text = "listeners=PLAINTEXT://:9092,\\\n      SSL://:9093\nnext=1\n"
    assert parse_properties(text) == {"listeners": "PLAINTEXT://:9092,SSL://:9093", "next": "1"}


def test_properties_even_backslashes_do_not_continue():
    assert parse_properties("path=C:\\\\\nnext=1") == {"path": "C:\\", "next": "1"}


def test_properties_continued_line_may_start_with_hash():
    assert parse_properties("a=1,\\\n  #2\n") == {"a": "1,#2"}


def test_properties_comment_does_not_continue():
    assert parse_properties("# comment \\\nkey=value") == {"key": "value"}


def test_properties_continuation_at_end_of_file():
    assert parse_properties("a=1\\") == {"a": "1"}


def test_properties_escapes():
    text = "my\\ key=tab\\there\nk\\=ey=v\\:1\nuni=\\u0041\\u00e9\nnl=a\\nb\nother=\\q\n"
    assert parse_properties(text) == {"my key": "tab\there", "k=ey": "v:1", "uni": "A\u00e9", "nl": "a\nb",
                                      "other": "q"}


def test_properties_malformed_unicode_escape():
    with pytest.raises(ValueError):
        parse_properties("a=\\u12x4")


def test_properties_line_endings_and_later_keys_win():
    assert parse_properties("a=1\r\nb=2\rc=3\na=4") == {"a": "4", "b": "2", "c": "3"}


def test_properties_form_feed_is_whitespace_not_a_line_break():
    assert parse_properties("\fa\f=\fb") == {"a": "b"}


def test_load_properties_reads_latin1(tmp_path):
    path = tmp_path / "server.properties"
    path.write_bytes(b"broker.rack=caf\xe9\n")
    assert load_properties(path) == {"broker.rack": "caf\u00e9"}


# --- BrokerConfig: sources, precedence, typed values -----------------------------------------

def test_from_file_with_overrides_winning(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text(f"num.partitions=3\nlog.dirs={tmp_path}\ndelete.topic.enable=false\n")
    config = BrokerConfig.from_file(path, {"num.partitions": "7"})
    assert config["num.partitions"] == 7
    assert config["delete.topic.enable"] is False
    assert config.log_dirs == [str(tmp_path)]
    assert config.source_of("num.partitions") is STATIC
    assert config.source_of("num.io.threads") is DEFAULT


def test_kafka_defaults(test_config):
    expected = {
        "broker.id": -1, "node.id": -1, "num.partitions": 1, "auto.create.topics.enable": True,
        "default.replication.factor": 1, "message.max.bytes": 1048588, "socket.request.max.bytes": 104857600,
        "socket.send.buffer.bytes": 102400, "socket.receive.buffer.bytes": 102400,
        "log.dir": "/tmp/kafka-logs", "log.segment.bytes": 1073741824, "log.roll.hours": 168,
        "log.retention.hours": 168, "log.retention.ms": None, "log.retention.minutes": None,
        "log.retention.bytes": -1, "log.retention.check.interval.ms": 300000, "log.cleanup.policy": ["delete"],
        "log.cleaner.enable": True, "log.cleaner.min.cleanable.ratio": 0.5,
        "log.flush.interval.messages": 2**63 - 1, "log.flush.interval.ms": None,
        "log.flush.scheduler.interval.ms": 2**63 - 1, "log.index.interval.bytes": 4096,
        "log.index.size.max.bytes": 10485760, "log.message.timestamp.type": "CreateTime",
        "delete.topic.enable": True, "offsets.topic.num.partitions": 50, "offsets.topic.replication.factor": 3,
        "offsets.retention.minutes": 10080, "offsets.retention.check.interval.ms": 600000,
        "group.initial.rebalance.delay.ms": 3000, "group.min.session.timeout.ms": 6000,
        "group.max.session.timeout.ms": 1800000, "transaction.state.log.num.partitions": 50,
        "transaction.state.log.replication.factor": 3, "transaction.state.log.min.isr": 2,
        "transaction.max.timeout.ms": 900000, "transactional.id.expiration.ms": 604800000,
        "zookeeper.connect": None, "zookeeper.session.timeout.ms": 18000, "zookeeper.connection.timeout.ms": None,
        "controlled.shutdown.enable": True, "unclean.leader.election.enable": False, "min.insync.replicas": 1,
        "replica.lag.time.max.ms": 30000, "replica.fetch.max.bytes": 1048576, "replica.fetch.wait.max.ms": 500,
        "broker.rack": None, "num.network.threads": 3, "num.io.threads": 8, "queued.max.requests": 500,
        "connections.max.idle.ms": 600000, "advertised.listeners": None,
        "listener.security.protocol.map": "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "pykbroker.fsync.before.ack": False,
    }
    for key, value in expected.items():
        assert test_config[key] == value, key
    assert BROKER_CONFIGS["listeners"].default == "PLAINTEXT://:9092"


def test_default_listener_and_log_dir():
    config = BrokerConfig()
    assert config.listeners == [Listener("PLAINTEXT", "", 9092)]
    assert config.log_dirs == ["/tmp/kafka-logs"]


def test_typed_parsing_of_strings():
    config = BrokerConfig({"num.partitions": " 3 ", "delete.topic.enable": "FALSE",
                           "log.cleanup.policy": " compact , delete ", "log.cleaner.min.cleanable.ratio": "0.25",
                           "log.retention.ms": "-1", "broker.rack": " rack-1 "})
    assert config["num.partitions"] == 3
    assert config["delete.topic.enable"] is False
    assert config["log.cleanup.policy"] == ["compact", "delete"]
    assert config["log.cleaner.min.cleanable.ratio"] == 0.25
    assert config["log.retention.ms"] == -1
    assert config["broker.rack"] == "rack-1"


def test_python_values_as_overrides(tmp_path):
    config = BrokerConfig(overrides={"num.partitions": 4, "auto.create.topics.enable": False,
                                     "log.dirs": [str(tmp_path / "a"), str(tmp_path / "b")],
                                     "pykbroker.fsync.before.ack": True})
    assert config["num.partitions"] == 4
    assert config["auto.create.topics.enable"] is False
    assert config.log_dirs == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert config["pykbroker.fsync.before.ack"] is True
    assert config.raw("auto.create.topics.enable") == "false"


def test_none_means_not_set():
    config = BrokerConfig({"log.dirs": None, "num.partitions": "2"}, {"num.partitions": None})
    assert config.log_dirs == ["/tmp/kafka-logs"]
    assert config["num.partitions"] == 2


def test_get_and_contains(test_config):
    assert test_config.get("log.retention.ms", 5) == 5
    assert test_config.get("num.partitions") == 1
    assert test_config.get("no.such.key", "x") == "x"
    assert "num.partitions" in test_config
    assert "no.such.key" not in test_config
    with pytest.raises(KeyError):
        test_config["no.such.key"]


def test_unknown_keys_are_kept_as_strings_and_warned_with_the_closest_known_key(caplog):
    config = BrokerConfig({"custom.thing": "42", "num.partition": "3"})
    assert config["custom.thing"] == "42"
    assert config.source_of("custom.thing") is STATIC
    assert config.unknown_keys == ["custom.thing", "num.partition"]
    with caplog.at_level(logging.WARNING, logger="pykbroker.config"):
        config.warn_unknown_keys()
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        "The configuration 'custom.thing' was supplied but isn't a known config",
        "The configuration 'num.partition' was supplied but isn't a known config; "
        "did you mean 'num.partitions'?",
    ]


def test_the_acl_authorizers_settings_are_not_unknown_keys():
    config = BrokerConfig({"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
                           "super.users": "User:admin", "allow.everyone.if.no.acl.found": "false"})
    assert config.unknown_keys == []


def test_rebuilding_the_config_with_dynamic_values_warns_nothing(caplog):
    config = BrokerConfig({"custom.thing": "42"})
    with caplog.at_level(logging.WARNING, logger="pykbroker.config"):
        config.with_dynamic({"log.retention.ms": "1000"})
    assert caplog.records == []
    with pytest.raises(KeyError):
        config.source_of("never.set")


@pytest.mark.parametrize("key, value", [
    ("num.partitions", "0"),
    ("num.partitions", "abc"),
    ("num.partitions", "1.5"),
    ("num.partitions", "1_000"),
    ("num.partitions", "2147483648"),
    ("delete.topic.enable", "yes"),
    ("log.cleanup.policy", "delete,remove"),
    ("log.message.timestamp.type", "createtime"),
    ("compression.type", "brotli"),
    ("log.cleaner.min.cleanable.ratio", "1.5"),
    ("log.cleaner.min.cleanable.ratio", "half"),
    ("offsets.topic.replication.factor", "40000"),
    ("log.segment.bytes", "13"),
    ("compression.gzip.level", "0"),
    ("security.inter.broker.protocol", "TLS"),
])
def test_invalid_values_raise_config_error_naming_the_key(key, value):
    with pytest.raises(ConfigError) as caught:
        BrokerConfig({key: value})
    assert caught.value.key == key
    assert key in str(caught.value)
    assert caught.value.code is ErrorCode.INVALID_CONFIG
    assert isinstance(caught.value, KafkaError)


def test_invalid_override_is_reported_even_if_file_value_is_valid():
    with pytest.raises(ConfigError, match="num.io.threads"):
        BrokerConfig({"num.io.threads": "4"}, {"num.io.threads": "zero"})


# --- broker id, log dirs ---------------------------------------------------------------------

def test_broker_id_resolution():
    assert BrokerConfig().broker_id == 0
    assert BrokerConfig({"broker.id": "5"}).broker_id == 5
    assert BrokerConfig({"node.id": "3"}).broker_id == 3
    assert BrokerConfig({"node.id": "3", "broker.id": "3"}).broker_id == 3
    with pytest.raises(ConfigError, match="broker.id"):
        BrokerConfig({"node.id": "3", "broker.id": "4"})
    with pytest.raises(ConfigError):
        BrokerConfig({"broker.id": "-2"})


def test_log_dirs_wins_over_log_dir():
    assert BrokerConfig({"log.dir": "/a", "log.dirs": "/b, /c"}).log_dirs == ["/b", "/c"]
    assert BrokerConfig({"log.dir": "/a"}).log_dirs == ["/a"]
    with pytest.raises(ConfigError, match="log.dirs"):
        BrokerConfig({"log.dirs": " , "})


# --- listeners -------------------------------------------------------------------------------

def test_parse_listeners():
    assert parse_listeners("listeners", "PLAINTEXT://127.0.0.1:9092") == [Listener("PLAINTEXT", "127.0.0.1", 9092)]
    assert parse_listeners("listeners", "PLAINTEXT://:9092, ssl://host.example:9093") == [
        Listener("PLAINTEXT", "", 9092), Listener("SSL", "host.example", 9093)]
    assert parse_listeners("listeners", "PLAINTEXT://[::1]:9092") == [Listener("PLAINTEXT", "::1", 9092)]
    assert parse_listeners("listeners", "") == []


@pytest.mark.parametrize("text", [
    "127.0.0.1:9092",
    "PLAINTEXT://127.0.0.1",
    "PLAINTEXT://127.0.0.1:port",
    "PLAINTEXT://127.0.0.1:70000",
    "PLAINTEXT://:9092,PLAINTEXT://:9093",
])
def test_invalid_listeners(text):
    with pytest.raises(ConfigError) as caught:
        BrokerConfig({"listeners": text})
    assert caught.value.key == "listeners"


def test_listener_str():
    assert str(Listener("PLAINTEXT", "127.0.0.1", 9092)) == "PLAINTEXT://127.0.0.1:9092"
    assert str(Listener("PLAINTEXT", "::1", 9092)) == "PLAINTEXT://[::1]:9092"


def test_listener_needs_a_security_protocol():
    with pytest.raises(ConfigError, match="INTERNAL"):
        BrokerConfig({"listeners": "INTERNAL://:9092"})
    config = BrokerConfig({"listeners": "INTERNAL://:9092,PLAINTEXT://:9093",
                           "listener.security.protocol.map": "INTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT"})
    assert config.security_protocol_of("internal") == "PLAINTEXT"


def test_advertised_listeners_default_to_listeners(test_config):
    assert test_config.advertised_listeners == test_config.listeners


def test_advertised_listeners():
    config = BrokerConfig({"listeners": "PLAINTEXT://0.0.0.0:9092",
                           "advertised.listeners": "PLAINTEXT://broker1.example:9092"})
    assert config.advertised_listeners == [Listener("PLAINTEXT", "broker1.example", 9092)]
    with pytest.raises(ConfigError, match="0.0.0.0"):
        BrokerConfig({"advertised.listeners": "PLAINTEXT://0.0.0.0:9092"})
    with pytest.raises(ConfigError, match="advertised"):
        BrokerConfig({"advertised.listeners": "SSL://host:9093"})


# --- topic configs -----------------------------------------------------------------------------

def test_topic_table_is_kafka_39s():
    assert set(TOPIC_CONFIGS) == KAFKA_39_TOPIC_CONFIGS


@pytest.mark.parametrize("topic_key, broker_keys", [
    ("retention.ms", ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]),
    ("segment.ms", ["log.roll.ms", "log.roll.hours"]),
    ("segment.jitter.ms", ["log.roll.jitter.ms", "log.roll.jitter.hours"]),
    ("segment.bytes", ["log.segment.bytes"]),
    ("segment.index.bytes", ["log.index.size.max.bytes"]),
    ("max.message.bytes", ["message.max.bytes"]),
    ("cleanup.policy", ["log.cleanup.policy"]),
    ("min.insync.replicas", ["min.insync.replicas"]),
    ("message.timestamp.type", ["log.message.timestamp.type"]),
    ("flush.messages", ["log.flush.interval.messages"]),
    ("flush.ms", ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]),
    ("file.delete.delay.ms", ["log.segment.delete.delay.ms"]),
    ("min.cleanable.dirty.ratio", ["log.cleaner.min.cleanable.ratio"]),
    ("delete.retention.ms", ["log.cleaner.delete.retention.ms"]),
    ("unclean.leader.election.enable", ["unclean.leader.election.enable"]),
    ("remote.storage.enable", []),
])
def test_topic_synonyms_in_kafka_order(topic_key, broker_keys):
    assert [synonym.name for synonym in TOPIC_CONFIGS[topic_key].synonyms] == broker_keys
    for name in broker_keys:
        assert name in BROKER_CONFIGS


def test_every_topic_synonym_is_a_broker_key_with_matching_default():
    for definition in TOPIC_CONFIGS.values():
        if definition.synonyms:
            assert BrokerConfig().topic_default(definition.name) == definition.default, definition.name


def test_topic_values_default_from_broker(test_config):
    values = topic_config_values({}, test_config)
    assert values["retention.ms"] == 604800000
    assert values["segment.bytes"] == 1073741824
    assert values["cleanup.policy"] == ["delete"]
    assert values["max.message.bytes"] == 1048588
    assert values["flush.ms"] == 2**63 - 1
    assert values["remote.storage.enable"] is False


@pytest.mark.parametrize("broker_props, key, expected", [
    ({"log.retention.hours": "24"}, "retention.ms", 86400000),
    ({"log.retention.hours": "24", "log.retention.minutes": "10"}, "retention.ms", 600000),
    ({"log.retention.minutes": "10", "log.retention.ms": "1234"}, "retention.ms", 1234),
    ({"log.retention.ms": "-5"}, "retention.ms", -1),
    ({"log.retention.hours": "-1"}, "retention.ms", -1),
    ({"log.roll.hours": "1"}, "segment.ms", 3600000),
    ({"log.roll.hours": "1", "log.roll.ms": "5000"}, "segment.ms", 5000),
    ({"log.flush.scheduler.interval.ms": "2000"}, "flush.ms", 2000),
    ({"log.flush.scheduler.interval.ms": "2000", "log.flush.interval.ms": "100"}, "flush.ms", 100),
    ({"message.max.bytes": "2000000"}, "max.message.bytes", 2000000),
    ({"log.cleanup.policy": "compact"}, "cleanup.policy", ["compact"]),
    ({"min.insync.replicas": "2"}, "min.insync.replicas", 2),
])
def test_topic_values_follow_broker_synonyms(broker_props, key, expected):
    assert topic_config_values({}, BrokerConfig(broker_props))[key] == expected


def test_topic_override_wins(test_config):
    values = topic_config_values({"retention.ms": "1000", "cleanup.policy": "compact,delete"}, test_config)
    assert values["retention.ms"] == 1000
    assert values["cleanup.policy"] == ["compact", "delete"]


@pytest.mark.parametrize("configs, key", [
    ({"retention.hours": "1"}, "retention.hours"),
    ({"cleanup.policy": "remove"}, "cleanup.policy"),
    ({"segment.bytes": "10"}, "segment.bytes"),
    ({"retention.ms": "-2"}, "retention.ms"),
    ({"min.cleanable.dirty.ratio": "2"}, "min.cleanable.dirty.ratio"),
    ({"leader.replication.throttled.replicas": "0:1,x"}, "leader.replication.throttled.replicas"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, "min.compaction.lag.ms"),
    ({"retention.ms": None}, "retention.ms"),
])
def test_invalid_topic_configs(configs, key):
    with pytest.raises(ConfigError) as caught:
        validate_topic_configs(configs)
    assert caught.value.key == key
    assert caught.value.code is ErrorCode.INVALID_CONFIG


def test_valid_topic_configs_are_typed():
    typed = validate_topic_configs({"retention.ms": "1000", "preallocate": "true",
                                    "leader.replication.throttled.replicas": "0:1, 1:2",
                                    "follower.replication.throttled.replicas": "*"})
    assert typed == {"retention.ms": 1000, "preallocate": True,
                     "leader.replication.throttled.replicas": ["0:1", "1:2"],
                     "follower.replication.throttled.replicas": ["*"]}


# --- DescribeConfigs: topics -------------------------------------------------------------------

def test_describe_topic_defaults(test_config):
    entries = describe_topic_configs({}, test_config)
    assert {entry.name for entry in entries} == KAFKA_39_TOPIC_CONFIGS
    segment_bytes = entry_by_name(entries, "segment.bytes")
    assert segment_bytes.value == "1073741824"
    assert segment_bytes.source is DEFAULT and segment_bytes.is_default
    assert segment_bytes.synonyms == (ConfigSynonym("log.segment.bytes", "1073741824", DEFAULT),)
    assert segment_bytes.type is ConfigType.INT
    assert not segment_bytes.read_only and not segment_bytes.is_sensitive
    assert entry_by_name(entries, "min.cleanable.dirty.ratio").value == "0.5"
    assert entry_by_name(entries, "message.downconversion.enable").value == "true"
    assert entry_by_name(entries, "leader.replication.throttled.replicas").value == ""
    remote = entry_by_name(entries, "remote.storage.enable")
    assert remote.source is DEFAULT and remote.synonyms == ()


def test_describe_synonyms_of_unset_primary_key_are_dropped(test_config):
    # The broker key that names retention.ms's default is log.retention.ms; while it is unset,
    # the synonyms reported are empty even though log.retention.hours supplies the value.
    retention = entry_by_name(describe_topic_configs({}, test_config), "retention.ms")
    assert retention.value == "604800000"
    assert retention.source is DEFAULT
    assert retention.synonyms == ()


def test_describe_broker_retention_hours():
    entries = describe_topic_configs({}, BrokerConfig({"log.retention.hours": "24"}))
    retention = entry_by_name(entries, "retention.ms")
    assert retention.value == "86400000"
    assert retention.source is DEFAULT
    assert retention.synonyms == ()


def test_describe_broker_retention_ms_lists_synonyms_in_order():
    config = BrokerConfig({"log.retention.ms": "86400000", "log.retention.hours": "24"})
    retention = entry_by_name(describe_topic_configs({}, config), "retention.ms")
    assert retention.value == "86400000"
    assert retention.source is STATIC
    assert retention.synonyms == (
        ConfigSynonym("log.retention.ms", "86400000", STATIC),
        ConfigSynonym("log.retention.hours", "24", STATIC),
        ConfigSynonym("log.retention.hours", "168", DEFAULT),
    )


def test_describe_static_broker_value():
    config = BrokerConfig({"log.segment.bytes": "2097152", "message.max.bytes": "2000000"})
    entries = describe_topic_configs({}, config)
    segment_bytes = entry_by_name(entries, "segment.bytes")
    assert segment_bytes.value == "2097152"
    assert segment_bytes.source is STATIC
    assert segment_bytes.synonyms == (ConfigSynonym("log.segment.bytes", "2097152", STATIC),
                                      ConfigSynonym("log.segment.bytes", "1073741824", DEFAULT))
    max_message = entry_by_name(entries, "max.message.bytes")
    assert (max_message.value, max_message.source) == ("2000000", STATIC)
    assert max_message.synonyms[0] == ConfigSynonym("message.max.bytes", "2000000", STATIC)


def test_describe_topic_override_wins():
    config = BrokerConfig({"log.retention.ms": "86400000"})
    entries = describe_topic_configs({"retention.ms": "1000", "cleanup.policy": "compact, delete"}, config)
    retention = entry_by_name(entries, "retention.ms")
    assert retention.value == "1000"
    assert retention.source is TOPIC and not retention.is_default
    assert retention.synonyms[:2] == (ConfigSynonym("retention.ms", "1000", TOPIC),
                                      ConfigSynonym("log.retention.ms", "86400000", STATIC))
    cleanup = entry_by_name(entries, "cleanup.policy")
    assert cleanup.value == "compact,delete"
    assert cleanup.synonyms == (ConfigSynonym("cleanup.policy", "compact,delete", TOPIC),
                                ConfigSynonym("log.cleanup.policy", "delete", DEFAULT))


def test_describe_dynamic_broker_layers_come_first():
    config = BrokerConfig({"log.segment.bytes": "2097152"}).with_dynamic(
        per_broker={"log.segment.bytes": "4194304"}, cluster_default={"log.segment.bytes": "3145728"})
    segment_bytes = entry_by_name(describe_topic_configs({}, config), "segment.bytes")
    assert segment_bytes.value == "4194304"
    assert segment_bytes.source is ConfigSource.DYNAMIC_BROKER_CONFIG
    assert [synonym.source for synonym in segment_bytes.synonyms] == [
        ConfigSource.DYNAMIC_BROKER_CONFIG, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, STATIC, DEFAULT]
    assert config.source_of("log.segment.bytes") is ConfigSource.DYNAMIC_BROKER_CONFIG
    assert config.static_values == {"log.segment.bytes": "2097152"}


def test_only_dynamic_keys_can_be_set_dynamically():
    with pytest.raises(ConfigError, match="num.partitions"):
        BrokerConfig().with_dynamic(per_broker={"num.partitions": "3"})


def test_broker_synonyms():
    assert broker_synonyms("log.retention.hours") == ["log.retention.ms", "log.retention.minutes",
                                                      "log.retention.hours"]
    assert broker_synonyms("log.flush.interval.ms") == ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    assert broker_synonyms("log.flush.scheduler.interval.ms") == ["log.flush.scheduler.interval.ms"]
    assert broker_synonyms("num.partitions") == ["num.partitions"]


# --- DescribeConfigs: brokers ------------------------------------------------------------------

def test_describe_broker_configs(tmp_path):
    config = BrokerConfig({"log.dirs": str(tmp_path), "num.partitions": "3", "ssl.keystore.password": "secret",
                           "custom.key": "x"})
    entries = describe_broker_configs(config)
    names = {entry.name for entry in entries}
    assert "pykbroker.fsync.before.ack" not in names
    partitions = entry_by_name(entries, "num.partitions")
    assert (partitions.value, partitions.source, partitions.read_only) == ("3", STATIC, True)
    assert partitions.synonyms == (ConfigSynonym("num.partitions", "3", STATIC),
                                   ConfigSynonym("num.partitions", "1", DEFAULT))
    password = entry_by_name(entries, "ssl.keystore.password")
    assert password.is_sensitive and password.value is None and password.type is ConfigType.PASSWORD
    assert all(synonym.value is None for synonym in password.synonyms)
    assert not entry_by_name(entries, "log.retention.ms").read_only
    assert entry_by_name(entries, "log.retention.hours").read_only
    retention_ms = entry_by_name(entries, "log.retention.ms")
    assert retention_ms.value is None and retention_ms.source is DEFAULT
    custom = entry_by_name(entries, "custom.key")
    assert (custom.value, custom.type, custom.read_only, custom.source) == (None, ConfigType.UNKNOWN, True, STATIC)
    assert custom.is_sensitive  # as Kafka, which cannot tell whether a key of unknown type is a secret
    assert entry_by_name(entries, "log.cleaner.io.max.bytes.per.second").value == "1.7976931348623157E308"


def test_describe_cluster_default_broker_resource():
    config = BrokerConfig().with_dynamic(cluster_default={"log.retention.ms": "1000"})
    entries = describe_broker_configs(config, per_broker=False)
    assert [(entry.name, entry.value, entry.source) for entry in entries] == [
        ("log.retention.ms", "1000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)]


def test_config_type_ids():
    assert [ConfigType.BOOLEAN, ConfigType.STRING, ConfigType.INT, ConfigType.SHORT, ConfigType.LONG,
            ConfigType.DOUBLE, ConfigType.LIST, ConfigType.CLASS, ConfigType.PASSWORD] == list(range(1, 10))
    assert ConfigSource.DYNAMIC_TOPIC_CONFIG == 1 and ConfigSource.DEFAULT_CONFIG == 5


@pytest.mark.parametrize("value, text", [
    (0.5, "0.5"), (1.0, "1.0"), (0.9, "0.9"), (1e7, "1.0E7"), (123456789.5, "1.234567895E8"),
    (1e-4, "1.0E-4"), (0.001, "0.001"), (1.7976931348623157e308, "1.7976931348623157E308"), (-2.5, "-2.5"),
])
def test_java_double_string(value, text):
    assert java_double_string(value) == text


@pytest.mark.parametrize(
    "key, value",
    [
        ("remote.log.storage.system.enable", "true"),
        ("zookeeper.ssl.client.enable", "true"),
        ("metric.reporters", "com.example.Reporter"),
        ("client.quota.callback.class", "com.example.Callback"),
        ("sasl.server.callback.handler.class", "com.example.Handler"),
    ],
)
def test_a_setting_asking_for_what_the_broker_lacks_stops_it_at_start(key, value):
    with pytest.raises(ConfigError, match=f"{key}={value} cannot be honoured"):
        BrokerConfig({key: value})


def test_those_settings_at_kafkas_default_are_accepted():
    config = BrokerConfig({"remote.log.storage.system.enable": "false", "metric.reporters": ""})
    assert config["remote.log.storage.system.enable"] is False
