"""Transactional batches: the last stable offset and the aborted transaction index."""
import os

import pytest

from pykbroker.log import COORDINATOR
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.records.control import build_end_txn_marker

from .helpers import kv_batch, open_log, reopen

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
