"""`pykbroker configs` speaks kafka-configs.sh: topics, brokers, users' SCRAM credentials and
Kafka 4's group configs (`--entity-type groups`, `--group`)."""

from __future__ import annotations

import json
import time

from .conftest import fresh


def test_altering_a_topic_then_describing_its_dynamic_configs(broker, pykbroker):
    topic = fresh("configured")
    pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic)
    common = ("configs", "--bootstrap-server", broker.bootstrap, "--entity-type", "topics", "--entity-name", topic)

    altered = pykbroker(*common, "--alter", "--add-config", "retention.ms=60000,cleanup.policy=[compact,delete]")
    assert (altered.status, altered.out) == (0, f"Completed updating config for topic {topic}.\n")
    described = pykbroker(*common, "--describe")
    assert described.out.splitlines() == [
        f"Dynamic configs for topic {topic} are:",
        "  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, "
        "DEFAULT_CONFIG:log.cleanup.policy=delete}",
        "  retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000}",
    ]

    assert pykbroker(*common, "--alter", "--delete-config", "cleanup.policy").status == 0
    assert "cleanup.policy" not in pykbroker(*common, "--describe").out


def test_deleting_a_config_the_entity_does_not_have_is_an_error(broker, pykbroker):
    topic = fresh("bare")
    pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic)
    failed = pykbroker(
        "configs",
        "--bootstrap-server",
        broker.bootstrap,
        "--alter",
        "--topic",
        topic,
        "--delete-config",
        "retention.ms",
    )
    assert (failed.status, failed.err) == (1, "Invalid config(s): retention.ms\n")


def test_describe_all_lists_every_config_with_its_source(broker, pykbroker):
    topic = fresh("all-configs")
    pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic)
    described = pykbroker(
        "configs",
        "--bootstrap-server",
        broker.bootstrap,
        "--describe",
        "--all",
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
    )
    lines = described.out.splitlines()
    assert lines[0] == f"All configs for topic {topic} are:"
    assert "  min.insync.replicas=1 sensitive=false synonyms={DEFAULT_CONFIG:min.insync.replicas=1}" in lines


def test_broker_configs_are_altered_per_broker(broker, pykbroker):
    common = ("configs", "--bootstrap-server", broker.bootstrap, "--entity-type", "brokers", "--entity-name", "0")
    altered = pykbroker(*common, "--alter", "--add-config", "log.cleaner.threads=2")
    assert altered.out == "Completed updating config for broker 0.\n"
    described = pykbroker(*common, "--describe")
    assert described.out.splitlines()[0] == "Dynamic configs for broker 0 are:"
    assert described.out.splitlines()[1].startswith(
        "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
    )
    pykbroker(*common, "--alter", "--delete-config", "log.cleaner.threads")


def test_users_scram_credentials_are_added_described_and_deleted(broker, pykbroker):
    user = fresh("carol")
    common = ("configs", "--bootstrap-server", broker.bootstrap, "--entity-type", "users", "--entity-name", user)
    added = pykbroker(
        *common,
        "--alter",
        "--add-config",
        "SCRAM-SHA-256=[iterations=8192,password=secret],SCRAM-SHA-512=[password=secret]",
    )
    assert added.out == f"Completed updating config for user {user}.\n"
    described = pykbroker(*common, "--describe")
    assert described.out == (
        f"SCRAM credential configs for user-principal '{user}' are "
        "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096\n"
    )

    pykbroker(*common, "--alter", "--delete-config", "SCRAM-SHA-256,SCRAM-SHA-512")
    gone = pykbroker(*common, "--describe")
    assert gone.out.startswith(
        f"Error retrieving SCRAM credential configs for user-principal '{user}': "
        "ExecutionException: org.apache.kafka.common.errors.ResourceNotFoundException: "
    )


def test_too_few_scram_iterations_are_refused(broker, pykbroker):
    refused = pykbroker(
        "configs",
        "--bootstrap-server",
        broker.bootstrap,
        "--alter",
        "--user",
        "dave",
        "--add-config",
        "SCRAM-SHA-512=[iterations=100,password=x]",
    )
    assert refused.status == 1
    assert refused.err == "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-512\n"


def test_json_output_lists_the_entries(broker, pykbroker):
    topic = fresh("json-configs")
    pykbroker(
        "topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic, "--config", "retention.ms=5000"
    )
    document = json.loads(
        pykbroker(
            "configs", "--bootstrap-server", broker.bootstrap, "--describe", "--topic", topic, "--output", "json"
        ).out
    )
    (entity,) = document["entities"]
    assert entity["entityName"] == topic
    assert [(c["name"], c["value"], c["source"]) for c in entity["configs"]] == [
        ("retention.ms", "5000", "DYNAMIC_TOPIC_CONFIG")
    ]


def test_an_action_is_required(broker, pykbroker):
    assert pykbroker("configs", "--bootstrap-server", broker.bootstrap, "--entity-type", "topics").status == 2


# --- groups (Kafka 4's GROUP config resource) --------------------------------------------------------


def group_configs(broker, pykbroker, *args: str):
    return pykbroker("configs", "--bootstrap-server", broker.bootstrap, *args)


def test_group_configs_are_added_described_and_deleted(broker, pykbroker):
    group = fresh("configured-group")
    common = ("--entity-type", "groups", "--entity-name", group)
    added = group_configs(
        broker,
        pykbroker,
        "--alter",
        *common,
        "--add-config",
        "consumer.session.timeout.ms=50000,share.auto.offset.reset=earliest",
    )
    assert (added.status, added.out) == (0, f"Completed updating config for group {group}.\n")
    assert group_configs(broker, pykbroker, "--describe", *common).out.splitlines() == [
        f"Dynamic configs for group {group} are:",
        "  consumer.session.timeout.ms=50000 sensitive=false "
        "synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=50000}",
        "  share.auto.offset.reset=earliest sensitive=false "
        "synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest}",
    ]

    deleted = group_configs(
        broker, pykbroker, "--alter", "--group", group, "--delete-config", "share.auto.offset.reset"
    )
    assert (deleted.status, deleted.out) == (0, f"Completed updating config for group {group}.\n")
    assert group_configs(broker, pykbroker, "--describe", "--group", group).out.splitlines()[1:] == [
        "  consumer.session.timeout.ms=50000 sensitive=false "
        "synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=50000}"
    ]


def test_a_group_neither_listed_nor_configured_does_not_exist(broker, pykbroker):
    group = fresh("unknown-group")
    described = group_configs(broker, pykbroker, "--describe", "--group", group)
    assert (described.status, described.out) == (
        0,
        f"The group '{group}' doesn't exist and doesn't have dynamic config.\n",
    )


def test_describe_all_of_a_group_lists_every_group_config_with_its_default(broker, pykbroker):
    group = fresh("any-group")  # --all describes the group whether it exists or not, as Kafka's tool
    described = group_configs(broker, pykbroker, "--describe", "--all", "--group", group)
    lines = described.out.splitlines()
    assert lines[0] == f"All configs for group {group} are:"
    assert [line.split("=")[0].strip() for line in lines[1:]] == [
        "consumer.heartbeat.interval.ms",
        "consumer.session.timeout.ms",
        "share.auto.offset.reset",
        "share.heartbeat.interval.ms",
        "share.isolation.level",
        "share.record.lock.duration.ms",
        "share.session.timeout.ms",
        "streams.heartbeat.interval.ms",
        "streams.num.standby.replicas",
        "streams.session.timeout.ms",
    ]
    assert "  share.auto.offset.reset=latest sensitive=false synonyms={}" in lines


def test_listed_groups_of_every_type_are_described_without_configs_of_their_own(broker, pykbroker):
    from confluent_kafka import ConsumerGroupTopicPartitions, ShareConsumer, TopicPartition
    from confluent_kafka.admin import AdminClient

    topic, classic, share = fresh("group-configs"), fresh("classic-group"), fresh("share-group")
    pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    offsets = ConsumerGroupTopicPartitions(classic, [TopicPartition(topic, 0, 0)])
    admin.alter_consumer_group_offsets([offsets])[classic].result()
    consumer = ShareConsumer({"bootstrap.servers": broker.bootstrap, "group.id": share})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 30
        while share not in group_configs(broker, pykbroker, "--describe", "--entity-type", "groups").out:
            assert time.monotonic() < deadline, "the share group was never listed"
            consumer.poll(0.2)
    finally:
        consumer.close()

    for group in (classic, share):
        described = group_configs(broker, pykbroker, "--describe", "--group", group)
        assert described.out == f"Dynamic configs for group {group} are:\n"
    every_group = group_configs(broker, pykbroker, "--describe", "--entity-type", "groups").out.splitlines()
    assert {f"Dynamic configs for group {classic} are:", f"Dynamic configs for group {share} are:"} <= set(every_group)


def test_invalid_group_configs_are_refused_with_the_brokers_message(broker, pykbroker):
    group = fresh("strict-group")
    unknown = group_configs(broker, pykbroker, "--alter", "--group", group, "--add-config", "nosuch=1")
    assert unknown.status == 1
    assert unknown.out == ""
    assert unknown.err.endswith(": Unknown group config name: nosuch\n")
    assert unknown.err.startswith("Error while executing config command with args '--bootstrap-server ")
    too_short = group_configs(
        broker, pykbroker, "--alter", "--group", group, "--add-config", "consumer.session.timeout.ms=1"
    )
    assert too_short.err.endswith(": consumer.session.timeout.ms must be greater than or equal to 45000\n")
    missing = group_configs(broker, pykbroker, "--alter", "--group", group, "--delete-config", "share.isolation.level")
    assert (missing.status, missing.err) == (1, "Invalid config(s): share.isolation.level\n")


def test_groups_need_a_name_to_alter_and_have_no_default(broker, pykbroker):
    nameless = group_configs(
        broker, pykbroker, "--alter", "--entity-type", "groups", "--add-config", "consumer.session.timeout.ms=50000"
    )
    assert (nameless.status, nameless.err) == (1, "An entity name must be specified with --alter of groups\n")
    default = group_configs(broker, pykbroker, "--describe", "--entity-type", "groups", "--entity-default")
    assert (default.status, default.err) == (1, "--entity-default must not be specified with --describe of groups\n")
