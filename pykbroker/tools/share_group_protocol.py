"""The share group requests of Kafka 4 (KIP-932) that confluent-kafka does not expose, spoken on a
socket of the tools' own (as `group_protocol` speaks ListGroups v5): ApiVersions v0 (does the
broker serve share groups?), FindCoordinator v1, ShareGroupDescribe v1, DescribeShareGroupOffsets
v0, AlterShareGroupOffsets v0 and DeleteShareGroupOffsets v0, each asked of the group's
coordinator. PLAINTEXT and SSL listeners; SASL is refused with one clear error.

All but ApiVersions are flexible versions (request header v2, response header v1, compact strings
and arrays, empty tagged fields). Errors keep Kafka's names and the broker's messages; where the
broker sent no message, Kafka's default message for the code.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from .client_config import ToolError
from .group_protocol import (
    NO_TAGS,
    CompactReader,
    ask_group_coordinator,
    check_protocol,
    compact_string,
    describe_groups_request,
    find_group_coordinator,
    read_assignment,
    read_described_groups,
    uvarint,
)
from .kafka_errors import KAFKA_ERRORS
from .offset_delete import KafkaConnection, bootstrap_address, error_name

API_VERSIONS = 18
SHARE_GROUP_DESCRIBE = 77
DESCRIBE_SHARE_GROUP_OFFSETS = 90
ALTER_SHARE_GROUP_OFFSETS = 91
DELETE_SHARE_GROUP_OFFSETS = 92
SHARE_GROUP_DESCRIBE_VERSIONS = (0, 1)  # the versions spoken here (same layout)
NO_START_OFFSET = -1


@dataclass(frozen=True)
class KafkaErrorInfo:
    """An error an answer carried: Kafka's name, the Java exception class, the message."""

    code: int
    message: str

    @property
    def name(self) -> str:
        return error_name(self.code)

    @property
    def exception(self) -> str:
        known = KAFKA_ERRORS.get(self.code)
        return known[1] if known is not None else "UnknownServerException"

    def java_text(self) -> str:
        """As a Java client's exception prints: `org.apache.kafka.common.errors.<Class>: <message>`."""
        return f"org.apache.kafka.common.errors.{self.exception}: {self.message}"


def error_info(code: int, message: str | None) -> KafkaErrorInfo | None:
    """None for no error; else the error with the broker's message, or Kafka's default one."""
    if code == 0:
        return None
    known = KAFKA_ERRORS.get(code)
    return KafkaErrorInfo(code, message if message else (known[2] if known else f"error code {code}"))


@dataclass(frozen=True)
class ShareMember:
    member_id: str
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    assignment: tuple[tuple[str, int], ...]  # (topic, partition)


@dataclass(frozen=True)
class ShareGroupDescription:
    group_id: str
    error: KafkaErrorInfo | None
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[ShareMember, ...] = ()
    coordinator: tuple[int, str, int] | None = None  # id, host, port


@dataclass(frozen=True)
class SharePartitionOffset:
    """One partition of a DescribeShareGroupOffsets answer; start offset -1: not yet chosen."""

    topic: str
    partition: int
    start_offset: int
    leader_epoch: int
    error: KafkaErrorInfo | None = None


@dataclass(frozen=True)
class ShareGroupOffsets:
    group_id: str
    error: KafkaErrorInfo | None
    partitions: tuple[SharePartitionOffset, ...] = ()


@dataclass(frozen=True)
class OffsetsChange:
    """An Alter/DeleteShareGroupOffsets answer: the top-level error and each topic's (or
    partition's, for Alter) error."""

    error: KafkaErrorInfo | None
    topics: dict[str, KafkaErrorInfo | None] = field(default_factory=dict)
    partitions: dict[tuple[str, int], KafkaErrorInfo | None] = field(default_factory=dict)


# --- requests


def describe_offsets_request(group_id: str, topics: Mapping[str, Iterable[int]] | None) -> bytes:
    """One group; `topics` None asks for every partition the group has state for."""
    if topics is None:
        encoded_topics = uvarint(0)  # null
    else:
        encoded_topics = uvarint(len(topics) + 1) + b"".join(
            compact_string(topic) + _int32_array(sorted(partitions)) + NO_TAGS for topic, partitions in topics.items()
        )
    return uvarint(2) + compact_string(group_id) + encoded_topics + NO_TAGS + NO_TAGS


def alter_offsets_request(group_id: str, offsets: Mapping[tuple[str, int], int]) -> bytes:
    by_topic: dict[str, list[tuple[int, int]]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        by_topic.setdefault(topic, []).append((partition, offset))
    topics = b"".join(
        compact_string(topic)
        + uvarint(len(partitions) + 1)
        + b"".join(struct.pack(">iq", p, o) + NO_TAGS for p, o in partitions)
        + NO_TAGS
        for topic, partitions in by_topic.items()
    )
    return compact_string(group_id) + uvarint(len(by_topic) + 1) + topics + NO_TAGS


def delete_offsets_request(group_id: str, topics: list[str]) -> bytes:
    encoded = b"".join(compact_string(topic) + NO_TAGS for topic in topics)
    return compact_string(group_id) + uvarint(len(topics) + 1) + encoded + NO_TAGS


def _int32_array(values: list[int]) -> bytes:
    return uvarint(len(values) + 1) + b"".join(struct.pack(">i", v) for v in values)


# --- responses


def parse_share_group_describe(body: bytes) -> list[ShareGroupDescription]:
    return [
        ShareGroupDescription(
            g.group_id,
            error_info(g.error_code, g.error_message),
            g.state,
            g.group_epoch,
            g.assignment_epoch,
            g.assignor_name,
            g.members,
        )
        for g in read_described_groups(body, _share_member)
    ]


def _share_member(reader: CompactReader) -> ShareMember:
    member_id, rack_id = reader.text(), reader.string()
    epoch = reader.take(">i")
    client_id, host = reader.text(), reader.text()
    topics = tuple(reader.text() for _ in range(reader.array_length()))
    assignment = tuple((t.topic, p) for t in read_assignment(reader) for p in t.partitions)
    reader.skip_tags()  # the member
    return ShareMember(member_id, rack_id, epoch, client_id, host, topics, assignment)


def parse_describe_offsets(body: bytes) -> list[ShareGroupOffsets]:
    reader = CompactReader(body)
    reader.take(">i")  # throttle time
    groups = []
    for _ in range(reader.array_length()):
        group_id = reader.text()
        partitions = []
        for _ in range(reader.array_length()):
            topic = reader.text()
            reader.uuid()
            for _ in range(reader.array_length()):
                index, start, epoch = reader.take(">i"), reader.take(">q"), reader.take(">i")
                code, message = reader.take(">h"), reader.string()
                reader.skip_tags()
                partitions.append(SharePartitionOffset(topic, index, start, epoch, error_info(code, message)))
            reader.skip_tags()
        code, message = reader.take(">h"), reader.string()
        reader.skip_tags()
        groups.append(ShareGroupOffsets(group_id, error_info(code, message), tuple(partitions)))
    reader.skip_tags()
    return groups


def parse_alter_offsets(body: bytes) -> OffsetsChange:
    reader = CompactReader(body)
    reader.take(">i")  # throttle time
    code, message = reader.take(">h"), reader.string()
    change = OffsetsChange(error_info(code, message))
    for _ in range(reader.array_length()):
        topic = reader.text()
        reader.uuid()
        for _ in range(reader.array_length()):
            index, partition_code, partition_message = reader.take(">i"), reader.take(">h"), reader.string()
            reader.skip_tags()
            change.partitions[(topic, index)] = error_info(partition_code, partition_message)
        reader.skip_tags()
    reader.skip_tags()
    return change


def parse_delete_offsets(body: bytes) -> OffsetsChange:
    reader = CompactReader(body)
    reader.take(">i")  # throttle time
    code, message = reader.take(">h"), reader.string()
    change = OffsetsChange(error_info(code, message))
    for _ in range(reader.array_length()):
        topic = reader.text()
        reader.uuid()
        topic_code, topic_message = reader.take(">h"), reader.string()
        reader.skip_tags()
        change.topics[topic] = error_info(topic_code, topic_message)
    reader.skip_tags()
    return change


def parse_api_versions(data: bytes) -> dict[int, tuple[int, int]]:
    """An ApiVersions v0 response body: api key -> (min, max)."""
    error, count = struct.unpack_from(">hi", data)
    if error:
        raise ToolError(f"Error: ApiVersions failed: {error_name(error)}")
    versions = {}
    for index in range(count):
        key, low, high = struct.unpack_from(">hhh", data, 6 + 6 * index)
        versions[key] = (low, high)
    return versions


# --- the client


class ShareGroupClient:
    """The share group requests of one tool run: the bootstrap broker answers ApiVersions and
    FindCoordinator; each group's coordinator answers the rest."""

    def __init__(self, config: dict, timeout_s: float) -> None:
        check_protocol(config)
        self.config = config
        self.timeout_s = timeout_s
        self.bootstrap = bootstrap_address(config)
        self._api_versions: dict[int, tuple[int, int]] | None = None

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The bootstrap broker's API versions (asked once)."""
        if self._api_versions is None:
            with KafkaConnection(*self.bootstrap, self.config, self.timeout_s) as connection:
                reader = connection.request(API_VERSIONS, 0, b"")
                self._api_versions = parse_api_versions(reader.data[reader.position :])
        return self._api_versions

    def serves_share_groups(self) -> bool:
        """Whether the broker advertises ShareGroupDescribe (Kafka serves share groups only with
        `share.version` finalized)."""
        return SHARE_GROUP_DESCRIBE in self.api_versions()

    def coordinator(self, group_id: str) -> tuple[int, str, int]:
        return find_group_coordinator(self.config, group_id, self.timeout_s)

    def _ask_coordinator(self, group_id: str, api_key: int, version: int, body: bytes) -> tuple[bytes, tuple]:
        return ask_group_coordinator(self.config, group_id, self.timeout_s, api_key, version, body)

    def describe_group(self, group_id: str) -> ShareGroupDescription:
        body, coordinator = self._ask_coordinator(
            group_id, SHARE_GROUP_DESCRIBE, self._describe_version(), describe_groups_request([group_id])
        )
        return dataclasses.replace(parse_share_group_describe(body)[0], coordinator=coordinator)

    def _describe_version(self) -> int:
        low, high = self.api_versions().get(SHARE_GROUP_DESCRIBE, (-1, -1))
        usable = [v for v in SHARE_GROUP_DESCRIBE_VERSIONS if low <= v <= high]
        if not usable:
            raise ToolError(
                "Error: Executing share group command failed due to org.apache.kafka.common.errors."
                "UnsupportedVersionException: The node does not support SHARE_GROUP_DESCRIBE"
            )
        return max(usable)

    def describe_offsets(self, group_id: str, topics: Mapping[str, Iterable[int]] | None = None) -> ShareGroupOffsets:
        body, _ = self._ask_coordinator(
            group_id, DESCRIBE_SHARE_GROUP_OFFSETS, 0, describe_offsets_request(group_id, topics)
        )
        return parse_describe_offsets(body)[0]

    def alter_offsets(self, group_id: str, offsets: Mapping[tuple[str, int], int]) -> OffsetsChange:
        body, _ = self._ask_coordinator(
            group_id, ALTER_SHARE_GROUP_OFFSETS, 0, alter_offsets_request(group_id, offsets)
        )
        return parse_alter_offsets(body)

    def delete_offsets(self, group_id: str, topics: list[str]) -> OffsetsChange:
        body, _ = self._ask_coordinator(
            group_id, DELETE_SHARE_GROUP_OFFSETS, 0, delete_offsets_request(group_id, topics)
        )
        return parse_delete_offsets(body)
