"""`pykbroker leader-election`: Kafka's kafka-leader-election.sh (LeaderElectionCommand).

    pykbroker leader-election --bootstrap-server HOST:PORT --election-type PREFERRED --all-topic-partitions
    pykbroker leader-election --bootstrap-server HOST:PORT --election-type UNCLEAN --topic t --partition 0
    pykbroker leader-election --bootstrap-server HOST:PORT --election-type preferred --path-to-json-file p.json

p.json as Kafka reads it: {"partitions": [{"topic": "foo", "partition": 1}]}. The output is Kafka's:
the partitions elected, those whose valid leader was already elected, and a line per failure (then
exit status 1).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .admin_support import add_output_argument, admin_client, java_style_error, print_json, wait
from .client_config import ToolError, add_common_arguments, run_tool


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker leader-election",
        description="This tool attempts to elect a new leader for a set of topic partitions. The type of elections "
        "supported are preferred replicas and unclean replicas.",
    )
    add_common_arguments(parser)
    parser.add_argument(
        "--election-type",
        required=True,
        type=str.upper,
        choices=["PREFERRED", "UNCLEAN"],
        help="Type of election to attempt: preferred or unclean. REQUIRED.",
    )
    parser.add_argument("--topic", help="Name of topic for which to perform an election.")
    parser.add_argument("--partition", type=int, help="Partition id for which to perform an election (with --topic).")
    parser.add_argument(
        "--all-topic-partitions", action="store_true", help="Perform election on all of the eligible topic partitions."
    )
    parser.add_argument(
        "--path-to-json-file",
        metavar="FILE",
        help='The JSON file with the list of partitions: {"partitions": [{"topic": "foo", "partition": 1}]}',
    )
    add_output_argument(parser)
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    chosen = sum([args.topic is not None, args.all_topic_partitions, args.path_to_json_file is not None])
    if chosen != 1:
        parser.error(
            "One and only one of the following options is required: --topic, --all-topic-partitions, "
            "--path-to-json-file"
        )
    if args.topic is not None and args.partition is None:
        parser.error("Missing required option(s): --partition")
    if args.topic is None and args.partition is not None:
        parser.error("Option --partition is only allowed if --topic is used")


def partitions_from_json(path: str) -> list[tuple[str, int]]:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ToolError(f"cannot read {path}: {error.strerror or error}") from None
    except ValueError:
        raise ToolError("Replica election data is empty") from None
    if not isinstance(document, dict) or "partitions" not in document:
        raise ToolError('Replica election data is missing "partitions" field')
    try:
        partitions = [(str(entry["topic"]), int(entry["partition"])) for entry in document["partitions"]]
    except (KeyError, TypeError, ValueError) as error:
        raise ToolError(f"Invalid partition entry in the replica election data: {error}") from None
    duplicates = sorted({f"{t}-{p}" for t, p in partitions if partitions.count((t, p)) > 1})
    if duplicates:
        raise ToolError(f"Replica election data contains duplicate partitions: [{', '.join(duplicates)}]")
    return partitions


def requested_partitions(args: argparse.Namespace) -> list[tuple[str, int]] | None:
    if args.path_to_json_file is not None:
        return partitions_from_json(args.path_to_json_file)
    if args.topic is not None:
        return [(args.topic, args.partition)]
    return None  # all partitions


def elect(admin: Any, election_type: str, partitions: list[tuple[str, int]] | None) -> dict[str, list]:
    """The partitions elected, those already led by a valid leader, and the failures."""
    from confluent_kafka import ElectionType, TopicPartition

    request = None if partitions is None else [TopicPartition(topic, partition) for topic, partition in partitions]
    results = wait(admin.elect_leaders(ElectionType[election_type], request))
    outcome: dict[str, list] = {"succeeded": [], "noop": [], "failed": []}
    for key, error in sorted(results.items(), key=lambda item: (item[0].topic, item[0].partition)):
        name = f"{key.topic}-{key.partition}"
        if error is None:
            outcome["succeeded"].append(name)
        elif error.name() == "ELECTION_NOT_NEEDED":
            outcome["noop"].append(name)
        else:
            from confluent_kafka import KafkaException

            outcome["failed"].append((name, java_style_error(KafkaException(error))))
    return outcome


def report(election_type: str, outcome: dict[str, list]) -> None:
    if outcome["succeeded"]:
        print(
            f"Successfully completed leader election ({election_type}) for partitions {', '.join(outcome['succeeded'])}"
        )
    if outcome["noop"]:
        print(f"Valid replica already elected for partitions {', '.join(outcome['noop'])}")
    for name, message in outcome["failed"]:
        print(f"Error completing leader election ({election_type}) for partition: {name}: {message}")


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)

    def body() -> int:
        outcome = elect(admin_client(args), args.election_type, requested_partitions(args))
        if args.output == "json":
            print_json(
                {
                    "electionType": args.election_type,
                    "succeeded": outcome["succeeded"],
                    "noop": outcome["noop"],
                    "failed": [{"partition": name, "error": message} for name, message in outcome["failed"]],
                }
            )
        else:
            report(args.election_type, outcome)
        if outcome["failed"]:
            raise ToolError(f"{len(outcome['failed'])} replica(s) could not be elected")
        return 0

    return run_tool(body, "leader-election")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
