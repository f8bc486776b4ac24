"""The server-side range assignor: Kafka's RangeAssignorTest scenarios."""

from __future__ import annotations

import pytest

from pykbroker.coordinator.group.assignors import ASSIGNORS, PartitionAssignorError, TopicDescription

from .support import T1, T2, T3, group, member, parts, topics

range_assignor = ASSIGNORS["range"]


def test_a_subscription_to_a_missing_topic_is_an_error() -> None:
    with pytest.raises(PartitionAssignorError):
        range_assignor.assign(group(member("A", [T2])), topics((T1, 3)))


def test_first_assignment_two_members_two_topics_same_subscriptions() -> None:
    members = group(member("A", [T1, T3]), member("B", [T1, T3]))
    result = range_assignor.assign(members, topics((T1, 3), (T3, 2)))
    assert result == {"A": parts(T1=[0, 1], T3=[0]), "B": parts(T1=[2], T3=[1])}


def test_co_partitioned_topics_give_a_member_the_same_partition_numbers() -> None:
    members = group(member("A", [T1, T2, T3]), member("B", [T1, T2, T3]), member("C", [T1, T2, T3]))
    result = range_assignor.assign(members, topics((T1, 4), (T2, 4), (T3, 4)))
    assert result == {
        "A": parts(T1=[0, 1], T2=[0, 1], T3=[0, 1]),
        "B": parts(T1=[2], T2=[2], T3=[2]),
        "C": parts(T1=[3], T2=[3], T3=[3]),
    }


def test_first_assignment_three_members_different_subscriptions() -> None:
    members = group(member("A", [T1, T2]), member("B", [T3]), member("C", [T2, T3]))
    result = range_assignor.assign(members, topics((T1, 3), (T2, 3), (T3, 2)))
    assert result == {
        "A": parts(T1=[0, 1, 2], T2=[0, 1]),
        "B": parts(T3=[0]),
        "C": parts(T2=[2], T3=[1]),
    }


def test_more_members_than_partitions() -> None:
    members = group(member("A", [T1]), member("B", [T1]), member("C", [T1]))
    assert range_assignor.assign(members, topics((T1, 2))) == {
        "A": parts(T1=[0]),
        "B": parts(T1=[1]),
        "C": {},
    }


def test_static_members_come_first_in_instance_id_order() -> None:
    members = group(
        member("m-a", [T1]),
        member("m-b", [T1], instance="i-2"),
        member("m-c", [T1], instance="i-1"),
    )
    result = range_assignor.assign(members, topics((T1, 3)))
    assert result == {"m-c": parts(T1=[0]), "m-b": parts(T1=[1]), "m-a": parts(T1=[2])}


def test_a_static_member_rejoining_under_a_new_member_id_gets_its_range_back() -> None:
    before = group(member("old", [T1], instance="i-1"), member("other", [T1], instance="i-2"))
    after = group(member("new", [T1], instance="i-1"), member("other", [T1], instance="i-2"))
    described = topics((T1, 5))
    assert range_assignor.assign(before, described)["old"] == range_assignor.assign(after, described)["new"]


def test_members_in_a_rack_get_partitions_on_it_while_the_ranges_allow() -> None:
    described = topics((T1, 4), racks=4)  # partition p on rack{p} and rack{p+1 mod 4}
    members = group(member("A", [T1], rack="rack3"), member("B", [T1], rack="rack1"))
    result = range_assignor.assign(members, described)
    assert result == {"A": parts(T1=[2, 3]), "B": parts(T1=[0, 1])}


def test_co_partitioned_topics_go_to_members_in_their_racks_keeping_partition_numbers_together() -> None:
    described = topics((T1, 3), (T2, 3), racks=4)
    members = group(*(member(m, [T1, T2], rack=f"rack{i}") for i, m in enumerate("ABC")))
    assert range_assignor.assign(members, described) == {
        "A": parts(T1=[0], T2=[0]),
        "B": parts(T1=[1], T2=[1]),
        "C": parts(T1=[2], T2=[2]),
    }


def test_racks_are_ignored_when_every_partition_lives_on_the_same_racks() -> None:
    same = frozenset({"rack0", "rack1"})
    described = {
        t: TopicDescription(t, name, 4, {p: same for p in range(4)}) for t, name in ((T1, "topic1"), (T2, "topic2"))
    }
    members = group(*(member(m, [T1, T2], rack=f"rack{i}") for i, m in enumerate("ABC")))
    assert range_assignor.assign(members, described) == {
        "A": parts(T1=[0, 1], T2=[0, 1]),
        "B": parts(T1=[2], T2=[2]),
        "C": parts(T1=[3], T2=[3]),
    }


def test_a_single_topic_goes_to_members_in_their_racks() -> None:
    members = group(member("A", [T1], rack="rack0"), member("B", [T1], rack="rack2"))
    result = range_assignor.assign(members, topics((T1, 4), racks=4))
    assert result == {"A": parts(T1=[0, 3]), "B": parts(T1=[1, 2])}


def test_members_without_racks_get_plain_ranges() -> None:
    members = group(member("A", [T1, T2]), member("B", [T1, T2]))
    result = range_assignor.assign(members, topics((T1, 3), (T2, 3), racks=4))
    assert result == {"A": parts(T1=[0, 1], T2=[0, 1]), "B": parts(T1=[2], T2=[2])}


def test_rack_matches_give_way_to_balance() -> None:
    members = group(member("A", [T1], rack="rack0"), member("B", [T1], rack="rack1"), member("C", [T1], rack="rack5"))
    result = range_assignor.assign(members, topics((T1, 4), racks=4))
    assert result == {"A": parts(T1=[0, 2]), "B": parts(T1=[1]), "C": parts(T1=[3])}


def test_a_member_without_a_rack_matches_every_partition() -> None:
    members = group(member("A", [T1, T2], rack="rack0"), member("B", [T1, T2]), member("C", [T1, T2], rack="rack2"))
    result = range_assignor.assign(members, topics((T1, 3), (T2, 3), racks=4))
    assert result == {"A": parts(T1=[0], T2=[0]), "B": parts(T1=[1], T2=[1]), "C": parts(T1=[2], T2=[2])}
