"""Acceptance: incremental (cooperative-sticky) rebalancing with confluent-kafka.

The broker side is the classic protocol; the clients revoke and assign incrementally (KIP-429):
members keep the partitions they still own across a rebalance, and the rebalance callbacks
carry only the partitions that move.
"""
from __future__ import annotations

import pytest

from .clients import create_topic
from .coordinator.live import MemberProcess, covers_exactly, group_broker, wait_until

PARTITIONS = 6


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with group_broker(tmp_path_factory.mktemp("cooperative")) as running:
        yield running


@pytest.fixture
def members():
    started: list[MemberProcess] = []
    yield started
    for member in started:
        member.stop()


def cooperative_member(broker, topic):
    return MemberProcess("confluent-kafka", broker.bootstrap, topic, topic,
                         strategy="cooperative-sticky")


def moved(member, kind: str, since: int = 0) -> frozenset[int]:
    """The partitions of `member`'s "assign" or "revoke" callbacks from event `since` on."""
    return frozenset(p for e in member.events[since:] if kind in e for p in e[kind])


def test_members_joining_and_leaving_move_only_the_partitions_that_change_owner(broker, members):
    topic = "cooperative"
    create_topic(broker.bootstrap, topic, PARTITIONS)
    first = cooperative_member(broker, topic)
    members.append(first)
    wait_until(lambda: first.assignment == frozenset(range(PARTITIONS)), what="one owner")

    second = cooperative_member(broker, topic)
    members.append(second)
    wait_until(lambda: covers_exactly([first, second], PARTITIONS), what="two owners")
    assert len(first.assignment) == len(second.assignment) == 3
    assert moved(first, "revoke") == second.assignment, "only what moves is revoked"
    assert moved(second, "assign") == second.assignment

    marks = [len(first.events), len(second.events)]
    before = first.assignment, second.assignment
    third = cooperative_member(broker, topic)
    members.append(third)
    # balanced, not only covered: a member's view of its partitions may lag one round behind
    wait_until(lambda: covers_exactly([first, second, third], PARTITIONS)
               and all(len(m.assignment) == PARTITIONS // 3 for m in (first, second, third)),
               what="three owners of two partitions each")
    assert moved(first, "revoke", marks[0]) | moved(second, "revoke", marks[1]) == third.assignment
    assert first.assignment == before[0] - third.assignment
    assert second.assignment == before[1] - third.assignment

    marks = [len(first.events), len(second.events)]
    orphaned = third.assignment
    third.close()
    wait_until(lambda: covers_exactly([first, second], PARTITIONS), what="two owners again")
    assert moved(first, "revoke", marks[0]) | moved(second, "revoke", marks[1]) == frozenset()
    assert moved(first, "assign", marks[0]) | moved(second, "assign", marks[1]) == orphaned
