"""Static membership (KIP-345): a group.instance.id keeps its place in the group across
restarts; whoever rejoins under it takes over, and the previous member id is fenced."""
from pykbroker.coordinator.group.model import MemberIdentity
from pykbroker.coordinator.group.state import PREPARING_REBALANCE, STABLE
from pykbroker.protocol.errors import ErrorCode

from .fakes import (SUB, GROUP_FORMED_MS, SESSION_MS, coordinator, heartbeat, join, subscription,
                    sync)


def static_group(c, *instances):
    answers = [join(c, instance_id=i) for i in instances]
    c.runtime.advance(GROUP_FORMED_MS)
    ids = [a[0].member_id for a in answers]
    leader = answers[0][0].leader_id
    for a in answers:
        sync(c, a[0].member_id, 1, assignments={m: m.encode() for m in ids}
             if a[0].member_id == leader else None)
    return ids


def test_a_static_member_joins_without_member_id_required_and_its_id_starts_with_its_instance():
    c = coordinator()
    [member] = static_group(c, "instance-a")
    assert member.startswith("instance-a-")


def test_a_static_member_rejoining_a_stable_group_takes_over_without_a_rebalance():
    c = coordinator()
    old_a, b = static_group(c, "instance-a", "instance-b")
    [answer] = join(c, instance_id="instance-a")
    new_a = answer.member_id
    assert answer.error == ErrorCode.NONE and new_a != old_a
    assert answer.generation_id == 1
    group = c.manager.get_group("g")
    assert group.state is STABLE and group.get(new_a).assignment == old_a.encode()
    assert heartbeat(c, new_a, 1, instance_id="instance-a") == ErrorCode.NONE
    assert heartbeat(c, old_a, 1, instance_id="instance-a") == ErrorCode.FENCED_INSTANCE_ID


def test_a_rejoining_static_leader_is_not_told_it_leads_before_join_group_v9():
    c = coordinator()
    old_leader, _ = static_group(c, "instance-a", "instance-b")
    [answer] = join(c, instance_id="instance-a")
    assert answer.leader_id == old_leader != answer.member_id
    assert answer.members == []


def test_from_join_group_v9_a_rejoining_static_leader_leads_but_skips_the_assignment():
    c = coordinator()
    static_group(c, "instance-a", "instance-b")
    [answer] = join(c, instance_id="instance-a", skip_assignment=True)
    assert answer.leader_id == answer.member_id and answer.skip_assignment
    assert len(answer.members) == 2


def test_a_static_member_rejoining_with_other_protocols_rebalances_only_if_the_protocol_changes():
    c = coordinator()
    static_group(c, "instance-a", "instance-b")
    join(c, instance_id="instance-a", protocols=[("range", subscription("other")),
                                                 ("roundrobin", SUB)])
    group = c.manager.get_group("g")
    assert (group.state, group.generation_id) == (STABLE, 1), "range still chosen"
    c = coordinator()
    static_group(c, "instance-a")
    [answer] = join(c, instance_id="instance-a", protocols=[("roundrobin", SUB), ("range", SUB)])
    assert (answer.generation_id, answer.protocol_name) == (2, "roundrobin")


def test_a_static_member_that_was_waiting_is_fenced_when_its_instance_rejoins():
    c = coordinator()
    a, b = static_group(c, "instance-a", "instance-b")
    waiting = join(c, member_id=a, instance_id="instance-a", protocols=[("range", subscription("new"))])
    join(c, instance_id="instance-a")
    assert waiting[0].error == ErrorCode.FENCED_INSTANCE_ID


def test_static_members_are_not_dropped_when_they_miss_a_rebalance():
    c = coordinator()
    a, b = static_group(c, "instance-a", "instance-b")
    rejoin = join(c, member_id=a, instance_id="instance-a",
                  protocols=[("range", subscription("other"))])
    for _ in range(6):  # b stays alive but does not rejoin within the rebalance timeout
        c.runtime.advance(5_000)
        heartbeat(c, b, 1, instance_id="instance-b")
    assert rejoin[0].error == ErrorCode.NONE
    assert set(m.member_id for m in rejoin[0].members) == {a, b}


def test_a_static_member_still_expires_after_its_session_timeout():
    c = coordinator()
    a, b = static_group(c, "instance-a", "instance-b")
    for _ in range(3):
        c.runtime.advance(SESSION_MS // 2)
        heartbeat(c, a, 1, instance_id="instance-a")
    assert not c.manager.get_group("g").has(b)


def test_wrong_member_id_for_an_instance_is_fenced_and_unknown_instances_are_unknown():
    c = coordinator()
    a, _ = static_group(c, "instance-a", "instance-b")
    assert join(c, member_id="other", instance_id="instance-a")[0].error == ErrorCode.FENCED_INSTANCE_ID
    assert join(c, member_id=a, instance_id="instance-z")[0].error == ErrorCode.UNKNOWN_MEMBER_ID
    assert sync(c, "other", 1, instance_id="instance-a")[0].error == ErrorCode.FENCED_INSTANCE_ID


def test_an_administrator_removes_a_static_member_by_its_instance_id():
    c = coordinator()
    a, b = static_group(c, "instance-a", "instance-b")
    result = c.handle_leave_group("g", [MemberIdentity("", "instance-b")])
    assert [m.error for m in result.members] == [ErrorCode.NONE]
    group = c.manager.get_group("g")
    assert not group.has(b) and group.state is PREPARING_REBALANCE


def test_with_no_initial_delay_the_first_join_still_waits_for_the_timer():
    """group.initial.rebalance.delay.ms=0: the first generation is not formed inside the
    JoinGroup that starts it but on the timer's next tick (in Kafka, its purgatory's thread)."""
    c = coordinator(initial_delay_ms=0)
    answers = join(c, instance_id="instance-a")
    assert answers == [] and c.manager.get_group("g").state is PREPARING_REBALANCE
    c.runtime.advance(1)
    assert (answers[0].error, answers[0].generation_id) == (ErrorCode.NONE, 1)


def test_with_no_initial_delay_static_members_joining_together_share_the_first_generation():
    """Two static members started together (librdkafka's 0102_static_group_rebalance): the
    second JoinGroup, handled before the timer's tick, joins generation 1, as on Kafka; it
    would otherwise rebalance the group and revoke what the first member was just given."""
    c = coordinator(initial_delay_ms=0)
    first = join(c, instance_id="instance-a")
    second = join(c, instance_id="instance-b")
    c.runtime.advance(1)
    assert first == [] and second == [], "a new member arrived: one more tick"
    c.runtime.advance(1)
    assert [a[0].generation_id for a in (first, second)] == [1, 1]
    assert len(first[0].members) == 2 and c.manager.get_group("g").size == 2


def test_with_no_initial_delay_a_member_arriving_after_the_tick_rebalances_the_group():
    c = coordinator(initial_delay_ms=0)
    first = join(c, instance_id="instance-a")
    c.runtime.advance(1)
    second = join(c, instance_id="instance-b")
    assert first[0].generation_id == 1 and second == []
    assert c.manager.get_group("g").state is PREPARING_REBALANCE
