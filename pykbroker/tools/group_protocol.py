"""The group requests of Kafka 4 that confluent-kafka does not expose, spoken on a socket of the
tools' own (as `offset_delete` does): ListGroups v5 (every group of every type, with its protocol
type, state and type, from each broker) and, for consumer-protocol (KIP-848) groups,
FindCoordinator v1 then ConsumerGroupDescribe v0 (member epochs, current and target assignments,
the group and target assignment epochs). PLAINTEXT and SSL listeners; SASL is refused with one
clear error. Also the pieces `share_group_protocol` speaks with: the flexible connection, the
lookup of a group's coordinator and the request asked of it, and the group layout that
ConsumerGroupDescribe and ShareGroupDescribe answers share.

Both are flexible versions: request header v2, response header v1, compact strings and arrays,
tagged fields (always empty here).
"""

from __future__ import annotations

import dataclasses
import struct
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from .client_config import ToolError
from .offset_delete import KafkaConnection, Reader, bootstrap_address, error_name, string

LIST_GROUPS, FIND_COORDINATOR, CONSUMER_GROUP_DESCRIBE = 16, 10, 69
CLIENT_ID = "pykbroker-groups"
M = TypeVar("M")


@dataclass(frozen=True)
class ListedGroup:
    """One group as ListGroups v5 lists it; `type` is Kafka's GroupType name ("Classic", "Consumer",
    "Share", "Streams"), `state` Kafka's GroupState name."""

    group_id: str
    protocol_type: str
    state: str
    type: str


@dataclass(frozen=True)
class TopicPartitions:
    topic_id: uuid.UUID
    topic: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: tuple[TopicPartitions, ...]
    target_assignment: tuple[TopicPartitions, ...]

    def assigned(self) -> list[tuple[str, int]]:
        return [(t.topic, p) for t in self.assignment for p in t.partitions]

    def targeted(self) -> list[tuple[str, int]]:
        return [(t.topic, p) for t in self.target_assignment for p in t.partitions]


@dataclass(frozen=True)
class DescribedConsumerGroup:
    """A ConsumerGroupDescribe answer for one group; `error` is the error's name (None: none)."""

    group_id: str
    error: str | None
    error_message: str | None
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[DescribedMember, ...] = field(default_factory=tuple)
    coordinator: tuple[int, str, int] | None = None  # id, host, port


# --- encoding


def uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def compact_string(value: str) -> bytes:
    data = value.encode("utf-8")
    return uvarint(len(data) + 1) + data


def compact_string_array(values: list[str]) -> bytes:
    return uvarint(len(values) + 1) + b"".join(compact_string(v) for v in values)


NO_TAGS = b"\x00"


def list_groups_request(states: list[str], types: list[str]) -> bytes:
    return compact_string_array(states) + compact_string_array(types) + NO_TAGS


def describe_groups_request(group_ids: list[str]) -> bytes:
    """ConsumerGroupDescribe and ShareGroupDescribe ask alike: the group ids, no authorized operations."""
    return compact_string_array(group_ids) + struct.pack(">b", 0) + NO_TAGS


# --- decoding


class CompactReader:
    """Reads a flexible-version body: compact strings and arrays, tagged fields skipped."""

    def __init__(self, data: bytes) -> None:
        self.data, self.position = data, 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.position)
        self.position += struct.calcsize(fmt)
        return value

    def uvarint(self) -> int:
        shift = result = 0
        while True:
            byte = self.data[self.position]
            self.position += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7

    def string(self) -> str | None:
        length = self.uvarint() - 1
        if length < 0:
            return None
        value = self.data[self.position : self.position + length].decode("utf-8")
        self.position += length
        return value

    def text(self) -> str:
        return self.string() or ""

    def array_length(self) -> int:
        return max(self.uvarint() - 1, 0)

    def uuid(self) -> uuid.UUID:
        value = uuid.UUID(bytes=self.data[self.position : self.position + 16])
        self.position += 16
        return value

    def skip_tags(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self.position += self.uvarint()


def parse_list_groups(body: bytes) -> tuple[str | None, list[ListedGroup]]:
    """A ListGroups v5 response body: the error's name (None: none) and the groups."""
    reader = CompactReader(body)
    reader.take(">i")  # throttle time
    error = reader.take(">h")
    groups = []
    for _ in range(reader.array_length()):
        group_id, protocol_type, state, kind = reader.text(), reader.text(), reader.text(), reader.text()
        reader.skip_tags()
        groups.append(ListedGroup(group_id, protocol_type, state, kind))
    reader.skip_tags()
    return (error_name(error) if error else None), groups


@dataclass(frozen=True)
class DescribedGroupEntry(Generic[M]):
    """One group of a ConsumerGroupDescribe or ShareGroupDescribe answer (the two lay a group out
    alike; only their members differ)."""

    error_code: int
    error_message: str | None
    group_id: str
    state: str
    group_epoch: int
    assignment_epoch: int
    assignor_name: str
    members: tuple[M, ...]


def read_described_groups(body: bytes, read_member: Callable[[CompactReader], M]) -> list[DescribedGroupEntry[M]]:
    """The groups of a ConsumerGroupDescribe or ShareGroupDescribe response body."""
    reader = CompactReader(body)
    reader.take(">i")  # throttle time
    groups = []
    for _ in range(reader.array_length()):
        code, message = reader.take(">h"), reader.string()
        group_id, state = reader.text(), reader.text()
        group_epoch, assignment_epoch = reader.take(">i"), reader.take(">i")
        assignor = reader.text()
        members = tuple(read_member(reader) for _ in range(reader.array_length()))
        reader.take(">i")  # authorized operations
        reader.skip_tags()
        groups.append(
            DescribedGroupEntry(code, message, group_id, state, group_epoch, assignment_epoch, assignor, members)
        )
    reader.skip_tags()
    return groups


def parse_consumer_group_describe(body: bytes) -> list[DescribedConsumerGroup]:
    return [
        DescribedConsumerGroup(
            g.group_id,
            error_name(g.error_code) if g.error_code else None,
            g.error_message,
            g.state,
            g.group_epoch,
            g.assignment_epoch,
            g.assignor_name,
            g.members,
        )
        for g in read_described_groups(body, _member)
    ]


def _member(reader: CompactReader) -> DescribedMember:
    member_id, instance_id, rack_id = reader.text(), reader.string(), reader.string()
    epoch = reader.take(">i")
    client_id, host = reader.text(), reader.text()
    topics = tuple(reader.text() for _ in range(reader.array_length()))
    regex = reader.string()
    assignment, target = read_assignment(reader), read_assignment(reader)
    reader.skip_tags()
    return DescribedMember(member_id, instance_id, rack_id, epoch, client_id, host, topics, regex, assignment, target)


def read_assignment(reader: CompactReader) -> tuple[TopicPartitions, ...]:
    """A member's Assignment struct of ConsumerGroupDescribe and ShareGroupDescribe: its topic partitions."""
    topics = []
    for _ in range(reader.array_length()):
        topic_id, name = reader.uuid(), reader.text()
        partitions = tuple(reader.take(">i") for _ in range(reader.array_length()))
        reader.skip_tags()
        topics.append(TopicPartitions(topic_id, name, partitions))
    reader.skip_tags()
    return tuple(topics)


# --- the connection


class FlexibleConnection(KafkaConnection):
    """A KafkaConnection that also speaks flexible versions (request header v2, response header v1)."""

    def __enter__(self) -> FlexibleConnection:
        return self

    def flexible_request(self, api_key: int, api_version: int, body: bytes) -> bytes:
        self.correlation_id += 1
        header = struct.pack(">hhi", api_key, api_version, self.correlation_id) + string(CLIENT_ID) + NO_TAGS
        message = header + body
        self.socket.sendall(struct.pack(">i", len(message)) + message)
        size = struct.unpack(">i", self.receive(4))[0]
        data = self.receive(size)
        reader = CompactReader(data[4:])  # after the correlation id
        reader.skip_tags()
        return data[4 + reader.position :]

    def find_coordinator_node(self, group_id: str) -> tuple[int, str, int]:
        response: Reader = self.request(FIND_COORDINATOR, 1, string(group_id) + struct.pack(">b", 0))
        response.take(">i")  # throttle time
        error = response.take(">h")
        response.string()  # error message
        node_id = response.take(">i")
        host = response.string() or ""
        port = response.take(">i")
        if error:
            raise ToolError(f"Error: finding the coordinator of group '{group_id}' failed: {error_name(error)}")
        return node_id, host, port


def check_protocol(config: dict) -> None:
    protocol = str(config.get("security.protocol", "PLAINTEXT")).upper()
    if protocol.startswith("SASL"):
        raise ToolError(
            "Kafka 4 group requests support PLAINTEXT and SSL listeners only (SASL is not implemented here)"
        )


def list_groups(
    config: dict, brokers: list[tuple[str, int]], timeout_s: float, types: list[str] | None = None
) -> list[ListedGroup]:
    """Every broker's groups (ListGroups v5), once each; an error of any broker is a ToolError."""
    check_protocol(config)
    listed: dict[str, ListedGroup] = {}
    for host, port in brokers:
        with FlexibleConnection(host, port, config, timeout_s) as connection:
            body = connection.flexible_request(LIST_GROUPS, 5, list_groups_request([], types or []))
        error, groups = parse_list_groups(body)
        if error:
            raise ToolError(f"Error while executing groups command : {error}")
        for group in groups:
            listed.setdefault(group.group_id, group)
    return list(listed.values())


def find_group_coordinator(config: dict, group_id: str, timeout_s: float) -> tuple[int, str, int]:
    """The group's coordinator (id, host, port), as the first bootstrap broker names it."""
    with FlexibleConnection(*bootstrap_address(config), config, timeout_s) as connection:
        return connection.find_coordinator_node(group_id)


def ask_group_coordinator(
    config: dict, group_id: str, timeout_s: float, api_key: int, api_version: int, body: bytes
) -> tuple[bytes, tuple[int, str, int]]:
    """One flexible request asked of the group's coordinator: the response body and the coordinator."""
    coordinator = find_group_coordinator(config, group_id, timeout_s)
    with FlexibleConnection(coordinator[1], coordinator[2], config, timeout_s) as connection:
        return connection.flexible_request(api_key, api_version, body), coordinator


def describe_consumer_group(config: dict, group_id: str, timeout_s: float) -> DescribedConsumerGroup:
    """ConsumerGroupDescribe v0 of one group, asked of its coordinator."""
    check_protocol(config)
    body, coordinator = ask_group_coordinator(
        config, group_id, timeout_s, CONSUMER_GROUP_DESCRIBE, 0, describe_groups_request([group_id])
    )
    return dataclasses.replace(parse_consumer_group_describe(body)[0], coordinator=coordinator)
