"""The uniform assignor for a group whose members all subscribe to the same topics (Kafka's
`UniformHomogeneousAssignmentBuilder`).

Guarantees: every partition of the subscribed topics is assigned to exactly one member; the
members' partition counts differ by at most one; a member keeps as much of its current assignment
as that balance allows (balance before stickiness).

How: the total partition count gives each member a quota of `total // members`, and `total %
members` members one more: those that hold the most partitions already (ties: the last member ids),
so that a balanced group keeps its assignment whatever order the members come in. Each member keeps
its current partitions up to its quota (topics in the order its assignment lists them, partitions
ascending); the rest, with the partitions nobody holds (topics in Java `HashSet` order, as Kafka
iterates them), go to the members below quota in member id order. Where members and partition
replicas have racks, a member first takes unassigned partitions with a replica on its rack.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from .spec import (
    GroupAssignment,
    MemberSubscription,
    PartitionAssignorError,
    TopicDescription,
    freeze,
    java_hash_set_order,
    rack_aware,
    racks_of,
    topic_description,
)

TopicPartition = tuple[uuid.UUID, int]


def assign_homogeneous(
    members: Mapping[str, MemberSubscription], topics: Mapping[uuid.UUID, TopicDescription]
) -> GroupAssignment:
    member_ids = sorted(members)
    subscribed = members[member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return {m: {} for m in member_ids}
    topic_order = java_hash_set_order(subscribed)
    descriptions = [topic_description(topics, t) for t in topic_order]
    held = _held_partitions(members.values())
    unassigned: list[TopicPartition] = [
        (d.topic_id, p) for d in descriptions for p in range(d.partition_count) if (d.topic_id, p) not in held
    ]
    quotas = _quotas(members, member_ids, subscribed, sum(d.partition_count for d in descriptions))
    kept: dict[str, dict[uuid.UUID, list[int]]] = {}
    remaining: dict[str, int] = {}
    for member_id in member_ids:
        kept[member_id], remaining[member_id], revoked = _keep_within_quota(
            members[member_id], subscribed, topics, quotas[member_id]
        )
        unassigned.extend(revoked)
    unfilled = [m for m in member_ids if remaining[m] > 0]
    if rack_aware(members.values(), descriptions):
        unassigned = _hand_out_rack_matches(unfilled, members, topics, remaining, kept, unassigned)
    leftover = _hand_out(unfilled, remaining, kept, unassigned)
    if leftover:
        raise PartitionAssignorError("Partitions were left unassigned")
    return {m: freeze(kept[m]) for m in member_ids}


def _held_partitions(members: Iterable[MemberSubscription]) -> set[TopicPartition]:
    held: set[TopicPartition] = set()
    for member in members:
        for topic_id, partitions in member.assigned.items():
            held.update((topic_id, p) for p in partitions)
    return held


def _quotas(
    members: Mapping[str, MemberSubscription],
    member_ids: list[str],
    subscribed: frozenset[uuid.UUID],
    total: int,
) -> dict[str, int]:
    minimum, extras = divmod(total, len(member_ids))

    def retained(member_id: str) -> int:
        assigned = members[member_id].assigned
        return sum(len(ps) for t, ps in assigned.items() if t in subscribed)

    ranked = sorted(member_ids, key=lambda m: (retained(m), m))
    with_extra = set(ranked[len(ranked) - extras :]) if extras else set()
    return {m: minimum + (1 if m in with_extra else 0) for m in member_ids}


def _keep_within_quota(
    member: MemberSubscription,
    subscribed: frozenset[uuid.UUID],
    topics: Mapping[uuid.UUID, TopicDescription],
    quota: int,
) -> tuple[dict[uuid.UUID, list[int]], int, list[TopicPartition]]:
    kept: dict[uuid.UUID, list[int]] = {}
    revoked: list[TopicPartition] = []
    for topic_id, partitions in member.assigned.items():
        if topic_id not in subscribed:
            continue
        count = topics[topic_id].partition_count
        for partition in sorted(p for p in partitions if p < count):
            if quota > 0:
                kept.setdefault(topic_id, []).append(partition)
                quota -= 1
            else:
                revoked.append((topic_id, partition))
    return kept, quota, revoked


def _hand_out_rack_matches(
    unfilled: list[str],
    members: Mapping[str, MemberSubscription],
    topics: Mapping[uuid.UUID, TopicDescription],
    remaining: dict[str, int],
    kept: dict[str, dict[uuid.UUID, list[int]]],
    unassigned: list[TopicPartition],
) -> list[TopicPartition]:
    taken: set[TopicPartition] = set()
    for member_id in unfilled:
        rack = members[member_id].rack_id
        if rack is None:
            continue
        for tp in unassigned:
            if remaining[member_id] == 0:
                break
            if tp not in taken and rack in racks_of(topics[tp[0]], tp[1]):
                taken.add(tp)
                kept[member_id].setdefault(tp[0], []).append(tp[1])
                remaining[member_id] -= 1
    return [tp for tp in unassigned if tp not in taken]


def _hand_out(
    unfilled: list[str],
    remaining: dict[str, int],
    kept: dict[str, dict[uuid.UUID, list[int]]],
    unassigned: list[TopicPartition],
) -> list[TopicPartition]:
    index = 0
    for member_id in unfilled:
        while remaining[member_id] > 0 and index < len(unassigned):
            topic_id, partition = unassigned[index]
            index += 1
            kept[member_id].setdefault(topic_id, []).append(partition)
            remaining[member_id] -= 1
    return unassigned[index:]
