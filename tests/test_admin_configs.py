"""Describing and changing configs: DescribeConfigs, AlterConfigs and IncrementalAlterConfigs.

Topic configs are overrides kept with the topic; broker configs are the static server config
under the dynamic layers (per broker and cluster-wide) that AlterConfigs writes. Expected codes
and messages are Kafka 3.9's.
"""
import pytest
from confluent_kafka import KafkaError as ConfluentError
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource as ConfluentResource,
                                   ConfigSource as ConfluentSource)
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.wire import WireClient

TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP = 2, 4, 8, 16, 32
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT, LOGGER = 1, 2, 3, 4, 5, 6

DescribeConfigs = messages.request(ApiKey.DESCRIBE_CONFIGS).cls
AlterConfigs = messages.request(ApiKey.ALTER_CONFIGS).cls
IncrementalAlterConfigs = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls
CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls


# --------------------------------------------------------------------------------------------
# Helpers

def request(broker, api_key, version, body):
    with WireClient(broker.bootstrap) as client:
        return client.request(api_key, version, body)


def create_topic(broker, name, configs=None, exist_ok=False):
    topic = CreateTopics.CreatableTopic(
        name=name, num_partitions=1, replication_factor=1,
        configs=[CreateTopics.CreatableTopicConfig(name=k, value=v) for k, v in (configs or {}).items()])
    [result] = request(broker, ApiKey.CREATE_TOPICS, 7, CreateTopics(topics=[topic])).topics
    assert result.error_code == 0 or (exist_ok and result.error_code == 36), result


def describe_all(broker, *resources, version=4, synonyms=False, documentation=False):
    body = DescribeConfigs(resources=[DescribeConfigs.DescribeConfigsResource(
        resource_type=kind, resource_name=name, configuration_keys=keys) for kind, name, keys in resources],
        include_synonyms=synonyms, include_documentation=documentation)
    return request(broker, ApiKey.DESCRIBE_CONFIGS, version, body).results


def describe(broker, kind, name, keys=None, **kwargs):
    [result] = describe_all(broker, (kind, name, keys), **kwargs)
    return result


def entries(result):
    return {entry.name: entry for entry in result.configs}


def value_and_source(broker, kind, name, key):
    entry = entries(describe(broker, kind, name, [key]))[key]
    return entry.value, entry.config_source


def alter(broker, kind, name, configs, version=2, validate_only=False):
    return alter_all(broker, (kind, name, configs), version=version, validate_only=validate_only)[0]


def alter_all(broker, *resources, version=2, validate_only=False):
    body = AlterConfigs(resources=[AlterConfigs.AlterConfigsResource(
        resource_type=kind, resource_name=name,
        configs=[AlterConfigs.AlterableConfig(name=k, value=v) for k, v in configs.items()])
        for kind, name, configs in resources], validate_only=validate_only)
    return request(broker, ApiKey.ALTER_CONFIGS, version, body).responses


def change(broker, kind, name, *operations, version=1, validate_only=False):
    return change_all(broker, (kind, name, operations), version=version, validate_only=validate_only)[0]


def change_all(broker, *resources, version=1, validate_only=False):
    body = IncrementalAlterConfigs(resources=[IncrementalAlterConfigs.AlterConfigsResource(
        resource_type=kind, resource_name=name,
        configs=[IncrementalAlterConfigs.AlterableConfig(name=k, config_operation=op, value=v)
                 for k, op, v in operations])
        for kind, name, operations in resources], validate_only=validate_only)
    return request(broker, ApiKey.INCREMENTAL_ALTER_CONFIGS, version, body).responses


def outcome(result):
    return result.error_code, result.error_message


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """A broker without Kafka 4's group protocols, as Kafka 3.9.0 in ZooKeeper mode (which knows
    no group configs) that these tests follow."""
    with BrokerProcess(tmp_path_factory.mktemp("broker"), {"group.coordinator.rebalance.protocols": "classic"}) as running:
        yield running


@pytest.fixture(scope="module")
def confluent(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


@pytest.fixture
def own_broker(tmp_path):
    """A broker whose dynamic configs a test may change freely (in this process: the tests are
    about its answers, not its process)."""
    with EmbeddedBroker({"log.retention.hours": "24", "ssl.keystore.password": "secret"},
                        directory=tmp_path) as running:
        yield running


# --------------------------------------------------------------------------------------------
# DescribeConfigs: topics

def test_confluent_describes_every_config_of_a_topic_with_its_source(broker, confluent):
    create_topic(broker, "described", {"retention.ms": "1000"})
    future = confluent.describe_configs([ConfluentResource("TOPIC", "described")])[
        ConfluentResource("TOPIC", "described")]
    configs = future.result(timeout=10)
    assert len(configs) == 36
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == (
        "1000", ConfluentSource.DYNAMIC_TOPIC_CONFIG.value)
    assert (configs["cleanup.policy"].value, configs["cleanup.policy"].source) == (
        "delete", ConfluentSource.DEFAULT_CONFIG.value)
    assert not configs["retention.ms"].is_read_only and not configs["retention.ms"].is_sensitive


def test_kafka_python_describes_the_overridden_configs_of_a_topic(broker):
    create_topic(broker, "kp-described", {"segment.bytes": "1048576"})
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        described = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-described")])
    finally:
        admin.close()
    assert list(described["topic"]["kp-described"]) == ["segment.bytes"]
    assert described["topic"]["kp-described"]["segment.bytes"]["value"] == "1048576"


def test_configuration_keys_select_entries_and_an_empty_list_selects_all(broker):
    create_topic(broker, "filtered")
    assert list(entries(describe(broker, TOPIC, "filtered", ["retention.ms", "nonsense"]))) == ["retention.ms"]
    assert len(describe(broker, TOPIC, "filtered", []).configs) == 36


def test_synonyms_list_every_layer_that_sets_a_config_when_asked(own_broker):
    create_topic(own_broker, "with-synonyms", {"retention.ms": "5000"})
    retention = entries(describe(own_broker, TOPIC, "with-synonyms", ["retention.ms"], synonyms=True))["retention.ms"]
    assert [(s.name, s.value, s.source) for s in retention.synonyms] == [
        ("retention.ms", "5000", DYNAMIC_TOPIC)]  # log.retention.ms is unset: Kafka drops the hours
    segment = entries(describe(own_broker, TOPIC, "with-synonyms", ["segment.bytes"], synonyms=True))["segment.bytes"]
    assert [(s.name, s.source) for s in segment.synonyms] == [("log.segment.bytes", DEFAULT)]
    assert entries(describe(own_broker, TOPIC, "with-synonyms", ["retention.ms"]))["retention.ms"].synonyms == []


def test_unknown_and_illegal_topics_fail_alone(broker):
    create_topic(broker, "described-next-to-errors")
    results = describe_all(broker, (TOPIC, "no-such-topic", None), (TOPIC, "bad/name", None),
                           (TOPIC, "described-next-to-errors", ["retention.ms"]))
    assert [(r.resource_name, r.error_code, r.error_message, len(r.configs)) for r in results] == [
        ("no-such-topic", 3, "", 0),
        ("bad/name", 17, "Topic name \"bad/name\" is illegal, it contains a character other than ASCII "
                         "alphanumerics, '.', '_' and '-'", 0),
        ("described-next-to-errors", 0, "", 1)]


@pytest.mark.parametrize("version", range(0, 5))
def test_every_version_describes_what_it_can_carry(broker, version):
    create_topic(broker, f"described-v{version}", {"retention.ms": "1000"})
    result = describe(broker, TOPIC, f"described-v{version}", ["retention.ms", "cleanup.policy"],
                      version=version, synonyms=True, documentation=True)
    by_name = entries(result)
    assert (by_name["retention.ms"].value, by_name["cleanup.policy"].value) == ("1000", "delete")
    if version == 0:
        assert (by_name["retention.ms"].is_default, by_name["cleanup.policy"].is_default) == (False, True)
    else:
        assert (by_name["retention.ms"].config_source, by_name["cleanup.policy"].config_source) == (
            DYNAMIC_TOPIC, DEFAULT)
        assert by_name["retention.ms"].synonyms[0].source == DYNAMIC_TOPIC
    if version >= 3:
        assert (by_name["retention.ms"].config_type, by_name["cleanup.policy"].config_type) == (5, 7)  # LONG, LIST


# --------------------------------------------------------------------------------------------
# DescribeConfigs: brokers, loggers, other types

def test_this_broker_is_described_by_its_id_with_static_values_and_secrets_hidden(own_broker):
    by_name = entries(describe(own_broker, BROKER, "0", synonyms=True))
    hours = by_name["log.retention.hours"]
    assert (hours.value, hours.config_source, hours.read_only) == ("24", STATIC, True)
    assert [(s.name, s.value, s.source) for s in hours.synonyms] == [
        ("log.retention.hours", "24", STATIC), ("log.retention.hours", "168", DEFAULT)]
    password = by_name["ssl.keystore.password"]
    assert (password.value, password.is_sensitive, password.config_source) == (None, True, STATIC)
    assert by_name["num.io.threads"].read_only is False


def test_the_empty_broker_name_describes_only_the_cluster_wide_dynamic_configs(own_broker):
    assert describe(own_broker, BROKER, "").configs == []
    assert outcome(alter(own_broker, BROKER, "", {"log.retention.ms": "3600000"})) == (0, None)
    assert [(e.name, e.value, e.config_source) for e in describe(own_broker, BROKER, "").configs] == [
        ("log.retention.ms", "3600000", DYNAMIC_DEFAULT)]


@pytest.mark.parametrize("kind, name, message", [
    (BROKER, "5", "Unexpected broker id, expected 0 or empty string, but received 5"),
    (BROKER, "zero", "Broker id must be an integer, but it is: zero"),
    (BROKER_LOGGER, "", "Broker id must not be empty"),
    (BROKER_LOGGER, "5", "Unexpected broker id, expected 0 but received 5"),
    (CLIENT_METRICS, "", "Client metrics subscription name must not be empty"),
])
def test_resource_names_are_checked(broker, kind, name, message):
    assert outcome(describe(broker, kind, name)) == (42, message)


def test_the_loggers_are_described_with_their_levels(broker):
    by_name = entries(describe(broker, BROKER_LOGGER, "0"))
    assert by_name["root"].value in {"FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"}
    assert (by_name["root"].config_source, by_name["root"].read_only) == (LOGGER, False)
    assert "pykbroker.broker" in by_name


def test_a_client_metrics_subscription_has_no_configs(broker):
    assert (outcome(describe(broker, CLIENT_METRICS, "any-subscription")), describe(
        broker, CLIENT_METRICS, "any-subscription").configs) == ((0, ""), [])


@pytest.mark.parametrize("kind", [GROUP, 99])
def test_a_resource_type_kafka_does_not_describe_fails_the_whole_request(broker, kind):
    results = describe_all(broker, (TOPIC, "anything", None), (kind, "x", None))
    assert [r.error_code for r in results] == [42, 42]


# --------------------------------------------------------------------------------------------
# AlterConfigs

def test_alter_configs_replaces_all_overrides_of_a_topic(broker):
    create_topic(broker, "replaced", {"retention.ms": "1000", "segment.ms": "2000"})
    assert outcome(alter(broker, TOPIC, "replaced", {"cleanup.policy": "compact"})) == (0, None)
    overridden = {e.name: e.value for e in describe(broker, TOPIC, "replaced").configs
                  if e.config_source == DYNAMIC_TOPIC}
    assert overridden == {"cleanup.policy": "compact"}


@pytest.mark.filterwarnings("ignore:alter_configs has been deprecated")
def test_confluent_alter_configs_sets_topic_overrides(broker, confluent):
    create_topic(broker, "ck-altered")
    resource = ConfluentResource("TOPIC", "ck-altered", set_config={"retention.bytes": "1048576"})
    assert confluent.alter_configs([resource])[resource].result(timeout=10) is None
    assert value_and_source(broker, TOPIC, "ck-altered", "retention.bytes") == ("1048576", DYNAMIC_TOPIC)


@pytest.mark.parametrize("name, configs, code, message", [
    ("altered-badly", {"retention.ms": "soon"}, 40,
     "Invalid config value for resource ConfigResource(type=TOPIC, name='altered-badly'): "
     "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
    ("altered-badly", {"no.such.config": "1"}, 40, "Unknown topic config name: no.such.config"),
    ("altered-badly", {"remote.storage.enable": "true"}, 40,
     "Invalid config value for resource ConfigResource(type=TOPIC, name='altered-badly'): "
     "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."),
    ("altered-badly", {"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}, 40,
     "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
    ("altered-badly", {"retention.ms": None}, 42, "Null value not supported for : retention.ms"),
    ("never-created", {"retention.ms": "1"}, 3, "The topic 'never-created' does not exist."),
    ("", {"retention.ms": "1"}, 42, "Default topic resources are not allowed."),
])
def test_bad_topic_changes_are_refused(broker, name, configs, code, message):
    create_topic(broker, "altered-badly", exist_ok=True)
    assert outcome(alter(broker, TOPIC, name, configs)) == (code, message)


def test_validate_only_changes_nothing(broker):
    create_topic(broker, "altered-in-theory")
    assert outcome(alter(broker, TOPIC, "altered-in-theory", {"retention.ms": "1"}, validate_only=True)) == (0, None)
    assert value_and_source(broker, TOPIC, "altered-in-theory", "retention.ms") == ("604800000", DEFAULT)


def test_each_resource_may_appear_once_and_each_key_once(broker):
    create_topic(broker, "altered-twice")
    twice = alter_all(broker, (TOPIC, "altered-twice", {}), (TOPIC, "altered-twice", {}))
    assert [outcome(r) for r in twice] == [(42, "Each resource must appear at most once.")] * 2
    body = AlterConfigs(resources=[AlterConfigs.AlterConfigsResource(
        resource_type=TOPIC, resource_name="altered-twice",
        configs=[AlterConfigs.AlterableConfig(name="retention.ms", value="1")] * 2)])
    [result] = request(broker, ApiKey.ALTER_CONFIGS, 2, body).responses
    assert outcome(result) == (42, "Error due to duplicate config keys")


@pytest.mark.parametrize("kind, message", [
    (BROKER_LOGGER, "Unknown resource type 8"),
    (CLIENT_METRICS, "AlterConfigs is only supported for topics and brokers, but resource type is CLIENT_METRICS"),
    (GROUP, "Unknown resource type 32"),  # group configs are KRaft's: Kafka 3.9.0 in ZooKeeper mode knows no such type
    (99, "Unknown resource type 99"),
])
def test_alter_configs_refuses_resource_types_it_does_not_alter(broker, kind, message):
    assert outcome(alter(broker, kind, "0", {})) == (42, message)


def test_dynamic_broker_configs_are_kept_and_become_topic_defaults(own_broker):
    create_topic(own_broker, "follows-the-broker")
    assert outcome(alter(own_broker, BROKER, "0", {"log.retention.ms": "3600000"})) == (0, None)
    assert value_and_source(own_broker, BROKER, "0", "log.retention.ms") == ("3600000", DYNAMIC_BROKER)
    assert value_and_source(own_broker, TOPIC, "follows-the-broker", "retention.ms") == ("3600000", DYNAMIC_BROKER)
    assert outcome(alter(own_broker, BROKER, "0", {})) == (0, None)  # replaces: the override is gone
    assert value_and_source(own_broker, BROKER, "0", "log.retention.ms") == (None, DEFAULT)


def test_kafka_python_alters_a_broker_config(own_broker):
    admin = KafkaAdminClient(bootstrap_servers=own_broker.bootstrap)
    try:
        result = admin.alter_configs([ConfigResource(ConfigResourceType.BROKER, "0",
                                                     configs={"log.cleaner.threads": "2"})], incremental=False)
    finally:
        admin.close()
    assert result == {"broker": {"0": "OK"}}
    assert value_and_source(own_broker, BROKER, "0", "log.cleaner.threads") == ("2", DYNAMIC_BROKER)


@pytest.mark.parametrize("name, configs, message", [
    ("0", {"num.partitions": "3"}, "Cannot update these configs dynamically: Set(num.partitions)"),
    ("0", {"log.retention.hours": "1", "broker.id": "1"},
     "Cannot update these configs dynamically: Set(log.retention.hours, broker.id)"),
    ("0", {"ssl.keystore.location": "/tmp/ks"}, "These security configs can be dynamically updated only "
                                                "per-listener using the listener prefix: Set(ssl.keystore.location)"),
    ("0", {"log.retention.ms": "soon"}, "Invalid value soon for configuration log.retention.ms: "
                                        "Not a number of type LONG"),
    ("", {"advertised.listeners": "PLAINTEXT://localhost:9092"},
     "Cannot update these configs at default cluster level, broker id must be specified: Set(advertised.listeners)"),
    ("0", {"num.io.threads": "17"}, "Invalid dynamic configuration"),
    ("3", {"log.retention.ms": "1"}, "Unexpected broker id, expected 0, but received 3"),
    ("x", {"log.retention.ms": "1"}, "Node id must be an integer, but it is: x"),
])
def test_bad_broker_changes_are_refused_with_invalid_request(own_broker, name, configs, message):
    assert outcome(alter(own_broker, BROKER, name, configs)) == (42, message)
    assert describe(own_broker, BROKER, "").configs == []


# --------------------------------------------------------------------------------------------
# IncrementalAlterConfigs

def test_confluent_sets_and_deletes_topic_configs_one_key_at_a_time(broker, confluent):
    create_topic(broker, "ck-incremental", {"segment.ms": "100000"})
    resource = ConfluentResource("TOPIC", "ck-incremental", incremental_configs=[
        ConfigEntry("retention.ms", "2000", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("segment.ms", None, incremental_operation=AlterConfigOpType.DELETE)])
    assert confluent.incremental_alter_configs([resource])[resource].result(timeout=10) is None
    assert value_and_source(broker, TOPIC, "ck-incremental", "retention.ms") == ("2000", DYNAMIC_TOPIC)
    assert value_and_source(broker, TOPIC, "ck-incremental", "segment.ms") == ("604800000", DEFAULT)


def test_confluent_sees_kafkas_error_for_a_bad_value(broker, confluent):
    create_topic(broker, "ck-badly-changed")
    resource = ConfluentResource("TOPIC", "ck-badly-changed", incremental_configs=[
        ConfigEntry("retention.ms", "soon", incremental_operation=AlterConfigOpType.SET)])
    error = confluent.incremental_alter_configs([resource])[resource].exception(timeout=10)
    assert error.args[0].code() == ConfluentError.INVALID_CONFIG
    assert error.args[0].str() == (
        "Invalid config value for resource ConfigResource(type=TOPIC, name='ck-badly-changed'): "
        "Invalid value soon for configuration retention.ms: Not a number of type LONG")


def test_kafka_python_changes_a_topic_config_incrementally(broker):
    create_topic(broker, "kp-incremental", {"segment.ms": "100000"})
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        result = admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "kp-incremental",
                                                     configs={"retention.ms": "3000"})])
    finally:
        admin.close()
    assert result == {"topic": {"kp-incremental": "OK"}}
    assert value_and_source(broker, TOPIC, "kp-incremental", "retention.ms") == ("3000", DYNAMIC_TOPIC)
    assert value_and_source(broker, TOPIC, "kp-incremental", "segment.ms") == ("100000", DYNAMIC_TOPIC)


def test_append_and_subtract_change_list_configs_starting_from_the_default(broker):
    create_topic(broker, "listed")
    assert outcome(change(broker, TOPIC, "listed", ("cleanup.policy", APPEND, "compact"))) == (0, None)
    assert value_and_source(broker, TOPIC, "listed", "cleanup.policy") == ("delete,compact", DYNAMIC_TOPIC)
    assert outcome(change(broker, TOPIC, "listed", ("cleanup.policy", APPEND, "compact"))) == (0, None)
    assert value_and_source(broker, TOPIC, "listed", "cleanup.policy") == ("delete,compact", DYNAMIC_TOPIC)
    assert outcome(change(broker, TOPIC, "listed", ("cleanup.policy", SUBTRACT, "delete"))) == (0, None)
    assert value_and_source(broker, TOPIC, "listed", "cleanup.policy") == ("compact", DYNAMIC_TOPIC)


@pytest.mark.parametrize("operation, code, message", [
    (("retention.ms", APPEND, "1"), 40, "Can't APPEND to key retention.ms because its type is not LIST."),
    (("retention.ms", SUBTRACT, "1"), 40, "Can't SUBTRACT to key retention.ms because its type is not LIST."),
    (("retention.ms", SET, None), 42, "Null value not supported for : retention.ms"),
    (("retention.ms", 9, "1"), 42, "Unknown operations type 9"),
    (("no.such.config", SET, "1"), 40, "Unknown topic config name: no.such.config"),
])
def test_bad_incremental_topic_changes_are_refused(broker, operation, code, message):
    create_topic(broker, "changed-badly", {"retention.ms": "1000"}, exist_ok=True)
    assert outcome(change(broker, TOPIC, "changed-badly", operation)) == (code, message)


def test_deleting_a_key_that_is_not_set_succeeds(broker):
    create_topic(broker, "nothing-to-delete")
    assert outcome(change(broker, TOPIC, "nothing-to-delete", ("no.such.config", DELETE, None))) == (0, None)


def test_incremental_changes_to_an_unknown_topic_are_refused(broker):
    assert outcome(change(broker, TOPIC, "never-made", ("retention.ms", SET, "1"))) == (
        3, "The topic 'never-made' does not exist.")


def test_broker_configs_change_one_key_at_a_time(own_broker):
    assert outcome(change(own_broker, BROKER, "0", ("log.retention.ms", SET, "7200000"),
                          ("log.cleaner.threads", SET, "2"))) == (0, None)
    assert outcome(change(own_broker, BROKER, "0", ("log.cleaner.threads", DELETE, None))) == (0, None)
    assert value_and_source(own_broker, BROKER, "0", "log.retention.ms") == ("7200000", DYNAMIC_BROKER)
    assert value_and_source(own_broker, BROKER, "0", "log.cleaner.threads") == ("1", DEFAULT)
    assert outcome(change(own_broker, BROKER, "", ("log.cleanup.policy", APPEND, "compact"))) == (0, None)
    assert value_and_source(own_broker, BROKER, "", "log.cleanup.policy") == ("delete,compact", DYNAMIC_DEFAULT)


@pytest.mark.parametrize("operation, code, message", [
    (("log.retention.ms", APPEND, "1"), 40, "Config value append is not allowed for config key: log.retention.ms"),
    (("num.partitions", SET, "2"), 42, "Cannot update these configs dynamically: Set(num.partitions)"),
    (("num.io.threads", SET, "1"), 42, "Invalid dynamic configuration"),
])
def test_bad_incremental_broker_changes_are_refused(own_broker, operation, code, message):
    assert outcome(change(own_broker, BROKER, "0", operation)) == (code, message)


def test_validate_only_changes_no_broker_config(own_broker):
    assert outcome(change(own_broker, BROKER, "0", ("log.retention.ms", SET, "1"), validate_only=True)) == (0, None)
    assert value_and_source(own_broker, BROKER, "0", "log.retention.ms") == (None, DEFAULT)


def test_log_levels_are_set_and_removed_at_runtime(own_broker):
    assert outcome(change(own_broker, BROKER_LOGGER, "0", ("pykbroker.broker", SET, "DEBUG"))) == (0, None)
    assert value_and_source(own_broker, BROKER_LOGGER, "0", "pykbroker.broker") == ("DEBUG", LOGGER)
    assert outcome(change(own_broker, BROKER_LOGGER, "0", ("pykbroker.broker", DELETE, None))) == (0, None)
    root = value_and_source(own_broker, BROKER_LOGGER, "0", "root")[0]
    assert value_and_source(own_broker, BROKER_LOGGER, "0", "pykbroker.broker") == (root, LOGGER)


@pytest.mark.parametrize("name, operation, code, message", [
    ("0", ("pykbroker.broker", SET, "LOUD"), 40, "Cannot set the log level of pykbroker.broker to LOUD as it is "
                                                 "not a supported log level. Valid log levels are DEBUG, ERROR, "
                                                 "FATAL, INFO, TRACE, WARN"),
    ("0", ("no.such.logger", SET, "INFO"), 40, "Logger no.such.logger does not exist!"),
    ("0", ("root", DELETE, None), 42, "Removing the log level of the root logger is not allowed"),
    ("0", ("root", APPEND, "INFO"), 42, "APPEND operation is not allowed for the BROKER_LOGGER resource"),
    ("1", ("root", SET, "INFO"), 42, "Unexpected node id. Expected 0, but received 0"),
])
def test_bad_log_level_changes_are_refused(broker, name, operation, code, message):
    assert outcome(change(broker, BROKER_LOGGER, name, operation)) == (code, message)


def test_only_the_bad_resource_of_a_request_fails(broker):
    create_topic(broker, "changed-next-to-errors")
    results = change_all(broker, (TOPIC, "changed-next-to-errors", [("retention.ms", SET, "9")]),
                         (GROUP, "some-group", [("consumer.session.timeout.ms", SET, "45000")]),
                         (TOPIC, "never-made", [("retention.ms", SET, "9")]))
    assert [outcome(r) for r in results] == [
        (0, None), (42, "Unknown resource type 32"), (3, "The topic 'never-made' does not exist.")]  # as Kafka 3.9.0
    assert value_and_source(broker, TOPIC, "changed-next-to-errors", "retention.ms") == ("9", DYNAMIC_TOPIC)


@pytest.mark.parametrize("version", [0, 1])
def test_both_versions_change_configs(broker, version):
    create_topic(broker, f"changed-v{version}")
    assert outcome(change(broker, TOPIC, f"changed-v{version}", ("retention.ms", SET, "11"), version=version)) == (
        0, None)
    assert value_and_source(broker, TOPIC, f"changed-v{version}", "retention.ms") == ("11", DYNAMIC_TOPIC)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_every_alter_configs_version_replaces_overrides(broker, version):
    create_topic(broker, f"altered-v{version}")
    assert outcome(alter(broker, TOPIC, f"altered-v{version}", {"retention.ms": "12"}, version=version)) == (0, None)
    assert value_and_source(broker, TOPIC, f"altered-v{version}", "retention.ms") == ("12", DYNAMIC_TOPIC)


# --------------------------------------------------------------------------------------------
# Persistence

def test_topic_overrides_and_dynamic_broker_configs_survive_a_restart(fresh_broker):
    create_topic(fresh_broker, "kept", {"retention.ms": "1000"})
    assert outcome(change(fresh_broker, TOPIC, "kept", ("cleanup.policy", SET, "compact"))) == (0, None)
    assert outcome(alter(fresh_broker, BROKER, "0", {"log.retention.ms": "7200000"})) == (0, None)
    assert outcome(alter(fresh_broker, BROKER, "", {"log.segment.bytes": "2097152"})) == (0, None)
    fresh_broker.stop()
    fresh_broker.start()
    overridden = {e.name: e.value for e in describe(fresh_broker, TOPIC, "kept").configs
                  if e.config_source == DYNAMIC_TOPIC}
    assert overridden == {"retention.ms": "1000", "cleanup.policy": "compact"}
    assert value_and_source(fresh_broker, BROKER, "0", "log.retention.ms") == ("7200000", DYNAMIC_BROKER)
    assert value_and_source(fresh_broker, BROKER, "0", "log.segment.bytes") == ("2097152", DYNAMIC_DEFAULT)
    assert value_and_source(fresh_broker, TOPIC, "kept", "segment.bytes") == ("2097152", DYNAMIC_DEFAULT)
