"""Properties every assignor keeps, over generated groups: each subscribed partition assigned
exactly once (uniform, range) or at least once and evenly shared (simple), only to subscribers;
balance within one partition in homogeneous groups; stickiness when a member joins or leaves;
the same input, in any order, gives the same output."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from pykbroker.coordinator.group.assignors import ASSIGNORS, MemberSubscription, TopicDescription

from .support import group, member, owners, sizes, with_assignment

TOPIC_IDS = [uuid.UUID(int=(i + 1) * 0x1F3A5C7E9B2D4F6081A3C5E7092B4D6F) for i in range(4)]
EXCLUSIVE = ("uniform", "range")
SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def groups(
    draw: st.DrawFn, homogeneous: bool
) -> tuple[dict[str, MemberSubscription], dict[uuid.UUID, TopicDescription]]:
    counts = draw(st.lists(st.integers(0, 12), min_size=1, max_size=len(TOPIC_IDS)))
    described = {t: TopicDescription(t, f"t{i}", n) for i, (t, n) in enumerate(zip(TOPIC_IDS, counts))}
    ids = list(described)
    member_count = draw(st.integers(1, 7))
    if homogeneous:
        shared = draw(st.sets(st.sampled_from(ids), min_size=1))
        subscriptions = [shared] * member_count
    else:
        subscriptions = [draw(st.sets(st.sampled_from(ids))) for _ in range(member_count)]
    return group(*(member(f"m{i}", s) for i, s in enumerate(subscriptions))), described


def all_partitions(
    members: dict[str, MemberSubscription], described: dict[uuid.UUID, TopicDescription]
) -> set[tuple[uuid.UUID, int]]:
    subscribed = {t for m in members.values() for t in m.subscribed_topic_ids}
    return {(t, p) for t in subscribed for p in range(described[t].partition_count)}


def flatten(assignment: dict) -> set[tuple[uuid.UUID, int]]:
    return {(t, p) for t, ps in assignment.items() for p in ps}


def shares_partitions(name: str, members: dict, described: dict, extra_members: int) -> bool:
    """Whether the simple assignor would share partitions (more members than partitions), where
    its desired sharing, and so what a member keeps, changes with the group's size."""
    return name == "simple" and len(all_partitions(members, described)) < len(members) + extra_members


def check_valid(
    name: str, members: dict[str, MemberSubscription], described: dict[uuid.UUID, TopicDescription]
) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
    result = ASSIGNORS[name].assign(members, described)
    assert set(result) == set(members)
    held = owners(result)
    assert set(held) == all_partitions(members, described)
    for (topic_id, _), holders in held.items():
        assert all(topic_id in members[h].subscribed_topic_ids for h in holders)
        if name in EXCLUSIVE:
            assert len(holders) == 1
    return result


@SETTINGS
@given(groups(homogeneous=True), st.sampled_from(sorted(ASSIGNORS)))
def test_homogeneous_groups_are_complete_and_balanced(case: tuple, name: str) -> None:
    members, described = case
    result = check_valid(name, members, described)
    counts = sizes(result).values()
    if name != "range":  # range balances each topic, not the total
        assert max(counts) - min(counts) <= 1


@SETTINGS
@given(groups(homogeneous=False), st.sampled_from(sorted(ASSIGNORS)))
def test_heterogeneous_groups_are_complete(case: tuple, name: str) -> None:
    check_valid(name, *case)


@SETTINGS
@given(groups(homogeneous=False), st.sampled_from(sorted(ASSIGNORS)), st.randoms())
def test_the_same_input_in_any_order_gives_the_same_assignment(case: tuple, name: str, rnd: object) -> None:
    members, described = case
    first = ASSIGNORS[name].assign(members, described)
    held = with_assignment(members, first)
    order = list(held)
    rnd.shuffle(order)  # type: ignore[attr-defined]
    shuffled = {m: held[m] for m in order}
    assert ASSIGNORS[name].assign(held, described) == ASSIGNORS[name].assign(shuffled, described)


@SETTINGS
@given(groups(homogeneous=True), st.sampled_from(["uniform", "simple"]))
def test_a_balanced_group_keeps_its_assignment(case: tuple, name: str) -> None:
    members, described = case
    first = ASSIGNORS[name].assign(members, described)
    assert ASSIGNORS[name].assign(with_assignment(members, first), described) == first


@SETTINGS
@given(groups(homogeneous=True), st.sampled_from(["uniform", "simple"]))
def test_a_joining_member_only_takes_partitions_from_others(case: tuple, name: str) -> None:
    members, described = case
    if shares_partitions(name, members, described, 1):
        return
    first = ASSIGNORS[name].assign(members, described)
    subscribed = next(iter(members.values())).subscribed_topic_ids
    joined = with_assignment(members, first) | group(member("zz-new", subscribed))
    second = check_valid(name, joined, described)
    for member_id, assignment in first.items():
        before, after = flatten(assignment), flatten(second[member_id])
        if name == "uniform":
            assert after <= before
        else:  # simple's desired counts go by position, so a member may also gain one
            assert len(before & after) == min(len(before), len(after))


@SETTINGS
@given(groups(homogeneous=True), st.sampled_from(["uniform", "simple"]))
def test_when_a_member_leaves_the_others_keep_their_partitions(case: tuple, name: str) -> None:
    members, described = case
    if len(members) < 2 or shares_partitions(name, members, described, 0):
        return
    first = ASSIGNORS[name].assign(members, described)
    leaver = sorted(members)[0]
    remaining = {m: s for m, s in with_assignment(members, first).items() if m != leaver}
    second = check_valid(name, remaining, described)
    for member_id in remaining:
        before, after = flatten(first[member_id]), flatten(second[member_id])
        if name == "uniform":
            assert before <= after
        else:  # simple's desired counts go by position, so a member may also give one up
            assert len(before & after) == min(len(before), len(after))
