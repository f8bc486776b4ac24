"""`pykbroker topics` speaks kafka-topics.sh: its flags, its messages, its describe format."""

from __future__ import annotations

import json
import re

from .conftest import fresh

TOPIC_LINE = re.compile(
    r"^Topic: (?P<topic>\S+)\tTopicId: [A-Za-z0-9_-]{22}\tPartitionCount: (?P<partitions>\d+)"
    r"\tReplicationFactor: (?P<rf>\d+)\tConfigs: (?P<configs>.*)$"
)
PARTITION_LINE = re.compile(
    r"^\tTopic: (?P<topic>\S+)\tPartition: (?P<partition>\d+)\tLeader: 0\tReplicas: 0\tIsr: 0"
    r"\tElr: N/A\tLastKnownElr: N/A$"
)


def test_create_then_describe_prints_kafkas_format(broker, pykbroker):
    topic = fresh("orders")
    created = pykbroker(
        "topics",
        "--bootstrap-server",
        broker.bootstrap,
        "--create",
        "--topic",
        topic,
        "--partitions",
        "3",
        "--config",
        "retention.ms=60000",
        "--config",
        "cleanup.policy=compact",
    )
    assert (created.status, created.out) == (0, f"Created topic {topic}.\n")

    described = pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--describe", "--topic", topic)
    lines = described.out.splitlines()
    header = TOPIC_LINE.match(lines[0])
    assert header and header["topic"] == topic and header["partitions"] == "3" and header["rf"] == "1"
    assert sorted(header["configs"].split(",")) == ["cleanup.policy=compact", "retention.ms=60000"]
    assert [PARTITION_LINE.match(line)["partition"] for line in lines[1:]] == ["0", "1", "2"]


def test_creating_an_existing_topic_fails_with_kafkas_message_unless_if_not_exists(broker, pykbroker):
    topic = fresh("twice")
    args = ("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic)
    assert pykbroker(*args).status == 0
    again = pykbroker(*args)
    assert again.status == 1
    assert again.err == f"Error while executing topic command : Topic '{topic}' already exists.\n"
    assert pykbroker(*args, "--if-not-exists").status == 0


def test_list_takes_a_regular_expression_and_can_leave_out_internal_topics(broker, pykbroker):
    first, second = fresh("listed-a"), fresh("listed-b")
    for topic in (first, second):
        pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic)
    listed = pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--list", "--topic", "listed-.*")
    assert listed.out.splitlines() == sorted([first, second])
    everything = pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--list", "--exclude-internal")
    assert not any(name.startswith("__") for name in everything.out.splitlines())


def test_alter_adds_partitions_and_delete_removes_the_topic(broker, pykbroker):
    topic = fresh("grown")
    common = ("topics", "--bootstrap-server", broker.bootstrap)
    pykbroker(*common, "--create", "--topic", topic, "--partitions", "1")
    assert pykbroker(*common, "--alter", "--topic", topic, "--partitions", "4").status == 0
    described = pykbroker(*common, "--describe", "--topic", topic)
    assert "\tPartitionCount: 4\t" in described.out

    assert pykbroker(*common, "--delete", "--topic", topic).status == 0
    assert topic not in pykbroker(*common, "--list").out.splitlines()


def test_describing_a_missing_topic_is_an_error_unless_if_exists(broker, pykbroker):
    common = ("topics", "--bootstrap-server", broker.bootstrap, "--describe", "--topic", "no-such-topic")
    missing = pykbroker(*common)
    assert (missing.status, missing.err) == (
        1,
        "Error while executing topic command : Topic 'no-such-topic' does not exist as expected\n",
    )
    assert (pykbroker(*common, "--if-exists").status, pykbroker(*common, "--if-exists").out) == (0, "")


def test_report_flags_print_only_the_partitions_they_select(broker, pykbroker):
    topic = fresh("healthy")
    common = ("topics", "--bootstrap-server", broker.bootstrap)
    pykbroker(*common, "--create", "--topic", topic, "--partitions", "2")
    for flag in ("--under-replicated-partitions", "--unavailable-partitions", "--under-min-isr-partitions"):
        assert pykbroker(*common, "--describe", "--topic", topic, flag).out == ""
    at_min = pykbroker(*common, "--describe", "--topic", topic, "--at-min-isr-partitions")
    assert len(at_min.out.splitlines()) == 2  # one replica in sync, min.insync.replicas=1


def test_topics_with_overrides_prints_only_topics_with_configs_of_their_own(broker, pykbroker):
    plain, tuned = fresh("plain"), fresh("tuned")
    common = ("topics", "--bootstrap-server", broker.bootstrap)
    pykbroker(*common, "--create", "--topic", plain)
    pykbroker(*common, "--create", "--topic", tuned, "--config", "retention.ms=1000")
    shown = pykbroker(*common, "--describe", "--topic", f"{plain}|{tuned}", "--topics-with-overrides")
    assert [line.split("\t")[0] for line in shown.out.splitlines()] == [f"Topic: {tuned}"]


def test_json_output_is_one_document(broker, pykbroker):
    topic = fresh("as-json")
    common = ("topics", "--bootstrap-server", broker.bootstrap)
    pykbroker(*common, "--create", "--topic", topic, "--partitions", "2")
    document = json.loads(pykbroker(*common, "--describe", "--topic", topic, "--output", "json").out)
    (described,) = document["topics"]
    assert described["name"] == topic and described["partitionCount"] == 2
    assert [p["partition"] for p in described["partitions"]] == [0, 1]
    assert described["partitions"][0] | {"partition": 0} == {
        "partition": 0,
        "leader": 0,
        "replicas": [0],
        "isr": [0],
        "elr": None,
        "lastKnownElr": None,
    }


def test_usage_errors_exit_with_status_2(broker, pykbroker):
    assert pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--list", "--create").status == 2
    assert pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create").status == 2  # no --topic
    assert pykbroker("topics", "--list").status == 2  # no --bootstrap-server
    no_partitions = pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--alter", "--topic", "t")
    assert no_partitions.status == 2


# What Kafka 3.9.0's TopicCommand printed for `--describe --topic PATTERN` on a cluster of these
# topics (measured against it): the order of its rows.
MEASURED_CLUSTER = (
    "__consumer_offsets cc dr nosuchtopic2 nosuchtopic3 pk1 pk2 ra.k t1 t2 xa xb xc xd xe xf xg xh xi xj xk xl xm"
).split()
MEASURED_DESCRIBE_ORDERS = [
    "dr t2",
    "xa t1 dr t2",
    "xa dr t2",
    "xa xb t1 dr t2",
    "t1 xe",
    "t1 xe dr",
    "cc xm t1 xe pk2 pk1",
    "xa xb xc xd t1 xe dr t2",
    "xa xb xc xd xe xf xg xh xi xj xk xl xm",
    "cc nosuchtopic2 xa xb xc xd xe dr nosuchtopic3 xf xg xh xi xj xk xl xm pk2 pk1 ra.k t1 __consumer_offsets t2",
]


def test_topics_are_described_in_the_order_kafkas_topic_command_printed():
    from pykbroker.tools.topics import describe_order

    for measured in MEASURED_DESCRIBE_ORDERS:
        chosen = measured.split()
        assert describe_order(MEASURED_CLUSTER, sorted(chosen)) == chosen
    three = ["__consumer_offsets", "parity-6b1d3ad8", "parity-data-3d5cd30b"]
    assert describe_order(three, three) == ["parity-data-3d5cd30b", "__consumer_offsets", "parity-6b1d3ad8"]
