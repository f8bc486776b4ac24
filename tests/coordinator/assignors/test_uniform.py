"""The uniform assignor: the scenarios of Kafka's UniformHomogeneousAssignmentBuilderTest and
UniformHeterogeneousAssignmentBuilderTest give the same assignments here."""

from __future__ import annotations

import pytest

from pykbroker.coordinator.group.assignors import ASSIGNORS, PartitionAssignorError
from pykbroker.coordinator.group.assignors.uniform_heterogeneous import assign_heterogeneous

from .support import T1, T2, T3, group, member, owners, parts, sizes, topics, with_assignment

uniform = ASSIGNORS["uniform"]


class TestHomogeneous:
    def test_a_member_without_subscriptions_gets_nothing(self) -> None:
        assert uniform.assign(group(member("A", [])), topics((T1, 3))) == {"A": {}}

    def test_a_subscription_to_a_missing_topic_is_an_error(self) -> None:
        with pytest.raises(PartitionAssignorError):
            uniform.assign(group(member("A", [T2])), topics((T1, 3)))

    def test_first_assignment_two_members_two_topics(self) -> None:
        result = uniform.assign(group(member("A", [T1, T3]), member("B", [T1, T3])), topics((T1, 3), (T3, 2)))
        assert result == {"A": parts(T3=[0, 1]), "B": parts(T1=[0, 1, 2])}

    def test_more_members_than_partitions_leaves_one_empty(self) -> None:
        members = group(member("A", [T3]), member("B", [T3]), member("C", [T3]))
        assert uniform.assign(members, topics((T3, 2))) == {"A": {}, "B": parts(T3=[0]), "C": parts(T3=[1])}

    def test_an_unbalanced_assignment_is_rebalanced_keeping_what_it_can(self) -> None:
        members = group(
            member("A", [T1, T2], {T1: [0, 1], T2: [0, 1]}),
            member("B", [T1, T2], {T1: [2], T2: [2]}),
        )
        result = uniform.assign(members, topics((T1, 3), (T2, 3)))
        assert result == {"A": parts(T1=[0, 1], T2=[0]), "B": parts(T1=[2], T2=[1, 2])}

    def test_added_partitions_go_to_the_members_below_quota(self) -> None:
        members = group(
            member("A", [T1, T2], {T1: [0, 2], T2: [0]}),
            member("B", [T1, T2], {T1: [1], T2: [1, 2]}),
        )
        result = uniform.assign(members, topics((T1, 6), (T2, 5)))
        assert result == {"A": parts(T1=[0, 2], T2=[0, 3, 4]), "B": parts(T1=[1, 3, 4, 5], T2=[1, 2])}

    def test_a_joining_member_takes_partitions_over_quota(self) -> None:
        members = group(
            member("A", [T1, T2], {T1: [0, 2], T2: [0]}),
            member("B", [T1, T2], {T1: [1], T2: [1, 2]}),
            member("C", [T1, T2]),
        )
        result = uniform.assign(members, topics((T1, 3), (T2, 3)))
        assert result == {"A": parts(T1=[0, 2]), "B": parts(T1=[1], T2=[1]), "C": parts(T2=[0, 2])}

    def test_a_leaving_members_partitions_are_shared_out(self) -> None:
        members = group(
            member("A", [T1, T2], {T1: [0], T2: [0]}),
            member("B", [T1, T2], {T1: [1], T2: [1]}),
        )
        result = uniform.assign(members, topics((T1, 3), (T2, 3)))
        assert result == {"A": parts(T1=[0], T2=[0, 2]), "B": parts(T1=[1, 2], T2=[1])}

    def test_unsubscribed_topics_are_revoked(self) -> None:
        members = group(
            member("A", [T2], {T1: [0], T2: [0]}),
            member("B", [T2], {T1: [1], T2: [1]}),
        )
        result = uniform.assign(members, topics((T1, 2), (T2, 2)))
        assert result == {"A": parts(T2=[0]), "B": parts(T2=[1])}

    def test_an_assignment_is_kept_whatever_order_the_members_come_in(self) -> None:
        described = topics((T1, 2), (T2, 5), (T3, 7))
        members = group(*(member(m, [T1, T2, T3]) for m in "ABC"))
        first = uniform.assign(members, described)
        again = with_assignment(members, first)
        for order in ("ABC", "CBA", "BCA"):
            assert uniform.assign({m: again[m] for m in order}, described) == first

    def test_members_take_partitions_on_their_rack(self) -> None:
        described = topics((T1, 6), racks=3)  # partition p on rack{p%3} and rack{(p+1)%3}
        members = group(member("A", [T1], rack="rack2"), member("B", [T1], rack="rack0"))
        result = uniform.assign(members, described)
        assert sizes(result) == {"A": 3, "B": 3}
        for member_id, rack in (("A", "rack2"), ("B", "rack0")):
            for p in result[member_id][T1]:
                assert rack in described[T1].partition_racks[p]


class TestHeterogeneous:
    def test_members_without_subscriptions_get_nothing(self) -> None:
        result = uniform.assign(group(member("A", []), member("B", [T1])), topics((T1, 3)))
        assert result == {"A": {}, "B": parts(T1=[0, 1, 2])}

    def test_a_subscription_to_a_missing_topic_is_an_error(self) -> None:
        with pytest.raises(PartitionAssignorError):
            uniform.assign(group(member("A", [T3]), member("B", [T2])), topics((T1, 3)))

    def test_first_assignment_two_members_two_topics(self) -> None:
        members = group(member("A", [T1, T3]), member("B", [T3]))
        result = uniform.assign(members, topics((T1, 3), (T3, 6)))
        assert result == {"A": parts(T1=[0, 1, 2], T3=[4]), "B": parts(T3=[0, 1, 2, 3, 5])}

    def test_more_members_than_partitions(self) -> None:
        members = group(member("A", [T3]), member("B", [T3]), member("C", [T1]))
        result = uniform.assign(members, topics((T3, 1), (T1, 2)))
        assert result == {"A": parts(T3=[0]), "B": {}, "C": parts(T1=[0, 1])}

    def test_an_unbalanced_assignment_is_rebalanced(self) -> None:
        members = group(
            member("A", [T1], {T1: [0, 1, 2]}),
            member("B", [T1, T2], {T1: [3], T2: [0]}),
            member("C", [T1, T2, T3], {T1: [4, 5], T2: [1, 2, 3], T3: [0, 1, 2, 3]}),
        )
        result = uniform.assign(members, topics((T1, 6), (T2, 4), (T3, 4)))
        assert result == {
            "A": parts(T1=[0, 1, 2, 5]),
            "B": parts(T1=[3], T2=[0, 1, 2, 3]),
            "C": parts(T1=[4], T3=[0, 1, 2, 3]),
        }

    def test_a_joining_member_and_added_partitions(self) -> None:
        members = group(
            member("A", [T1], {T1: [0, 2], T2: [0]}),
            member("B", [T1, T2], {T1: [1], T2: [1, 2]}),
            member("C", [T1, T2]),
        )
        result = uniform.assign(members, topics((T1, 6), (T2, 7)))
        assert result == {
            "A": parts(T1=[0, 2, 3, 4, 5]),
            "B": parts(T1=[1], T2=[1, 2, 6]),
            "C": parts(T2=[0, 3, 4, 5]),
        }

    def test_an_unsubscribed_topic_is_revoked_and_its_partitions_rebalanced(self) -> None:
        members = group(
            member("A", [T1], {T1: [0, 2], T2: [1, 3]}),
            member("B", [T1, T2], {T1: [1], T2: [0, 2, 4]}),
        )
        result = uniform.assign(members, topics((T1, 3), (T2, 5)))
        assert result == {"A": parts(T1=[0, 1, 2]), "B": parts(T2=[0, 1, 2, 3, 4])}

    def test_balancing_stops_when_a_topic_runs_out_of_partitions(self) -> None:
        # Kafka's test runs the heterogeneous builder on equal subscriptions
        members = group(
            member("A", [T1, T2, T3], {T1: [0, 1], T2: [0, 1], T3: [0, 1]}),
            member("B", [T1, T2, T3]),
        )
        result = assign_heterogeneous(members, topics((T1, 2), (T2, 2), (T3, 2)))
        assert result == {"A": parts(T2=[0], T3=[0, 1]), "B": parts(T1=[0, 1], T2=[1])}

    def test_every_partition_is_assigned_once_to_a_subscriber(self) -> None:
        members = group(member("A", [T1, T2]), member("B", [T2, T3]), member("C", [T3]))
        result = uniform.assign(members, topics((T1, 4), (T2, 5), (T3, 6)))
        held = owners(result)
        assert sorted(held) == sorted((t, p) for t, n in ((T1, 4), (T2, 5), (T3, 6)) for p in range(n))
        for (topic_id, _), holders in held.items():
            assert len(holders) == 1 and topic_id in members[holders[0]].subscribed_topic_ids
