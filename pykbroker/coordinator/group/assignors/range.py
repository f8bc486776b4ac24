"""Kafka's server-side `RangeAssignor` ("range").

Guarantees: every partition of a subscribed topic goes to exactly one of its subscribers; each
subscriber of a topic gets `partitions // subscribers` of it, the first `partitions % subscribers`
subscribers one more, in contiguous ranges; when every member subscribes to the same topics and
they have the same partition count, a member gets the same partition numbers of every topic
(co-partitioning, for joins). Stickiness is Kafka's: members are ordered by `group.instance.id`
(static members first, by instance id), then by member id, so that a static member that rejoins
under a new member id gets its ranges back while the group and topics stay the same.

Racks, as Kafka's: in a homogeneous group where members and partition replicas have racks (and
replicas are not on the same racks everywhere), partitions first go to members in their rack while
a member's range quota allows (co-partitioned topics keep a partition number together); the rest
are handed out by range. Deterministic for a given input.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field

from .spec import (
    GroupAssignment,
    MemberSubscription,
    TopicDescription,
    freeze,
    is_homogeneous,
    rack_aware,
    racks_of,
    topic_description,
)

Assignments = dict[str, dict[uuid.UUID, set[int]]]


@dataclass
class _TopicRanges:
    description: TopicDescription
    members: int
    min_quota: int = -1
    extra: int = -1
    unassigned: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.unassigned = list(range(self.description.partition_count))

    @property
    def topic_id(self) -> uuid.UUID:
        return self.description.topic_id

    def compute_quota(self) -> None:
        if self.min_quota == -1:
            self.min_quota, self.extra = divmod(self.description.partition_count, self.members)

    def racks_match(self, partition: int, rack: str | None) -> bool:
        return rack is None or rack in racks_of(self.description, partition)

    def mark_assigned(self, partition: int) -> None:
        if partition in self.unassigned:
            self.unassigned.remove(partition)


class RangeAssignor:
    name = "range"

    def assign(
        self,
        members: Mapping[str, MemberSubscription],
        topics: Mapping[uuid.UUID, TopicDescription],
    ) -> GroupAssignment:
        if not members:
            return {}
        if is_homogeneous(members):
            return _assign_homogeneous(members, topics)
        return _assign_heterogeneous(members, topics)


def sort_member_ids(members: Mapping[str, MemberSubscription]) -> list[str]:
    """Static members first by instance id, then the others by member id (Kafka's order)."""

    def key(member_id: str) -> tuple[int, str]:
        instance_id = members[member_id].instance_id
        return (0, instance_id) if instance_id is not None else (1, member_id)

    return sorted(members, key=key)


def _assign_homogeneous(
    members: Mapping[str, MemberSubscription], topics: Mapping[uuid.UUID, TopicDescription]
) -> GroupAssignment:
    member_ids = sort_member_ids(members)
    subscribed = members[member_ids[0]].subscribed_topic_ids
    ranges = [_TopicRanges(topic_description(topics, t), len(member_ids)) for t in sorted(subscribed)]
    for topic in ranges:
        topic.compute_quota()
    assignments: Assignments = {m: {} for m in member_ids}
    racks = {m: members[m].rack_id for m in member_ids}
    if rack_aware(members.values(), (t.description for t in ranges)):
        if len(ranges) > 1 and len({t.description.partition_count for t in ranges}) == 1:
            _assign_co_partitioned_by_rack(ranges, member_ids, racks, assignments)
        else:
            for topic in ranges:
                _assign_topic_by_rack(topic, member_ids, racks, assignments)
    for member_id in member_ids:
        for topic in ranges:
            _add_range(topic, assignments[member_id])
    return {m: freeze(assignments[m]) for m in member_ids}


def _assign_co_partitioned_by_rack(
    ranges: list[_TopicRanges],
    member_ids: list[str],
    racks: Mapping[str, str | None],
    assignments: Assignments,
) -> None:
    first = ranges[0]
    capacity = first.min_quota + (1 if first.extra > 0 else 0)
    counts = dict.fromkeys(member_ids, 0)
    remaining = list(member_ids)
    for partition in range(first.description.partition_count):
        match = next(
            (m for m in remaining if counts[m] < capacity and all(t.racks_match(partition, racks[m]) for t in ranges)),
            None,
        )
        if match is None:
            continue
        for topic in ranges:
            assignments[match].setdefault(topic.topic_id, set()).add(partition)
            topic.mark_assigned(partition)
        counts[match] += 1
        quota = first.min_quota + (1 if counts[match] <= first.extra else 0)
        if counts[match] >= quota:
            remaining.remove(match)
            if not remaining:
                break


def _assign_topic_by_rack(
    topic: _TopicRanges,
    member_ids: list[str],
    racks: Mapping[str, str | None],
    assignments: Assignments,
) -> None:
    counts = dict.fromkeys(member_ids, 0)
    for partition in list(topic.unassigned):
        match = next(
            (
                m
                for m in member_ids
                if counts[m] < topic.min_quota + (1 if counts[m] < topic.extra else 0)
                and topic.racks_match(partition, racks[m])
            ),
            None,
        )
        if match is not None:
            assignments[match].setdefault(topic.topic_id, set()).add(partition)
            topic.mark_assigned(partition)
            counts[match] += 1


def _assign_heterogeneous(
    members: Mapping[str, MemberSubscription], topics: Mapping[uuid.UUID, TopicDescription]
) -> GroupAssignment:
    member_ids = sort_member_ids(members)
    ranges: dict[uuid.UUID, _TopicRanges] = {}
    for member_id in member_ids:
        for topic_id in members[member_id].subscribed_topic_ids:
            if topic_id not in ranges:
                ranges[topic_id] = _TopicRanges(topic_description(topics, topic_id), 0)
            ranges[topic_id].members += 1
    assignments: Assignments = {m: {} for m in member_ids}
    for member_id in member_ids:
        for topic_id in sorted(members[member_id].subscribed_topic_ids):
            topic = ranges[topic_id]
            topic.compute_quota()
            _add_range(topic, assignments[member_id])
    return {m: freeze(assignments[m]) for m in member_ids}


def _add_range(topic: _TopicRanges, assignment: dict[uuid.UUID, set[int]]) -> None:
    """Tops the member up to its quota of the topic (one more while extra partitions remain) from
    the lowest unassigned partitions."""
    already = len(assignment.get(topic.topic_id, ()))
    quota = topic.min_quota
    if topic.extra > 0:
        quota += 1
        topic.extra -= 1
    needed = quota - already
    if needed <= 0 or not topic.unassigned:
        return
    taken = topic.unassigned[:needed]
    assignment.setdefault(topic.topic_id, set()).update(taken)
    del topic.unassigned[: len(taken)]
