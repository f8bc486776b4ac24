"""Plain records of cluster state, shared by every metadata store."""

from __future__ import annotations

import base64
import re
import uuid
from dataclasses import dataclass, field

from ..protocol.errors import ErrorCode, KafkaError

NO_LEADER = -1  # a partition's leader while it has none

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


@dataclass(frozen=True)
class BrokerInfo:
    """A broker as the cluster knows it: its id, where clients reach it and its rack."""

    broker_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass
class PartitionState:
    """Who leads a partition and who follows it; changed only through the metadata store."""

    partition: int
    replicas: list[int]
    leader: int
    leader_epoch: int = 0
    isr: list[int] = field(default_factory=list)
    partition_epoch: int = 0  # bumped on every change (Kafka: partition epoch / zk version)
    offline_replicas: list[int] = field(default_factory=list)


@dataclass
class TopicInfo:
    """A topic: its id, its partitions' state and its configs (the overrides of the defaults)."""

    name: str
    topic_id: uuid.UUID
    partitions: dict[int, PartitionState]
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def is_internal(self) -> bool:
        return self.name in INTERNAL_TOPICS

    @property
    def replication_factor(self) -> int:
        return len(self.partitions[0].replicas) if self.partitions else 0


def validate_topic_name(name: str) -> None:
    """Kafka's topic name rules; raises INVALID_TOPIC_EXCEPTION."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, 'Topic name cannot be "." or ".."')
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters",
        )
    if not _LEGAL_TOPIC_NAME.match(name):
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f'Topic name "{name}" is illegal, it contains a character other than '
            "ASCII alphanumerics, '.', '_' and '-'",
        )


def new_topic_id() -> uuid.UUID:
    """A random topic id; like Kafka, never the zero id and never one whose base64 starts with '-'."""
    while True:
        topic_id = uuid.uuid4()
        if not uuid_to_base64(topic_id).startswith("-"):
            return topic_id


def new_cluster_id() -> str:
    return uuid_to_base64(new_topic_id())


def uuid_to_base64(value: uuid.UUID) -> str:
    """Kafka's textual form of a Uuid: URL-safe base64 without padding (22 characters)."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")
