"""bob may read the topic but no group (docs/security.md): a consumer that only assigns itself a
partition still gets its records, from pykbroker as from Kafka 3.9.0.

Each scenario runs Kafka 3.9's own console consumer (org.apache.kafka.tools.consumer.ConsoleConsumer,
with the WARN log level of Kafka's tools-log4j.properties) and `pykbroker console-consumer` against
both secured brokers, and expects the four runs to print the same records, the same lines on stderr
and to exit with the same status. Kafka's log lines are compared in the tool's form: `LEVEL message
exception` (the exception on its ERROR line), without log4j's timestamp and logger name; random
group ids as `console-consumer-N`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from compat import tool_shell
from compat.realkafka import REALKAFKA
from compat.security_clients import java_properties, librdkafka_settings
from compat.security_scenarios import Setup
from compat.tool_shell import ToolShell, launcher_classes

from ..ci import skip_or_fail_in_ci

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [b"one", b"two", b"three"]
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
TOOLS_LOG4J = """log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.appender.stderr.Target=System.err
"""


@dataclass(frozen=True)
class Run:
    """What a console consumer printed and exited with."""

    status: int
    out: str
    err: str


@dataclass(frozen=True)
class Bob:
    """bob on one secured broker: his Java client properties file and a topic of three records he
    may read (and no group ACL)."""

    broker: object
    properties: Path
    topic: str


@pytest.fixture(scope="module")
def bob(secure_pykbroker, secure_kafka, tmp_path_factory) -> dict[str, Bob]:
    """{"pykbroker": Bob, "Kafka": Bob}, set up alike on both brokers."""
    if shutil.which("java") is None or not (REALKAFKA / "libs" / "kafka-tools-3.9.0.jar").exists():
        skip_or_fail_in_ci(f"Kafka's console consumer needs java and kafka-tools-3.9.0.jar in {REALKAFKA / 'libs'}")
    directory = tmp_path_factory.mktemp("bob")
    found = {}
    for label, broker in (("pykbroker", secure_pykbroker), ("Kafka", secure_kafka)):
        setup = Setup(broker)
        setup.create_scram_users()
        topic = setup.topic(f"orders-{uuid.uuid4().hex[:8]}", RECORDS)
        setup.acl("bob", "TOPIC", topic, "READ")
        properties = directory / f"bob-{label}.properties"
        properties.write_text("\n".join(java_properties(broker.access("SCRAM", "bob"))) + "\n")
        found[label] = Bob(broker, properties, topic)
    return found


@pytest.fixture(scope="module")
def kafka_tools(bob, tmp_path_factory) -> Iterator[dict[str, ToolShell]]:
    """Kafka's console consumer, one JVM for the runs against each broker (`compat/tool_shell.py`:
    each run with its own stdout, stderr and exit status, as from a JVM of its own)."""
    reason = tool_shell.unavailable()
    if reason:
        skip_or_fail_in_ci(f"Kafka's console consumer cannot run here: {reason}")
    classes = launcher_classes(tmp_path_factory.mktemp("launcher"))
    shells = {label: ToolShell(tmp_path_factory.mktemp(f"tools-{label}"), classes, log4j=TOOLS_LOG4J) for label in bob}
    try:
        for shell in shells.values():
            shell.start()
        yield shells
    finally:
        for shell in shells.values():
            shell.stop()


def kafka_console_consumer(shell: ToolShell, bob: Bob, *args: str) -> Run:
    done = shell.run(CONSOLE_CONSUMER, *console_consumer_args(bob, *args), timeout=120)
    return Run(done.status, done.out, tool_log(done.err, bob))


def pykbroker_console_consumer(bob: Bob, *args: str) -> Run:
    command = [sys.executable, "-m", "pykbroker", "console-consumer", *console_consumer_args(bob, *args)]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT, env=environment)
    return Run(done.returncode, done.stdout, tool_log(done.stderr, bob))


def console_consumer_args(bob: Bob, *args: str) -> list[str]:
    bootstrap = bob.broker.bootstrap_of("SCRAM")
    return ["--bootstrap-server", bootstrap, "--consumer.config", str(bob.properties),
            *(arg.replace("TOPIC", bob.topic) for arg in args)]  # fmt: skip


def tool_log(err: str, bob: Bob) -> str:
    """What a console consumer printed on stderr, as compared: the tool's log form, random group
    ids as `console-consumer-N`, bob's topic as TOPIC."""
    return re.sub(r"console-consumer-\d+", "console-consumer-N", as_tool_log(err)).replace(bob.topic, "TOPIC")


def as_tool_log(err: str) -> str:
    """Kafka's log4j lines as the tool prints them: no `[timestamp] ` and ` (logger)`, and an
    exception's first line joined to its ERROR line."""
    lines: list[str] = []
    for line in err.splitlines():
        if lines and line.startswith("org.apache.kafka.") and lines[-1].startswith("ERROR "):
            lines[-1] += f" {line}"
            continue
        line = re.sub(r"^\[\d{4}-\d\d-\d\d [\d:,]+\] ", "", line)
        lines.append(re.sub(r" \((org\.apache\.kafka|kafka)\.[\w.$]+\)$", "", line))
    return "".join(f"{line}\n" for line in lines)


def every_run(kafka_tools: dict[str, ToolShell], bob: dict[str, Bob], *args: str) -> dict[str, Run]:
    """The scenario with Kafka's console consumer and pykbroker's, against both brokers, the four
    runs at once (in random groups or one refused to bob: they do not meet)."""
    with ThreadPoolExecutor(max_workers=2 * len(bob)) as pool:
        started = {}
        for label, on in bob.items():
            started[f"Kafka's tool on {label}"] = pool.submit(kafka_console_consumer, kafka_tools[label], on, *args)
            started[f"pykbroker's tool on {label}"] = pool.submit(pykbroker_console_consumer, on, *args)
        return {name: run.result() for name, run in started.items()}


def assert_all_alike(runs: dict[str, Run], expected: Run) -> None:
    assert runs["Kafka's tool on Kafka"] == expected
    assert runs == dict.fromkeys(runs, expected)


GROUP_REFUSED = "Not authorized to access group: console-consumer-N"
COMMIT_REFUSED = (
    "WARN [Consumer clientId=console-consumer, groupId=console-consumer-N] Synchronous auto-commit of offsets "
    f"{{TOPIC-0=OffsetAndMetadata{{offset=3, leaderEpoch=0, metadata=''}}}} failed: {GROUP_REFUSED}\n"
)
TERMINATED = "ERROR Error processing message, terminating consumer process:  "


def test_bob_reads_a_partition_without_any_group_acl(kafka_tools, bob):
    """--partition without --group: a random group the consumer never asks for; the records."""
    runs = every_run(
        kafka_tools, bob, "--topic", "TOPIC", "--partition", "0", "--offset", "earliest", "--max-messages", "3"
    )
    assert_all_alike(runs, Run(0, "one\ntwo\nthree\n", "Processed a total of 3 messages\n"))


def test_with_auto_commit_the_commit_at_close_is_refused_with_a_warning(kafka_tools, bob):
    """enable.auto.commit=true: the records, then closing fails its auto-commit of the position."""
    runs = every_run(
        kafka_tools, bob, "--topic", "TOPIC", "--partition", "0", "--offset", "earliest", "--max-messages", "3",
        "--consumer-property", "enable.auto.commit=true",
    )  # fmt: skip
    assert_all_alike(runs, Run(0, "one\ntwo\nthree\n", COMMIT_REFUSED + "Processed a total of 3 messages\n"))


def test_with_auto_commit_the_first_refused_commit_ends_the_consumer(kafka_tools, bob):
    """The first auto-commit (after auto.commit.interval.ms, here 1 s rather than the default 5 s)
    fails and ends the consumer, which then fails its last auto-commit at close; exit status 0."""
    runs = every_run(
        kafka_tools, bob, "--topic", "TOPIC", "--partition", "0", "--offset", "earliest", "--timeout-ms", "60000",
        "--consumer-property", "enable.auto.commit=true", "--consumer-property", "auto.commit.interval.ms=1000",
    )  # fmt: skip
    terminated = f"{TERMINATED}org.apache.kafka.common.errors.GroupAuthorizationException: {GROUP_REFUSED}\n"
    assert_all_alike(
        runs, Run(0, "one\ntwo\nthree\n", terminated + COMMIT_REFUSED + "Processed a total of 3 messages\n")
    )


def test_a_subscribed_consumer_in_a_refused_group_stops_with_kafkas_error_line(kafka_tools, bob):
    """--group without --partition joins the group: refused, no record, Kafka's ERROR line, status 0."""
    args = ("--topic", "TOPIC", "--from-beginning", "--group", "billing-x", "--timeout-ms", "60000")
    runs = every_run(kafka_tools, bob, *args)
    terminated = f"{TERMINATED}org.apache.kafka.common.errors.GroupAuthorizationException: "
    assert_all_alike(
        runs, Run(0, "", f"{terminated}Not authorized to access group: billing-x\nProcessed a total of 0 messages\n")
    )


def test_group_and_partition_together_are_refused_by_both_tools(kafka_tools, bob):
    """Kafka's usage error (its status 1; pykbroker's usage errors exit with argparse's 2)."""
    args = ("--topic", "TOPIC", "--partition", "0", "--group", "billing-x")
    kafka = kafka_console_consumer(kafka_tools["Kafka"], bob["Kafka"], *args)
    pykbroker = pykbroker_console_consumer(bob["pykbroker"], *args)
    message = "Options group and partition cannot be specified together."
    assert (kafka.status, kafka.err.splitlines()[0]) == (1, message)
    assert pykbroker.status == 2 and pykbroker.err.splitlines()[-1].endswith(message)


def assigned_reader(bob: Bob) -> tuple[list[bytes], list[str]]:
    """A confluent-kafka consumer with a group bob has no ACL for: assign() and poll() until the
    three records; the records and the errors it reported on the way. (Without auto-commit: with
    it, librdkafka's close waits most of a minute for a last commit the refused group never takes,
    on either broker.)"""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    settings = librdkafka_settings(bob.broker.access("SCRAM", "bob"))
    consumer = Consumer({**settings, "group.id": "billing-x", "enable.auto.commit": False, "log_level": 0})
    values: list[bytes] = []
    errors: list[str] = []
    try:
        consumer.assign([TopicPartition(bob.topic, 0, OFFSET_BEGINNING)])
        for _ in range(120):
            if len(values) == len(RECORDS) and errors:
                break
            message = consumer.poll(0.5)
            if message is not None and message.error():
                errors.append(f"{message.error().name()}: {message.error().str()}")
            elif message is not None:
                values.append(message.value())
    finally:
        consumer.close()
    return values, errors


def test_a_confluent_kafka_consumer_that_assigns_gets_its_records_and_one_group_error(bob):
    """librdkafka looks up the group's coordinator anyway: refused, reported once (not fatal),
    and the records come all the same, from both brokers."""
    read = {label: assigned_reader(on) for label, on in bob.items()}
    expected = (RECORDS, ["GROUP_AUTHORIZATION_FAILED: FindCoordinator response error: Group authorization failed."])
    assert read == {"pykbroker": expected, "Kafka": expected}
