"""Kafka's `SimpleAssignor` ("simple"), the share groups' assignor (KIP-932), as in Kafka 4.1+.

In a share group several members may consume the same partition. Guarantees:
- every assignable partition of a subscribed topic is assigned to at least one subscriber (when
  the topic has subscribers), and to `ceil(subscribers / partitions)` of them when there are more
  subscribers than partitions (the desired sharing), never more;
- balance: the subscribers' counts are the desired counts, `ceil(k * x) - ceil((k - 1) * x)` for
  the k-th member with `x = sharing * partitions / subscribers`, so they differ by at most one;
- stickiness: a member keeps the partitions it holds unless they are over-shared or it holds more
  than its desired count (balance before stickiness);
- not rack-aware (as Kafka's).
When all members subscribe to the same topics the group is balanced as a whole; otherwise each
topic is balanced among its own subscribers and the results combined, as Kafka's heterogeneous
builder. Members are numbered in member id order; partitions are taken topic by topic (Kafka's
topic id order), partition ascending. `assignable`, where given, limits the partitions that may
be assigned (Kafka 4.1+ assigns only partitions whose share-group state is initialized).
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable, Mapping

from .spec import (
    GroupAssignment,
    MemberSubscription,
    TopicDescription,
    freeze,
    is_homogeneous,
    java_uuid_key,
    topic_description,
)

TopicPartition = tuple[uuid.UUID, int]


class SimpleAssignor:
    name = "simple"

    def assign(
        self,
        members: Mapping[str, MemberSubscription],
        topics: Mapping[uuid.UUID, TopicDescription],
        assignable: Mapping[uuid.UUID, frozenset[int]] | None = None,
    ) -> GroupAssignment:
        if not members:
            return {}
        member_ids = sorted(members)
        all_topics = {t for m in members.values() for t in m.subscribed_topic_ids}
        targets = _target_partitions(all_topics, topics, assignable)
        result: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in member_ids}
        if is_homogeneous(members):
            units = [(member_ids, [tp for t in sorted(all_topics, key=java_uuid_key) for tp in targets[t]])]
        else:
            units = [
                ([m for m in member_ids if t in members[m].subscribed_topic_ids], targets[t])
                for t in sorted(all_topics, key=java_uuid_key)
            ]
        for subscribers, partitions in units:
            _SharedBalance(subscribers, partitions, members).build(result)
        return {m: freeze(result[m]) for m in member_ids}


def desired_counts(members: int, partitions: int) -> tuple[int, list[int]]:
    """The desired sharing of each partition and the desired partition count of each member."""
    if partitions == 0 or members == 0:
        return 0, [0] * members
    sharing = (members + partitions - 1) // partitions
    precise = sharing * partitions / members
    counts = [math.ceil(precise * (k + 1)) - math.ceil(precise * k) for k in range(members)]
    return sharing, counts


def _target_partitions(
    topic_ids: Iterable[uuid.UUID],
    topics: Mapping[uuid.UUID, TopicDescription],
    assignable: Mapping[uuid.UUID, frozenset[int]] | None,
) -> dict[uuid.UUID, list[TopicPartition]]:
    targets: dict[uuid.UUID, list[TopicPartition]] = {}
    for topic_id in topic_ids:
        count = topic_description(topics, topic_id).partition_count
        allowed = None if assignable is None else assignable.get(topic_id, frozenset())
        targets[topic_id] = [(topic_id, p) for p in range(count) if allowed is None or p in allowed]
    return targets


class _SharedBalance:
    """Balances one set of partitions among one set of subscribers."""

    def __init__(
        self,
        subscribers: list[str],
        partitions: list[TopicPartition],
        members: Mapping[str, MemberSubscription],
    ) -> None:
        self.subscribers = subscribers
        self.partitions = partitions
        self.sharing, counts = desired_counts(len(subscribers), len(partitions))
        self.desired = dict(zip(subscribers, counts, strict=True))
        targets = set(partitions)
        unit_topics = sorted({t for t, _ in partitions}, key=java_uuid_key)
        self.by_member: dict[str, list[TopicPartition]] = {
            m: [(t, p) for t in unit_topics for p in sorted(members[m].assigned.get(t, ())) if (t, p) in targets]
            for m in subscribers
        }
        self.by_partition: dict[TopicPartition, list[str]] = {tp: [] for tp in partitions}
        for member_id in subscribers:
            for tp in self.by_member[member_id]:
                self.by_partition[tp].append(member_id)

    def build(self, result: dict[str, dict[uuid.UUID, set[int]]]) -> None:
        self._revoke_over_shared()
        self._revoke_over_filled()
        self._assign_remaining()
        for member_id, held in self.by_member.items():
            for topic_id, partition in held:
                result[member_id].setdefault(topic_id, set()).add(partition)

    def _overfilled(self, member_id: str) -> bool:
        return len(self.by_member[member_id]) > self.desired[member_id]

    def _revoke_over_shared(self) -> None:
        for tp, holders in self.by_partition.items():
            for prefer_overfilled in (True, False):
                for member_id in list(holders):
                    if len(holders) <= self.sharing:
                        break
                    if self._overfilled(member_id) == prefer_overfilled:
                        self._revoke(member_id, tp)

    def _revoke_over_filled(self) -> None:
        for member_id in self.subscribers:
            held = self.by_member[member_id]
            while len(held) > self.desired[member_id]:
                self._revoke(member_id, held[-1])

    def _revoke(self, member_id: str, tp: TopicPartition) -> None:
        self.by_member[member_id].remove(tp)
        self.by_partition[tp].remove(member_id)

    def _assign_remaining(self) -> None:
        unfilled = [m for m in self.subscribers if len(self.by_member[m]) < self.desired[m]]
        cursor = 0
        for tp in self.partitions:
            if not unfilled:
                return
            holders = self.by_partition[tp]
            tried = 0
            while len(holders) < self.sharing and unfilled and tried < len(unfilled):
                cursor %= len(unfilled)
                member_id = unfilled[cursor]
                if member_id in holders:
                    cursor += 1
                    tried += 1
                    continue
                holders.append(member_id)
                self.by_member[member_id].append(tp)
                tried = 0
                if len(self.by_member[member_id]) >= self.desired[member_id]:
                    unfilled.pop(cursor)
                else:
                    cursor += 1
