"""Committing, fetching, deleting and expiring offsets (Kafka's rules for classic groups)."""
from pykbroker.coordinator.group.model import MemberIdentity
from pykbroker.coordinator.group.state import EMPTY
from pykbroker.protocol.errors import ErrorCode

from .fakes import (GROUP_FORMED_MS, MemoryOffsetsLog, coordinator, commit, fetch, heartbeat,
                    join, new_member_id, stable_group, subscription, sync)

DAY_MS = 24 * 3600 * 1000
T0P0, T0P1, T1P0 = ("orders", 0), ("orders", 1), ("payments", 0)


def test_a_simple_commit_creates_the_group_and_fetch_returns_the_offsets():
    c = coordinator()
    assert commit(c, {T0P0: 10, T0P1: 20}) == {T0P0: ErrorCode.NONE, T0P1: ErrorCode.NONE}
    assert c.manager.get_group("g").state is EMPTY
    assert fetch(c, partitions=[T0P0, T0P1, T1P0]) == {T0P0: 10, T0P1: 20, T1P0: -1}
    assert fetch(c) == {T0P0: 10, T0P1: 20}, "no partitions named: all of the group's"


def test_fetch_returns_metadata_and_leader_epoch_and_nothing_for_unknown_groups():
    c = coordinator()
    commit(c, {T0P0: 10}, metadata="checkpoint-7")
    _, fetched = c.handle_fetch_offsets("g", [T0P0])
    assert (fetched[T0P0].metadata, fetched[T0P0].leader_epoch) == ("checkpoint-7", -1)
    _, fetched = c.handle_fetch_offsets("nobody", [T0P0])
    assert (fetched[T0P0].offset, fetched[T0P0].metadata) == (-1, "")
    assert c.handle_fetch_offsets("nobody", None) == (ErrorCode.NONE, {})


def test_a_later_commit_replaces_an_earlier_one():
    c = coordinator()
    commit(c, {T0P0: 10})
    commit(c, {T0P0: 15})
    assert fetch(c, partitions=[T0P0]) == {T0P0: 15}


def test_members_commit_in_their_generation_and_others_are_refused():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    assert commit(c, {T0P0: 5}, member_id=leader, generation=1) == {T0P0: ErrorCode.NONE}
    assert commit(c, {T0P0: 6}, member_id=leader, generation=0) == {T0P0: ErrorCode.ILLEGAL_GENERATION}
    assert commit(c, {T0P0: 7}, member_id="stranger", generation=1) == {T0P0: ErrorCode.UNKNOWN_MEMBER_ID}
    assert commit(c, {T0P0: 8}) == {T0P0: ErrorCode.UNKNOWN_MEMBER_ID}, \
        "a simple commit to a group with members"
    assert fetch(c, partitions=[T0P0]) == {T0P0: 5}


def test_a_member_with_a_generation_cannot_commit_to_a_group_the_coordinator_does_not_know():
    c = coordinator()
    assert commit(c, {T0P0: 5}, member_id="m", generation=3) == {T0P0: ErrorCode.ILLEGAL_GENERATION}


def test_commits_during_a_rebalance():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    join(c, member_id=leader)  # PreparingRebalance: the old generation may still commit
    assert commit(c, {T0P0: 5}, member_id=follower, generation=1) == {T0P0: ErrorCode.NONE}
    join(c, member_id=follower)  # CompletingRebalance
    assert commit(c, {T0P0: 6}, member_id=follower, generation=2) == {
        T0P0: ErrorCode.REBALANCE_IN_PROGRESS}


def test_too_long_metadata_is_refused_per_partition():
    c = coordinator()
    assert commit(c, {T0P0: 5}, metadata="x" * 4097) == {T0P0: ErrorCode.OFFSET_METADATA_TOO_LARGE}
    assert commit(c, {T0P0: 5}, metadata="x" * 4096) == {T0P0: ErrorCode.NONE}


def test_a_failed_write_is_reported_as_kafka_reports_it_and_nothing_is_committed():
    log = MemoryOffsetsLog()
    c = coordinator(log)
    for written, reported in [(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR),
                              (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE),
                              (ErrorCode.REQUEST_TIMED_OUT, ErrorCode.REQUEST_TIMED_OUT),
                              (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.INVALID_COMMIT_OFFSET_SIZE)]:
        log.fail_with = written
        assert commit(c, {T0P0: 5}) == {T0P0: reported}
    assert fetch(c, partitions=[T0P0]) == {T0P0: -1}


def test_require_stable_reports_a_commit_still_being_written():
    log = MemoryOffsetsLog()
    c = coordinator(log)
    log.hold = True
    answers = []
    from pykbroker.coordinator.group.formats import OffsetAndMetadata
    c.handle_commit_offsets("g", "", None, -1, {T0P0: OffsetAndMetadata(5)}, answers.append)
    _, fetched = c.handle_fetch_offsets("g", [T0P0], require_stable=True)
    assert fetched[T0P0].error == ErrorCode.UNSTABLE_OFFSET_COMMIT
    log.release()
    assert answers == [{T0P0: ErrorCode.NONE}]
    assert fetch(c, partitions=[T0P0]) == {T0P0: 5}


def test_offsets_of_an_empty_group_expire_the_retention_after_it_became_empty():
    retention = 10 * 60_000
    c = coordinator(retention_ms=retention, retention_check_interval_ms=60_000)
    [member] = stable_group(c, 1, protocols=[("range", subscription("other-topic"))])
    commit(c, {T0P0: 5}, member_id=member, generation=1)
    for _ in range(retention // 5_000):  # the commit ages while the member stays
        c.runtime.advance(5_000)
        heartbeat(c, member, 1)
    c.handle_leave_group("g", [MemberIdentity(member)])
    c.runtime.advance(retention - 1)
    assert fetch(c, partitions=[T0P0]) == {T0P0: 5}
    c.runtime.advance(60_000 + 1)  # the next retention check after the retention passed
    assert fetch(c, partitions=[T0P0]) == {T0P0: -1}
    assert c.manager.get_group("g") is None, "an Empty group without offsets is removed"


def test_subscribed_topics_keep_their_offsets_while_the_group_has_members():
    c = coordinator(retention_ms=DAY_MS, retention_check_interval_ms=60_000)
    [member] = stable_group(c, 1, protocols=[("range", subscription("orders"))])
    commit(c, {T0P0: 5, T1P0: 7}, member_id=member, generation=1)
    for _ in range(DAY_MS // 5_000 + 12):
        c.runtime.advance(5_000)
        heartbeat(c, member, 1)
    assert fetch(c, partitions=[T0P0, T1P0]) == {T0P0: 5, T1P0: -1}


def test_simple_consumer_offsets_expire_the_retention_after_their_commit():
    c = coordinator(retention_ms=DAY_MS, retention_check_interval_ms=60_000)
    commit(c, {T0P0: 5})
    c.runtime.advance(DAY_MS // 2)
    commit(c, {T0P1: 6})
    c.runtime.advance(DAY_MS // 2)
    assert fetch(c) == {T0P1: 6}


def test_an_explicit_retention_time_sets_its_own_expiry():
    c = coordinator(retention_ms=7 * DAY_MS, retention_check_interval_ms=60_000)
    commit(c, {T0P0: 5}, expire_timestamp=c.runtime.now + DAY_MS)
    c.runtime.advance(DAY_MS + 60_000)
    assert fetch(c) == {}


def test_offset_delete_refuses_subscribed_topics_of_a_consumer_group_with_members():
    c = coordinator()
    [member] = stable_group(c, 1, protocols=[("range", subscription("orders"))])
    commit(c, {T0P0: 5, T1P0: 7}, member_id=member, generation=1)
    error, results = c.handle_delete_offsets("g", [T0P0, T1P0])
    assert error == ErrorCode.NONE
    assert results == {T0P0: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC, T1P0: ErrorCode.NONE}
    assert fetch(c) == {T0P0: 5}


def test_offset_delete_of_an_empty_group_deletes_and_of_an_unknown_group_fails():
    c = coordinator()
    commit(c, {T0P0: 5, T0P1: 6})
    assert c.handle_delete_offsets("g", [T0P0]) == (ErrorCode.NONE, {T0P0: ErrorCode.NONE})
    assert fetch(c) == {T0P1: 6}
    assert c.handle_delete_offsets("nobody", [T0P0]) == (ErrorCode.GROUP_ID_NOT_FOUND, {})


def test_offset_delete_of_a_non_consumer_group_with_members_is_refused():
    c = coordinator()
    members = [new_member_id(c, protocol_type="connect")]
    join(c, member_id=members[0], protocol_type="connect")
    c.runtime.advance(GROUP_FORMED_MS)
    sync(c, members[0], 1, assignments={members[0]: b""})
    assert c.handle_delete_offsets("g", [T0P0]) == (ErrorCode.NON_EMPTY_GROUP, {})


def test_deleting_a_topic_removes_every_groups_offsets_of_it():
    c = coordinator()
    commit(c, {T0P0: 5, T1P0: 7})
    commit(c, {T0P0: 1}, group="h")
    c.remove_offsets_of_topic("orders")
    assert fetch(c) == {T1P0: 7}
    assert c.manager.get_group("h") is None
