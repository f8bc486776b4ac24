"""JoinGroup and SyncGroup: how a classic group forms, picks a protocol and hands out the
leader's assignment (Kafka's GroupCoordinator rules)."""
from pykbroker.coordinator.group.state import (COMPLETING_REBALANCE, EMPTY, PREPARING_REBALANCE,
                                               STABLE)
from pykbroker.protocol.errors import ErrorCode

from .fakes import (SUB, subscription, GROUP_FORMED_MS, INITIAL_DELAY_MS, RANGE, coordinator, join, new_member_id, stable_group, sync)


def test_a_first_join_without_member_id_gets_member_id_required_and_a_new_id():
    c = coordinator()
    [answer] = join(c, client_id="consumer-1")
    assert answer.error == ErrorCode.MEMBER_ID_REQUIRED
    assert answer.member_id.startswith("consumer-1-")
    assert answer.generation_id == -1 and answer.leader_id == "" and answer.members == []


def test_before_join_group_v4_an_unknown_member_joins_at_once():
    c = coordinator()
    answers = join(c, require_known_member_id=False)
    c.runtime.advance(INITIAL_DELAY_MS)
    assert answers[0].error == ErrorCode.NONE
    assert answers[0].member_id and answers[0].generation_id == 1


def test_an_empty_group_waits_the_initial_rebalance_delay_then_answers_the_leader_with_members():
    c = coordinator()
    member = new_member_id(c)
    answers = join(c, member_id=member)
    assert answers == [] and c.manager.get_group("g").state is PREPARING_REBALANCE
    c.runtime.advance(INITIAL_DELAY_MS - 1)
    assert answers == []
    c.runtime.advance(1)
    [answer] = answers
    assert (answer.error, answer.generation_id, answer.leader_id) == (ErrorCode.NONE, 1, member)
    assert answer.protocol_type == "consumer" and answer.protocol_name == "range"
    assert [(m.member_id, m.metadata) for m in answer.members] == [(member, RANGE[0][1])]
    assert c.manager.get_group("g").state is COMPLETING_REBALANCE


def test_members_joining_during_the_initial_delay_extend_it_and_join_the_same_generation():
    c = coordinator()
    first, second = new_member_id(c), new_member_id(c)
    a1 = join(c, member_id=first)
    c.runtime.advance(INITIAL_DELAY_MS - 100)
    a2 = join(c, member_id=second)
    c.runtime.advance(100)
    assert a1 == [] and a2 == [], "a new member arrived: the delay starts again"
    c.runtime.advance(INITIAL_DELAY_MS)
    assert a1[0].generation_id == a2[0].generation_id == 1
    assert len(a1[0].members) == 2 and a2[0].members == [], "only the leader sees the members"


def test_a_rebalance_of_a_stable_group_completes_as_soon_as_every_member_rejoined():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    rejoin_leader = join(c, member_id=leader)
    assert rejoin_leader == [] and c.manager.get_group("g").state is PREPARING_REBALANCE
    rejoin_follower = join(c, member_id=follower)
    assert rejoin_leader[0].generation_id == rejoin_follower[0].generation_id == 2


def test_sync_group_hands_each_member_its_own_assignment_from_the_leader():
    c = coordinator()
    leader, follower = new_member_id(c), new_member_id(c)
    answers = [join(c, member_id=leader), join(c, member_id=follower)]
    c.runtime.advance(GROUP_FORMED_MS)
    follower_sync = sync(c, follower, 1)
    assert follower_sync == [], "followers wait for the leader's assignment"
    leader_sync = sync(c, leader, 1, assignments={leader: b"A", follower: b"B"})
    assert (leader_sync[0].error, leader_sync[0].assignment) == (ErrorCode.NONE, b"A")
    assert (follower_sync[0].error, follower_sync[0].assignment) == (ErrorCode.NONE, b"B")
    assert follower_sync[0].protocol_type == "consumer" and follower_sync[0].protocol_name == "range"
    assert c.manager.get_group("g").state is STABLE
    assert answers[0][0].leader_id == leader


def test_members_the_leader_left_out_get_an_empty_assignment():
    c = coordinator()
    leader, follower = new_member_id(c), new_member_id(c)
    join(c, member_id=leader), join(c, member_id=follower)
    c.runtime.advance(GROUP_FORMED_MS)
    sync(c, leader, 1, assignments={leader: b"all"})
    assert sync(c, follower, 1)[0].assignment == b""


def test_a_stable_group_answers_sync_group_with_the_current_assignment():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    [answer] = sync(c, follower, 1)
    assert answer.assignment == follower.encode()


def test_sync_group_checks_member_generation_and_protocol():
    c = coordinator()
    leader, _ = stable_group(c, 2)
    assert sync(c, "stranger", 1)[0].error == ErrorCode.UNKNOWN_MEMBER_ID
    assert sync(c, leader, 7)[0].error == ErrorCode.ILLEGAL_GENERATION
    assert sync(c, leader, 1, protocol_type="other")[0].error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert sync(c, leader, 1, protocol_name="other")[0].error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert sync(c, leader, 1, protocol_type="consumer", protocol_name="range")[0].error == ErrorCode.NONE
    assert sync(c, leader, 1, group="nobody")[0].error == ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_group_during_a_rebalance_is_told_to_rejoin():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    join(c, member_id=leader)
    assert sync(c, follower, 1)[0].error == ErrorCode.REBALANCE_IN_PROGRESS


def test_a_rebalance_cancels_the_pending_sync_of_the_previous_round():
    c = coordinator()
    leader, follower = new_member_id(c), new_member_id(c)
    join(c, member_id=leader), join(c, member_id=follower)
    c.runtime.advance(GROUP_FORMED_MS)
    waiting = sync(c, follower, 1)
    join(c, member_id=leader, protocols=[("range", subscription("changed"))])
    assert waiting[0].error == ErrorCode.REBALANCE_IN_PROGRESS


def test_the_protocol_is_one_every_member_supports_preferred_by_most():
    c = coordinator()
    ids = [new_member_id(c) for _ in range(3)]
    answers = [join(c, member_id=ids[0], protocols=[("roundrobin", SUB), ("range", SUB)]),
               join(c, member_id=ids[1], protocols=[("sticky", SUB), ("range", SUB),
                                                    ("roundrobin", SUB)]),
               join(c, member_id=ids[2], protocols=[("range", SUB), ("roundrobin", SUB)])]
    c.runtime.advance(GROUP_FORMED_MS)
    assert {a[0].protocol_name for a in answers} == {"range"}


def test_a_member_without_a_protocol_in_common_is_rejected():
    c = coordinator()
    stable_group(c, 1)
    [answer] = join(c, protocols=[("cooperative-sticky", SUB)])
    assert answer.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    [answer] = join(c, protocol_type="connect")
    assert answer.error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_an_empty_group_accepts_any_protocol_but_needs_a_type_and_a_protocol():
    c = coordinator()
    assert join(c, protocol_type="")[0].error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert join(c, protocols=[])[0].error == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert join(c, protocol_type="connect")[0].error == ErrorCode.MEMBER_ID_REQUIRED


def test_session_timeouts_outside_the_broker_bounds_are_rejected():
    c = coordinator()  # bounds 1000..60000
    assert join(c, session_ms=999)[0].error == ErrorCode.INVALID_SESSION_TIMEOUT
    assert join(c, session_ms=60_001)[0].error == ErrorCode.INVALID_SESSION_TIMEOUT
    assert join(c, session_ms=60_000)[0].error == ErrorCode.MEMBER_ID_REQUIRED


def test_a_group_id_is_required_and_must_belong_to_this_coordinator():
    c = coordinator(partitions=2)
    assert join(c, group="")[0].error == ErrorCode.INVALID_GROUP_ID
    c.on_resignation(c.partition_for("g"))
    assert join(c, group="g")[0].error == ErrorCode.NOT_COORDINATOR


def test_a_group_at_max_size_turns_new_members_away():
    c = coordinator(max_size=2)
    stable_group(c, 2)
    [answer] = join(c, require_known_member_id=False)
    assert answer.error == ErrorCode.GROUP_MAX_SIZE_REACHED and answer.member_id == ""


def test_joining_with_an_unknown_member_id_is_rejected():
    c = coordinator()
    assert join(c, member_id="made-up")[0].error == ErrorCode.UNKNOWN_MEMBER_ID
    stable_group(c, 1)
    assert join(c, member_id="made-up")[0].error == ErrorCode.UNKNOWN_MEMBER_ID


def test_a_follower_rejoining_a_stable_group_unchanged_gets_the_current_generation():
    c = coordinator()
    _, follower = stable_group(c, 2)
    [answer] = join(c, member_id=follower)
    assert (answer.error, answer.generation_id) == (ErrorCode.NONE, 1)
    assert c.manager.get_group("g").state is STABLE


def test_a_follower_with_changed_metadata_or_the_leader_rejoining_starts_a_rebalance():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    assert join(c, member_id=follower, protocols=[("range", subscription("new-topic"))]) == []
    assert c.manager.get_group("g").state is PREPARING_REBALANCE
    c = coordinator()
    leader, follower = stable_group(c, 2)
    assert join(c, member_id=leader) == []
    assert c.manager.get_group("g").state is PREPARING_REBALANCE


def test_a_member_that_missed_its_join_answer_gets_it_again_while_the_group_completes():
    c = coordinator()
    leader, follower = new_member_id(c), new_member_id(c)
    join(c, member_id=leader), join(c, member_id=follower)
    c.runtime.advance(GROUP_FORMED_MS)
    [again] = join(c, member_id=leader)
    assert (again.generation_id, again.leader_id, len(again.members)) == (1, leader, 2)


def test_when_the_last_member_leaves_the_group_becomes_empty_in_a_new_generation():
    c = coordinator()
    [member] = stable_group(c, 1)
    [left] = c.handle_leave_group("g", [_identity(member)]).members
    assert left.error == ErrorCode.NONE
    group = c.manager.get_group("g")
    assert (group.state, group.generation_id, group.protocol_name) == (EMPTY, 2, None)


def _identity(member_id):
    from pykbroker.coordinator.group.model import MemberIdentity
    return MemberIdentity(member_id)
