"""The transaction coordinator's state machine, as Kafka 3.9's TransactionCoordinator answers
(transaction version 0), on a fake clock with `__transaction_state` in memory."""
from __future__ import annotations

import anyio
import pytest

from pykbroker.coordinator.transaction.metadata import SHORT_MAX
from pykbroker.protocol.errors import ErrorCode

from .fakes import ABORT_INTERVAL_MS, COORDINATOR_EPOCH, EXPIRATION_INTERVAL_MS, EXPIRATION_MS, T0, TIMEOUT_MS, Harness

NONE = ErrorCode.NONE


@pytest.fixture
def h():
    return Harness()


def started(h, tid="tx"):
    """A producer with an ongoing transaction on orders-0: (producer id, epoch)."""
    error, producer_id, epoch = h.init(tid)
    assert error == NONE
    assert h.add(tid, producer_id, epoch) == NONE
    return producer_id, epoch


# -- InitProducerId -----------------------------------------------------------------------

def test_a_new_transactional_id_gets_a_producer_id_with_epoch_0_written_as_empty(h):
    assert h.init("tx") == (NONE, 1000, 0)
    assert h.log.states() == [("tx", "Empty")]
    assert h.describe("tx").state == "Empty"


def test_init_again_bumps_the_epoch_and_fences_the_previous_producer(h):
    h.init("tx")
    assert h.init("tx") == (NONE, 1000, 1)
    assert h.add("tx", 1000, 0) == ErrorCode.PRODUCER_FENCED
    assert h.end("tx", 1000, 0) == ErrorCode.PRODUCER_FENCED


def test_a_producer_id_of_another_transactional_id_is_an_invalid_mapping(h):
    h.init("tx")
    assert h.add("tx", 999, 0) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert h.add("unknown", 1000, 0) == ErrorCode.INVALID_PRODUCER_ID_MAPPING


def test_a_timeout_above_transaction_max_timeout_ms_is_refused(h):
    assert h.init("tx", timeout_ms=900_001) == (ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1)
    assert h.init("tx", timeout_ms=0) == (ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1)
    assert h.init("", timeout_ms=1000) == (ErrorCode.INVALID_REQUEST, -1, -1)


def test_kip360_a_retried_bump_gets_the_same_epoch_and_a_stale_producer_is_fenced(h):
    h.init("tx")
    assert h.init("tx", producer_id=1000, epoch=0) == (NONE, 1000, 1)
    assert h.init("tx", producer_id=1000, epoch=0) == (NONE, 1000, 1)  # the answer was lost
    assert h.init("tx") == (NONE, 1000, 2)  # another producer: the last epoch is forgotten
    assert h.init("tx", producer_id=1000, epoch=0) == (ErrorCode.PRODUCER_FENCED, -1, -1)
    assert h.init("tx", producer_id=555, epoch=2) == (ErrorCode.PRODUCER_FENCED, -1, -1)


def test_an_exhausted_epoch_moves_to_a_new_producer_id(h):
    h.init("tx")
    h.metadata_of("tx").producer_epoch = SHORT_MAX - 1
    assert h.init("tx", producer_id=1000, epoch=SHORT_MAX - 1) == (NONE, 1001, 0)
    metadata = h.metadata_of("tx")
    assert (metadata.last_producer_id, metadata.last_producer_epoch) == (1000, SHORT_MAX - 1)
    # the producer never got the answer and retries with the old id: same answer
    assert h.init("tx", producer_id=1000, epoch=SHORT_MAX - 1) == (NONE, 1001, 0)


def test_init_during_an_ongoing_transaction_aborts_it_with_a_bumped_epoch(h):
    producer_id, epoch = started(h)
    assert h.init("tx") == (ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1)
    assert h.log.states()[-2:] == [("tx", "PrepareAbort"), ("tx", "CompleteAbort")]
    [marker] = h.partition_side.written
    assert (marker.producer_epoch, marker.committed) == (epoch + 1, False)
    assert h.init("tx") == (NONE, producer_id, epoch + 2)


# -- AddPartitionsToTxn / AddOffsetsToTxn / verification ------------------------------------

def test_adding_partitions_starts_the_transaction_and_adding_them_again_writes_nothing(h):
    producer_id, epoch = started(h)
    described = h.describe("tx")
    assert (described.state, described.topics, described.start_time_ms) == ("Ongoing", {"orders": [0]}, T0)
    records = len(h.log.records[0])
    assert h.add("tx", producer_id, epoch, ("orders", 0)) == NONE
    assert len(h.log.records[0]) == records
    assert h.add("tx", producer_id, epoch, ("orders", 1)) == NONE
    assert h.describe("tx").topics == {"orders": [0, 1]}


def test_add_offsets_adds_the_groups_offsets_partition(h):
    _, producer_id, epoch = h.init("tx")
    assert h.run(h.coordinator.add_offsets, "tx", producer_id, epoch, "group") == NONE
    assert h.describe("tx").topics == {"__consumer_offsets": [0]}


def test_verification_answers_for_each_partition_and_writes_nothing(h):
    producer_id, epoch = started(h)
    records = len(h.log.records[0])
    verify = h.coordinator.verify_partitions
    assert h.run(verify, "tx", producer_id, epoch, [("orders", 0), ("orders", 1)]) == {
        ("orders", 0): NONE, ("orders", 1): ErrorCode.TRANSACTION_ABORTABLE}
    assert h.run(verify, "tx", producer_id, epoch + 1, [("orders", 0)]) == {("orders", 0): ErrorCode.PRODUCER_FENCED}
    assert h.run(verify, "nope", producer_id, epoch, [("orders", 0)]) == {
        ("orders", 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}
    assert len(h.log.records[0]) == records


# -- EndTxn ---------------------------------------------------------------------------------

def test_commit_writes_prepare_commit_then_markers_then_complete_commit(h):
    producer_id, epoch = started(h)
    h.add("tx", producer_id, epoch, ("orders", 1))
    assert h.end("tx", producer_id, epoch) == NONE
    assert h.log.states() == [("tx", "Empty"), ("tx", "Ongoing"), ("tx", "Ongoing"),
                              ("tx", "PrepareCommit"), ("tx", "CompleteCommit")]
    [marker] = h.partition_side.written
    assert (marker.producer_id, marker.producer_epoch, marker.committed, marker.coordinator_epoch,
            marker.partitions) == (producer_id, epoch, True, COORDINATOR_EPOCH, (("orders", 0), ("orders", 1)))
    assert (h.describe("tx").state, h.describe("tx").topics) == ("CompleteCommit", {})


def test_a_retried_end_txn_is_answered_as_the_first_and_the_other_result_is_invalid(h):
    producer_id, epoch = started(h)
    h.end("tx", producer_id, epoch, commit=True)
    assert h.end("tx", producer_id, epoch, commit=True) == NONE
    assert h.end("tx", producer_id, epoch, commit=False) == ErrorCode.INVALID_TXN_STATE
    h.init("tx")
    assert h.end("tx", producer_id, epoch + 1) == ErrorCode.INVALID_TXN_STATE  # Empty: nothing to end


def test_while_markers_are_written_the_next_transaction_waits(h):
    producer_id, epoch = started(h)

    async def commit_while_markers_wait():
        hold = h.partition_side.hold = anyio.Event()
        assert (await h.coordinator.end_txn("tx", producer_id, epoch, True))[0] == NONE
        await anyio.wait_all_tasks_blocked()
        assert h.describe("tx").state == "PrepareCommit"
        assert (await h.coordinator.end_txn("tx", producer_id, epoch, True))[0] == ErrorCode.CONCURRENT_TRANSACTIONS
        assert (await h.coordinator.add_partitions("tx", producer_id, epoch, [("orders", 2)])) == {
            ("orders", 2): ErrorCode.CONCURRENT_TRANSACTIONS}
        assert (await h.coordinator.init_producer_id("tx", TIMEOUT_MS, -1, -1))[0] == ErrorCode.CONCURRENT_TRANSACTIONS
        hold.set()

    h.run(commit_while_markers_wait)
    assert h.describe("tx").state == "CompleteCommit"


def test_append_errors_become_coordinator_errors_and_drop_the_pending_transition(h):
    _, producer_id, epoch = h.init("tx")
    h.log.fail_with = ErrorCode.NOT_ENOUGH_REPLICAS
    assert h.add("tx", producer_id, epoch) == ErrorCode.COORDINATOR_NOT_AVAILABLE
    h.log.fail_with = ErrorCode.NOT_LEADER_OR_FOLLOWER
    assert h.add("tx", producer_id, epoch) == ErrorCode.NOT_COORDINATOR
    h.log.fail_with = None
    assert h.add("tx", producer_id, epoch) == NONE


# -- markers ----------------------------------------------------------------------------------

def test_markers_are_retried_after_a_retriable_error(h):
    producer_id, epoch = started(h)
    h.partition_side.errors[("orders", 0)] = [ErrorCode.NOT_LEADER_OR_FOLLOWER]
    h.end("tx", producer_id, epoch)
    assert h.describe("tx").state == "PrepareCommit"
    h.advance(100)
    assert len(h.partition_side.written) == 2
    assert h.describe("tx").state == "CompleteCommit"


def test_partitions_of_deleted_topics_are_skipped(h):
    producer_id, epoch = started(h)
    h.metadata.delete_topic("orders")
    h.end("tx", producer_id, epoch)
    assert h.partition_side.written == []
    assert h.describe("tx").state == "CompleteCommit"


def test_a_fenced_marker_stops_the_sending(h):
    producer_id, epoch = started(h)
    h.partition_side.errors[("orders", 0)] = [ErrorCode.INVALID_PRODUCER_EPOCH]
    h.end("tx", producer_id, epoch)
    h.advance(1000)
    assert len(h.partition_side.written) == 1
    assert h.describe("tx").state == "PrepareCommit"


# -- timeouts and expiration --------------------------------------------------------------------

def test_a_transaction_open_longer_than_its_timeout_is_aborted_with_a_bumped_epoch(h):
    producer_id, epoch = started(h)
    h.advance(TIMEOUT_MS)
    assert h.describe("tx").state == "Ongoing"  # not longer than the timeout yet
    h.advance(ABORT_INTERVAL_MS)
    described = h.describe("tx")
    assert (described.state, described.producer_epoch) == ("CompleteAbort", epoch + 1)
    assert h.partition_side.written[0].committed is False
    assert h.end("tx", producer_id, epoch) == ErrorCode.PRODUCER_FENCED


def test_an_idle_transactional_id_expires_with_a_tombstone(h):
    producer_id, epoch = started(h)
    h.end("tx", producer_id, epoch)
    h.init("other")
    h.advance(EXPIRATION_MS - EXPIRATION_INTERVAL_MS)
    h.init("other")  # used recently: stays
    h.advance(EXPIRATION_INTERVAL_MS)
    assert h.log.states()[-1] == ("tx", None)
    assert h.describe("tx").error == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    assert h.describe("other").error == NONE
    assert h.init("tx") == (NONE, 1002, 0)  # a new producer id


# -- loading and leadership -------------------------------------------------------------------

def test_a_new_coordinator_completes_a_transaction_left_in_prepare_commit(h):
    producer_id, epoch = started(h)
    h.partition_side.hold = anyio.Event()  # the markers never arrive: the coordinator "dies"
    h.end("tx", producer_id, epoch)
    assert h.log.states()[-1] == ("tx", "PrepareCommit")

    successor = Harness()
    successor.log.records = h.log.records
    successor.metadata.add_topic("__transaction_state", 1, epoch=COORDINATOR_EPOCH + 1)
    successor.settle()
    assert successor.describe("tx").state == "CompleteCommit"
    [marker] = successor.partition_side.written
    assert (marker.committed, marker.coordinator_epoch) == (True, COORDINATOR_EPOCH + 1)


def test_loaded_ongoing_transactions_time_out_as_before(h):
    producer_id, epoch = started(h)
    successor = Harness()
    successor.log.records = h.log.records
    successor.metadata.add_topic("__transaction_state", 1, epoch=COORDINATOR_EPOCH + 1)
    successor.settle()
    assert successor.describe("tx").state == "Ongoing"
    successor.advance(TIMEOUT_MS + ABORT_INTERVAL_MS)
    assert successor.describe("tx").state == "CompleteAbort"


def test_a_partition_this_broker_stops_leading_answers_not_coordinator(h):
    producer_id, epoch = started(h)
    h.metadata.add_topic("__transaction_state", 1, leader=1, epoch=COORDINATOR_EPOCH + 1)
    assert h.add("tx", producer_id, epoch) == ErrorCode.NOT_COORDINATOR
    assert h.init("tx") == (ErrorCode.NOT_COORDINATOR, -1, -1)
    assert h.describe("tx").error == ErrorCode.NOT_COORDINATOR


# -- ListTransactions -----------------------------------------------------------------------------

def test_list_filters_by_state_producer_id_and_duration(h):
    started(h, "a")
    h.init("b")
    h.advance(5000)
    listing = h.coordinator.list_transactions([], [], -1)
    assert sorted((t.transactional_id, t.state) for t in listing.transactions) == [("a", "Ongoing"), ("b", "Empty")]
    assert [t.transactional_id for t in h.coordinator.list_transactions([], ["Ongoing"]).transactions] == ["a"]
    assert [t.transactional_id for t in h.coordinator.list_transactions([1001], []).transactions] == ["b"]
    assert h.coordinator.list_transactions([], ["Bogus"]).unknown_state_filters == ["Bogus"]
    assert [t.transactional_id for t in h.coordinator.list_transactions([], ["Ongoing"], 4000).transactions] == ["a"]
    assert h.coordinator.list_transactions([], ["Ongoing"], 5000).transactions == []
