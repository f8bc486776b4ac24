"""The consumer-group tool's view of a cluster, through confluent-kafka's AdminClient: groups with
Kafka's state names, members, committed offsets, log offsets, and the rows of `--describe`.

Group states and types carry the names Kafka's Java classes print ("Stable", "PreparingRebalance",
"Classic"); partitions are `(topic, partition)` tuples.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from confluent_kafka import (
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from ..common.java_order import hash_map_order, partitions_in_java_order, string_hash
from . import offset_delete
from .client_config import ToolError, describe_kafka_exception
from .kafka_errors import kafka_exception_class, kafka_message
from .tool_support import QUIET, Partition

# Kafka 3.9's ConsumerGroupState names, in its order (Unknown left out, as the tool does)
KAFKA_GROUP_STATES = (
    "PreparingRebalance",
    "CompletingRebalance",
    "Stable",
    "Dead",
    "Empty",
    "Assigning",
    "Reconciling",
)
STATE_NAMES = {
    ConsumerGroupState.UNKNOWN: "Unknown",
    ConsumerGroupState.PREPARING_REBALANCING: "PreparingRebalance",
    ConsumerGroupState.COMPLETING_REBALANCING: "CompletingRebalance",
    ConsumerGroupState.STABLE: "Stable",
    ConsumerGroupState.DEAD: "Dead",
    ConsumerGroupState.EMPTY: "Empty",
}
TYPE_NAMES = {
    ConsumerGroupType.UNKNOWN: "Unknown",
    ConsumerGroupType.CONSUMER: "Consumer",
    ConsumerGroupType.CLASSIC: "Classic",
}


@dataclass
class GroupListing:
    group_id: str
    state: str
    type: str


@dataclass
class Node:
    id: int
    host: str
    port: int


@dataclass
class Member:
    consumer_id: str
    group_instance_id: str | None
    host: str
    client_id: str
    assignment: list[Partition] = field(default_factory=list)

    def assignment_text(self) -> str:
        """`--members --verbose`'s ASSIGNMENT column as Kafka 3.9 prints it: each topic's partitions
        in parentheses, without the topic's name (`(0,1), (2)`), sorted as text; `-` for none."""
        if not self.assignment:
            return "-"
        by_topic: dict[str, list[str]] = {}
        for topic, partition in self.assignment:
            by_topic.setdefault(topic, []).append(str(partition))
        return ", ".join(sorted("(" + ",".join(sorted(numbers)) + ")" for numbers in by_topic.values()))

    def as_json(self) -> dict:
        document = asdict(self)
        document["partitions"] = len(self.assignment)
        document["assignment"] = [{"topic": t, "partition": p} for t, p in sorted(self.assignment)]
        return document


@dataclass
class GroupDescription:
    group_id: str
    state: str
    assignment_strategy: str
    coordinator: Node | None
    members: list[Member]
    type: str = "Classic"  # Kafka's GroupType name: "Classic" or "Consumer" (KIP-848)


@dataclass
class OffsetRow:
    """One row of `--describe --offsets`; None prints as `-`."""

    group: str
    topic: str | None
    partition: int | None
    offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None

    def as_json(self) -> dict:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "current_offset": self.offset,
            "log_end_offset": self.log_end_offset,
            "lag": self.lag,
            "consumer_id": self.consumer_id,
            "host": self.host,
            "client_id": self.client_id,
        }


def kafka_error_text(error: BaseException | KafkaError) -> str:
    if isinstance(error, KafkaError):
        return kafka_message(error)
    return describe_kafka_exception(error)


def java_exception(error: KafkaException) -> str:
    """A client error as the Java client's exception prints: "org.apache.kafka.common.errors.<Class>: <message>"."""
    kafka_error = error.args[0] if error.args and isinstance(error.args[0], KafkaError) else None
    if kafka_error is None:
        return str(error)
    exception = kafka_exception_class(int(kafka_error.code())) or str(kafka_error.name())
    return f"org.apache.kafka.common.errors.{exception}: {kafka_error_text(kafka_error)}"


def error_name(error: BaseException) -> str:
    args = getattr(error, "args", ())
    if args and isinstance(args[0], KafkaError):
        return str(args[0].name())
    return type(error).__name__


UNKNOWN_TOPIC = (
    "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition."
)


class GroupAdmin:
    """The admin requests the tool makes, each bounded by `--timeout`."""

    def __init__(self, config: dict, timeout_s: float) -> None:
        self.config = config
        self.timeout_s = timeout_s
        self.client = AdminClient({**QUIET, **config})

    def _wait(self, future: Any) -> Any:
        return future.result(timeout=self.timeout_s + 5)

    def list_groups(self) -> list[GroupListing]:
        result = self._wait(self.client.list_consumer_groups(request_timeout=self.timeout_s))
        if result.errors:
            raise ToolError(
                f"Error: Executing consumer group command failed due to {kafka_error_text(result.errors[0])}"
            )
        listings = {listing.group_id: listing for listing in result.valid}
        # the order of Kafka's admin client, which gathers the listings in a HashMap by group id
        return [
            GroupListing(
                listing.group_id,
                STATE_NAMES.get(getattr(listing, "state", ConsumerGroupState.UNKNOWN), "Unknown"),
                TYPE_NAMES.get(getattr(listing, "type", ConsumerGroupType.UNKNOWN), "Unknown"),
            )
            for listing in (listings[group_id] for group_id in hash_map_order(listings, string_hash))
        ]

    def broker_addresses(self) -> list[tuple[str, int]]:
        metadata = self.client.list_topics(timeout=self.timeout_s)
        return [(str(broker.host), int(broker.port)) for _, broker in sorted(metadata.brokers.items())]

    def describe_groups(self, group_ids: list[str]) -> list[GroupDescription]:
        """The groups sorted by id, as the tool prints them."""
        if not group_ids:
            return []
        futures = self.client.describe_consumer_groups(group_ids, request_timeout=self.timeout_s)
        descriptions = []
        for group_id in sorted(futures):
            try:
                description = self._wait(futures[group_id])
            except KafkaException as error:
                if error_name(error) == "GROUP_ID_NOT_FOUND":
                    descriptions.append(GroupDescription(group_id, "Dead", "", None, []))
                    continue
                raise
            descriptions.append(to_group_description(description))
        return descriptions

    def committed_offsets(self, group_id: str) -> dict[Partition, int | None]:
        request = [ConsumerGroupTopicPartitions(group_id)]
        futures = self.client.list_consumer_group_offsets(request, request_timeout=self.timeout_s)
        result = self._wait(futures[group_id])
        return {
            (tp.topic, tp.partition): (None if tp.offset < 0 else tp.offset)
            for tp in result.topic_partitions or []
            if tp.error is None
        }

    def log_offsets(self, partitions: Iterable[Partition], spec: OffsetSpec) -> dict[Partition, int | None]:
        """Offsets from ListOffsets (None where the partition's answer was an error)."""
        request = {TopicPartition(topic, partition): spec for topic, partition in partitions}
        if not request:
            return {}
        futures = self.client.list_offsets(request, request_timeout=self.timeout_s)
        offsets: dict[Partition, int | None] = {}
        for tp, future in futures.items():
            try:
                offsets[(tp.topic, tp.partition)] = self._wait(future).offset
            except KafkaException:
                offsets[(tp.topic, tp.partition)] = None
        return offsets

    def log_end_offsets(self, partitions: Iterable[Partition]) -> dict[Partition, int | None]:
        return self.log_offsets(partitions, OffsetSpec.latest())

    def log_start_offsets(self, partitions: Iterable[Partition]) -> dict[Partition, int | None]:
        return self.log_offsets(partitions, OffsetSpec.earliest())

    def partitions_of(self, topics: list[str]) -> list[Partition]:
        """Every partition of the topics; an unknown topic is a ToolError, as Kafka's describeTopics fails."""
        metadata = self.client.list_topics(timeout=self.timeout_s)
        partitions = []
        for topic in topics:
            found = metadata.topics.get(topic)
            if found is None or found.error is not None:
                raise ToolError(
                    f"Error: Executing consumer group command failed due to org.apache.kafka.common.errors."
                    f"UnknownTopicOrPartitionException: This server does not host this topic-partition. ({topic})"
                )
            partitions += [(topic, partition) for partition in sorted(found.partitions)]
        return partitions

    def alter_offsets(self, group_id: str, offsets: dict[Partition, int]) -> None:
        partitions = [
            TopicPartition(topic, partition, offset) for (topic, partition), offset in sorted(offsets.items())
        ]
        if not partitions:
            return
        request = [ConsumerGroupTopicPartitions(group_id, partitions)]
        futures = self.client.alter_consumer_group_offsets(request, request_timeout=self.timeout_s)
        result = self._wait(futures[group_id])
        for tp in result.topic_partitions or []:
            if tp.error is not None:
                raise ToolError(f"Error: Committing offsets of {tp.topic}-{tp.partition} failed: {tp.error.str()}")

    def delete_groups(self, group_ids: list[str]) -> dict[str, str | None]:
        if not group_ids:
            return {}
        futures = self.client.delete_consumer_groups(group_ids, request_timeout=self.timeout_s)
        results: dict[str, str | None] = {}
        for group_id, future in futures.items():
            try:
                self._wait(future)
                results[group_id] = None
            except KafkaException as error:
                results[group_id] = f"java.util.concurrent.ExecutionException: {java_exception(error)}"
        return results

    def delete_offsets(self, group_id: str, topic_args: list[str]) -> tuple[str | None, dict[Partition, str | None]]:
        """OffsetDelete (confluent-kafka has no binding for it): the top-level error's name and each
        partition's error message (None: deleted)."""
        with_partitions = [arg for arg in topic_args if ":" in arg]
        whole_topics = [arg for arg in topic_args if ":" not in arg]
        partitions = [p for arg in with_partitions for p in topic_partitions_arg(arg)]
        known, unknown = self.partitions_of_known(whole_topics)
        partitions += known
        # as Kafka's tool: an unknown topic is a row of its own ("Not Provided"), the others are deleted
        results: dict[Partition, str | None] = {(topic, -1): UNKNOWN_TOPIC for topic in unknown}
        if not partitions:
            return None, results
        top_error, deleted = offset_delete.delete_offsets(
            self.config, group_id, sorted(set(partitions)), self.timeout_s
        )
        return top_error, {**deleted, **results}

    def partitions_of_known(self, topics: list[str]) -> tuple[list[Partition], list[str]]:
        """The partitions of the topics that exist, and the topics that do not."""
        metadata = self.client.list_topics(timeout=self.timeout_s)
        partitions, unknown = [], []
        for topic in topics:
            found = metadata.topics.get(topic)
            if found is None or found.error is not None:
                unknown.append(topic)
            else:
                partitions += [(topic, partition) for partition in sorted(found.partitions)]
        return partitions, unknown


def to_group_description(description: Any) -> GroupDescription:
    coordinator = description.coordinator
    members = [
        Member(
            consumer_id=member.member_id,
            group_instance_id=member.group_instance_id,
            host=member.host,
            client_id=member.client_id,
            assignment=[
                (tp.topic, tp.partition) for tp in (member.assignment.topic_partitions if member.assignment else [])
            ],
        )
        for member in description.members
    ]
    return GroupDescription(
        group_id=description.group_id,
        state=STATE_NAMES.get(description.state, "Unknown"),
        assignment_strategy=description.partition_assignor or "",
        coordinator=None if coordinator is None else Node(coordinator.id, coordinator.host, coordinator.port),
        members=members,
        type=TYPE_NAMES.get(getattr(description, "type", ConsumerGroupType.UNKNOWN), "Classic"),
    )


def topic_partitions_arg(arg: str) -> list[Partition]:
    """`topic:0,1,2` as Kafka's parseTopicsWithPartitions reads it."""
    parts = arg.split(":")
    if len(parts) != 2:
        raise ToolError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    topic, partitions = parts
    result = []
    for partition in partitions.split(","):
        try:
            result.append((topic, int(partition)))
        except ValueError:
            raise ToolError(f"Invalid partition '{partition}' specified in topic arg '{arg}''") from None
    return result


def parse_topic_partitions(admin: GroupAdmin, topic_args: list[str]) -> list[Partition]:
    """`--topic` values of `--reset-offsets`: `topic` (all its partitions) or `topic:0,1`."""
    explicit = [p for arg in topic_args if ":" in arg for p in topic_partitions_arg(arg)]
    whole = admin.partitions_of([arg for arg in topic_args if ":" not in arg])
    return list(dict.fromkeys(explicit + whole))


def lag(offset: int | None, log_end_offset: int | None) -> int | None:
    if offset is None or offset == -1 or log_end_offset is None:
        return None
    return log_end_offset - offset


def collect_offset_rows(admin: GroupAdmin, description: GroupDescription) -> list[OffsetRow]:
    """The rows of `--describe --offsets`: assigned partitions by member (the most partitions
    first), then partitions with committed offsets and no consumer; within each, in the order of
    Kafka's tool (a Java HashMap's)."""
    if description.state == "Dead":
        return []
    group = description.group_id
    committed = admin.committed_offsets(group)
    members = sorted((m for m in description.members if m.assignment), key=lambda m: -len(m.assignment))
    assigned = {partition for member in members for partition in member.assignment}
    unassigned = sorted(partition for partition in committed if partition not in assigned)
    end_offsets = admin.log_end_offsets(assigned | set(unassigned))

    def row(partition: Partition, member: Member | None) -> OffsetRow:
        offset = committed.get(partition)
        end = end_offsets.get(partition)
        who = (member.consumer_id, member.host, member.client_id) if member else (None, None, None)
        return OffsetRow(group, partition[0], partition[1], offset, end, lag(offset, end), *who)

    rows = [row(partition, member) for member in members for partition in partitions_in_java_order(member.assignment)]
    return rows + [row(partition, None) for partition in partitions_in_java_order(unassigned)]
