"""Builders for assignor specifications: Kafka's test topics, members and assignments."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterable, Mapping

from pykbroker.coordinator.group.assignors import MemberSubscription, TopicDescription


def kafka_uuid(text: str) -> uuid.UUID:
    """A topic id written as Kafka writes Uuids (22 characters of URL-safe base64)."""
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=="))


# The topic ids of Kafka's assignor tests.
T1 = kafka_uuid("T1-A4s3VTwiI5CTbEp6POw")
T2 = kafka_uuid("T2-B4s3VTwiI5YHbPp6YUe")
T3 = kafka_uuid("T3-CU8fVTLCz5YMkLoDQsa")


def topics(*specs: tuple[uuid.UUID, int], racks: int = 0) -> dict[uuid.UUID, TopicDescription]:
    """Topics with partition counts; with `racks`, partition p has replicas on racks
    rack{p % racks} and rack{(p + 1) % racks}, as Kafka's tests' mkMapOfPartitionRacks."""
    result = {}
    for index, (topic_id, count) in enumerate(specs):
        partition_racks = (
            {p: frozenset({f"rack{p % racks}", f"rack{(p + 1) % racks}"}) for p in range(count)} if racks else {}
        )
        result[topic_id] = TopicDescription(topic_id, f"topic{index + 1}", count, partition_racks)
    return result


def member(
    member_id: str,
    subscribed: Iterable[uuid.UUID],
    assigned: Mapping[uuid.UUID, Iterable[int]] | None = None,
    rack: str | None = None,
    instance: str | None = None,
) -> MemberSubscription:
    return MemberSubscription(
        member_id=member_id,
        instance_id=instance,
        rack_id=rack,
        subscribed_topic_ids=frozenset(subscribed),
        assigned={t: frozenset(ps) for t, ps in (assigned or {}).items()},
    )


def group(*members: MemberSubscription) -> dict[str, MemberSubscription]:
    return {m.member_id: m for m in members}


def parts(**by_topic: Iterable[int]) -> dict[uuid.UUID, frozenset[int]]:
    """An expected assignment written as parts(T1=[0, 1], T3=[2])."""
    ids = {"T1": T1, "T2": T2, "T3": T3}
    return {ids[name]: frozenset(ps) for name, ps in by_topic.items()}


def sizes(assignment: Mapping[str, Mapping[uuid.UUID, frozenset[int]]]) -> dict[str, int]:
    return {m: sum(len(ps) for ps in a.values()) for m, a in assignment.items()}


def owners(
    assignment: Mapping[str, Mapping[uuid.UUID, frozenset[int]]],
) -> dict[tuple[uuid.UUID, int], list[str]]:
    result: dict[tuple[uuid.UUID, int], list[str]] = {}
    for member_id, topics_assigned in assignment.items():
        for topic_id, partitions in topics_assigned.items():
            for p in partitions:
                result.setdefault((topic_id, p), []).append(member_id)
    return result


def with_assignment(
    members: Mapping[str, MemberSubscription],
    assignment: Mapping[str, Mapping[uuid.UUID, frozenset[int]]],
) -> dict[str, MemberSubscription]:
    """The members again, each holding what `assignment` gave it."""
    return {
        m: MemberSubscription(
            s.member_id, s.instance_id, s.rack_id, s.subscribed_topic_ids, dict(assignment.get(m, {}))
        )
        for m, s in members.items()
    }
