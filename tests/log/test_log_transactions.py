"""Transactional batches: the last stable offset and the aborted transaction index."""
import os

import pytest

from pykbroker.log.producer_state import COORDINATOR, SENTINEL, VerificationGuard
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.records.control import build_end_txn_marker

from .helpers import T0, Clock, kv_batch, open_log, reopen

PID = 500


def txn_batch(sequence: int, count: int = 2) -> bytearray:
    return kv_batch(count, producer_id=PID, producer_epoch=0, base_sequence=sequence, is_transactional=True)


def end_txn(log, commit: bool) -> None:
    marker = bytearray(build_end_txn_marker(PID, 0, commit, coordinator_epoch=1))
    log.append_as_leader(marker, leader_epoch=0, origin=COORDINATOR)
    log.high_watermark = log.log_end_offset


def write(log, data) -> None:
    log.append_as_leader(data, leader_epoch=0)
    log.high_watermark = log.log_end_offset


def test_an_open_transaction_holds_back_the_last_stable_offset(tmp_path):
    log = open_log(tmp_path)
    write(log, kv_batch(2))
    write(log, txn_batch(0))
    write(log, kv_batch(3))
    assert (log.high_watermark, log.last_stable_offset) == (7, 2)

    end_txn(log, commit=True)
    assert log.last_stable_offset == log.high_watermark == 8


def test_aborted_transactions_are_listed_for_read_committed_fetches(tmp_path):
    log = open_log(tmp_path)
    write(log, txn_batch(0))
    write(log, kv_batch(1))
    end_txn(log, commit=False)

    fetch = log.read(0, 1 << 20, max_offset=log.last_stable_offset, read_committed=True)
    assert [(t.producer_id, t.first_offset) for t in fetch.aborted_transactions] == [(PID, 0)]
    assert log.read(0, 1 << 20).aborted_transactions is None
    assert os.path.exists(log.segments.active.txn_index.path)


def test_committed_transactions_are_not_listed(tmp_path):
    log = open_log(tmp_path)
    write(log, txn_batch(0))
    end_txn(log, commit=True)
    assert log.read(0, 1 << 20, read_committed=True).aborted_transactions == []


def test_an_aborted_transaction_is_listed_only_for_fetches_that_reach_its_records(tmp_path):
    """One producer commits, aborts, commits (the compat suite's consume-transform-produce):
    clients drop a producer's batches from the first offset of a listed abort until they see
    its ABORT marker, so a fetch that starts after that marker must not list it, or the third
    transaction's records, of the same producer, would be dropped."""
    log = open_log(tmp_path)

    def end(commit):  # at the records' time, so that the log stays one segment
        marker = bytearray(build_end_txn_marker(PID, 0, commit, coordinator_epoch=1, timestamp=T0))
        log.append_as_leader(marker, leader_epoch=0, origin=COORDINATOR)
        log.high_watermark = log.log_end_offset

    write(log, txn_batch(0, count=5))   # 0-4
    end(commit=True)                    # 5
    write(log, txn_batch(5, count=5))   # 6-10
    end(commit=False)                   # 11
    write(log, txn_batch(10, count=5))  # 12-16
    assert log.last_stable_offset == 12
    end(commit=True)                    # 17
    assert len(log.segments) == 1

    def aborted(fetch_offset, max_offset=None):
        fetch = log.read(fetch_offset, 1 << 20, max_offset=max_offset, read_committed=True)
        return [(t.producer_id, t.first_offset) for t in fetch.aborted_transactions]

    assert [aborted(offset) for offset in (0, 5, 6, 11, 12, 17)] == [[(PID, 6)]] * 4 + [[], []]
    assert aborted(0, max_offset=12) == [(PID, 6)]


def test_a_non_transactional_write_inside_a_transaction_is_refused(tmp_path):
    log = open_log(tmp_path)
    write(log, txn_batch(0))
    with pytest.raises(KafkaError) as raised:
        log.append_as_leader(kv_batch(1, producer_id=PID, producer_epoch=0, base_sequence=2), leader_epoch=0)
    assert raised.value.code == ErrorCode.INVALID_TXN_STATE


@pytest.mark.parametrize("clean", [True, False])
def test_transaction_state_survives_a_restart(tmp_path, clean):
    log = open_log(tmp_path)
    write(log, txn_batch(0))
    end_txn(log, commit=False)
    write(log, txn_batch(2))
    log.flush()
    log.close()

    reopened = reopen(log, clean=clean, recovery_point=0, high_watermark=log.high_watermark)
    assert reopened.last_stable_offset == 3
    fetch = reopened.read(0, 1 << 20, read_committed=True)
    assert [(t.producer_id, t.first_offset) for t in fetch.aborted_transactions] == [(PID, 0)]


def test_a_decided_transaction_holds_back_the_last_stable_offset_until_its_marker_is_replicated(tmp_path):
    log = open_log(tmp_path)
    write(log, kv_batch(1))
    write(log, txn_batch(1))
    marker = bytearray(build_end_txn_marker(PID, 0, True, coordinator_epoch=1))
    log.append_as_leader(marker, leader_epoch=0, origin=COORDINATOR)
    assert (log.high_watermark, log.last_stable_offset) == (3, 1)  # a new leader may lose the marker

    log.high_watermark = 4
    assert log.last_stable_offset == 4


def test_the_aborted_transaction_index_survives_a_crash_and_the_open_transaction_its_lso(tmp_path):
    log = open_log(tmp_path)
    write(log, txn_batch(0))
    end_txn(log, commit=False)
    write(log, txn_batch(2))
    high_watermark = log.high_watermark
    os.remove(log.segments.active.txn_index.path)  # as if the index never reached the disk
    # kill -9: no flush, no close, no snapshot; opened again from the start of the log
    crashed = reopen(log, clean=False, recovery_point=0, high_watermark=high_watermark)
    assert crashed.recovery is not None
    assert crashed.last_stable_offset == 3
    fetch = crashed.read(0, 1 << 20, max_offset=crashed.last_stable_offset, read_committed=True)
    assert [(t.producer_id, t.first_offset) for t in fetch.aborted_transactions] == [(PID, 0)]
    assert crashed.producers.last_entry(PID).current_txn_first_offset == 3


def test_a_marker_of_an_older_coordinator_epoch_is_fenced(tmp_path):
    log = open_log(tmp_path)
    write(log, txn_batch(0))
    log.append_as_leader(bytearray(build_end_txn_marker(PID, 0, True, coordinator_epoch=5)), leader_epoch=0,
                         origin=COORDINATOR)
    write(log, txn_batch(2))
    with pytest.raises(KafkaError) as raised:
        log.append_as_leader(bytearray(build_end_txn_marker(PID, 0, False, coordinator_epoch=4)), leader_epoch=0,
                             origin=COORDINATOR)
    assert raised.value.code == ErrorCode.TRANSACTION_COORDINATOR_FENCED
    assert log.last_stable_offset == 3


class TestVerificationGuard:
    """KIP-890 part 1: a transaction starts on a partition only with a verification in force."""

    def test_without_a_guard_a_transactional_batch_cannot_start_a_transaction(self, tmp_path):
        log = open_log(tmp_path)
        with pytest.raises(KafkaError) as raised:
            log.append_as_leader(txn_batch(0), leader_epoch=0, verification_guard=SENTINEL)
        assert (raised.value.code, raised.value.message) == (
            ErrorCode.INVALID_TXN_STATE, "Record was not part of an ongoing transaction")
        assert log.log_end_offset == 0

    def test_the_guard_of_the_verification_lets_it_start_and_then_goes(self, tmp_path):
        log = open_log(tmp_path)
        guard = log.maybe_start_transaction_verification(PID, 0, 0)
        log.append_as_leader(txn_batch(0), leader_epoch=0, verification_guard=guard)
        assert log.producers.verification_state_entry(PID) is None
        # within the ongoing transaction there is nothing to verify
        assert log.maybe_start_transaction_verification(PID, 2, 0) is SENTINEL
        log.append_as_leader(txn_batch(2), leader_epoch=0, verification_guard=SENTINEL)
        assert log.log_end_offset == 4

    def test_a_marker_written_meanwhile_voids_the_guard(self, tmp_path):
        log = open_log(tmp_path)
        write(log, txn_batch(0))
        end_txn(log, commit=False)  # the transaction ends; the producer starts a new one
        stale = log.maybe_start_transaction_verification(PID, 2, 0)
        log.append_as_leader(bytearray(build_end_txn_marker(PID, 0, False, coordinator_epoch=1)), leader_epoch=0,
                             origin=COORDINATOR)  # aborted (timed out) before the answer came
        with pytest.raises(KafkaError) as raised:
            log.append_as_leader(txn_batch(2), leader_epoch=0, verification_guard=stale)
        assert raised.value.code == ErrorCode.INVALID_TXN_STATE
        log.high_watermark = log.log_end_offset
        assert log.last_stable_offset == log.log_end_offset  # nothing hangs the LSO

    def test_a_guard_is_unique_to_its_verification(self, tmp_path):
        log = open_log(tmp_path)
        log.maybe_start_transaction_verification(PID, 0, 0)
        with pytest.raises(KafkaError):
            log.append_as_leader(txn_batch(0), leader_epoch=0, verification_guard=VerificationGuard())

    def test_a_batch_after_the_lowest_verified_sequence_is_out_of_order(self, tmp_path):
        log = open_log(tmp_path)
        guard = log.maybe_start_transaction_verification(PID, 0, 0)
        assert log.maybe_start_transaction_verification(PID, 2, 0) is guard  # one entry, lowest sequence 0
        with pytest.raises(KafkaError) as raised:
            log.append_as_leader(txn_batch(2), leader_epoch=0, verification_guard=guard)
        assert raised.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER

    def test_verification_entries_expire_with_the_producer_expiration(self, tmp_path):
        clock = Clock()
        log = open_log(tmp_path, clock, producer_id_expiration_ms=1000)
        log.maybe_start_transaction_verification(PID, 0, 0)
        clock.advance(1000)
        log.remove_expired_producers()
        assert log.producers.verification_state_entry(PID) is None

    def test_with_verification_off_any_transactional_batch_is_taken(self, tmp_path):
        log = open_log(tmp_path)
        log.append_as_leader(txn_batch(0), leader_epoch=0, verification_guard=None)
        assert log.log_end_offset == 2


def test_after_a_truncation_the_replayed_markers_below_the_high_watermark_do_not_hold_the_lso(tmp_path):
    log = open_log(tmp_path)
    write(log, txn_batch(0))
    end_txn(log, commit=True)
    write(log, kv_batch(2))
    assert log.truncate_to(4)  # the producer state is rebuilt from the log, marker included
    assert (log.high_watermark, log.last_stable_offset) == (4, 4)
