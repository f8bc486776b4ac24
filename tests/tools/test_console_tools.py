"""`pykbroker console-producer` and `console-consumer` behave as Kafka's console tools: lines parsed
as LineMessageReader parses them, records printed as DefaultMessageFormatter prints them, keyed
records on the partitions Java's producer picks, "Processed a total of N messages" at the end.

One broker for the module; each test uses its own topics.
"""

from __future__ import annotations

import io
import json
import shutil
import signal
import subprocess
import sys

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat.realkafka import REALKAFKA
from pykbroker.testkit.process import BrokerProcess
from pykbroker.tools import console_consumer, console_producer
from pykbroker.tools.client_config import ToolError


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    """One broker for the module; groups form at once (no initial rebalance delay)."""
    overrides = {"group.initial.rebalance.delay.ms": "0"}
    with BrokerProcess(tmp_path_factory.mktemp("broker"), overrides) as running:
        yield running


def run(tool, capsys, monkeypatch, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    """A tool in-process, with `stdin` as its standard input: (exit status, stdout, stderr)."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8"))))
    try:
        status = tool.main(list(argv))
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def create_topic(broker, topic: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)


def produce(broker, capsys, monkeypatch, topic: str, lines: str, *properties: str) -> None:
    argv = ["--bootstrap-server", broker.bootstrap, "--topic", topic]
    for prop in properties:
        argv += ["--property", prop]
    status, _, err = run(console_producer, capsys, monkeypatch, *argv, stdin=lines)
    assert status == 0, err


def consume(broker, capsys, monkeypatch, topic: str, count: int, *extra: str) -> tuple[str, str]:
    status, out, err = run(
        console_consumer, capsys, monkeypatch, "--bootstrap-server", broker.bootstrap, "--topic", topic,
        "--from-beginning", "--max-messages", str(count), "--timeout-ms", "20000", *extra,
    )  # fmt: skip
    assert status == 0, err
    return out, err


def test_keyed_records_with_headers_round_trip(broker, capsys, monkeypatch):
    create_topic(broker, "roundtrip")
    produce(
        broker, capsys, monkeypatch, "roundtrip",
        "trace:1,tenant:acme|user-1|first\n~|user-2|second\nlang:en|user-3|third, with\ttab\n",
        "parse.key=true", "key.separator=|", "parse.headers=true", "headers.delimiter=|", "null.marker=~",
    )  # fmt: skip

    out, err = consume(
        broker, capsys, monkeypatch, "roundtrip", 3,
        "--property", "print.key=true", "--property", "print.headers=true",
    )  # fmt: skip

    assert out == "trace:1,tenant:acme\tuser-1\tfirst\nNO_HEADERS\tuser-2\tsecond\nlang:en\tuser-3\tthird, with\ttab\n"
    assert err.endswith("Processed a total of 3 messages\n")


def test_the_formatter_prints_timestamp_partition_offset_and_separators(broker, capsys, monkeypatch):
    create_topic(broker, "formatted")
    produce(broker, capsys, monkeypatch, "formatted", "k\tv\nnull\tnothing\n", "parse.key=true", "null.marker=null")

    out, _ = consume(
        broker, capsys, monkeypatch, "formatted", 2,
        "--property", "print.timestamp=true", "--property", "print.partition=true",
        "--property", "print.offset=true", "--property", "print.key=true",
        "--property", "key.separator= | ", "--property", "line.separator=;\n", "--property", "null.literal=<none>",
    )  # fmt: skip

    first, second = out.split(";\n")[:2]
    assert first.startswith("CreateTime:") and first.endswith(" | Partition:0 | Offset:0 | k | v")
    assert second.endswith(" | Partition:0 | Offset:1 | <none> | nothing")


def test_print_value_false_prints_only_the_chosen_fields(broker, capsys, monkeypatch):
    create_topic(broker, "keysonly")
    produce(broker, capsys, monkeypatch, "keysonly", "a:1\nb:2\n", "parse.key=true", "key.separator=:")
    out, _ = consume(
        broker, capsys, monkeypatch, "keysonly", 2, "--property", "print.key=true", "--property", "print.value=false"
    )
    assert out == "a\nb\n"


def test_partition_and_offset_choose_where_to_start(broker, capsys, monkeypatch):
    create_topic(broker, "positioned", partitions=2)
    produce(broker, capsys, monkeypatch, "positioned", "".join(f"v{i}\n" for i in range(5)))
    status, out, err = run(
        console_consumer, capsys, monkeypatch, "--bootstrap-server", broker.bootstrap, "--topic", "positioned",
        "--partition", "0", "--offset", "0", "--timeout-ms", "1500", "--property", "print.offset=true",
    )  # fmt: skip
    assert status == 0
    offsets = [line.split("\t")[0] for line in out.splitlines()]
    assert offsets == [f"Offset:{n}" for n in range(len(offsets))]
    assert "TimeoutException" in err and err.endswith(f"Processed a total of {len(offsets)} messages\n")


def test_a_group_commits_what_it_consumed(broker, capsys, monkeypatch):
    from pykbroker.tools import consumer_groups

    create_topic(broker, "committed")
    produce(broker, capsys, monkeypatch, "committed", "one\ntwo\nthree\n")
    consume(broker, capsys, monkeypatch, "committed", 3, "--group", "console-group")

    status = consumer_groups.main(["--bootstrap-server", broker.bootstrap, "--describe", "--group", "console-group"])
    out = capsys.readouterr().out
    assert status == 0
    assert out.splitlines()[2].split()[:6] == ["console-group", "committed", "0", "3", "3", "0"]


def test_include_subscribes_to_the_topics_a_regular_expression_names(broker, capsys, monkeypatch):
    for topic in ("included-a", "included-b", "excluded-c"):
        create_topic(broker, topic)
        produce(broker, capsys, monkeypatch, topic, f"from {topic}\n")
    status, out, err = run(
        console_consumer, capsys, monkeypatch, "--bootstrap-server", broker.bootstrap, "--include", "included-.*",
        "--from-beginning", "--max-messages", "2", "--timeout-ms", "20000",
    )  # fmt: skip
    assert status == 0, err
    assert sorted(out.splitlines()) == ["from included-a", "from included-b"]


def test_ctrl_c_ends_the_consumer_with_its_count(broker, capsys, monkeypatch):
    create_topic(broker, "interrupted")
    produce(broker, capsys, monkeypatch, "interrupted", "only\n")
    consumer = subprocess.Popen(
        [sys.executable, "-m", "pykbroker", "console-consumer", "--bootstrap-server", broker.bootstrap,
         "--topic", "interrupted", "--from-beginning"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert consumer.stdout is not None and consumer.stdout.readline() == "only\n"  # consuming now
        consumer.send_signal(signal.SIGINT)
        _, err = consumer.communicate(timeout=30)
    finally:
        consumer.kill()
    assert consumer.returncode == 130
    assert err.endswith("Processed a total of 1 messages\n")


def test_null_marker_and_ignore_error(broker, capsys, monkeypatch):
    create_topic(broker, "lenient")
    produce(
        broker, capsys, monkeypatch, "lenient", "no separator here\nk\t~\n",
        "parse.key=true", "ignore.error=true", "null.marker=~",
    )  # fmt: skip
    out, _ = consume(broker, capsys, monkeypatch, "lenient", 2, "--property", "print.key=true")
    assert out == "null\tno separator here\nk\tnull\n"


@pytest.mark.parametrize(
    "lines, properties, message",
    [
        ("abc\n", ["parse.key=true"], "No key separator found on line number 1: 'abc'"),
        (
            "\tk\tv\n",
            ["parse.key=true", "parse.headers=true"],
            "No header key separator found in pair '' on line number 1",
        ),
        ("x\n", ["headers.delimiter=,"], "headers.delimiter and headers.separator may not be equal"),
    ],
)
def test_lines_the_reader_cannot_parse_end_the_tool_with_status_1(
    broker, capsys, monkeypatch, lines, properties, message
):
    argv = ["--bootstrap-server", broker.bootstrap, "--topic", "unparsed"]
    for prop in properties:
        argv += ["--property", prop]
    status, _, err = run(console_producer, capsys, monkeypatch, *argv, stdin=lines)
    assert (status, err) == (1, message + "\n")


def test_json_output_of_both_tools(broker, capsys, monkeypatch):
    create_topic(broker, "documented")
    status, out, _ = run(
        console_producer, capsys, monkeypatch, "--bootstrap-server", broker.bootstrap, "--topic", "documented",
        "--property", "parse.key=true", "--property", "parse.headers=true", "--output", "json",
        "--sync", "--compression-codec", "--request-required-acks", "1",
        stdin="h:1\tk\tv\n",
    )  # fmt: skip
    assert status == 0 and json.loads(out) == {"topic": "documented", "records": 1, "errors": []}

    out, _ = consume(broker, capsys, monkeypatch, "documented", 1, "--output", "json")
    document = json.loads(out)
    assert document["processed"] == 1
    record = document["records"][0]
    assert (record["key"], record["value"], record["headers"]) == ("k", "v", [{"key": "h", "value": "1"}])
    assert (record["partition"], record["offset"], record["timestamp_type"]) == (0, 0, "CreateTime")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--bootstrap-server", "127.0.0.1:1"], "Exactly one of --include/--topic is required."),
        (
            ["--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--offset", "3"],
            "The partition is required when offset is specified.",
        ),
        (
            ["--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--partition", "0", "--group", "g"],
            "Options group and partition cannot be specified together.",
        ),
        (
            ["--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--partition", "0", "--offset", "x"],
            "The provided offset value 'x' is incorrect.",
        ),
        (["--topic", "t"], 'Missing required argument "[bootstrap-server]"'),
    ],
)
def test_consumer_command_lines_kafka_refuses_are_usage_errors(capsys, monkeypatch, argv, message):
    status, _, err = run(console_consumer, capsys, monkeypatch, *argv)
    assert status == 2 and message in err


def java_console_producer(broker, topic: str, lines: str, *properties: str) -> None:
    command = [
        "java",
        "-cp",
        str(REALKAFKA / "libs" / "*"),
        f"-Dlog4j.configuration=file:{REALKAFKA / 'log4j.properties'}",
    ]
    command += ["kafka.tools.ConsoleProducer", "--bootstrap-server", broker.bootstrap, "--topic", topic]
    for prop in properties:
        command += ["--property", prop]
    result = subprocess.run(command, input=lines, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@pytest.mark.skipif(
    shutil.which("java") is None or not (REALKAFKA / "libs").is_dir(), reason="needs Java and Kafka 3.9.0"
)
def test_records_land_as_kafkas_console_producer_writes_them(broker, capsys, monkeypatch):
    """The same lines through Kafka's ConsoleProducer and through this one: the same partitions
    (Java's murmur2 partitioner), headers, keys and values."""
    lines = "".join(f"trace:{n},empty:\tkey-{n}\tvalue {n}\n" for n in range(12))
    properties = ("parse.key=true", "parse.headers=true")
    for topic in ("by-java", "by-pykbroker"):
        create_topic(broker, topic, partitions=4)
    java_console_producer(broker, "by-java", lines, *properties)
    produce(broker, capsys, monkeypatch, "by-pykbroker", lines, *properties)

    printed = {}
    for topic in ("by-java", "by-pykbroker"):
        out, _ = consume(
            broker, capsys, monkeypatch, topic, 12,
            "--property", "print.partition=true", "--property", "print.key=true", "--property", "print.headers=true",
        )  # fmt: skip
        printed[topic] = sorted(out.splitlines())
    assert printed["by-java"] == printed["by-pykbroker"]
    assert len({line.split("\t")[0] for line in printed["by-java"]}) > 1  # the keys spread over partitions
    assert all(line.split("\t")[1].startswith("trace:") and ",empty:" in line for line in printed["by-java"])


def test_the_line_reader_splits_as_kafkas_line_message_reader():
    reader = console_producer.LineReader.configure(
        {"parse.key": "true", "parse.headers": "true", "headers.separator": "[;,]", "null.marker": "NULL"}
    )
    assert reader.parse("a:1;b:2,c:NULL\tk\tv\twith tab") == (
        [("a", b"1"), ("b", b"2"), ("c", None)],
        b"k",
        b"v\twith tab",
    )
    assert reader.parse("NULL\tNULL\tNULL") == ([], None, None)
    with pytest.raises(ToolError, match="Header keys should not be equal to the null marker 'NULL'"):
        reader.parse("NULL:x\tk\tv")


class FakeMessage:
    def __init__(self, key, value, headers, timestamp=(0, -1)):
        self._key, self._value, self._headers, self._timestamp = key, value, headers, timestamp

    def key(self):
        return self._key

    def value(self):
        return self._value

    def headers(self):
        return self._headers

    def timestamp(self):
        return self._timestamp

    def partition(self):
        return 2

    def offset(self):
        return 7


def test_the_formatter_prints_as_kafkas_default_message_formatter():
    formatter = console_consumer.MessageFormatter.configure(
        {"print.timestamp": "true", "print.headers": "true", "print.key": "true", "headers.separator": "|"}
    )
    message = FakeMessage(None, b"v", [("h", b"1"), ("n", None)])
    assert formatter.format(message) == b"NO_TIMESTAMP\th:1|n:null\tnull\tv\n"

    longs = console_consumer.MessageFormatter.configure(
        {"print.key": "true", "key.deserializer": "org.apache.kafka.common.serialization.LongDeserializer"}
    )
    assert longs.format(FakeMessage((42).to_bytes(8, "big"), b"v", None, (2, 5))) == b"42\tv\n"


def test_producer_settings_follow_kafkas_precedence(tmp_path):
    """The file, then --producer-property, then the flags given; a flag's default only fills gaps."""
    settings = tmp_path / "producer.properties"
    settings.write_text("acks=1\nlinger.ms=5\ncompression.type=lz4\nmax.block.ms=1000\n")
    parser = console_producer.build_parser()
    args = parser.parse_args(
        ["--bootstrap-server", "h:1", "--topic", "t", "--producer.config", str(settings),
         "--producer-property", "linger.ms=7", "--request-required-acks", "all"]
    )  # fmt: skip
    properties = console_producer.java_producer_properties(args)
    assert (properties["acks"], properties["linger.ms"], properties["compression.type"]) == ("all", "7", "lz4")
    assert (properties["request.timeout.ms"], properties["client.id"]) == ("1500", "console-producer")

    config = console_producer.librdkafka_config("h:1", properties)
    assert config["partitioner"] == "murmur2_random"  # Java's default partitioner for keyed records
    assert config["queue.buffering.max.kbytes"] == 32768
    assert "max.block.ms" not in config
