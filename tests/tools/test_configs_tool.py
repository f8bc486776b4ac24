"""`pykbroker configs` speaks kafka-configs.sh: topics, brokers and users' SCRAM credentials."""

from __future__ import annotations

import json

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
