"""Heartbeat and LeaveGroup answers in each group state."""
from pykbroker.coordinator.group.model import MemberIdentity
from pykbroker.coordinator.group.state import COMPLETING_REBALANCE, PREPARING_REBALANCE
from pykbroker.protocol.errors import ErrorCode

from .fakes import (GROUP_FORMED_MS, coordinator, heartbeat, join, new_member_id, stable_group,
                    sync)


def test_heartbeat_answers_by_state_generation_and_membership():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    assert heartbeat(c, leader, 1) == ErrorCode.NONE
    assert heartbeat(c, leader, 0) == ErrorCode.ILLEGAL_GENERATION
    assert heartbeat(c, "stranger", 1) == ErrorCode.UNKNOWN_MEMBER_ID
    assert heartbeat(c, leader, 1, group="unknown-group") == ErrorCode.UNKNOWN_MEMBER_ID
    assert heartbeat(c, leader, 1, group="") == ErrorCode.INVALID_GROUP_ID
    join(c, member_id=leader)
    assert heartbeat(c, follower, 1) == ErrorCode.REBALANCE_IN_PROGRESS


def test_heartbeats_are_accepted_while_the_group_awaits_the_assignment():
    c = coordinator()
    leader, follower = new_member_id(c), new_member_id(c)
    join(c, member_id=leader), join(c, member_id=follower)
    c.runtime.advance(GROUP_FORMED_MS)
    assert c.manager.get_group("g").state is COMPLETING_REBALANCE
    assert heartbeat(c, follower, 1) == ErrorCode.NONE


def test_heartbeat_of_an_empty_group_is_unknown_member():
    c = coordinator()
    [member] = stable_group(c, 1)
    c.handle_leave_group("g", [MemberIdentity(member)])
    assert heartbeat(c, member, 2) == ErrorCode.UNKNOWN_MEMBER_ID


def test_heartbeat_answers_none_while_the_groups_partition_loads():
    c = coordinator()
    c.manager.loading_partitions.add(0)
    assert heartbeat(c, "anyone", 1) == ErrorCode.NONE
    [answer] = sync(c, "anyone", 1)
    assert answer.error == ErrorCode.REBALANCE_IN_PROGRESS
    assert join(c)[0].error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_a_member_leaving_a_stable_group_starts_a_rebalance_without_it():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    result = c.handle_leave_group("g", [MemberIdentity(follower)])
    assert result.error == ErrorCode.NONE
    assert [(m.member_id, m.error) for m in result.members] == [(follower, ErrorCode.NONE)]
    assert c.manager.get_group("g").state is PREPARING_REBALANCE
    [answer] = join(c, member_id=leader)
    assert [m.member_id for m in answer.members] == [leader]


def test_the_leader_leaving_hands_leadership_to_another_member():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    c.handle_leave_group("g", [MemberIdentity(leader)])
    [answer] = join(c, member_id=follower)
    assert answer.leader_id == follower


def test_leave_group_answers_each_member_of_a_batch():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    result = c.handle_leave_group("g", [MemberIdentity(follower), MemberIdentity("stranger"),
                                        MemberIdentity("", "no-such-instance")])
    assert [m.error for m in result.members] == [ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID,
                                                 ErrorCode.UNKNOWN_MEMBER_ID]


def test_leave_group_of_an_unknown_group_answers_unknown_member_per_member():
    c = coordinator()
    result = c.handle_leave_group("nobody", [MemberIdentity("m")])
    assert result.error == ErrorCode.NONE
    assert [m.error for m in result.members] == [ErrorCode.UNKNOWN_MEMBER_ID]


def test_a_pending_member_may_leave_and_no_longer_holds_up_the_rebalance():
    c = coordinator()
    [member] = stable_group(c, 1)
    pending = new_member_id(c)
    waiting = join(c, member_id=member)
    assert waiting == []
    c.handle_leave_group("g", [MemberIdentity(pending)])
    assert waiting[0].error == ErrorCode.NONE


def test_a_new_member_leaving_while_waiting_in_join_group_is_answered_unknown_member():
    c = coordinator()
    [member] = stable_group(c, 1)
    newcomer = new_member_id(c)
    waiting = join(c, member_id=newcomer)
    c.handle_leave_group("g", [MemberIdentity(newcomer)])
    assert waiting[0].error == ErrorCode.UNKNOWN_MEMBER_ID
