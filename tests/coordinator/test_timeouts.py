"""The clocks of a rebalance: session timeouts, the rebalance timeout, the deadline for members
told MEMBER_ID_REQUIRED, the SyncGroup deadline and the new-member join timeout."""
from pykbroker.coordinator.group.join import NEW_MEMBER_JOIN_TIMEOUT_MS
from pykbroker.coordinator.group.state import PREPARING_REBALANCE, STABLE
from pykbroker.protocol.errors import ErrorCode

from .fakes import (GROUP_FORMED_MS, INITIAL_DELAY_MS, REBALANCE_MS, SESSION_MS, coordinator,
                    heartbeat, join, new_member_id, stable_group, sync)


def test_a_member_that_stops_heartbeating_is_removed_after_its_session_timeout():
    c = coordinator()
    alive, silent = stable_group(c, 2)
    group = c.manager.get_group("g")
    c.runtime.advance(SESSION_MS - 1)
    assert heartbeat(c, alive, 1) == ErrorCode.NONE
    assert group.has(silent)
    c.runtime.advance(1)
    assert not group.has(silent) and group.state is PREPARING_REBALANCE
    assert heartbeat(c, alive, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    [answer] = join(c, member_id=alive)
    assert (answer.generation_id, [m.member_id for m in answer.members]) == (2, [alive])


def test_heartbeats_keep_a_member_alive_indefinitely():
    c = coordinator()
    [member] = stable_group(c, 1)
    for _ in range(10):
        c.runtime.advance(SESSION_MS - 1)
        assert heartbeat(c, member, 1) == ErrorCode.NONE
    assert c.manager.get_group("g").state is STABLE


def test_members_that_heartbeat_but_do_not_rejoin_are_dropped_at_the_rebalance_timeout():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    rejoined = join(c, member_id=leader)
    for _ in range(REBALANCE_MS // 5000 - 1):
        c.runtime.advance(5000)
        assert heartbeat(c, follower, 1) == ErrorCode.REBALANCE_IN_PROGRESS
    c.runtime.advance(4999)
    assert rejoined == []
    c.runtime.advance(1)
    assert rejoined[0].generation_id == 2 and len(rejoined[0].members) == 1
    assert not c.manager.get_group("g").has(follower)
    assert heartbeat(c, follower, 1) == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_member_waiting_in_join_group_outlives_its_session_timeout():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    waiting = join(c, member_id=leader)
    for _ in range(4):  # the follower keeps the rebalance waiting
        c.runtime.advance(SESSION_MS // 2)
        heartbeat(c, follower, 1)
    assert waiting == [] and c.manager.get_group("g").has(leader)


def test_a_member_id_handed_out_with_member_id_required_lapses_after_the_session_timeout():
    c = coordinator()
    [member] = stable_group(c, 1)
    pending = new_member_id(c)
    waiting = join(c, member_id=member)
    assert waiting == [], "the rebalance waits for the pending member"
    c.runtime.advance(SESSION_MS)
    assert waiting[0].error == ErrorCode.NONE and len(waiting[0].members) == 1
    assert join(c, member_id=pending)[0].error == ErrorCode.UNKNOWN_MEMBER_ID


def test_members_that_do_not_send_sync_group_in_time_are_removed_and_the_group_rebalances():
    c = coordinator()
    leader, follower = new_member_id(c), new_member_id(c)
    join(c, member_id=leader), join(c, member_id=follower)
    c.runtime.advance(GROUP_FORMED_MS)
    sync(c, leader, 1, assignments={leader: b"A", follower: b"B"})
    group = c.manager.get_group("g")
    for _ in range(REBALANCE_MS // 5000 - 1):
        c.runtime.advance(5000)
        heartbeat(c, leader, 1), heartbeat(c, follower, 1)
    c.runtime.advance(4999)
    assert group.has(follower)
    c.runtime.advance(1)
    assert not group.has(follower) and group.state is PREPARING_REBALANCE


def test_a_new_member_that_never_rejoins_is_dropped_after_the_new_member_join_timeout():
    c = coordinator()
    [old] = stable_group(c, 1)
    newcomer = join(c, member_id=new_member_id(c), rebalance_ms=10 * NEW_MEMBER_JOIN_TIMEOUT_MS)
    # the old member keeps heartbeating but never rejoins: the rebalance waits for it
    for _ in range(NEW_MEMBER_JOIN_TIMEOUT_MS // 5000):
        c.runtime.advance(5000)
        heartbeat(c, old, 1)
    assert newcomer[0].error == ErrorCode.UNKNOWN_MEMBER_ID


def test_the_initial_delay_never_exceeds_the_rebalance_timeout():
    c = coordinator()
    first = join(c, member_id=new_member_id(c), rebalance_ms=5_000)
    c.runtime.advance(INITIAL_DELAY_MS - 1)
    join(c, member_id=new_member_id(c), rebalance_ms=5_000)
    c.runtime.advance(5_000 - INITIAL_DELAY_MS)
    assert first == []
    c.runtime.advance(1)
    assert first[0].generation_id == 1 and len(first[0].members) == 2
