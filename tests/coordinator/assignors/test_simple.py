"""The share groups' simple assignor (KIP-932)."""

from __future__ import annotations

import pytest

from pykbroker.coordinator.group.assignors import ASSIGNORS, PartitionAssignorError, SimpleAssignor
from pykbroker.coordinator.group.assignors.simple import desired_counts

from .support import T1, T2, group, member, owners, parts, sizes, topics, with_assignment

simple = ASSIGNORS["simple"]


def test_a_subscription_to_a_missing_topic_is_an_error() -> None:
    with pytest.raises(PartitionAssignorError):
        simple.assign(group(member("A", [T2])), topics((T1, 3)))


def test_partitions_are_split_evenly_when_they_outnumber_members() -> None:
    result = simple.assign(group(member("A", [T1]), member("B", [T1])), topics((T1, 4)))
    assert sizes(result) == {"A": 2, "B": 2}
    assert all(len(h) == 1 for h in owners(result).values())


def test_partitions_are_shared_when_members_outnumber_them() -> None:
    members = group(member("A", [T1]), member("B", [T1]), member("C", [T1]))
    result = simple.assign(members, topics((T1, 2)))
    assert desired_counts(3, 2) == (2, [2, 1, 1])
    assert sizes(result) == {"A": 2, "B": 1, "C": 1}
    assert sorted(len(h) for h in owners(result).values()) == [2, 2]


def test_a_member_of_both_topics_gets_half_of_each_in_a_heterogeneous_group() -> None:
    members = group(member("M1", [T1]), member("M2", [T2]), member("M3", [T1, T2]))
    result = simple.assign(members, topics((T1, 4), (T2, 4)))
    assert sizes(result) == {"M1": 2, "M2": 2, "M3": 4}
    assert len(result["M3"][T1]) == 2 and len(result["M3"][T2]) == 2


def test_a_joining_member_takes_partitions_without_moving_the_others() -> None:
    described = topics((T1, 6))
    first = simple.assign(group(member("A", [T1]), member("B", [T1])), described)
    members = with_assignment(group(member("A", [T1]), member("B", [T1]), member("C", [T1])), first)
    second = simple.assign(members, described)
    assert sizes(second) == {"A": 2, "B": 2, "C": 2}
    for member_id in "AB":
        assert second[member_id][T1] <= first[member_id][T1]


def test_only_assignable_partitions_are_assigned() -> None:
    result = SimpleAssignor().assign(
        group(member("A", [T1]), member("B", [T1])), topics((T1, 4)), assignable={T1: frozenset({1, 3})}
    )
    assert sorted(p for a in result.values() for p in a.get(T1, ())) == [1, 3]


def test_unsubscribed_topics_are_revoked() -> None:
    members = group(member("A", [T2], {T1: [0], T2: [0]}), member("B", [T2], {T1: [1], T2: [1]}))
    assert simple.assign(members, topics((T1, 2), (T2, 2))) == {"A": parts(T2=[0]), "B": parts(T2=[1])}
