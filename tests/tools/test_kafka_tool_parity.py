"""Kafka's own tools and pykbroker's print the same text against the same broker.

Kafka 3.9.0's command-line tools run as Java classes from `../shared/realkafka/libs` (kafka-tools-
3.9.0.jar, and kafka_2.13-3.9.0.jar for ConfigCommand and ConsoleProducer) or from
`$KAFKA_HOME/libs`, an unpacked Kafka distribution; they need no real Kafka broker, only the
pykbroker of this module. Without java or the jars these tests skip with one line, and fail in CI
(`tests/ci.py`).

Each case runs one command line through both tools, one after the other, and compares the exit
status and stdout (and stderr where the case says so). Where pykbroker differs on purpose, or
cannot do what Kafka's tool does, the case names the entry of ACCEPTED_DIFFERENCES that says why,
and the test checks that the difference is the recorded one (and still there).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from compat.realkafka import REALKAFKA
from compat.tool_shell import QUIET_LOG4J, Run, ToolShell  # noqa: F401 (QUIET_LOG4J: for test_kafka_answers)
from tests.ci import skip_or_fail_in_ci

from .conftest import fresh

TOPIC_COMMAND = "org.apache.kafka.tools.TopicCommand"
CONFIG_COMMAND = "kafka.admin.ConfigCommand"
GET_OFFSETS = "org.apache.kafka.tools.GetOffsetShell"
DELETE_RECORDS = "org.apache.kafka.tools.DeleteRecordsCommand"
LEADER_ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
CONSUMER_GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
CONSOLE_PRODUCER = "kafka.tools.ConsoleProducer"
KAFKA_TOOLS = {
    "topics": TOPIC_COMMAND,
    "configs": CONFIG_COMMAND,
    "get-offsets": GET_OFFSETS,
    "delete-records": DELETE_RECORDS,
    "leader-election": LEADER_ELECTION,
    "consumer-groups": CONSUMER_GROUPS,
    "console-consumer": CONSOLE_CONSUMER,
    "console-producer": CONSOLE_PRODUCER,
}

# Where pykbroker's tools differ from Kafka 3.9.0's, and why.
ACCEPTED_DIFFERENCES = {
    "errors-on-stderr": "topics and consumer-groups print their 'Error ...' lines on stderr, Kafka's tools on "
    "stdout: stdout carries only the command's data, so a script can parse it",
    "exit-status-on-failure": "consumer-groups (--describe of a missing group, --delete, --delete-offsets, "
    "--reset-offsets of an active group) and delete-records with a failed partition exit 1; Kafka 3.9.0 exits 0 "
    "after printing the error, so a script cannot tell (its own leader-election does exit 1)",
    "usage-exit-2": "a command line the tool refuses is a usage error: argparse's usage and exit status 2 "
    "(pykbroker's contract for every subcommand); Kafka prints its option table and exits 1",
    "no-stack-traces": "a failure is one line: Kafka's tools add the Java stack trace (and sometimes the "
    "exception's class) on stderr",
    "glued-rows": "consumer-groups --reset-offsets and --delete-offsets print one row per line; Kafka 3.9.0 "
    "prints the rows of these tables without line breaks (a missing %n in its format)",
    "optional-in-message": "Kafka 3.9.0 names a missing topic 'Optional[t]' (a Java Optional printed as is); "
    "pykbroker says 't'",
    "unknown-topic-id": "topics --describe --topic-id of an id no topic has: Kafka 3.9.0 describes every topic; "
    "pykbroker says that the id does not exist (exit 1), as it does for a topic name",
    "delete-records-unknown-topic": "delete-records of a topic that does not exist: Kafka's client retries its "
    "metadata until default.api.timeout.ms (60 s) and prints a TimeoutException; librdkafka knows at once, and "
    "the line says UnknownTopicOrPartitionException (not run here: Kafka's side takes a minute)",
    "hash-bucket-order": "rows come in the order of Kafka's HashMaps (java_order.py); keys that share a bucket "
    "keep the order of Kafka's internal maps, which is not always reproduced (topics --describe and configs "
    "--describe of several topics, delete-records of many partitions, consumer-groups --list of colliding ids): "
    "the same rows, their buckets in Kafka's order",
    "broker-loggers": "configs --entity-type broker-loggers: librdkafka has no BROKER_LOGGER resource, so "
    "pykbroker's tool refuses with one line (the broker serves it: Kafka's tool works against it)",
    "quotas": "client quotas (configs --entity-type clients/ips, quota keys for users): librdkafka has no client "
    "quota admin API, so pykbroker's tool refuses in one line (the broker serves them: Kafka's tool works "
    "against it) and shows only users' SCRAM credentials",
    "earliest-local-and-latest-tiered": "get-offsets --time -4 (earliest-local) and -5 (latest-tiered): "
    "librdkafka refuses these offset specs; the tool says so in one line (exit 1)",
    "tools-not-shipped": "kafka-acls, kafka-log-dirs, kafka-transactions, kafka-features, kafka-metadata-quorum "
    "and kafka-reassign-partitions have no pykbroker subcommand (Kafka's own tools work against the broker)",
    "broker-default-alter": "configs --alter --entity-type brokers --entity-default: librdkafka cannot name the "
    "cluster-wide broker resource, so pykbroker's tool refuses in one line and asks for --entity-name (not run "
    "here: Kafka's side would change the broker's defaults under the other cases)",
    "one-synonym-per-name": "configs --describe of a broker whose key is set both for it and as the cluster "
    "default: librdkafka keeps one synonym per name, so DYNAMIC_DEFAULT_BROKER_CONFIG is left out of synonyms={}",
    "lenient-formatter-name": "console-consumer also takes the bare name DefaultMessageFormatter, which Kafka's "
    "tool cannot load as a class",
}


@dataclass
class Case:
    """One command line for both tools. `args` may hold {B} (the bootstrap), {T} (a topic of 3
    partitions with records), {G} (a stopped group with committed offsets on {T}), {new} (a topic
    name of each tool's own, created first when `create_new`) and {F:name} (a file of FILES)."""

    tool: str
    args: tuple[str, ...]
    accepted: tuple[str, ...] = ()  # keys of ACCEPTED_DIFFERENCES
    compare_err: bool = False  # stderr too (else only its error line, when the command fails)
    stdin: str = ""
    create_new: bool = False

    @property
    def id(self) -> str:
        words = [re.sub(r"\{F:(.*)\}", r"\1", arg).lstrip("-") for arg in self.args[len(B) :]]
        return " ".join([self.tool, *words])


FILES = {
    "delete-first.json": lambda t: {"partitions": [{"topic": t, "partition": 0, "offset": 0}], "version": 1},
    "delete-beyond.json": lambda t: {
        "partitions": [{"topic": t, "partition": 0, "offset": 0}, {"topic": t, "partition": 1, "offset": 999}],
        "version": 1,
    },
    "delete-twice.json": lambda t: {
        "partitions": [{"topic": t, "partition": 0, "offset": 0}, {"topic": t, "partition": 0, "offset": 0}]
    },
    "not-json.json": lambda t: "not json",
    "elect-unknown.json": lambda t: {"partitions": [{"topic": t, "partition": 1}, {"topic": "nosuch", "partition": 0}]},
}
B = ("--bootstrap-server", "{B}")
CASES = [
    # topics
    Case("topics", (*B, "--list")),
    Case("topics", (*B, "--list", "--exclude-internal")),
    Case("topics", (*B, "--describe"), accepted=("hash-bucket-order",)),
    Case("topics", (*B, "--describe", "--topic", "{T}")),
    Case("topics", (*B, "--describe", "--topic", "parity.*"), accepted=("hash-bucket-order",)),
    Case("topics", (*B, "--describe", "--topics-with-overrides"), accepted=("hash-bucket-order",)),
    Case("topics", (*B, "--describe", "--under-replicated-partitions")),
    Case("topics", (*B, "--describe", "--at-min-isr-partitions"), accepted=("hash-bucket-order",)),
    Case("topics", (*B, "--create", "--topic", "{new}", "--partitions", "2", "--config", "retention.ms=1000")),
    Case("topics", (*B, "--create", "--topic", "{T}"), accepted=("errors-on-stderr",)),
    Case("topics", (*B, "--create", "--topic", "{new}", "--replication-factor", "3"), accepted=("errors-on-stderr",)),
    Case("topics", (*B, "--create", "--topic", "{new}", "--config", "nosuch.key=1"), accepted=("errors-on-stderr",)),
    Case("topics", (*B, "--alter", "--topic", "{T}", "--partitions", "1"), accepted=("errors-on-stderr",)),
    Case("topics", (*B, "--create", "--topic", "{new}", "--partitions", "0"), accepted=("errors-on-stderr",)),
    Case("topics", (*B, "--create", "--topic", "{new}", "--config", "abc"), accepted=("errors-on-stderr",)),
    Case(
        "topics", (*B, "--create", "--topic", "{new}", "--replica-assignment", "0,0:1"), accepted=("errors-on-stderr",)
    ),
    Case("topics", (*B, "--describe", "--topic", "nosuch"), accepted=("errors-on-stderr", "optional-in-message")),
    Case("topics", (*B, "--describe", "--topic-id", "AAAAAAAAAAAAAAAAAAAAAB"), accepted=("unknown-topic-id",)),
    Case("topics", (*B, "--delete", "--topic", "nosuch", "--if-exists")),
    # configs
    Case("configs", (*B, "--describe", "--entity-type", "topics"), accepted=("hash-bucket-order",)),
    Case("configs", (*B, "--describe", "--entity-type", "brokers")),
    Case("configs", (*B, "--describe", "--entity-type", "brokers", "--entity-name", "0")),
    Case("configs", (*B, "--describe", "--entity-type", "brokers", "--entity-default")),
    Case(
        "configs",
        (*B, "--alter", "--entity-type", "topics", "--entity-name", "{new}", "--add-config", "retention.ms=5000"),
        create_new=True,
    ),
    Case(
        "configs",
        (*B, "--alter", "--entity-type", "topics", "--entity-name", "{new}", "--delete-config", "segment.bytes"),
        create_new=True,
    ),
    Case(
        "configs",
        (*B, "--alter", "--entity-type", "topics", "--entity-name", "{T}", "--add-config", "nosuch=1"),
        accepted=("no-stack-traces",),
    ),
    Case(
        "configs",
        (*B, "--describe", "--entity-type", "broker-loggers", "--entity-name", "0"),
        accepted=("broker-loggers",),
    ),
    Case("configs", (*B, "--describe", "--entity-type", "users")),
    Case("configs", (*B, "--describe", "--entity-type", "clients"), accepted=("quotas",)),
    # get-offsets
    Case("get-offsets", B),
    Case("get-offsets", (*B, "--topic", "{T}", "--time", "-2")),
    Case("get-offsets", (*B, "--topic", "{T}", "--time", "max-timestamp")),
    Case("get-offsets", (*B, "--topic-partitions", "{T}:1-,nosuch")),
    Case("get-offsets", (*B, "--topic", "nosuch"), compare_err=True),
    Case("get-offsets", (*B, "--topic", "{T}", "--time", "abc"), compare_err=True),
    Case("get-offsets", (*B, "--topic", "{T}", "--time", "-4"), accepted=("earliest-local-and-latest-tiered",)),
    # delete-records
    Case("delete-records", (*B, "--offset-json-file", "{F:delete-first.json}")),
    Case("delete-records", (*B, "--offset-json-file", "{F:delete-beyond.json}"), accepted=("exit-status-on-failure",)),
    Case("delete-records", (*B, "--offset-json-file", "{F:delete-twice.json}"), accepted=("no-stack-traces",)),
    Case("delete-records", (*B, "--offset-json-file", "{F:not-json.json}"), accepted=("no-stack-traces",)),
    Case("delete-records", (*B, "--offset-json-file", "missing.json"), accepted=("no-stack-traces",)),
    # leader-election
    Case("leader-election", (*B, "--election-type", "preferred", "--all-topic-partitions")),
    Case("leader-election", (*B, "--election-type", "preferred", "--topic", "{T}", "--partition", "0")),
    Case(
        "leader-election",
        (*B, "--election-type", "preferred", "--path-to-json-file", "{F:elect-unknown.json}"),
        accepted=("no-stack-traces",),
    ),
    Case("leader-election", (*B, "--election-type", "preferred", "--topic", "{T}"), accepted=("usage-exit-2",)),
    # consumer-groups
    Case("consumer-groups", (*B, "--list")),
    Case("consumer-groups", (*B, "--list", "--state")),
    Case("consumer-groups", (*B, "--describe", "--group", "{G}"), compare_err=True),
    Case("consumer-groups", (*B, "--describe", "--group", "{G}", "--members", "--verbose")),
    Case("consumer-groups", (*B, "--describe", "--group", "{G}", "--state")),
    Case("consumer-groups", (*B, "--describe", "--all-groups", "--offsets")),
    Case(
        "consumer-groups",
        (*B, "--describe", "--group", "nosuch"),
        accepted=("errors-on-stderr", "exit-status-on-failure"),
    ),
    Case(
        "consumer-groups",
        (*B, "--reset-offsets", "--group", "{G}", "--topic", "{T}", "--to-earliest", "--dry-run"),
        accepted=("glued-rows",),
    ),
    Case("consumer-groups", (*B, "--reset-offsets", "--group", "{G}", "--all-topics", "--shift-by", "-1", "--export")),
    Case(
        "consumer-groups",
        (
            *B,
            "--reset-offsets",
            "--group",
            "{G}",
            "--all-topics",
            "--to-datetime",
            "2020-01-01T00:00:00.000",
            "--dry-run",
        ),
        accepted=("glued-rows",),
    ),  # fmt: skip
    Case(
        "consumer-groups",
        (*B, "--delete", "--group", "nosuch"),
        accepted=("errors-on-stderr", "exit-status-on-failure"),
    ),
    Case(
        "consumer-groups",
        (*B, "--delete-offsets", "--group", "{G}", "--topic", "nosuch"),
        accepted=("glued-rows", "exit-status-on-failure"),
    ),
    # console-consumer
    Case(
        "console-consumer",
        (
            *B,
            "--topic",
            "{T}",
            "--partition",
            "0",
            "--offset",
            "earliest",
            "--max-messages",
            "2",
            "--property",
            "print.key=true",
            "--property",
            "print.offset=true",
            "--property",
            "print.partition=true",
            "--property",
            "print.headers=true",
        ),
        compare_err=True,
    ),  # fmt: skip
    Case(
        "console-consumer",
        (
            *B,
            "--topic",
            "{T}",
            "--partition",
            "1",
            "--offset",
            "1",
            "--max-messages",
            "1",
            "--formatter",
            "kafka.tools.NoOpMessageFormatter",
        ),
        compare_err=True,
    ),  # fmt: skip
    Case("console-consumer", (*B, "--topic", "{T}", "--offset", "1"), accepted=("usage-exit-2",)),
    # console-producer
    Case("console-producer", (*B, "--topic", "{new}"), stdin="a\nb\n", create_new=True, compare_err=True),
    Case(
        "console-producer",
        (*B, "--topic", "{new}", "--property", "parse.key=true"),
        stdin="no separator\n",
        create_new=True,
        accepted=("no-stack-traces",),
    ),
    Case(
        "console-producer",
        (*B, "--topic", "{new}", "--compression-codec", "bogus"),
        stdin="a\n",
        create_new=True,
        accepted=("no-stack-traces",),
    ),
]


def kafka_libs() -> Path:
    home = os.environ.get("KAFKA_HOME")
    return Path(home) / "libs" if home else REALKAFKA / "libs"


def has_class(libs: Path, class_name: str) -> bool:
    entry = class_name.replace(".", "/") + ".class"
    for jar in libs.glob("kafka*.jar"):
        with zipfile.ZipFile(jar) as archive:
            if entry in archive.namelist():
                return True
    return False


@pytest.fixture(scope="module")
def kafka_run(tmp_path_factory):
    """Run one of Kafka's tool classes: a Run. All of a module's runs share one JVM
    (`compat/tool_shell.py`), stopped when the module ends; each run still gets its own stdin,
    stdout, stderr and exit status. The JVM's working directory is its own: `cwd` is accepted for
    the callers' symmetry with pykbroker_run, and the command lines name files by absolute path."""
    libs = kafka_libs()
    if shutil.which("java") is None or shutil.which("javac") is None or not libs.is_dir():
        skip_or_fail_in_ci(f"Kafka's tools need java, javac and the jars in {libs}")
    missing = [name for name in KAFKA_TOOLS.values() if not has_class(libs, name)]
    if missing:
        skip_or_fail_in_ci(f"{', '.join(missing)} not in {libs} (kafka-tools-3.9.0.jar; or set KAFKA_HOME)")
    shell = ToolShell(tmp_path_factory.mktemp("kafka-tools"), libs=libs).start()

    def run(class_name: str, *args: str, stdin: str = "", cwd: Path | None = None) -> Run:
        return shell.run(class_name, *args, stdin=stdin, timeout=180)

    try:
        yield run
    finally:
        shell.stop()


@pytest.fixture(scope="module")
def kafka_tool(kafka_run):
    """Run one of Kafka's tool classes that must succeed; its stdout."""

    def run(class_name: str, *args: str) -> str:
        done = kafka_run(class_name, *args)
        assert done.status == 0, done.err
        return done.out

    return run


def pykbroker_run(tool: str, *args: str, stdin: str = "", cwd: Path | None = None) -> Run:
    """`pykbroker TOOL ARGS` as a user runs it (its own process: real exit status, real stdin)."""
    done = subprocess.run(
        [sys.executable, "-m", "pykbroker", tool, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
    )
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def tuned_topic(broker):
    """A topic of 3 partitions with two configs of its own."""
    topic = fresh("parity")
    assert pykbroker_run(
        "topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic, "--partitions", "3",
        "--config", "retention.ms=86400000", "--config", "cleanup.policy=compact",
    ).status == 0  # fmt: skip
    return topic


@pytest.fixture(scope="module")
def scene(broker, tuned_topic, tmp_path_factory):
    """{T}: a topic of 3 partitions with 5, 3 and 2 records; {G}: a group that committed 4 and 3 of
    them and left; the files of FILES in a directory of their own."""
    topic = fresh("parity-data")
    created = pykbroker_run(
        "topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic, "--partitions", "3"
    )
    assert created.status == 0, created.err
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for partition, count in {0: 5, 1: 3, 2: 2}.items():
        for index in range(count):
            producer.produce(topic, key=f"k{index}", value=f"v{index}", partition=partition, headers=[("h", b"1")])
    assert producer.flush(30) == 0
    group = fresh("parity-group")
    committer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
    committer.commit(offsets=[TopicPartition(topic, 0, 4), TopicPartition(topic, 1, 3)], asynchronous=False)
    committer.close()
    files = tmp_path_factory.mktemp("parity-files")
    for name, content in FILES.items():
        document = content(topic)
        (files / name).write_text(document if isinstance(document, str) else json.dumps(document))
    return {"B": broker.bootstrap, "T": topic, "G": group, "files": files}


def filled(args: tuple[str, ...], scene: dict, new: str) -> list[str]:
    def one(arg: str) -> str:
        arg = re.sub(r"\{F:([^}]+)\}", lambda match: str(scene["files"] / match.group(1)), arg)
        return arg.replace("{B}", scene["B"]).replace("{T}", scene["T"]).replace("{G}", scene["G"])

    return [one(arg).replace("{new}", new) for arg in args]


def run_both(case: Case, scene: dict, kafka_run) -> tuple[Run, Run]:
    """The case through Kafka's tool, then pykbroker's, each with a {new} topic of its own; outputs
    with that name written back as {new}."""
    runs = []
    for side in ("kafka", "pykbroker"):
        new = fresh(f"parity-new-{side}")
        if case.create_new:
            assert pykbroker_run("topics", "--bootstrap-server", scene["B"], "--create", "--topic", new).status == 0
        args = filled(case.args, scene, new)
        if side == "kafka":
            done = kafka_run(KAFKA_TOOLS[case.tool], *args, stdin=case.stdin, cwd=scene["files"])
        else:
            done = pykbroker_run(case.tool, *args, stdin=case.stdin, cwd=scene["files"])
        runs.append(Run(done.status, done.out.replace(new, "{new}"), done.err.replace(new, "{new}")))
    return runs[0], runs[1]


BLOCK_START = re.compile(r"^(?:\t?Topic: (\S+)\t|Dynamic configs for topic (\S+) are:)")


def topic_blocks(out: str) -> dict[str, str]:
    """The lines of each topic's block (a describe's topic line and the lines after it), by topic."""
    blocks: dict[str, str] = {}
    topic = ""
    for line in out.splitlines(keepends=True):
        start = BLOCK_START.match(line)
        if start:
            topic = start.group(1) or start.group(2)
        blocks[topic] = blocks.get(topic, "") + line
    return blocks


def same_rows_in_kafkas_buckets(ours: str, theirs: str) -> bool:
    """The same blocks; in the same order but for topics that share a bucket of the final HashMap."""
    from pykbroker.common.java_order import string_hash

    our_blocks, their_blocks = topic_blocks(ours), topic_blocks(theirs)
    if our_blocks != their_blocks:
        return False
    capacity = 1
    while capacity < len(our_blocks) or len(our_blocks) > capacity * 3 // 4:
        capacity *= 2

    def bucket(topic: str) -> int:
        code = string_hash(topic)
        return (code ^ (code >> 16)) & (capacity - 1)

    return [bucket(topic) for topic in our_blocks] == [bucket(topic) for topic in their_blocks]


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("Error")]


def data_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.startswith("Error")]


def first_error_line(err: str) -> str:
    """The line a Java tool's failure starts with (its log lines and stack trace left out)."""
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("ERROR ", "\tat ", "WARN "))]
    return lines[0] if lines else ""


def without_exception_class(line: str) -> str:
    """'org.apache.kafka.common.KafkaException: message' -> 'message'."""
    return re.sub(r"^(?:[a-z]+\.)+[A-Za-z]*(?:Exception|Error): ", "", line)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_each_tool_prints_what_kafkas_tool_prints(case, scene, kafka_run):
    theirs, ours = run_both(case, scene, kafka_run)
    accepted = set(case.accepted)
    assert accepted <= set(ACCEPTED_DIFFERENCES), accepted - set(ACCEPTED_DIFFERENCES)
    context = f"Kafka: {theirs}\npykbroker: {ours}"
    if "exit-status-on-failure" in accepted:
        assert (theirs.status, ours.status) == (0, 1), context
    elif "usage-exit-2" in accepted:
        assert (theirs.status, ours.status) == (1, 2), context
        return
    elif accepted & {"unknown-topic-id", "broker-loggers", "quotas", "earliest-local-and-latest-tiered"}:
        assert theirs.status != ours.status or theirs.out != ours.out, context
        return
    else:
        assert ours.status == theirs.status, context
    if "optional-in-message" in accepted:
        theirs.out = re.sub(r"'Optional\[(.*?)\]'", r"'\1'", theirs.out)
    if "errors-on-stderr" in accepted:
        assert data_lines(ours.out) == data_lines(theirs.out), context
        assert error_lines(ours.err) == error_lines(theirs.out), context
        return
    if "hash-bucket-order" in accepted:
        assert same_rows_in_kafkas_buckets(ours.out, theirs.out), context
    elif "glued-rows" in accepted:
        assert ours.out.replace("\n", "") == theirs.out.replace("\n", ""), context
    else:
        assert ours.out == theirs.out, context
    if case.compare_err:
        assert ours.err == theirs.err, context
    elif theirs.status != 0 and "no-stack-traces" in accepted:
        # one line: Kafka's first line of the failure, without the exception's class (and what
        # Kafka prints on the next lines, here after a colon)
        assert ours.err.splitlines()[0].startswith(without_exception_class(first_error_line(theirs.err))), context


def test_every_accepted_difference_is_explained_by_a_case_or_a_feature_not_served():
    used = {key for case in CASES for key in case.accepted}
    not_run = {
        "delete-records-unknown-topic",
        "tools-not-shipped",
        "lenient-formatter-name",
        "broker-default-alter",
        "one-synonym-per-name",
    }
    assert set(ACCEPTED_DIFFERENCES) == used | not_run


def test_every_tool_pykbroker_ships_from_kafka_is_compared():
    from pykbroker import cli

    kafka_tools = set(cli.TOOLS) - {"faults", "cluster"}  # pykbroker's own
    # Kafka 4's kafka-groups.sh and kafka-share-groups.sh: Kafka 3.9.0's tools jar has neither
    # (tests/tools/test_groups_tool.py and test_share_groups_tool.py hold them to Kafka 4's output)
    kafka_tools -= {"groups", "share-groups"}
    assert kafka_tools == set(KAFKA_TOOLS) == {case.tool for case in CASES}


@pytest.mark.parametrize("describe_all", [False, True], ids=["dynamic", "all"])
def test_configs_describe_prints_what_kafkas_config_command_prints(
    broker, pykbroker, kafka_tool, tuned_topic, describe_all
):
    args = [
        "--bootstrap-server",
        broker.bootstrap,
        "--describe",
        "--entity-type",
        "topics",
        "--entity-name",
        tuned_topic,
        *(["--all"] if describe_all else []),
    ]
    theirs = kafka_tool(CONFIG_COMMAND, *args)
    ours = pykbroker("configs", *args)
    assert ours.status == 0
    assert ours.out == theirs


def test_topics_describe_prints_what_kafkas_topic_command_prints(broker, pykbroker, kafka_tool, tuned_topic):
    args = ["--bootstrap-server", broker.bootstrap, "--describe", "--topic", tuned_topic]
    theirs = kafka_tool(TOPIC_COMMAND, *args)
    ours = pykbroker("topics", *args)
    assert ours.status == 0
    assert ours.out == theirs
