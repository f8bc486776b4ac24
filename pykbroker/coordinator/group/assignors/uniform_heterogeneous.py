"""The uniform assignor for a group whose members subscribe to different topics (Kafka's
`UniformHeterogeneousAssignmentBuilder`, as rewritten for Kafka 4.0).

Guarantees: every partition of a subscribed topic is assigned to exactly one of its subscribers;
a member never holds partitions of topics it does not subscribe to; the subscribers of each topic
differ by at most one partition where all of them share the same subscriptions, and come close to
that otherwise (the balancing passes are bounded, as Kafka's); members keep their current
partitions of the topics they still subscribe to unless balance needs them (balance before
stickiness).

How: members are numbered in member id order. Each member keeps its current partitions of the
topics it still subscribes to; the partitions nobody holds go, topic by topic (most partitions per
subscriber first, then fewest subscribers, then topic id), to the least loaded subscribers; then
each topic with two or more subscribers moves partitions from its most loaded subscribers (their
highest partitions first) to its least loaded ones until they differ by at most one, looping over
the topics up to 16 times until a loop moves nothing. Where members and partition replicas have
racks, an unassigned partition handed to a member is one with a replica on its rack when the topic
has one left.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping

from .spec import (
    GroupAssignment,
    MemberSubscription,
    TopicDescription,
    freeze,
    java_uuid_key,
    rack_aware,
    racks_of,
    topic_description,
)

MAX_ITERATION_COUNT = 16
UNASSIGNED = -1


def assign_heterogeneous(
    members: Mapping[str, MemberSubscription], topics: Mapping[uuid.UUID, TopicDescription]
) -> GroupAssignment:
    return _HeterogeneousBuilder(members, topics).build()


class _HeterogeneousBuilder:
    def __init__(self, members: Mapping[str, MemberSubscription], topics: Mapping[uuid.UUID, TopicDescription]) -> None:
        self.member_ids = sorted(members)
        self.members = [members[m] for m in self.member_ids]
        self.subscribers: dict[uuid.UUID, list[int]] = {}
        for index, member in enumerate(self.members):
            for topic_id in sorted(member.subscribed_topic_ids, key=java_uuid_key):
                topic_description(topics, topic_id)
                self.subscribers.setdefault(topic_id, []).append(index)
        self.topics = {t: topics[t] for t in self.subscribers}
        self.sizes = [0] * len(self.members)
        self.owners = {t: [UNASSIGNED] * d.partition_count for t, d in self.topics.items()}
        self.assignment: list[dict[uuid.UUID, set[int]]] = [{} for _ in self.members]
        self.racks_matter = rack_aware(self.members, self.topics.values())

    def build(self) -> GroupAssignment:
        if not self.topics:
            return {m: {} for m in self.member_ids}
        self._keep_subscribed_partitions()
        self._assign_unassigned()
        self._balance()
        return {m: freeze(self.assignment[i]) for i, m in enumerate(self.member_ids)}

    def _keep_subscribed_partitions(self) -> None:
        for index, member in enumerate(self.members):
            for topic_id, partitions in member.assigned.items():
                if topic_id not in member.subscribed_topic_ids:
                    continue
                owners = self.owners[topic_id]
                for partition in partitions:
                    if partition < len(owners) and owners[partition] == UNASSIGNED:
                        self._add(topic_id, partition, index)

    def _topic_order_key(self, topic_id: uuid.UUID) -> tuple[float, int, tuple[int, int]]:
        count = self.topics[topic_id].partition_count
        subscribers = len(self.subscribers[topic_id])
        return (-(count / subscribers), subscribers, java_uuid_key(topic_id))

    def _member_order_key(self, index: int) -> tuple[int, int]:
        return (self.sizes[index], index)

    def _assign_unassigned(self) -> None:
        unassigned = {
            t: [p for p, owner in enumerate(owners) if owner == UNASSIGNED] for t, owners in self.owners.items()
        }
        balancer = _MemberBalancer(self.sizes, self._member_order_key)
        for topic_id in sorted((t for t, ps in unassigned.items() if ps), key=self._topic_order_key):
            balancer.initialize(self.subscribers[topic_id])
            pending = unassigned[topic_id]
            while pending:
                member = balancer.next_least_loaded()
                partition = self._pick_partition(topic_id, pending, member)
                self._assign(topic_id, partition, member)

    def _pick_partition(self, topic_id: uuid.UUID, pending: list[int], member: int) -> int:
        rack = self.members[member].rack_id
        if self.racks_matter and rack is not None:
            description = self.topics[topic_id]
            for position, partition in enumerate(pending):
                if rack in racks_of(description, partition):
                    return pending.pop(position)
        return pending.pop(0)

    def _balance(self) -> None:
        topic_ids = sorted((t for t, subs in self.subscribers.items() if len(subs) >= 2), key=self._topic_order_key)
        if not topic_ids:
            return
        balancer = _MemberBalancer(self.sizes, self._member_order_key)
        last_rebalanced = -1
        for _ in range(MAX_ITERATION_COUNT):
            for position, topic_id in enumerate(topic_ids):
                if position == last_rebalanced:
                    return
                moved = self._balance_topic(topic_id, balancer)
                if moved > 0 or last_rebalanced == -1:
                    last_rebalanced = position

    def _balance_topic(self, topic_id: uuid.UUID, balancer: _MemberBalancer) -> int:
        if balancer.initialize(self.subscribers[topic_id]) <= 1:
            return 0
        owners = self.owners[topic_id]
        partitions = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for position, partition in enumerate(partitions):
            start.setdefault(owners[partition], position)
            end[owners[partition]] = position + 1
        moved = 0
        while not balancer.is_balanced():
            donor = self._next_donor(balancer, start, end)
            if donor == UNASSIGNED:
                break
            end[donor] -= 1
            partition = partitions[end[donor]]
            receiver = balancer.next_least_loaded()
            if balancer.is_balanced():
                break
            self._assign(topic_id, partition, receiver)
            moved += 1
        return moved

    @staticmethod
    def _next_donor(balancer: _MemberBalancer, start: dict[int, int], end: dict[int, int]) -> int:
        while True:
            donor = balancer.next_most_loaded()
            if donor == UNASSIGNED:
                return donor
            if donor not in end or end[donor] - start[donor] <= 0:
                balancer.exclude_most_loaded()
                continue
            return donor

    def _assign(self, topic_id: uuid.UUID, partition: int, member: int) -> None:
        previous = self.owners[topic_id][partition]
        if previous != UNASSIGNED:
            held = self.assignment[previous][topic_id]
            held.discard(partition)
            if not held:
                del self.assignment[previous][topic_id]
            self.sizes[previous] -= 1
            self.owners[topic_id][partition] = UNASSIGNED
        self._add(topic_id, partition, member)

    def _add(self, topic_id: uuid.UUID, partition: int, member: int) -> None:
        self.assignment[member].setdefault(topic_id, set()).add(partition)
        self.owners[topic_id][partition] = member
        self.sizes[member] += 1


class _MemberBalancer:
    """Kafka's MemberAssignmentBalancer: two ranges over the members sorted by partition count,
    the least loaded growing rightwards as partitions are handed to them, the most loaded growing
    leftwards as partitions are taken from them, until their counts differ by at most one."""

    def __init__(self, sizes: list[int], order_key: Callable[[int], tuple[int, int]]) -> None:
        self.sizes = sizes
        self.order_key = order_key
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: list[int]) -> int:
        self.sorted = sorted(members, key=self.order_key)
        sizes, ordered = self.sizes, self.sorted
        self.least_end = 0
        self.least_count = sizes[ordered[0]] - 1
        self.next_least = 0
        self.most_start = len(ordered)
        self.most_end = len(ordered)
        self.most_count = sizes[ordered[-1]] + 1
        self.next_most = len(ordered) - 1
        return sizes[ordered[-1]] - sizes[ordered[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.sorted[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return UNASSIGNED
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        position = self.next_most + 1
        member = self.sorted[position]
        self.sorted[position] = self.sorted[self.most_end - 1]
        self.sorted[self.most_end - 1] = member
        self.most_end -= 1

    def is_balanced(self) -> bool:
        return self.most_count - self.least_count <= 1
