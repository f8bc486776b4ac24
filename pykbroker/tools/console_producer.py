"""`pykbroker console-producer`: Kafka's `kafka-console-producer.sh` (kafka.tools.ConsoleProducer):
each line of standard input becomes a record, parsed as Kafka's LineMessageReader parses it.

    pykbroker console-producer --bootstrap-server HOST:PORT --topic t \\
        --property parse.key=true --property key.separator=: \\
        --property parse.headers=true --property headers.delimiter='|'

With `parse.headers` and `parse.key` a line reads `h1:v1,h2:v2<TAB>key<TAB>value` (the
separators are the properties `headers.delimiter`, `headers.separator`, `headers.key.separator`,
`key.separator`); `null.marker` turns a field equal to it into null. The producer's settings follow
Kafka's tool: its flags (`--request-required-acks`, `--compression-codec`, `--timeout` as
linger.ms, ...) win over `--producer-property`, which wins over `--producer.config`; keyed records
go to the partition Java's default partitioner picks (murmur2).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from confluent_kafka import KafkaException, Producer

from .client_config import ToolError, read_properties, run_tool, translate_java_properties
from .tool_support import QUIET, add_output_argument, parse_key_value_args, print_json, usage_error

DEFAULT_READER = "kafka.tools.ConsoleProducer$LineMessageReader"
READERS = (DEFAULT_READER, "org.apache.kafka.tools.LineMessageReader", "LineMessageReader")

# Java producer settings librdkafka reads under the same name
PRODUCER_KEYS = (
    "acks",
    "compression.type",
    "linger.ms",
    "batch.size",
    "retries",
    "retry.backoff.ms",
    "request.timeout.ms",
    "metadata.max.age.ms",
    "enable.idempotence",
    "max.in.flight.requests.per.connection",
    "delivery.timeout.ms",
    "client.id",
)
# Java producer settings with another name (or unit) in librdkafka
RENAMED_KEYS = {"send.buffer.bytes": "socket.send.buffer.bytes", "max.request.size": "message.max.bytes"}
# Java-only settings: nothing for librdkafka to do with them
JAVA_ONLY_KEYS = ("key.serializer", "value.serializer", "max.block.ms", "bootstrap.servers", "partitioner.class")

# (flag's dest, Java producer key, Kafka's default)
FLAG_SETTINGS = (
    ("request_required_acks", "acks", "-1"),
    ("timeout", "linger.ms", "1000"),
    ("request_timeout_ms", "request.timeout.ms", "1500"),
    ("message_send_max_retries", "retries", "3"),
    ("retry_backoff_ms", "retry.backoff.ms", "100"),
    ("socket_buffer_size", "send.buffer.bytes", "102400"),
    ("max_memory_bytes", "buffer.memory", "33554432"),
    ("max_partition_memory_bytes", "batch.size", "16384"),
    ("metadata_expiry_ms", "metadata.max.age.ms", "300000"),
    ("max_block_ms", "max.block.ms", "60000"),
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker console-producer",
        description="This tool helps to read data from standard input and publish it to Kafka "
        "(Kafka's kafka-console-producer.sh).",
        allow_abbrev=False,
    )
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: the server(s) to connect to.")
    parser.add_argument("--broker-list", metavar="HOST:PORT", help="DEPRECATED, use --bootstrap-server instead.")
    parser.add_argument("--topic", required=True, help="REQUIRED: The topic id to produce messages to.")
    parser.add_argument(
        "--producer.config", dest="producer_config", metavar="FILE", help="Producer config properties file."
    )
    parser.add_argument(
        "--producer-property", action="append", metavar="KEY=VALUE", help="A producer property (repeatable)."
    )
    parser.add_argument(
        "--property", action="append", metavar="KEY=VALUE", help="A message reader property (repeatable)."
    )
    parser.add_argument("--reader-config", metavar="FILE", help="Config properties file for the message reader.")
    parser.add_argument(
        "--line-reader", default=DEFAULT_READER, help="The message reader (only Kafka's LineMessageReader)."
    )
    parser.add_argument(
        "--request-required-acks", metavar="ACKS", help="The required acks of the producer requests (default: -1)."
    )
    parser.add_argument(
        "--compression-codec", nargs="?", const="gzip", help="none, gzip, snappy, lz4 or zstd (no value: gzip)."
    )
    parser.add_argument("--sync", action="store_true", help="Send each record synchronously, one at a time.")
    parser.add_argument("--timeout", metavar="MS", help="linger.ms of the producer (default: 1000).")
    parser.add_argument(
        "--batch-size", metavar="BYTES", help="batch.size, unless --max-partition-memory-bytes is given."
    )
    parser.add_argument("--message-send-max-retries", metavar="N", help="retries of the producer (default: 3).")
    parser.add_argument("--retry-backoff-ms", metavar="MS", help="retry.backoff.ms (default: 100).")
    parser.add_argument("--request-timeout-ms", metavar="MS", help="request.timeout.ms (default: 1500).")
    parser.add_argument("--metadata-expiry-ms", metavar="MS", help="metadata.max.age.ms (default: 300000).")
    parser.add_argument("--max-block-ms", metavar="MS", help="Accepted for compatibility (Java-only).")
    parser.add_argument("--max-memory-bytes", metavar="BYTES", help="buffer.memory (default: 33554432).")
    parser.add_argument("--max-partition-memory-bytes", metavar="BYTES", help="batch.size (default: 16384).")
    parser.add_argument("--socket-buffer-size", metavar="BYTES", help="send.buffer.bytes (default: 102400).")
    add_output_argument(parser)
    return parser


def java_producer_properties(args: argparse.Namespace) -> dict[str, str]:
    """Kafka's ConsoleProducer.producerProps: the file, then --producer-property, then each flag
    (a flag given on the command line wins; its default applies only where nothing set the key)."""
    properties = read_properties(args.producer_config) if args.producer_config else {}
    properties.update(parse_key_value_args(args.producer_property))
    if args.max_partition_memory_bytes is None and args.batch_size is not None:
        args.max_partition_memory_bytes = args.batch_size
    for dest, key, default in FLAG_SETTINGS:
        value = getattr(args, dest)
        if value is not None or key not in properties:
            properties[key] = value if value is not None else default
    codec = args.compression_codec
    if codec is not None or "compression.type" not in properties:
        properties["compression.type"] = codec or "none"
    properties.setdefault("client.id", "console-producer")
    return properties


COMPRESSION_TYPES = ("none", "gzip", "snappy", "lz4", "zstd")


def check_compression_type(value: str) -> None:
    """Kafka's ConfigException for a codec its producer does not know (before any connection)."""
    if value.strip().lower() not in COMPRESSION_TYPES:
        raise ToolError(
            f"Invalid value {value} for configuration compression.type: "
            f"String must be one of: {', '.join(COMPRESSION_TYPES)}"
        )


def librdkafka_config(bootstrap_server: str, properties: dict[str, str]) -> dict:
    config: dict = {"bootstrap.servers": bootstrap_server, "partitioner": "murmur2_random", **QUIET}
    security = {}
    for key, value in properties.items():
        if key in PRODUCER_KEYS:
            config[key] = value
        elif key in RENAMED_KEYS:
            config[RENAMED_KEYS[key]] = value
        elif key == "buffer.memory":
            config["queue.buffering.max.kbytes"] = max(1, int(value) // 1024)
        elif key not in JAVA_ONLY_KEYS:
            security[key] = value
    config.update(translate_java_properties(security))
    config.setdefault("delivery.timeout.ms", 120000)  # the Java producer's default
    return config


@dataclass
class LineReader:
    """Kafka's LineMessageReader: a line -> (headers, key, value), with its properties and errors."""

    parse_key: bool = False
    key_separator: str = "\t"
    parse_headers: bool = False
    headers_delimiter: str = "\t"
    headers_separator: str = ","
    headers_key_separator: str = ":"
    ignore_error: bool = False
    null_marker: str | None = None
    line_number: int = 0
    _separator_pattern: re.Pattern = field(default=re.compile(","), repr=False)

    @classmethod
    def configure(cls, properties: dict[str, str]) -> LineReader:
        def flag(name: str) -> bool:
            return properties.get(name, "false").strip().lower() == "true"

        reader = cls(
            parse_key=flag("parse.key"),
            key_separator=properties.get("key.separator", "\t"),
            parse_headers=flag("parse.headers"),
            headers_delimiter=properties.get("headers.delimiter", "\t"),
            headers_separator=properties.get("headers.separator", ","),
            headers_key_separator=properties.get("headers.key.separator", ":"),
            ignore_error=flag("ignore.error"),
            null_marker=properties.get("null.marker"),
        )
        reader.check()
        try:
            reader._separator_pattern = re.compile(reader.headers_separator)
        except re.error as error:
            raise ToolError(f"headers.separator is not a valid regular expression: {error}") from None
        return reader

    def check(self) -> None:
        pairs = (
            ("headers.delimiter", self.headers_delimiter, "headers.separator", self.headers_separator),
            ("headers.delimiter", self.headers_delimiter, "headers.key.separator", self.headers_key_separator),
            ("headers.separator", self.headers_separator, "headers.key.separator", self.headers_key_separator),
            ("null.marker", self.null_marker, "key.separator", self.key_separator),
            ("null.marker", self.null_marker, "headers.separator", self.headers_separator),
            ("null.marker", self.null_marker, "headers.delimiter", self.headers_delimiter),
            ("null.marker", self.null_marker, "headers.key.separator", self.headers_key_separator),
        )
        for first, first_value, second, second_value in pairs:
            if first_value == second_value:
                raise ToolError(f"{first} and {second} may not be equal")

    def _field(self, enabled: bool, line: str, start: int, demarcation: str, name: str) -> str | None:
        if not enabled:
            return None
        index = line.find(demarcation, start)
        if index == -1:
            if self.ignore_error:
                return None
            raise ToolError(f"No {name} found on line number {self.line_number}: '{line}'")
        return line[start:index]

    def _nullable(self, text: str | None) -> bytes | None:
        return None if text is None or text == self.null_marker else text.encode("utf-8")

    def parse(self, line: str) -> tuple[list[tuple[str, bytes | None]], bytes | None, bytes | None]:
        self.line_number += 1
        headers = self._field(self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter")
        header_end = 0 if headers is None else len(headers) + len(self.headers_delimiter)
        key = self._field(self.parse_key, line, header_end, self.key_separator, "key separator")
        key_end = 0 if key is None else len(key) + len(self.key_separator)
        value = line[header_end + key_end :]
        parsed_headers = [] if headers is None or headers == self.null_marker else self._split_headers(headers)
        return parsed_headers, self._nullable(key), self._nullable(value)

    def _split_headers(self, headers: str) -> list[tuple[str, bytes | None]]:
        pairs = java_split(self._separator_pattern, headers)
        result: list[tuple[str, bytes | None]] = []
        for pair in pairs:
            index = pair.find(self.headers_key_separator)
            if index == -1:
                if not self.ignore_error:
                    raise ToolError(f"No header key separator found in pair '{pair}' on line number {self.line_number}")
                result.append((pair, None))
                continue
            key = pair[:index]
            if key == self.null_marker:
                raise ToolError(
                    f"Header keys should not be equal to the null marker '{self.null_marker}' as they can't be null"
                )
            result.append((key, self._nullable(pair[index + len(self.headers_key_separator) :])))
        return result


def java_split(pattern: re.Pattern, text: str) -> list[str]:
    """Java's String.split: the whole text when nothing matches, else without trailing empty strings."""
    if pattern.search(text) is None:
        return [text]
    parts = pattern.split(text)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def input_lines(prompt: bool) -> Iterator[str]:
    """Standard input's lines, decoded as UTF-8, without their line ends (Java's readLine)."""
    stream = sys.stdin.buffer
    while True:
        if prompt:
            sys.stdout.write(">")
            sys.stdout.flush()
        raw = stream.readline()
        if not raw:
            return
        yield raw.decode("utf-8", errors="replace").rstrip("\n").removesuffix("\r")


@dataclass
class DeliveryReport:
    topic: str
    delivered: int = 0
    errors: list[str] = field(default_factory=list)

    def __call__(self, error: object, message: object) -> None:
        if error is None:
            self.delivered += 1
            return
        key, value = message.key(), message.value()  # type: ignore[attr-defined]
        key_text = "null" if key is None else f"{len(key)} bytes"
        value_text = "null" if value is None else f"{len(value)} bytes"
        line = (
            f"ERROR Error when sending message to topic {self.topic} with key: {key_text}, "
            f"value: {value_text} with error: {error.str() if hasattr(error, 'str') else error}"
        )
        print(line, file=sys.stderr)
        self.errors.append(line)


def send(producer: Producer, topic: str, record: tuple, report: DeliveryReport, sync: bool) -> None:
    headers, key, value = record
    while True:
        try:
            producer.produce(topic, value=value, key=key, headers=headers or None, on_delivery=report)
            break
        except BufferError:  # the local queue is full: let deliveries drain it
            producer.poll(0.1)
    if sync:
        producer.flush()
    else:
        producer.poll(0)


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    bootstrap = args.bootstrap_server or args.broker_list
    if not bootstrap:
        usage_error(parser, 'Missing required argument "[bootstrap-server]"')
    if args.line_reader not in READERS:
        usage_error(parser, f"--line-reader {args.line_reader}: only Kafka's LineMessageReader is supported")
    return run_tool(lambda: produce(args, bootstrap), "console-producer")


def produce(args: argparse.Namespace, bootstrap: str) -> int:
    reader_properties = read_properties(args.reader_config) if args.reader_config else {}
    reader_properties.update(parse_key_value_args(args.property))
    reader = LineReader.configure(reader_properties)
    properties = java_producer_properties(args)
    check_compression_type(properties["compression.type"])
    config = librdkafka_config(bootstrap, properties)
    try:
        producer = Producer(config)
    except KafkaException as error:
        raise ToolError(f"Invalid producer configuration: {error}") from None
    report = DeliveryReport(args.topic)
    prompt = sys.stdin.isatty() and sys.stdout.isatty() and args.output == "text"
    try:
        for line in input_lines(prompt):
            send(producer, args.topic, reader.parse(line), report, args.sync)
    finally:
        producer.flush()
    if args.output == "json":
        print_json({"topic": args.topic, "records": report.delivered, "errors": report.errors})
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
