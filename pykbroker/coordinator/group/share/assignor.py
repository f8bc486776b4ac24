"""The share groups' `simple` assignor, behind the server-side assignor interface
(`coordinator/group/assignors/`: `MemberSubscription`, `TopicDescription`, `PartitionAssignor`).

When the assignors package offers a `simple` assignor, share groups use it; until then this
module's `SimplePlaceholder` stands in: per subscribed topic, with at least as many partitions as
subscribed members the partitions are spread round-robin over the members (sorted by member id);
with more members than partitions each member gets one partition, partitions shared by several
members (a share group lets members share partitions).
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class MemberSubscription:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    subscribed_topic_ids: frozenset[uuid.UUID]
    assigned: Mapping[uuid.UUID, frozenset[int]]


@dataclass(frozen=True)
class TopicDescription:
    topic_id: uuid.UUID
    name: str
    partition_count: int
    partition_racks: Mapping[int, frozenset[str]] = field(default_factory=dict)


class PartitionAssignor(Protocol):
    name: str

    def assign(
        self,
        members: Mapping[str, Any],
        topics: Mapping[uuid.UUID, Any],
        assignable: Mapping[uuid.UUID, frozenset[int]] | None = None,
    ) -> dict[str, dict[uuid.UUID, frozenset[int]]]: ...


class SimplePlaceholder:
    name = "simple"

    def assign(
        self,
        members: Mapping[str, Any],
        topics: Mapping[uuid.UUID, Any],
        assignable: Mapping[uuid.UUID, frozenset[int]] | None = None,
    ) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
        """`assignable`: the partitions that may be assigned, by topic (all when None)."""
        result: dict[str, dict[uuid.UUID, set[int]]] = {member_id: {} for member_id in members}
        for topic_id, topic in topics.items():
            subscribers = sorted(m for m, sub in members.items() if topic_id in sub.subscribed_topic_ids)
            partitions = [
                p for p in range(topic.partition_count) if assignable is None or p in assignable.get(topic_id, ())
            ]
            if not subscribers or not partitions:
                continue
            if len(subscribers) <= len(partitions):
                for index, partition in enumerate(partitions):
                    result[subscribers[index % len(subscribers)]].setdefault(topic_id, set()).add(partition)
            else:
                for index, member_id in enumerate(subscribers):
                    result[member_id].setdefault(topic_id, set()).add(partitions[index % len(partitions)])
        return {m: {t: frozenset(p) for t, p in parts.items()} for m, parts in result.items()}


def simple_assignor() -> tuple[PartitionAssignor, type, type]:
    """The `simple` assignor and the subscription and topic classes it takes."""
    try:
        assignors: Any = importlib.import_module("pykbroker.coordinator.group.assignors")
        return assignors.ASSIGNORS["simple"], assignors.MemberSubscription, assignors.TopicDescription
    except (ImportError, AttributeError, KeyError):
        return SimplePlaceholder(), MemberSubscription, TopicDescription
