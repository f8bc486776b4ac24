"""`pykbroker consumer-groups` does what Kafka's kafka-consumer-groups.sh does, and prints it the way
Kafka 3.9 prints it: the offsets table with CURRENT-OFFSET, LOG-END-OFFSET and LAG, members, state,
listing, offset resets (refused while the group is active), deletion.

One broker for the module; each test uses its own topic and group names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat.realkafka import REALKAFKA
from compat.tool_shell import ToolShell
from pykbroker.testkit.process import BrokerProcess
from pykbroker.tools import consumer_groups, offset_reset
from pykbroker.tools.client_config import ToolError
from tests.ci import skip_or_fail_in_ci

CONSUMER_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """One broker for the module; groups form at once (no initial rebalance delay)."""
    overrides = {"group.initial.rebalance.delay.ms": "0"}
    with BrokerProcess(tmp_path_factory.mktemp("broker"), overrides) as running:
        yield running


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """The tool in-process: (exit status, stdout, stderr); usage errors exit with status 2."""
    try:
        status = consumer_groups.main(list(argv))
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def table(text: str) -> list[dict[str, str]]:
    """The rows of a printed table, by column title (values hold no spaces)."""
    lines = [line for line in text.splitlines() if line.strip()]
    start = next(index for index, line in enumerate(lines) if line.startswith(("GROUP ", "TOPIC ")))
    titles = lines[start].split()
    return [dict(zip(titles, line.split())) for line in lines[start + 1 :]]


def create_topic(broker, topic: str, partitions: int = 3) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(broker, topic: str, per_partition: dict[int, int]) -> None:
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for partition, count in per_partition.items():
        for index in range(count):
            producer.produce(topic, key=f"k{index}", value=f"v{index}", partition=partition)
    assert producer.flush(30) == 0


def consumer(broker, group: str, topic: str, **extra) -> Consumer:
    config = {
        "bootstrap.servers": broker.bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
        "client.id": f"{group}-client",
        **extra,
    }
    running = Consumer(config)
    running.subscribe([topic])
    return running


def wait_for_assignment(running: Consumer) -> None:
    for _ in range(50):
        running.poll(0.1)
        if running.assignment():
            return
    raise AssertionError("the consumer was never assigned a partition")


def consume_and_commit(running: Consumer, count: int) -> None:
    received = 0
    while received < count:
        message = running.poll(10)
        assert message is not None, f"only {received} of {count} records arrived"
        if message.error() is None:
            received += 1
            running.commit(message, asynchronous=False)


@pytest.fixture(scope="module")
def stopped_group(broker):
    """Group `stopped` consumed 4 + 3 + 0 of the 5 + 3 + 2 records of topic `lagging`, committed, left."""
    create_topic(broker, "lagging")
    produce(broker, "lagging", {0: 5, 1: 3, 2: 2})
    for partition, count in ((0, 4), (1, 3)):
        running = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "stopped"})
        running.commit(offsets=[TopicPartition("lagging", partition, count)], asynchronous=False)
        running.close()
    return "stopped"


def test_describe_shows_current_offset_log_end_offset_and_lag(broker, stopped_group, capsys):
    status, out, err = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", stopped_group)

    assert status == 0
    assert out.startswith("\nGROUP ")
    rows = table(out)
    assert [(r["PARTITION"], r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"]) for r in rows] == [
        ("0", "4", "5", "1"),
        ("1", "3", "3", "0"),
    ]
    assert {(r["CONSUMER-ID"], r["HOST"], r["CLIENT-ID"]) for r in rows} == {("-", "-", "-")}
    assert err == "\nConsumer group 'stopped' has no active members.\n"


def test_the_offsets_table_has_kafkas_column_layout(broker, stopped_group, capsys):
    _, out, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", stopped_group)

    header, first = out.splitlines()[1:3]
    assert header == (
        "GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
        "CONSUMER-ID     HOST            CLIENT-ID"
    )
    assert first == (
        "stopped         lagging         0          4               5               1               "
        "-               -               -"
    )


def test_an_active_group_shows_its_consumers_partitions(broker, capsys):
    create_topic(broker, "watched", partitions=2)
    produce(broker, "watched", {0: 2, 1: 2})
    running = consumer(broker, "active", "watched")
    try:
        consume_and_commit(running, 4)
        status, out, err = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", "active")
        assert status == 0 and err == ""
        rows = table(out)
        assert sorted((r["TOPIC"], r["PARTITION"], r["LAG"], r["CLIENT-ID"]) for r in rows) == [
            ("watched", "0", "0", "active-client"),
            ("watched", "1", "0", "active-client"),
        ]
        assert rows[0]["HOST"] == "/127.0.0.1"

        _, members, _ = run(
            capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", "active", "--members", "--verbose"
        )
        (member,) = table(members)
        assert (member["CLIENT-ID"], member["#PARTITIONS"]) == ("active-client", "2")
        assert members.splitlines()[2].endswith("(0,1)")  # Kafka 3.9 prints no topic name there

        _, state, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", "active", "--state")
        lines = state.splitlines()
        assert lines[1].split() == ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
        assert re.fullmatch(r"active +127\.0\.0\.1:\d+  \(0\) +range +Stable +1", lines[2])
    finally:
        running.close()


def test_reset_to_earliest_execute_moves_a_stopped_group_back(broker, capsys):
    create_topic(broker, "rewound")
    produce(broker, "rewound", {0: 3, 1: 2, 2: 1})
    running = consumer(broker, "rewinding", "rewound")
    consume_and_commit(running, 6)
    running.close()

    status, out, err = run(
        capsys, "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--group", "rewinding",
        "--topic", "rewound", "--to-earliest", "--execute",
    )  # fmt: skip

    assert status == 0, err
    assert (
        out.splitlines()[1]
        == "GROUP                          TOPIC                          PARTITION  NEW-OFFSET     "
    )
    assert [(r["PARTITION"], r["NEW-OFFSET"]) for r in table(out)] == [("0", "0"), ("1", "0"), ("2", "0")]
    _, described, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", "rewinding")
    assert [(r["CURRENT-OFFSET"], r["LAG"]) for r in table(described)] == [("0", "3"), ("0", "2"), ("0", "1")]
    again = consumer(broker, "rewinding", "rewound")
    try:
        consume_and_commit(again, 6)  # every record once more
    finally:
        again.close()


def test_a_dry_run_prints_the_plan_and_changes_nothing(broker, stopped_group, capsys):
    status, out, err = run(
        capsys, "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--group", stopped_group,
        "--topic", "lagging:0", "--to-offset", "1", "--dry-run",
    )  # fmt: skip

    assert status == 0 and err == ""
    assert [(r["GROUP"], r["TOPIC"], r["PARTITION"], r["NEW-OFFSET"]) for r in table(out)] == [
        ("stopped", "lagging", "0", "1")
    ]
    _, described, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", stopped_group)
    assert table(described)[0]["CURRENT-OFFSET"] == "4"


def test_without_execute_or_dry_run_kafkas_warning_is_printed(broker, stopped_group, capsys):
    status, _, err = run(
        capsys, "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--group", stopped_group,
        "--all-topics", "--to-latest",
    )  # fmt: skip
    assert status == 0
    assert err.startswith("WARN: No action will be performed as the --execute option is missing.")


@pytest.mark.parametrize(
    "scenario, expected",
    [
        (["--to-latest"], [("0", "5"), ("1", "3")]),
        (["--shift-by", "-2"], [("0", "2"), ("1", "1")]),
        (["--shift-by", "10"], [("0", "5"), ("1", "3")]),  # clamped to the log end, with a warning
        (["--to-offset", "0"], [("0", "0"), ("1", "0")]),
        (["--to-current"], [("0", "4"), ("1", "3")]),
        (["--to-datetime", "2000-01-01T00:00:00.000"], [("0", "0"), ("1", "0")]),
        (["--by-duration", "PT0S"], [("0", "5"), ("1", "3")]),  # nothing newer than now: the log end
    ],
)
def test_each_reset_scenario_plans_kafkas_offsets(broker, stopped_group, capsys, scenario, expected):
    status, out, err = run(
        capsys, "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--group", stopped_group,
        "--all-topics", "--dry-run", *scenario,
    )  # fmt: skip
    assert status == 0, err
    rows = [r for r in table(out) if r.get("GROUP") == "stopped"]
    assert [(r["PARTITION"], r["NEW-OFFSET"]) for r in rows] == expected


def test_an_exported_plan_can_be_applied_from_its_file(broker, stopped_group, capsys, tmp_path):
    status, exported, _ = run(
        capsys, "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--group", stopped_group,
        "--topic", "lagging:0,1", "--to-offset", "2", "--dry-run", "--export",
    )  # fmt: skip
    assert status == 0
    assert sorted(exported.split()) == ["lagging,0,2", "lagging,1,2"]
    plan = tmp_path / "plan.csv"
    plan.write_text(exported)

    status, out, err = run(
        capsys, "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--group", stopped_group,
        "--from-file", str(plan), "--dry-run",
    )  # fmt: skip
    assert status == 0, err
    assert sorted((r["PARTITION"], r["NEW-OFFSET"]) for r in table(out)) == [("0", "2"), ("1", "2")]


def test_a_reset_is_refused_while_the_group_is_active(broker, capsys):
    create_topic(broker, "busy", partitions=1)
    produce(broker, "busy", {0: 2})
    running = consumer(broker, "busy-group", "busy")
    try:
        consume_and_commit(running, 2)
        status, out, err = run(
            capsys, "--bootstrap-server", broker.bootstrap, "--reset-offsets", "--group", "busy-group",
            "--topic", "busy", "--to-earliest", "--execute",
        )  # fmt: skip
    finally:
        running.close()
    assert status == 1
    assert err == (
        "Error: Assignments can only be reset if the group 'busy-group' is inactive, but the current state is Stable.\n"
    )
    assert out == ""


def test_list_prints_group_ids_and_filters_by_state(broker, stopped_group, capsys):
    status, out, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--list")
    assert status == 0 and stopped_group in out.splitlines()

    _, out, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--list", "--state", "empty")
    lines = out.splitlines()
    assert lines[0] == "GROUP" + " " * 21 + "STATE" + " " * 15
    assert "stopped" in [line.split()[0] for line in lines[1:]]
    assert {line.split()[1] for line in lines[1:]} == {"Empty"}

    status, _, err = run(capsys, "--bootstrap-server", broker.bootstrap, "--list", "--state", "sleepy")
    assert status == 1
    assert "Invalid state list 'sleepy'. Valid states are: PreparingRebalance, CompletingRebalance, Stable" in err


def test_describing_a_group_that_does_not_exist_is_an_error(broker, capsys):
    status, out, err = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", "nobody")
    assert (status, out, err) == (1, "", "Error: Consumer group 'nobody' does not exist.\n")


def test_delete_offsets_then_delete_the_group(broker, capsys):
    create_topic(broker, "forgotten", partitions=2)
    produce(broker, "forgotten", {0: 1, 1: 1})
    running = consumer(broker, "forgetful", "forgotten")
    consume_and_commit(running, 2)
    running.close()

    status, out, err = run(
        capsys,
        "--bootstrap-server",
        broker.bootstrap,
        "--delete-offsets",
        "--group",
        "forgetful",
        "--topic",
        "forgotten:1",
    )
    assert status == 0, err
    assert out.splitlines()[0] == "Request succeed for deleting offsets with topic forgotten:1 group forgetful"
    assert table("\n".join(out.splitlines()[2:])) == [{"TOPIC": "forgotten", "PARTITION": "1", "STATUS": "Successful"}]
    _, described, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", "forgetful")
    assert [r["PARTITION"] for r in table(described)] == ["0"]

    status, out, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--delete", "--group", "forgetful")
    assert (status, out) == (0, "Deletion of requested consumer groups ('forgetful') was successful.\n")
    status, _, err = run(capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", "forgetful")
    assert status == 1 and "does not exist" in err


def test_deleting_an_active_group_fails_with_status_1(broker, capsys):
    create_topic(broker, "kept", partitions=1)
    running = consumer(broker, "keeper", "kept")
    try:
        wait_for_assignment(running)
        status, out, err = run(capsys, "--bootstrap-server", broker.bootstrap, "--delete", "--group", "keeper")
    finally:
        running.close()
    assert status == 1
    assert err == "Error: Deletion of some consumer groups failed:\n"
    assert out.startswith(
        "* Group 'keeper' could not be deleted due to: java.util.concurrent.ExecutionException: "
        "org.apache.kafka.common.errors.GroupNotEmptyException: The group is not empty."
    )


def test_json_output_is_one_document(broker, stopped_group, capsys):
    status, out, _ = run(
        capsys, "--bootstrap-server", broker.bootstrap, "--describe", "--group", stopped_group, "--output", "json"
    )
    assert status == 0
    document = json.loads(out)
    assert document["groups"][0]["state"] == "Empty"
    assert document["groups"][0]["offsets"][0] == {
        "topic": "lagging",
        "partition": 0,
        "current_offset": 4,
        "log_end_offset": 5,
        "lag": 1,
        "consumer_id": None,
        "host": None,
        "client_id": None,
    }


def test_command_config_is_read_as_java_client_properties(broker, stopped_group, capsys, tmp_path):
    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=PLAINTEXT\nclient.id=admin-tool\n")
    status, out, _ = run(capsys, "--bootstrap-server", broker.bootstrap, "--command-config", str(properties), "--list")
    assert status == 0 and stopped_group in out.splitlines()


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            [],
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets",
        ),
        (["--describe"], "Option [describe] takes one of these options: [all-groups], [group]"),
        (
            ["--describe", "--group", "g", "--members", "--state"],
            "Option [describe] takes at most one of these options",
        ),
        (["--reset-offsets", "--group", "g", "--topic", "t"], "Option '[reset-offsets]' requires one of the following"),
        (
            ["--reset-offsets", "--group", "g", "--to-earliest"],
            "One of the reset scopes should be defined: --all-topics, --topic.",
        ),
        (
            ["--reset-offsets", "--group", "g", "--all-topics", "--to-earliest", "--to-latest"],
            "can't be used with option",
        ),
        (["--delete-offsets", "--group", "g"], "Option [delete-offsets] takes the following options: [topic], [group]"),
        (["--list", "--members"], "Option(s) [members] are unavailable given other options on the command line"),
    ],
)
def test_command_lines_kafka_refuses_are_usage_errors(capsys, argv, message):
    status, _, err = run(capsys, "--bootstrap-server", "127.0.0.1:1", *argv)
    assert status == 2
    assert message in err


def test_the_pykbroker_command_runs_the_tool(broker, stopped_group):
    result = subprocess.run(
        [sys.executable, "-m", "pykbroker", "consumer-groups", "--bootstrap-server", broker.bootstrap, "--list"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert stopped_group in result.stdout.splitlines()


TOOLS_LOG4J = """log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.stderr.Target=System.err
"""


def kafka_tool_shell(directory: Path) -> ToolShell | None:
    """One JVM for Kafka's tool, when its jar is at hand: in `KAFKA_TOOLS_CLASSPATH`, or a
    kafka-tools jar in the Kafka 3.9.0 beside the repository (`compat/tool_shell.py`, not started).
    Its logs go to stderr, as with Kafka's scripts."""
    libs = REALKAFKA / "libs"
    classpath = os.environ.get("KAFKA_TOOLS_CLASSPATH")
    if classpath is None:
        jars = sorted(libs.glob("kafka-tools-*.jar")) if libs.is_dir() else []
        if not any(has_class(jar, CONSUMER_GROUP_COMMAND) for jar in jars):
            return None
    return ToolShell(directory, libs=libs, log4j=TOOLS_LOG4J, classpath_first=classpath)


def has_class(jar: Path, class_name: str) -> bool:
    try:
        with zipfile.ZipFile(jar) as archive:
            return class_name.replace(".", "/") + ".class" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def test_describe_prints_what_kafkas_consumer_group_command_prints(broker, capsys, tmp_path):
    shell = kafka_tool_shell(tmp_path)
    if shell is None:
        skip_or_fail_in_ci(f"{CONSUMER_GROUP_COMMAND} is not at hand (kafka-tools-3.9.0.jar, or KAFKA_TOOLS_CLASSPATH)")
    create_topic(broker, "compared", partitions=5)
    produce(broker, "compared", {0: 4, 1: 2, 2: 3, 3: 1, 4: 5})
    running = consumer(broker, "compare", "compared")
    try:
        shell.start()
        consume_and_commit(running, 15)
        produce(broker, "compared", {0: 2, 3: 1})  # some lag
        for view in ([], ["--members"], ["--members", "--verbose"], ["--state"]):
            argv = ["--bootstrap-server", broker.bootstrap, "--describe", "--group", "compare", *view]
            java = shell.run(CONSUMER_GROUP_COMMAND, *argv, timeout=120)
            status, ours, _ = run(capsys, *argv)
            assert (status, ours) == (java.status, java.out), view
        argv = ["--bootstrap-server", broker.bootstrap, "--list"]
        java = shell.run(CONSUMER_GROUP_COMMAND, *argv, timeout=120)
        # the same groups; two ids in one HashMap bucket keep the broker's order in Kafka's list,
        # which librdkafka does not pass on
        assert sorted(run(capsys, *argv)[1].splitlines()) == sorted(java.out.splitlines())
    finally:
        shell.stop()
        running.close()


@pytest.mark.parametrize(
    "text, milliseconds",
    [("PT0S", 0), ("PT1H", 3_600_000), ("P1DT2H3M4.5S", 93_784_500), ("PT-30M", -1_800_000), ("-PT1S", -1000)],
)
def test_by_duration_reads_javas_duration_format(text, milliseconds):
    assert offset_reset.parse_duration_ms(text) == milliseconds


def test_to_datetime_reads_kafkas_formats():
    assert offset_reset.parse_datetime("2024-01-02T03:04:05.678Z") == 1704164645678
    assert offset_reset.parse_datetime("2024-01-02T04:04:05.678+01:00") == 1704164645678
    assert offset_reset.parse_datetime("2024-01-02T04:04:05.678+0100") == 1704164645678
    with pytest.raises(ToolError, match="does not contain a 'T'"):
        offset_reset.parse_datetime("2024-01-02 03:04:05")
