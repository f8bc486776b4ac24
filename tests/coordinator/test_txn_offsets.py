"""Transactional offset commits (TxnOffsetCommit, KIP-98 and KIP-447), as Kafka's classic group
coordinator handles them: written at once to `__consumer_offsets` as the producer's
transactional batch, pending until the transaction's marker reaches that partition, committed on
COMMIT and dropped on ABORT; OffsetFetch with require_stable answers UNSTABLE_OFFSET_COMMIT
meanwhile."""
import anyio

from pykbroker.coordinator.group.formats import OffsetAndMetadata, decode_key, decode_offset_value
from pykbroker.coordinator.group.model import MemberIdentity
from pykbroker.coordinator.group.state import DEAD, EMPTY
from pykbroker.protocol.errors import ErrorCode

from .fakes import MemoryOffsetsLog, commit, coordinator, fetch, heartbeat, stable_group
from .test_static_membership import static_group

T0P0, T0P1 = ("orders", 0), ("orders", 1)
PID, EPOCH = 4000, 3
DAY_MS = 24 * 3600 * 1000


def txn_commit(c, offsets: dict, group: str = "g", producer_id: int = PID, *, member_id: str = "",
               generation: int = -1, instance_id: str | None = None, metadata: str = "") -> dict:
    """A TxnOffsetCommit as the handler sends it (v0-v2 name no member: generation -1)."""
    entries = {tp: OffsetAndMetadata(offset, -1, metadata, c.runtime.now_ms()) for tp, offset in offsets.items()}
    return anyio.run(c.txn_commit_offsets, "txn-id", group, producer_id, EPOCH, member_id, instance_id,
                     generation, entries)


def stable_fetch(c, partitions, group: str = "g") -> dict:
    """OffsetFetch with require_stable: the offset, or the error of a partition."""
    error, fetched = c.handle_fetch_offsets(group, partitions, require_stable=True)
    assert error == ErrorCode.NONE
    return {tp: f.error if f.error != ErrorCode.NONE else f.offset for tp, f in fetched.items()}


# -- pending until the transaction ends -------------------------------------------------------

def test_transactional_offsets_are_pending_until_the_transaction_commits():
    c = coordinator()
    commit(c, {T0P0: 3})
    assert txn_commit(c, {T0P0: 10, T0P1: 20}) == {T0P0: ErrorCode.NONE, T0P1: ErrorCode.NONE}
    assert fetch(c, partitions=[T0P0, T0P1]) == {T0P0: 3, T0P1: -1}
    assert stable_fetch(c, [T0P0, T0P1]) == {T0P0: ErrorCode.UNSTABLE_OFFSET_COMMIT,
                                             T0P1: ErrorCode.UNSTABLE_OFFSET_COMMIT}
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert stable_fetch(c, [T0P0, T0P1]) == {T0P0: 10, T0P1: 20}


def test_an_aborted_transaction_drops_its_offsets():
    c = coordinator()
    commit(c, {T0P0: 3})
    txn_commit(c, {T0P0: 10, T0P1: 20})
    c.complete_transaction(0, PID, False, marker_offset=100)
    assert stable_fetch(c, [T0P0, T0P1]) == {T0P0: 3, T0P1: -1}
    assert c.transactions.open_groups_for_producer == {}


def test_a_marker_completes_only_its_producer_in_the_groups_of_its_partition():
    c = coordinator(partitions=2)
    groups = ["g0", "g1", "g2", "g3", "g4"]
    in_0 = [g for g in groups if c.partition_for(g) == 0][0]
    in_1 = [g for g in groups if c.partition_for(g) == 1][0]
    txn_commit(c, {T0P0: 10}, group=in_0)
    txn_commit(c, {T0P0: 11}, group=in_1)
    txn_commit(c, {T0P1: 12}, group=in_0, producer_id=PID + 1)
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert stable_fetch(c, [T0P0, T0P1], group=in_0) == {T0P0: 10, T0P1: ErrorCode.UNSTABLE_OFFSET_COMMIT}
    assert stable_fetch(c, [T0P0], group=in_1) == {T0P0: ErrorCode.UNSTABLE_OFFSET_COMMIT}
    c.complete_transaction(1, PID, True, marker_offset=100)
    assert stable_fetch(c, [T0P0], group=in_1) == {T0P0: 11}


def test_the_commit_written_last_to_the_log_wins_whatever_the_order_of_completion():
    c = coordinator()
    txn_commit(c, {T0P0: 10})
    commit(c, {T0P0: 7})  # a consumer's commit written after the transactional one
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert fetch(c, partitions=[T0P0]) == {T0P0: 7}
    txn_commit(c, {T0P0: 12})  # and now a transactional one written after it
    c.complete_transaction(0, PID, True, marker_offset=101)
    assert fetch(c, partitions=[T0P0]) == {T0P0: 12}


def test_the_commit_is_written_as_the_producers_transactional_batch():
    log = MemoryOffsetsLog()
    c = coordinator(log)
    txn_commit(c, {T0P0: 10})
    [record] = log.records[0]
    assert (record.producer_id, record.producer_epoch, record.is_transactional) == (PID, EPOCH, True)
    assert decode_key(record.key).group == "g" and decode_offset_value(record.value).offset == 10


# -- who may commit -------------------------------------------------------------------------

def test_an_unknown_group_is_created_empty_and_an_empty_group_id_is_invalid():
    c = coordinator()
    assert txn_commit(c, {T0P0: 1}, group="new") == {T0P0: ErrorCode.NONE}
    assert c.manager.get_group("new").state is EMPTY
    assert txn_commit(c, {T0P0: 1}, group="") == {T0P0: ErrorCode.INVALID_GROUP_ID}


def test_before_v3_a_commit_naming_no_member_is_accepted_by_a_group_with_members():
    c = coordinator()
    stable_group(c, 2)
    assert commit(c, {T0P0: 5}) == {T0P0: ErrorCode.UNKNOWN_MEMBER_ID}, "a consumer's simple commit is not"
    assert txn_commit(c, {T0P0: 5}) == {T0P0: ErrorCode.NONE}


def test_from_v3_the_member_and_its_generation_are_checked():
    c = coordinator()
    leader, follower = stable_group(c, 2)
    assert txn_commit(c, {T0P0: 5}, member_id=follower, generation=1) == {T0P0: ErrorCode.NONE}
    assert txn_commit(c, {T0P0: 5}, member_id=follower, generation=0) == {T0P0: ErrorCode.ILLEGAL_GENERATION}
    assert txn_commit(c, {T0P0: 5}, member_id="stranger", generation=1) == {T0P0: ErrorCode.UNKNOWN_MEMBER_ID}
    assert txn_commit(c, {T0P0: 5}, member_id="", generation=1) == {T0P0: ErrorCode.UNKNOWN_MEMBER_ID}


def test_a_static_members_old_member_id_is_fenced():
    c = coordinator()
    [old] = static_group(c, "instance-a")
    from .fakes import join
    [answer] = join(c, instance_id="instance-a")  # a new instance takes over
    assert txn_commit(c, {T0P0: 5}, member_id=old, generation=1,
                      instance_id="instance-a") == {T0P0: ErrorCode.FENCED_INSTANCE_ID}
    assert txn_commit(c, {T0P0: 5}, member_id=answer.member_id, generation=1,
                      instance_id="instance-a") == {T0P0: ErrorCode.NONE}


def test_a_broker_that_does_not_lead_the_groups_partition_answers_not_coordinator():
    c = coordinator()
    c.on_resignation(0)
    assert txn_commit(c, {T0P0: 5}) == {T0P0: ErrorCode.NOT_COORDINATOR}


# -- failures -------------------------------------------------------------------------------

def test_too_long_metadata_and_failed_writes_leave_nothing_pending():
    log = MemoryOffsetsLog()
    c = coordinator(log)
    assert txn_commit(c, {T0P0: 5}, metadata="x" * 4097) == {T0P0: ErrorCode.OFFSET_METADATA_TOO_LARGE}
    for written, reported in [(ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR),
                              (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE),
                              (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.INVALID_COMMIT_OFFSET_SIZE)]:
        log.fail_with = written
        assert txn_commit(c, {T0P0: 5}) == {T0P0: reported}
    assert stable_fetch(c, [T0P0]) == {T0P0: -1}
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert fetch(c, partitions=[T0P0]) == {T0P0: -1}


def test_a_failed_verification_answers_its_error_and_writes_nothing():
    log = MemoryOffsetsLog()
    c = coordinator(log)
    asked = []

    async def verifier(transactional_id, producer_id, producer_epoch, partition):
        asked.append((transactional_id, producer_id, producer_epoch, partition))
        return answer, None

    c.txn_verifier = verifier
    for answer, reported in [(ErrorCode.NETWORK_EXCEPTION, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
                             (ErrorCode.INVALID_TXN_STATE, ErrorCode.INVALID_TXN_STATE),
                             (ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.COORDINATOR_NOT_AVAILABLE)]:
        assert txn_commit(c, {T0P0: 5}) == {T0P0: reported}
    assert asked[0] == ("txn-id", PID, EPOCH, ("__consumer_offsets", 0))
    assert log.records[0] == []
    answer = ErrorCode.NONE
    assert txn_commit(c, {T0P0: 5}) == {T0P0: ErrorCode.NONE}


# -- expiration and deletion ----------------------------------------------------------------

def test_pending_transactional_offsets_keep_an_empty_group_and_are_not_expired():
    c = coordinator(retention_ms=DAY_MS, retention_check_interval_ms=60_000)
    txn_commit(c, {T0P0: 10})
    c.runtime.advance(2 * DAY_MS)
    group = c.manager.get_group("g")
    assert group is not None and group.state is EMPTY
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert fetch(c) == {T0P0: 10}


def test_offset_delete_drops_pending_transactional_offsets_of_the_partition():
    c = coordinator()
    txn_commit(c, {T0P0: 10, T0P1: 20})
    assert c.handle_delete_offsets("g", [T0P0]) == (ErrorCode.NONE, {T0P0: ErrorCode.NONE})
    assert stable_fetch(c, [T0P0, T0P1]) == {T0P0: -1, T0P1: ErrorCode.UNSTABLE_OFFSET_COMMIT}
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert fetch(c) == {T0P1: 20}


def test_a_deleted_group_is_not_brought_back_by_its_transactions_marker():
    c = coordinator()
    commit(c, {T0P0: 3})
    txn_commit(c, {T0P0: 10})
    group = c.manager.get_group("g")
    assert c.handle_delete_groups(["g"]) == {"g": ErrorCode.NONE}
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert group.state is DEAD and c.manager.get_group("g") is None
    assert fetch(c, partitions=[T0P0]) == {T0P0: -1}


def test_leaving_members_do_not_touch_pending_transactional_offsets():
    c = coordinator()
    [member] = stable_group(c, 1)
    txn_commit(c, {T0P0: 10}, member_id=member, generation=1)
    assert heartbeat(c, member, 1) == ErrorCode.NONE
    c.handle_leave_group("g", [MemberIdentity(member)])
    c.complete_transaction(0, PID, True, marker_offset=100)
    assert fetch(c) == {T0P0: 10}
