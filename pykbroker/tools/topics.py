"""`pykbroker topics`: Kafka's kafka-topics.sh (TopicCommand) with its flags and output.

    pykbroker topics --bootstrap-server HOST:PORT --create --topic t --partitions 3 --config retention.ms=60000
    pykbroker topics --bootstrap-server HOST:PORT --describe [--topic REGEX] [--under-replicated-partitions]
    pykbroker topics --bootstrap-server HOST:PORT --list | --alter --partitions N | --delete

`--topic` is a regular expression for --list, --describe, --alter and --delete, as in Kafka. The
describe text is Kafka 3.9's: a line per topic (TopicId, PartitionCount, ReplicationFactor, the
configs that are not defaults) and a tab-indented line per partition (Leader, Replicas, Isr, Elr,
LastKnownElr; ELR is "N/A" when the cluster does not report it, as over the Metadata API).
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from typing import Any

from ..common.java_order import hash_map_order, string_hash
from .admin_support import (
    add_output_argument,
    admin_client,
    cluster_metadata,
    error_message,
    error_name,
    list_topic_names,
    matching_topics,
    print_json,
    wait,
)
from .client_config import ToolError, add_common_arguments, run_tool

ACTIONS = ("create", "list", "describe", "alter", "delete")
REPORT_FLAGS = (
    "under_replicated_partitions",
    "under_min_isr_partitions",
    "at_min_isr_partitions",
    "unavailable_partitions",
)
COLLISION_WARNING = (
    "WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') could collide. "
    "To avoid issues it is best to use either, but not both."
)
MAX_REPLICATION_FACTOR = 32767
TOPIC_ERROR_PREFIX = "Error while executing topic command : "


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker topics", description="This tool helps to create, delete, describe, or change a topic."
    )
    add_common_arguments(parser)
    for action, text in (
        ("create", "Create a new topic."),
        ("list", "List all available topics."),
        ("describe", "List details for the given topics."),
        ("alter", "Alter the number of partitions and replica assignment."),
        ("delete", "Delete a topic."),
    ):
        parser.add_argument(f"--{action}", action="store_true", help=text)
    parser.add_argument(
        "--topic",
        help="The topic to create, alter, describe or delete. It also accepts a regular expression, "
        "except for --create option.",
    )
    parser.add_argument("--topic-id", help="The topic-id to describe.")
    parser.add_argument(
        "--partitions", type=int, help="The number of partitions for the topic being created or altered."
    )
    parser.add_argument("--replication-factor", type=int, help="The replication factor for each partition.")
    parser.add_argument(
        "--replica-assignment",
        metavar="BROKER:BROKER,BROKER:BROKER,...",
        help="A list of manual partition-to-broker assignments for the topic being created or altered.",
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="A topic configuration override (repeatable).",
    )
    parser.add_argument(
        "--under-replicated-partitions", action="store_true", help="Only show under-replicated partitions."
    )
    parser.add_argument(
        "--under-min-isr-partitions",
        action="store_true",
        help="Only show partitions whose ISR is below min.insync.replicas.",
    )
    parser.add_argument(
        "--at-min-isr-partitions",
        action="store_true",
        help="Only show partitions whose ISR equals min.insync.replicas.",
    )
    parser.add_argument(
        "--unavailable-partitions", action="store_true", help="Only show partitions without a live leader."
    )
    parser.add_argument(
        "--topics-with-overrides", action="store_true", help="Only show topics with overridden configs."
    )
    parser.add_argument("--if-exists", action="store_true", help="Alter, delete or describe only if the topic exists.")
    parser.add_argument("--if-not-exists", action="store_true", help="Create without failing if the topic exists.")
    parser.add_argument(
        "--exclude-internal", action="store_true", help="Exclude internal topics when listing or describing."
    )
    add_output_argument(parser)
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Kafka's argument rules; a violation is a usage error (exit status 2)."""
    if sum(getattr(args, action) for action in ACTIONS) != 1:
        parser.error("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
    if not (args.list or args.describe) and args.topic is None:
        parser.error('Missing required argument "[topic]"')
    if args.alter and args.config:
        parser.error(
            'Option "[alter]" can\'t be used with option "[config]" (To alter topic configurations, '
            "the kafka-configs tool can be used.)"
        )
    if args.alter and args.partitions is None:
        parser.error('Missing required argument "[partitions]"')
    _only_with(parser, args, "config", ("create",))
    _only_with(parser, args, "partitions", ("create", "alter"))
    _only_with(parser, args, "replication_factor", ("create",))
    _only_with(parser, args, "replica_assignment", ("create", "alter"))
    for flag in (*REPORT_FLAGS, "topics_with_overrides"):
        _only_with(parser, args, flag, ("describe",))
    _only_with(parser, args, "if_exists", ("alter", "delete", "describe"))
    _only_with(parser, args, "if_not_exists", ("create",))
    _only_with(parser, args, "exclude_internal", ("list", "describe"))
    if args.create and args.replica_assignment and (args.partitions is not None or args.replication_factor is not None):
        parser.error(
            'Option "[replica-assignment]" can\'t be used with options "[partitions]" or "[replication-factor]"'
        )
    if args.topics_with_overrides and any(getattr(args, flag) for flag in REPORT_FLAGS):
        parser.error('Option "[topics-with-overrides]" can\'t be used with the partition report options')


def _only_with(parser: argparse.ArgumentParser, args: argparse.Namespace, flag: str, actions: tuple[str, ...]) -> None:
    value = getattr(args, flag)
    if value and not any(getattr(args, action) for action in actions):
        used = next(action for action in ACTIONS if getattr(args, action))
        parser.error(f'Option "[{flag.replace("_", "-")}]" can\'t be used with option "[{used}]"')


def parse_replica_assignment(text: str) -> list[list[int]]:
    """`0:1,1:2` -> [[0, 1], [1, 2]]: a replica list per partition, all of one length, no duplicates."""
    assignment: list[list[int]] = []
    for index, partition in enumerate(text.split(",")):
        try:
            replicas = [int(broker.strip()) for broker in partition.split(":")]
        except ValueError:
            raise ToolError(f"Invalid replica assignment: {text}") from None
        duplicates = sorted({broker for broker in replicas if replicas.count(broker) > 1})
        if duplicates:
            raise ToolError(
                "Partition replica lists may not contain duplicate entries: " + ",".join(map(str, duplicates))
            )
        if assignment and len(replicas) != len(assignment[0]):
            raise ToolError(f"Partition {index} has different replication factor: [{', '.join(map(str, replicas))}]")
        assignment.append(replicas)
    return assignment


def parse_topic_configs(pairs: list[str]) -> dict[str, str]:
    configs = {}
    for pair in pairs:
        parts = re.split(r"\s*=\s*", pair)
        if len(parts) != 2:
            raise ToolError(
                'requirement failed: Invalid topic config: all configs to be added must be in the format "key=val".'
            )
        configs[parts[0].strip()] = parts[1].strip()
    return configs


def topic_error(error: BaseException) -> ToolError:
    """A failed request: its message (`run_tool` puts Kafka's "Error while executing topic command : " first)."""
    return ToolError(error_message(error))


def ensure_found(topics: list[str], requested: str | None, if_exists: bool) -> None:
    if requested and not if_exists and not topics:
        raise ToolError(f"Topic '{requested}' does not exist as expected")


# --- create, list, alter, delete -----------------------------------------------------------------


def create_topic(admin: Any, args: argparse.Namespace) -> dict:
    from confluent_kafka.admin import NewTopic

    if args.replication_factor is not None and not 1 <= args.replication_factor <= MAX_REPLICATION_FACTOR:
        raise ToolError(f"The replication factor must be between 1 and {MAX_REPLICATION_FACTOR} inclusive")
    if args.partitions is not None and args.partitions < 1:
        raise ToolError("The partitions must be greater than 0")
    configs = parse_topic_configs(args.config)
    if "." in args.topic or "_" in args.topic:
        _text(args, COLLISION_WARNING)
    if args.replica_assignment:
        assignment = parse_replica_assignment(args.replica_assignment)
        new_topic = NewTopic(args.topic, len(assignment), replica_assignment=assignment, config=configs)
    else:
        partitions = -1 if args.partitions is None else args.partitions
        replication = -1 if args.replication_factor is None else args.replication_factor
        new_topic = NewTopic(args.topic, partitions, replication, config=configs)
    try:
        wait(admin.create_topics([new_topic])[args.topic])
    except Exception as error:
        if error_name(error) == "TOPIC_ALREADY_EXISTS" and args.if_not_exists:
            return {"topic": args.topic, "created": False}
        raise topic_error(error) from None
    _text(args, f"Created topic {args.topic}.")
    return {"topic": args.topic, "created": True}


def list_topics(admin: Any, args: argparse.Namespace) -> dict:
    topics = matching_topics(list_topic_names(admin), args.topic, args.exclude_internal)
    _text(args, "\n".join(topics))
    return {"topics": topics}


def alter_topics(admin: Any, args: argparse.Namespace) -> dict:
    from confluent_kafka.admin import NewPartitions

    topics = matching_topics(list_topic_names(admin), args.topic, args.exclude_internal)
    ensure_found(topics, args.topic, args.if_exists)
    assignment = parse_replica_assignment(args.replica_assignment) if args.replica_assignment else None
    requests = []
    for topic in topics:
        if assignment is None:
            requests.append(NewPartitions(topic, args.partitions))
        else:
            current = len(cluster_metadata(admin, topic).topics[topic].partitions)
            requests.append(NewPartitions(topic, args.partitions, assignment[current:]))
    if requests:
        futures = admin.create_partitions(requests)
        for topic in topics:
            try:
                wait(futures[topic])
            except Exception as error:
                raise topic_error(error) from None
    return {"topics": topics, "partitions": args.partitions}


def delete_topics(admin: Any, args: argparse.Namespace) -> dict:
    topics = matching_topics(list_topic_names(admin), args.topic, args.exclude_internal)
    ensure_found(topics, args.topic, args.if_exists)
    if topics:
        futures = admin.delete_topics(topics)
        for topic in topics:
            try:
                wait(futures[topic])
            except Exception as error:
                raise topic_error(error) from None
    return {"deleted": topics}


# --- describe --------------------------------------------------------------------------------------


@dataclass
class PartitionState:
    topic: str
    partition: int
    leader: int | None
    replicas: list[int]
    isr: list[int]
    min_isr: int

    def under_replicated(self) -> bool:
        return len(self.replicas) > len(self.isr)

    def under_min_isr(self) -> bool:
        return self.leader is None or len(self.isr) < self.min_isr

    def at_min_isr(self) -> bool:
        return len(self.isr) == self.min_isr

    def unavailable(self, live_brokers: set[int]) -> bool:
        return self.leader is None or self.leader not in live_brokers

    def text(self) -> str:
        leader = "none" if self.leader is None else str(self.leader)
        return (
            f"\tTopic: {self.topic}\tPartition: {self.partition}\tLeader: {leader}"
            f"\tReplicas: {_ids(self.replicas)}\tIsr: {_ids(self.isr)}\tElr: N/A\tLastKnownElr: N/A"
        )

    def json(self) -> dict:
        return {
            "partition": self.partition,
            "leader": self.leader,
            "replicas": self.replicas,
            "isr": self.isr,
            "elr": None,
            "lastKnownElr": None,
        }


def _ids(brokers: list[int]) -> str:
    return ",".join(map(str, brokers))


def describe_topics(admin: Any, args: argparse.Namespace) -> dict:
    from confluent_kafka import TopicCollection
    from confluent_kafka.admin import ConfigResource

    topics = _topics_to_describe(admin, args)
    if not topics:
        return {"topics": []}
    description_futures = admin.describe_topics(TopicCollection(topics))
    config_futures = admin.describe_configs([ConfigResource("topic", topic) for topic in topics])
    configs_by_topic = {resource.name: future for resource, future in config_futures.items()}
    live_brokers = {node.id for node in wait(admin.describe_cluster()).nodes}
    described = []
    for topic in topics:
        try:
            description = wait(description_futures[topic])
            configs = wait(configs_by_topic[topic])
        except Exception as error:
            raise topic_error(error) from None
        described.append(_describe_one(args, description, configs, live_brokers))
    return {"topics": [entry for entry in described if entry is not None]}


def _topics_to_describe(admin: Any, args: argparse.Namespace) -> list[str]:
    if args.topic_id:
        from confluent_kafka import TopicCollection

        by_id = {}
        for topic in matching_topics(list_topic_names(admin), None, args.exclude_internal):
            description = wait(admin.describe_topics(TopicCollection([topic]))[topic])
            by_id[str(kafka_uuid(description.topic_id))] = topic
        if args.topic_id not in by_id and not args.if_exists:
            raise ToolError(f"TopicId '{args.topic_id}' does not exist as expected")
        return [by_id[args.topic_id]] if args.topic_id in by_id else []
    all_topics = list_topic_names(admin)
    topics = matching_topics(all_topics, args.topic, args.exclude_internal)
    ensure_found(topics, args.topic, args.if_exists)
    return describe_order(all_topics, topics)


def describe_order(all_topics: list[str], chosen: list[str]) -> list[str]:
    """The order of Kafka 3.9.0's --describe, as measured against it: the chosen topics in the
    buckets of a first hash table of 16 holding every topic name, then as the HashMap of their
    descriptions (`new HashMap<>(n)`) iterates them."""
    wanted = set(chosen)
    listed = [topic for topic in hash_map_order(sorted(all_topics), string_hash, growing=False) if topic in wanted]
    return hash_map_order(listed, string_hash, sized=True)


def _describe_one(args: argparse.Namespace, description: Any, configs: dict, live_brokers: set[int]) -> dict | None:
    # in the order of the HashMap Kafka's client keeps all of a resource's config entries in
    names = [name for name in hash_map_order(sorted(configs), string_hash) if not configs[name].is_default]
    overrides = {name: configs[name].value for name in names}
    min_isr = int(configs["min.insync.replicas"].value) if "min.insync.replicas" in configs else 1
    partitions = [
        PartitionState(
            description.name,
            info.id,
            info.leader.id if info.leader is not None else None,
            [node.id for node in info.replicas],
            [node.id for node in info.isr],
            min_isr,
        )
        for info in sorted(description.partitions, key=lambda info: info.id)
    ]
    report = any(getattr(args, flag) for flag in REPORT_FLAGS)
    if args.topics_with_overrides and not overrides:
        return None
    topic_id = kafka_uuid(description.topic_id)
    replication_factor = len(partitions[0].replicas) if partitions else 0
    if not report:
        _text(args, _topic_line(description.name, topic_id, len(partitions), replication_factor, overrides))
    shown = [] if args.topics_with_overrides else [p for p in partitions if _shown(args, p, report, live_brokers)]
    for partition in shown:
        _text(args, partition.text())
    return {
        "name": description.name,
        "topicId": topic_id,
        "partitionCount": len(partitions),
        "replicationFactor": replication_factor,
        "configs": overrides,
        "partitions": [partition.json() for partition in shown],
    }


def kafka_uuid(uuid: Any) -> str | None:
    """A topic id as Kafka prints it: URL-safe base64 without padding (confluent-kafka uses the standard alphabet)."""
    if uuid is None:
        return None
    return str(uuid).replace("+", "-").replace("/", "_").rstrip("=")


def _topic_line(topic: str, topic_id: str | None, partitions: int, replication: int, overrides: dict) -> str:
    configs = ",".join(f"{name}={'null' if value is None else value}" for name, value in overrides.items())
    topic_id_part = f"\tTopicId: {topic_id}" if topic_id and topic_id != "AAAAAAAAAAAAAAAAAAAAAA" else ""
    return (
        f"Topic: {topic}{topic_id_part}\tPartitionCount: {partitions}"
        f"\tReplicationFactor: {replication}\tConfigs: {configs}"
    )


def _shown(args: argparse.Namespace, partition: PartitionState, report: bool, live_brokers: set[int]) -> bool:
    if not report:
        return True
    return (
        (args.under_replicated_partitions and partition.under_replicated())
        or (args.under_min_isr_partitions and partition.under_min_isr())
        or (args.at_min_isr_partitions and partition.at_min_isr())
        or (args.unavailable_partitions and partition.unavailable(live_brokers))
    )


def _text(args: argparse.Namespace, line: str) -> None:
    if args.output == "text":
        print(line)


COMMANDS = {
    "create": create_topic,
    "list": list_topics,
    "describe": describe_topics,
    "alter": alter_topics,
    "delete": delete_topics,
}


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)

    def body() -> int:
        admin = admin_client(args)
        action = next(action for action in ACTIONS if getattr(args, action))
        document = COMMANDS[action](admin, args)
        if args.output == "json":
            print_json(document)
        return 0

    # every failure is Kafka's one line "Error while executing topic command : <message>"
    return run_tool(body, "topics", error_prefix=TOPIC_ERROR_PREFIX, tool_error_prefix=TOPIC_ERROR_PREFIX)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
