"""`pykbroker console-consumer`: Kafka's `kafka-console-consumer.sh`
(org.apache.kafka.tools.consumer.ConsoleConsumer): records printed to standard output as Kafka's
DefaultMessageFormatter prints them, "Processed a total of N messages" on standard error at the end.

    pykbroker console-consumer --bootstrap-server HOST:PORT --topic t --from-beginning \\
        --property print.key=true --property print.headers=true --max-messages 10

Formatter properties: print.timestamp, print.partition, print.offset, print.headers, print.key,
print.value (each true/false), key.separator, line.separator, headers.separator, null.literal,
key.deserializer / value.deserializer / headers.deserializer (Kafka's String, ByteArray, Integer,
Long, Short, Float, Double and UUID deserializers). Without `--group` the consumer joins a random
group `console-consumer-NNNNN` and commits nothing, as Kafka's tool does; with `--partition` it only
assigns the partition, and a group it may not use is no error (`console_group.py`: when a refused
group is reported, and how an assigned consumer auto-commits).
"""

from __future__ import annotations

import argparse
import random
import re
import signal
import struct
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, KafkaException, TopicPartition

from .client_config import ToolError, read_properties, run_tool, translate_java_properties
from .console_group import ConsoleGroup, Position
from .tool_support import QUIET, add_output_argument, decode_text, parse_key_value_args, print_json, usage_error

DEFAULT_FORMATTER = "org.apache.kafka.tools.consumer.DefaultMessageFormatter"
NO_OP_FORMATTER = "org.apache.kafka.tools.consumer.NoOpMessageFormatter"
# Kafka 3.9's old names of its formatters, still accepted with a warning
DEPRECATED_FORMATTERS = {
    "kafka.tools.DefaultMessageFormatter": DEFAULT_FORMATTER,
    "kafka.tools.NoOpMessageFormatter": NO_OP_FORMATTER,
}
FORMATTERS = (DEFAULT_FORMATTER, NO_OP_FORMATTER, *DEPRECATED_FORMATTERS, "DefaultMessageFormatter")
TIMEOUT_MESSAGE = (
    "ERROR Error processing message, terminating consumer process:  org.apache.kafka.common.errors.TimeoutException"
)
TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}

# Java consumer settings librdkafka reads under the same name
CONSUMER_KEYS = (
    "group.id",
    "group.instance.id",
    "client.id",
    "auto.offset.reset",
    "enable.auto.commit",
    "auto.commit.interval.ms",
    "isolation.level",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "fetch.min.bytes",
    "fetch.max.bytes",
    "fetch.wait.max.ms",
    "max.partition.fetch.bytes",
    "partition.assignment.strategy",
    "check.crcs",
)
RENAMED_KEYS = {"fetch.max.wait.ms": "fetch.wait.max.ms", "receive.buffer.bytes": "socket.receive.buffer.bytes"}
JAVA_ONLY_KEYS = (
    "key.deserializer",
    "value.deserializer",
    "bootstrap.servers",
    "max.poll.records",
    "exclude.internal.topics",
)
ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker console-consumer",
        description="This tool helps to read data from Kafka topics and outputs it to standard output "
        "(Kafka's kafka-console-consumer.sh).",
        allow_abbrev=False,
    )
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: The server(s) to connect to.")
    parser.add_argument("--topic", help="The topic to consume on.")
    parser.add_argument("--include", help="Regular expression of the topics to include for consumption.")
    parser.add_argument("--whitelist", help="DEPRECATED, use --include instead.")
    parser.add_argument("--partition", type=int, help="The partition to consume from (with --topic).")
    parser.add_argument(
        "--offset", help="The offset to start from: a non-negative number, earliest or latest (default)."
    )
    parser.add_argument(
        "--from-beginning", action="store_true", help="Start with the earliest message (no committed offset)."
    )
    parser.add_argument("--group", help="The consumer group id of the consumer.")
    parser.add_argument("--max-messages", type=int, help="The number of messages to consume before exiting.")
    parser.add_argument("--timeout-ms", type=int, help="Exit if no message is available for this long.")
    parser.add_argument(
        "--consumer.config", dest="consumer_config", metavar="FILE", help="Consumer config properties file."
    )
    parser.add_argument(
        "--consumer-property", action="append", metavar="KEY=VALUE", help="A consumer property (repeatable)."
    )
    parser.add_argument(
        "--isolation-level",
        choices=["read_committed", "read_uncommitted"],
        help="read_uncommitted (default) or read_committed.",
    )
    parser.add_argument("--property", action="append", metavar="KEY=VALUE", help="A formatter property (repeatable).")
    parser.add_argument(
        "--formatter", default=DEFAULT_FORMATTER, help="The formatter (only Kafka's DefaultMessageFormatter)."
    )
    parser.add_argument("--formatter-config", metavar="FILE", help="Config properties file for the formatter.")
    parser.add_argument("--key-deserializer", help="The key's deserializer class (for printing).")
    parser.add_argument("--value-deserializer", help="The value's deserializer class (for printing).")
    parser.add_argument("--skip-message-on-error", action="store_true", help="Accepted for compatibility.")
    parser.add_argument("--enable-systest-events", action="store_true", help="Accepted for compatibility.")
    add_output_argument(parser)
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Kafka's ConsoleConsumerOptions checks, with its messages (usage errors, status 2)."""
    args.include = args.include or args.whitelist
    if [args.topic, args.include].count(None) != 1:
        usage_error(parser, "Exactly one of --include/--topic is required. ")
    if args.partition is not None:
        if args.topic is None:
            usage_error(parser, "The topic is required when partition is specified.")
        if args.from_beginning and args.offset is not None:
            usage_error(parser, "Options from-beginning and offset cannot be specified together.")
    elif args.offset is not None:
        usage_error(parser, "The partition is required when offset is specified.")
    if not args.bootstrap_server:
        usage_error(parser, 'Missing required argument "[bootstrap-server]"')
    if args.offset is not None and parse_offset(args.offset) is None:
        usage_error(
            parser,
            f"The provided offset value '{args.offset}' is incorrect. "
            "Valid values are 'earliest', 'latest', or a non-negative long.",
        )
    if args.formatter not in FORMATTERS:
        usage_error(
            parser, f"--formatter {args.formatter}: only Kafka's DefaultMessageFormatter and NoOpMessageFormatter"
        )


def parse_offset(text: str) -> int | None:
    lowered = text.lower()
    if lowered == "earliest":
        return OFFSET_BEGINNING
    if lowered == "latest":
        return OFFSET_END
    return int(text) if text.isdigit() else None


def java_consumer_properties(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """Kafka's ConsoleConsumerOptions: the file, then --consumer-property; one group id wherever it
    is given; auto.offset.reset from --from-beginning; a random group that commits nothing."""
    from_file = read_properties(args.consumer_config) if args.consumer_config else {}
    extra = parse_key_value_args(args.consumer_property)
    groups = list(
        dict.fromkeys(g for g in (args.group, from_file.get("group.id"), extra.get("group.id")) if g is not None)
    )
    if len(groups) > 1:
        detected = ", ".join(f"'{group}'" for group in groups)
        usage_error(
            parser,
            "The group ids provided in different places (directly using '--group', via '--consumer-property', "
            f"or via '--consumer.config') do not match. Detected group ids: {detected}",
        )
    if groups and args.partition is not None:
        usage_error(parser, "Options group and partition cannot be specified together.")
    properties = {**from_file, **extra}
    reset = properties.get("auto.offset.reset")
    if reset is not None and args.from_beginning and reset != "earliest":
        raise ToolError(
            f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={reset}', please remove one option"
        )
    properties.setdefault("auto.offset.reset", "earliest" if args.from_beginning else "latest")
    properties.setdefault("client.id", "console-consumer")
    if args.isolation_level is not None:
        properties["isolation.level"] = args.isolation_level
    if groups:
        properties["group.id"] = groups[0]
    else:
        properties["group.id"] = f"console-consumer-{random.randrange(100000)}"
        properties.setdefault("enable.auto.commit", "false")
    return properties


def librdkafka_config(bootstrap_server: str, properties: dict[str, str]) -> dict:
    config: dict = {"bootstrap.servers": bootstrap_server, "enable.partition.eof": False, **QUIET}
    security = {}
    for key, value in properties.items():
        if key == "partition.assignment.strategy":
            config[key] = ",".join(ASSIGNORS.get(name.strip(), name.strip()) for name in value.split(","))
        elif key in CONSUMER_KEYS:
            config[key] = value
        elif key in RENAMED_KEYS:
            config[RENAMED_KEYS[key]] = value
        elif key not in JAVA_ONLY_KEYS:
            security[key] = value
    config.update(translate_java_properties(security))
    return config


def _java_deserializer(name: str) -> Callable[[bytes], str] | None:
    """Kafka's deserializers the formatter can apply before printing (toString of the result)."""
    simple = name.rsplit(".", 1)[-1]

    def number(fmt: str, size: int) -> Callable[[bytes], str]:
        def convert(data: bytes) -> str:
            if len(data) != size:
                raise ToolError(f"Size of data received by {simple} is not {size}")
            value = struct.unpack(fmt, data)[0]
            return repr(value) if isinstance(value, float) else str(value)

        return convert

    table: dict[str, Callable[[bytes], str]] = {
        "StringDeserializer": lambda data: data.decode("utf-8", errors="replace"),
        "ByteArrayDeserializer": lambda data: data.decode("utf-8", errors="replace"),
        "IntegerDeserializer": number(">i", 4),
        "LongDeserializer": number(">q", 8),
        "ShortDeserializer": number(">h", 2),
        "FloatDeserializer": number(">f", 4),
        "DoubleDeserializer": number(">d", 8),
        "UUIDDeserializer": lambda data: str(uuid.UUID(data.decode("utf-8"))),
    }
    return table.get(simple)


@dataclass
class MessageFormatter:
    """Kafka's DefaultMessageFormatter."""

    print_timestamp: bool = False
    print_key: bool = False
    print_value: bool = True
    print_partition: bool = False
    print_offset: bool = False
    print_headers: bool = False
    key_separator: bytes = b"\t"
    line_separator: bytes = b"\n"
    headers_separator: bytes = b","
    null_literal: bytes = b"null"
    deserializers: dict[str, Callable[[bytes], str]] = field(default_factory=dict)

    @classmethod
    def configure(cls, properties: dict[str, str]) -> MessageFormatter:
        formatter = cls()
        for name in ("timestamp", "key", "value", "partition", "offset", "headers"):
            if f"print.{name}" in properties:
                setattr(formatter, f"print_{name}", properties[f"print.{name}"].strip().lower() == "true")
        for name in ("key", "line", "headers"):
            if f"{name}.separator" in properties:
                setattr(formatter, f"{name}_separator", properties[f"{name}.separator"].encode("utf-8"))
        if "null.literal" in properties:
            formatter.null_literal = properties["null.literal"].encode("utf-8")
        for role in ("key", "value", "headers"):
            class_name = properties.get(f"{role}.deserializer")
            if class_name:
                deserializer = _java_deserializer(class_name)
                if deserializer is None:
                    raise ToolError(f"Unable to instantiate a deserializer from {class_name}")
                formatter.deserializers[role] = deserializer
        return formatter

    def _bytes(self, role: str, data: bytes | None) -> bytes:
        data = self.null_literal if data is None else data
        deserializer = self.deserializers.get(role)
        return deserializer(data).encode("utf-8") if deserializer else data

    def format(self, message: Any) -> bytes:
        fields: list[bytes] = []
        if self.print_timestamp:
            kind, stamp = message.timestamp()
            fields.append(f"{TIMESTAMP_TYPES[kind]}:{stamp}".encode() if kind in TIMESTAMP_TYPES else b"NO_TIMESTAMP")
        if self.print_partition:
            fields.append(f"Partition:{message.partition()}".encode())
        if self.print_offset:
            fields.append(f"Offset:{message.offset()}".encode())
        if self.print_headers:
            headers = message.headers() or []
            parts = [key.encode("utf-8") + b":" + self._bytes("headers", value) for key, value in headers]
            fields.append(self.headers_separator.join(parts) if parts else b"NO_HEADERS")
        if self.print_key:
            fields.append(self._bytes("key", message.key()))
        if self.print_value:
            fields.append(self._bytes("value", message.value()))
        if not fields:
            return b""
        return self.key_separator.join(fields) + self.line_separator


def record_document(message: Any) -> dict:
    kind, stamp = message.timestamp()
    return {
        "topic": message.topic(),
        "partition": message.partition(),
        "offset": message.offset(),
        "timestamp_type": TIMESTAMP_TYPES.get(kind, "NO_TIMESTAMP"),
        "timestamp": stamp if kind in TIMESTAMP_TYPES else None,
        "headers": [{"key": key, "value": decode_text(value)} for key, value in message.headers() or []],
        "key": decode_text(message.key()),
        "value": decode_text(message.value()),
    }


@dataclass
class Tally:
    """What was consumed so far (kept when a signal ends the loop)."""

    count: int = 0
    records: list[dict] = field(default_factory=list)
    positions: dict[tuple[str, int], Position] = field(default_factory=dict)

    def add(self, message: Any) -> None:
        """One more record consumed: the count, and the consumer's position after it."""
        self.count += 1
        topic, partition = message.topic(), message.partition()
        self.positions[(topic, partition)] = Position(topic, partition, message.offset() + 1, message.leader_epoch())


class NoOpMessageFormatter(MessageFormatter):
    """Kafka's NoOpMessageFormatter: records are consumed (and counted), nothing is printed."""

    def format(self, message: Any) -> bytes:
        return b""


class Stop(Exception):
    """SIGTERM: stop consuming as Ctrl-C does (Kafka's shutdown hook: the count is still printed)."""


def consume(
    args: argparse.Namespace, consumer: Consumer, formatter: MessageFormatter, tally: Tally, group: ConsoleGroup
) -> None:
    """Poll and print until --max-messages, --timeout-ms, a refused group (when Kafka's tool would
    have asked for it) or a signal."""
    deadline = None if args.timeout_ms is None or args.timeout_ms < 0 else time.monotonic() + args.timeout_ms / 1000
    out = sys.stdout.buffer
    while args.max_messages is None or args.max_messages < 0 or tally.count < args.max_messages:
        wait = 0.2 if deadline is None else max(0.0, min(0.2, deadline - time.monotonic()))
        message = consumer.poll(wait)
        if group.ends_consuming(consumer):
            break
        if message is None:
            if deadline is not None and time.monotonic() >= deadline:
                print(TIMEOUT_MESSAGE, file=sys.stderr)
                break
            continue
        error = message.error()
        if error is not None:
            if not group.note(error):
                report_consumer_error(error)
            continue
        tally.add(message)
        if args.output == "json":
            tally.records.append(record_document(message))
        else:
            out.write(formatter.format(message))
            out.flush()
        if deadline is not None:
            deadline = time.monotonic() + args.timeout_ms / 1000


def report_consumer_error(error: KafkaError) -> None:
    if error.fatal():
        raise KafkaException(error)
    if error.code() in (KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError._AUTHENTICATION):
        raise KafkaException(error)
    print(f"WARN {error.str()}", file=sys.stderr)


def start_offset(args: argparse.Namespace) -> int:
    """Where `--partition` starts: `--offset`, else the beginning with --from-beginning, else the end."""
    offset = parse_offset(args.offset) if args.offset is not None else None
    if offset is None:
        offset = OFFSET_BEGINNING if args.from_beginning else OFFSET_END
    return offset


def subscribe(consumer: Consumer, args: argparse.Namespace) -> None:
    if args.partition is not None:
        consumer.assign([TopicPartition(args.topic, args.partition, start_offset(args))])
    elif args.topic is not None:
        consumer.subscribe([args.topic])
    else:
        try:
            re.compile(args.include)
        except re.error as error:
            raise ToolError(f"Invalid --include regular expression: {error}") from None
        consumer.subscribe([f"^({args.include})$"])


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    properties = java_consumer_properties(parser, args)
    return run_tool(lambda: run(args, properties), "console-consumer")


def message_formatter(name: str, properties: dict[str, str]) -> MessageFormatter:
    """The formatter `--formatter` names, with Kafka's warning for a deprecated name."""
    if name in DEPRECATED_FORMATTERS:
        print(
            f"WARNING: {name} is deprecated and will be removed in the next major release. "
            f"Please use {DEPRECATED_FORMATTERS[name]} instead",
            file=sys.stderr,
        )
        name = DEPRECATED_FORMATTERS[name]
    if name == NO_OP_FORMATTER:
        return NoOpMessageFormatter()
    return MessageFormatter.configure(properties)


def run(args: argparse.Namespace, properties: dict[str, str]) -> int:
    formatter_properties = read_properties(args.formatter_config) if args.formatter_config else {}
    for role, class_name in (("key", args.key_deserializer), ("value", args.value_deserializer)):
        if class_name:
            formatter_properties[f"{role}.deserializer"] = class_name
    formatter_properties.update(parse_key_value_args(args.property))
    formatter = message_formatter(args.formatter, formatter_properties)
    group = ConsoleGroup.of(properties, assigned=args.partition is not None)
    config = librdkafka_config(args.bootstrap_server, properties)
    if group.commits_itself():
        config["enable.auto.commit"] = False
    try:
        consumer = Consumer(config)
    except KafkaException as error:
        raise ToolError(f"Invalid consumer configuration: {error}") from None
    tally = Tally()
    status = 0
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        subscribe(consumer, args)
        consume(args, consumer, formatter, tally, group)
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT  # what the JVM exits with after its shutdown hooks
    except Stop:
        status = 128 + signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, previous)
        group.close(consumer, lambda: positions(consumer, tally, start_offset(args)))
        consumer.close()
        if args.output == "json":
            print_json({"records": tally.records, "processed": tally.count})
        print(f"Processed a total of {tally.count} messages", file=sys.stderr)
    return status


def positions(consumer: Consumer, tally: Tally, start: int) -> list[Position]:
    """Where the consumer stands in each assigned partition: after its last record, or where it
    started reading (`start`, no leader epoch known) if none was read; unknown positions left out."""
    found = []
    for partition in consumer.assignment():
        read = tally.positions.get((partition.topic, partition.partition))
        if read is not None:
            found.append(read)
            continue
        offset = start if start >= 0 else watermark(consumer, partition, start)
        if offset is not None:
            found.append(Position(partition.topic, partition.partition, offset))
    return found


def watermark(consumer: Consumer, partition: TopicPartition, start: int) -> int | None:
    """The partition's first offset (OFFSET_BEGINNING) or end offset (OFFSET_END); None if unknown."""
    try:
        low, high = consumer.get_watermark_offsets(partition, timeout=5)
    except KafkaException:
        return None
    return low if start == OFFSET_BEGINNING else high


def _raise_stop(signum: int, frame: object) -> None:
    raise Stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
