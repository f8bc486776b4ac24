"""What a coordinator finds when it takes over a partition of `__consumer_offsets`: the groups
and offsets written before (a restart, or a new leader), with tombstones applied."""
from pykbroker.coordinator.group.formats import (OffsetAndMetadata, group_key, offset_key,
                                                 offset_value)
from pykbroker.coordinator.group.model import MemberIdentity
from pykbroker.coordinator.group.state import EMPTY, STABLE
from pykbroker.protocol.errors import ErrorCode

from .fakes import (SESSION_MS, MemoryOffsetsLog, coordinator, commit, fetch, heartbeat, join,
                    stable_group, sync)

T0P0, T0P1 = ("orders", 0), ("orders", 1)


def test_offsets_and_a_stable_group_come_back_after_a_restart():
    log = MemoryOffsetsLog()
    before = coordinator(log)
    leader, follower = stable_group(before, 2)
    commit(before, {T0P0: 5, T0P1: 6}, member_id=leader, generation=1)
    after = coordinator(log)
    group = after.manager.get_group("g")
    assert (group.state, group.generation_id, group.leader_id) == (STABLE, 1, leader)
    assert group.protocol_type == "consumer" and group.protocol_name == "range"
    assert group.get(follower).assignment == follower.encode()
    assert fetch(after) == {T0P0: 5, T0P1: 6}
    assert heartbeat(after, follower, 1) == ErrorCode.NONE
    assert sync(after, follower, 1)[0].assignment == follower.encode()


def test_loaded_members_must_heartbeat_within_their_session_timeout():
    log = MemoryOffsetsLog()
    leader, follower = stable_group(coordinator(log), 2)
    after = coordinator(log)
    after.runtime.advance(SESSION_MS)
    assert after.manager.get_group("g").state is not STABLE


def test_an_empty_group_comes_back_empty_in_its_generation():
    log = MemoryOffsetsLog()
    before = coordinator(log)
    [member] = stable_group(before, 1)
    before.handle_leave_group("g", [MemberIdentity(member)])
    group = coordinator(log).manager.get_group("g")
    assert (group.state, group.generation_id, group.size) == (EMPTY, 2, 0)


def test_tombstones_remove_offsets_and_groups():
    log = MemoryOffsetsLog()
    before = coordinator(log)
    commit(before, {T0P0: 5, T0P1: 6})
    before.handle_delete_offsets("g", [T0P0])
    commit(before, {T0P0: 1}, group="gone")
    before.handle_delete_groups(["gone"])
    after = coordinator(log)
    assert fetch(after) == {T0P1: 6}
    assert after.manager.get_group("gone") is None


def test_the_latest_record_of_a_key_wins():
    log = MemoryOffsetsLog()
    log.records[0] += [(0, offset_key("g", "orders", 0), offset_value(OffsetAndMetadata(1))),
                       (1, offset_key("g", "orders", 0), offset_value(OffsetAndMetadata(9))),
                       (2, group_key("h"), None)]
    assert fetch(coordinator(log)) == {T0P0: 9}


def test_unknown_record_keys_are_skipped():
    log = MemoryOffsetsLog()
    log.records[0] += [(0, b"\x00\x05whatever", b"value"),
                       (1, offset_key("g", "orders", 0), offset_value(OffsetAndMetadata(3)))]
    assert fetch(coordinator(log)) == {T0P0: 3}


def test_resigning_a_partition_unloads_its_groups_and_answers_waiting_members():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    waiting = join(c, member_id=leader)
    c.on_resignation(0)
    assert waiting[0].error == ErrorCode.NOT_COORDINATOR
    assert c.manager.get_group("g") is None
    assert heartbeat(c, follower, 1) == ErrorCode.NOT_COORDINATOR


def test_a_partition_that_is_loading_answers_coordinator_load_in_progress():
    log = MemoryOffsetsLog()
    c = coordinator(log, partitions=1)
    c.on_resignation(0)
    pending = []
    log.load = lambda partition, callback: pending.append(callback)
    c.on_election(0)
    assert join(c)[0].error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    assert c.handle_fetch_offsets("g", None)[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    pending[0]([])
    assert join(c)[0].error == ErrorCode.MEMBER_ID_REQUIRED
