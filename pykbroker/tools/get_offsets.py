"""`pykbroker get-offsets`: Kafka's kafka-get-offsets.sh (GetOffsetShell) with its flags and output.

    pykbroker get-offsets --bootstrap-server HOST:PORT --topic t [--partitions 0,1] [--time -1|-2|-3|TIMESTAMP]
    pykbroker get-offsets --bootstrap-server HOST:PORT --topic-partitions 't:0-2,u,:3-'

One `topic:partition:offset` line per partition, ordered as Kafka orders them (by the text
"topic-partition"); partitions without an offset for the time asked for are left out.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from .admin_support import (
    add_output_argument,
    admin_client,
    cluster_metadata,
    error_message,
    is_internal,
    print_json,
    topic_filter,
    wait,
)
from .client_config import ToolError, add_common_arguments, run_tool

TOPIC_PARTITION_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
NAMED_TIMES = {"latest": -1, "earliest": -2, "max-timestamp": -3, "earliest-local": -4, "latest-tiered": -5}
# Tiered storage's offsets, which librdkafka's ListOffsets cannot ask for
UNSUPPORTED_TIMES = {-4: "earliest-local", -5: "latest-tiered"}
MALFORMED_TIME = (
    "Malformed time argument {}. Please use -1 or latest / -2 or earliest / -3 or max-timestamp / "
    "-4 or earliest-local / -5 or latest-tiered, or a specified long format timestamp"
)

PartitionFilter = Callable[[str, int], bool]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker get-offsets", description="An interactive shell for getting topic-partition offsets."
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--topic-partitions",
        metavar="topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3",
        help="Comma separated list of topic-partition patterns: an optional topic regex, then ':' and a partition, "
        "a range NUMBER-NUMBER (upper exclusive), NUMBER- or -NUMBER.",
    )
    parser.add_argument("--topic", help="The topic to get the offsets for. It also accepts a regular expression.")
    parser.add_argument("--partitions", help="Comma separated list of partition ids to get the offsets for.")
    parser.add_argument(
        "--time",
        default="latest",
        metavar="<timestamp> / -1 or latest / -2 or earliest / -3 or max-timestamp",
        help="timestamp of the offsets before that.",
    )
    parser.add_argument(
        "--exclude-internal-topics", action="store_true", help="If specified, internal topics are excluded."
    )
    add_output_argument(parser)
    return parser


def parse_time(text: str) -> int:
    if text in NAMED_TIMES:
        return NAMED_TIMES[text]
    try:
        return int(text)
    except ValueError:
        raise ToolError(MALFORMED_TIME.format(text)) from None


def offset_spec(time: int) -> Any:
    from confluent_kafka.admin import OffsetSpec

    if time in UNSUPPORTED_TIMES:
        raise ToolError(f"--time {time} ({UNSUPPORTED_TIMES[time]}) is not supported by the tools' client (librdkafka)")
    if time == -1:
        return OffsetSpec.latest()
    if time == -2:
        return OffsetSpec.earliest()
    if time == -3:
        return OffsetSpec.max_timestamp()
    return OffsetSpec.for_timestamp(time)


def rule_filter(rule: str) -> PartitionFilter:
    """One `TOPIC_REGEX:PARTITIONS` rule of --topic-partitions."""
    match = TOPIC_PARTITION_PATTERN.fullmatch(rule)
    if match is None:
        raise ToolError(f"Invalid rule specification: {rule}")
    topic_part, single, lower, upper = (group or None for group in match.groups())
    topics = topic_filter(topic_part or ".*")
    if single is not None:
        return lambda topic, partition: bool(topics.fullmatch(topic)) and partition == int(single)
    low = int(lower) if lower else 0
    high = int(upper) if upper else 2**31 - 1
    return lambda topic, partition: bool(topics.fullmatch(topic)) and low <= partition < high


def partitions_filter(topic: str | None, partitions: str | None) -> PartitionFilter:
    topics = topic_filter(topic if topic is not None else ".*")
    wanted: set[int] = set()
    if partitions:
        try:
            wanted = {int(partition) for partition in partitions.split(",")}
        except ValueError:
            raise ToolError(
                f"--partitions expects a comma separated list of numeric partition ids, but received: {partitions}"
            ) from None
    return lambda name, partition: bool(topics.fullmatch(name)) and (not wanted or partition in wanted)


def build_filter(args: argparse.Namespace) -> PartitionFilter:
    if args.topic_partitions is not None:
        if args.topic is not None or args.partitions is not None:
            raise ToolError("--topic-partitions cannot be used with --topic or --partitions")
        rules = [rule_filter(rule) for rule in args.topic_partitions.split(",")]
        return lambda topic, partition: any(rule(topic, partition) for rule in rules)
    return partitions_filter(args.topic, args.partitions)


def selected_partitions(admin: Any, selects: PartitionFilter, exclude_internal: bool) -> list[tuple[str, int]]:
    metadata = cluster_metadata(admin)
    return [
        (name, partition)
        for name, topic in metadata.topics.items()
        if not (exclude_internal and is_internal(name))
        for partition in topic.partitions
        if selects(name, partition)
    ]


def fetch_offsets(admin: Any, args: argparse.Namespace) -> list[tuple[str, int, int]]:
    from confluent_kafka import TopicPartition

    time = parse_time(args.time)
    selects = build_filter(args)
    partitions = selected_partitions(admin, selects, args.exclude_internal_topics)
    if not partitions:
        raise ToolError("Could not match any topic-partitions with the specified filters")
    spec = offset_spec(time)
    futures = admin.list_offsets({TopicPartition(topic, partition): spec for topic, partition in partitions})
    found = []
    for key, future in futures.items():
        try:
            offset = wait(future).offset
        except ToolError:
            raise
        except Exception as error:
            print(
                f"Skip getting offsets for topic-partition {key.topic}-{key.partition} due to error: "
                f"{error_message(error)}",
                file=sys.stderr,
            )
            continue
        if offset != -1:
            found.append((key.topic, key.partition, offset))
    return sorted(found, key=lambda entry: f"{entry[0]}-{entry[1]}")


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        offsets = fetch_offsets(admin_client(args), args)
        if args.output == "json":
            print_json({"offsets": [{"topic": t, "partition": p, "offset": o} for t, p, o in offsets]})
        else:
            for topic, partition, offset in offsets:
                print(f"{topic}:{partition}:{offset}")
        return 0

    return run_tool(body, "get-offsets", tool_error_prefix="Error occurred: ")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
