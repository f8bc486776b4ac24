"""`pykbroker delete-records`: Kafka's kafka-delete-records.sh (DeleteRecordsCommand).

    pykbroker delete-records --bootstrap-server HOST:PORT --offset-json-file offsets.json

with offsets.json as Kafka reads it:
    {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}
(an offset of -1 deletes up to the high watermark). The output is Kafka's: a line per partition
with its new low watermark or its error. The exit status is 1 when a partition failed (Kafka's tool
exits 0 then: a script could not tell), as for a file that cannot be read or parsed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..common.java_order import hash_map_order, topic_partition_hash
from .admin_support import add_output_argument, admin_client, error_name, java_style_error, print_json, wait
from .client_config import ToolError, add_common_arguments, run_tool


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker delete-records",
        description="This tool helps to delete records of the given partitions down to the specified offset.",
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--offset-json-file",
        required=True,
        metavar="FILE",
        help='REQUIRED: The JSON file with offset per partition: {"partitions": [{"topic": "foo", "partition": 1, '
        '"offset": 1}], "version": 1}',
    )
    add_output_argument(parser)
    return parser


def parse_offsets(text: str) -> list[tuple[str, int, int]]:
    """(topic, partition, offset) per entry of Kafka's offset JSON (version 1)."""
    try:
        document = json.loads(text)
    except ValueError:
        raise ToolError("The input string is not a valid JSON") from None
    if not isinstance(document, dict):
        raise ToolError("The input string is not a valid JSON")
    version = document.get("version", 1)
    if version != 1:
        raise ToolError(f"Not supported version field value {version}")
    if "partitions" not in document:
        raise ToolError("Missing partitions field")
    try:
        entries = [(str(p["topic"]), int(p["partition"]), int(p["offset"])) for p in document["partitions"]]
    except (KeyError, TypeError, ValueError) as error:
        raise ToolError(f"Invalid partition entry in the offset JSON file: {error}") from None
    seen: set[tuple[str, int]] = set()
    duplicates = [f"{t}-{p}" for t, p, _ in entries if (t, p) in seen or seen.add((t, p))]  # type: ignore[func-returns-value]
    if duplicates:
        raise ToolError(f"Offset json file contains duplicate topic partitions: {','.join(duplicates)}")
    return entries


# librdkafka's error for a partition without a leader it knows of; Kafka's client would retry until
# its timeout, then fail with a TimeoutException: the unknown partition is said at once instead
NO_LEADER = "_NOENT"
UNKNOWN_PARTITION = (
    "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition."
)


def delete_records(admin: Any, entries: list[tuple[str, int, int]], text_output: bool) -> list[dict]:
    from confluent_kafka import TopicPartition

    if text_output:
        print("Executing records delete operation")
    futures = admin.delete_records([TopicPartition(topic, partition, offset) for topic, partition, offset in entries])
    if text_output:
        print("Records delete operation completed:")
    results = []
    by_key = {(key.topic, key.partition): future for key, future in futures.items()}
    # in the order of the HashMap of futures Kafka's admin client returns
    for topic, partition in hash_map_order([(t, p) for t, p, _ in entries], topic_partition_hash):
        try:
            low_watermark = wait(by_key[(topic, partition)]).low_watermark
        except ToolError:
            raise
        except Exception as error:
            message = UNKNOWN_PARTITION if error_name(error) == NO_LEADER else java_style_error(error)
            results.append({"topic": topic, "partition": partition, "error": message})
            if text_output:
                print(f"partition: {topic}-{partition}\terror: {message}")
            continue
        results.append({"topic": topic, "partition": partition, "lowWatermark": low_watermark})
        if text_output:
            print(f"partition: {topic}-{partition}\tlow_watermark: {low_watermark}")
    return results


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)

    def body() -> int:
        try:
            text = Path(args.offset_json_file).read_text(encoding="utf-8")
        except OSError:
            raise ToolError(f"Unable to read file {args.offset_json_file}") from None
        results = delete_records(admin_client(args), parse_offsets(text), args.output == "text")
        if args.output == "json":
            print_json({"partitions": results})
        return 1 if any("error" in result for result in results) else 0

    return run_tool(body, "delete-records")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
