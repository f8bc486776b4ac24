"""What a server-side assignor is given and returns, and the orderings the assignors share.

A group hands its assignor each member's subscription and current target assignment
(`MemberSubscription`) and the subscribed topics' metadata (`TopicDescription`), as Kafka's
`GroupSpec` and `SubscribedTopicDescriber` do; the assignor returns every member's new target
assignment, topic id -> partitions. Assignors are pure functions: the same input gives the same
output, whatever order the mappings iterate in.

Orderings follow Kafka's where its results depend on them: topic ids compare as Kafka's `Uuid`
(most, then least significant 64 bits, as signed longs), and `java_hash_set_order` gives the order
in which a `java.util.HashSet` of topic ids iterates, which the homogeneous uniform assignor's
results depend on.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

Assignment = dict[uuid.UUID, frozenset[int]]
GroupAssignment = dict[str, Assignment]


@dataclass(frozen=True)
class MemberSubscription:
    """One member as its assignor sees it: its racks, subscribed topics and current target
    assignment (topic id -> partitions)."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    subscribed_topic_ids: frozenset[uuid.UUID]
    assigned: Mapping[uuid.UUID, frozenset[int]] = field(default_factory=dict)


@dataclass(frozen=True)
class TopicDescription:
    """A subscribed topic: its id, name, partition count and the racks of each partition's
    replicas (empty where unknown)."""

    topic_id: uuid.UUID
    name: str
    partition_count: int
    partition_racks: Mapping[int, frozenset[str]] = field(default_factory=dict)


def racks_of(topic: TopicDescription, partition: int) -> frozenset[str]:
    """The racks of a partition's replicas (empty where unknown). A function, not a method, so that
    any object with TopicDescription's fields will do."""
    return frozenset(topic.partition_racks.get(partition, ()))


class PartitionAssignorError(Exception):
    """Kafka's PartitionAssignorException: the assignment cannot be computed (a member subscribes
    to a topic missing from the metadata, or partitions were left over)."""


class PartitionAssignor(Protocol):
    """A server-side assignor: `assign` returns each member's target assignment."""

    name: str

    def assign(
        self,
        members: Mapping[str, MemberSubscription],
        topics: Mapping[uuid.UUID, TopicDescription],
    ) -> GroupAssignment: ...


def is_homogeneous(members: Mapping[str, MemberSubscription]) -> bool:
    """True when every member subscribes to the same topics (Kafka's HOMOGENEOUS type)."""
    subscriptions = {m.subscribed_topic_ids for m in members.values()}
    return len(subscriptions) <= 1


def java_uuid_key(topic_id: uuid.UUID) -> tuple[int, int]:
    """The sort key that orders topic ids as Kafka's `Uuid.compareTo` does."""
    value = topic_id.int
    return _signed64(value >> 64), _signed64(value & _MASK64)


def java_hash_set_order(topic_ids: Iterable[uuid.UUID]) -> list[uuid.UUID]:
    """The order a `new HashSet<>(topicIds)` of Kafka `Uuid`s iterates in: by hash bucket of a
    table sized for the set (ties, which Java leaves to insertion order, by `java_uuid_key`)."""
    ids = sorted(set(topic_ids), key=java_uuid_key)
    capacity = _table_size_for(max(int(len(ids) / 0.75) + 1, 16))
    return sorted(ids, key=lambda t: _spread(_java_uuid_hash(t)) & (capacity - 1))


def topic_description(topics: Mapping[uuid.UUID, TopicDescription], topic_id: uuid.UUID) -> TopicDescription:
    """The topic's metadata, or Kafka's error for a subscription to a topic it lacks."""
    description = topics.get(topic_id)
    if description is None:
        raise PartitionAssignorError(
            f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata."
        )
    return description


def freeze(assignment: Mapping[uuid.UUID, Iterable[int]]) -> Assignment:
    """A member's assignment as returned: frozensets, topics without partitions left out."""
    return {t: frozenset(ps) for t, ps in assignment.items() if ps}


_MASK64 = (1 << 64) - 1
_MASK32 = (1 << 32) - 1


def _signed64(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _java_uuid_hash(topic_id: uuid.UUID) -> int:
    value = topic_id.int
    hilo = (value >> 64) ^ (value & _MASK64)
    return ((hilo >> 32) ^ hilo) & _MASK32


def _spread(h: int) -> int:
    return (h ^ (h >> 16)) & _MASK32


def _table_size_for(capacity: int) -> int:
    size = 1
    while size < capacity:
        size <<= 1
    return size


def rack_aware(members: Iterable[MemberSubscription], topics: Iterable[TopicDescription]) -> bool:
    """Whether matching members' racks to partitions' replica racks can help, as Kafka's range
    assignor decides: some member has a rack, some partition has replica racks, the two meet, and
    not every partition lives on the same racks."""
    member_racks = {m.rack_id for m in members if m.rack_id is not None}
    if not member_racks:
        return False
    rack_sets = {racks for t in topics for racks in t.partition_racks.values() if racks}
    partition_racks = frozenset().union(*rack_sets) if rack_sets else frozenset()
    return bool(member_racks & partition_racks) and len(rack_sets) > 1
