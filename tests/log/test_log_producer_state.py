"""Idempotent producers: duplicates, sequence gaps, epochs, and state across restarts."""
import os

import pytest

from pykbroker.log.producer_snapshot import SnapshotFiles
from pykbroker.protocol.errors import ErrorCode, KafkaError

from .helpers import kv_batch, producer_batch, open_log, reopen

PID = 1000


def send(log, epoch: int, sequence: int, count: int = 2):
    return log.append_as_leader(producer_batch(PID, epoch, sequence, count), leader_epoch=0)


def refused_code(log, epoch: int, sequence: int, count: int = 2) -> ErrorCode:
    end = log.log_end_offset
    with pytest.raises(KafkaError) as raised:
        send(log, epoch, sequence, count)
    assert log.log_end_offset == end
    return raised.value.code


def test_a_duplicate_batch_returns_its_original_offsets_and_appends_nothing(tmp_path):
    log = open_log(tmp_path)
    first = send(log, 0, 0)
    send(log, 0, 2)

    again = send(log, 0, 0)
    assert again.duplicate
    assert (again.first_offset, again.last_offset) == (first.first_offset, first.last_offset)
    assert log.log_end_offset == 4


def test_each_of_the_last_five_batches_is_recognised_as_a_duplicate(tmp_path):
    log = open_log(tmp_path)
    infos = [send(log, 0, sequence) for sequence in range(0, 12, 2)]
    for info, sequence in zip(infos[1:], range(2, 12, 2)):
        duplicate = send(log, 0, sequence)
        assert duplicate.duplicate and duplicate.first_offset == info.first_offset
    assert refused_code(log, 0, 0) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_a_sequence_gap_is_out_of_order(tmp_path):
    log = open_log(tmp_path)
    send(log, 0, 0)
    assert refused_code(log, 0, 5) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_an_older_epoch_is_an_invalid_producer_epoch(tmp_path):
    log = open_log(tmp_path)
    send(log, 3, 0)
    assert refused_code(log, 2, 2) == ErrorCode.INVALID_PRODUCER_EPOCH


def test_a_new_epoch_must_start_at_sequence_zero(tmp_path):
    log = open_log(tmp_path)
    send(log, 0, 0)
    assert refused_code(log, 1, 2) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert send(log, 1, 0).first_offset == 2


def test_an_unknown_producer_may_start_at_any_sequence(tmp_path):
    log = open_log(tmp_path)
    assert send(log, 4, 17).first_offset == 0
    assert send(log, 4, 19).first_offset == 2


def test_sequences_wrap_around_after_int32_max(tmp_path):
    log = open_log(tmp_path)
    send(log, 0, 2**31 - 2, count=1)
    send(log, 0, 2**31 - 1, count=1)
    assert send(log, 0, 0, count=1).first_offset == 2


def test_batches_without_producer_id_are_never_checked(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(2), leader_epoch=0)
    log.append_as_leader(kv_batch(2), leader_epoch=0)
    assert log.log_end_offset == 4


def test_duplicates_are_still_detected_after_a_clean_restart(tmp_path):
    log = open_log(tmp_path)
    infos = [send(log, 0, sequence) for sequence in range(0, 10, 2)]
    log.flush()
    log.close()

    reopened = reopen(log, clean=True)
    for info, sequence in zip(infos, range(0, 10, 2)):
        assert reopened.append_as_leader(producer_batch(PID, 0, sequence, 2), leader_epoch=0).first_offset \
            == info.first_offset
    assert reopened.log_end_offset == 10
    assert send(reopened, 0, 10).first_offset == 10


def test_duplicates_are_still_detected_after_a_crash(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300})
    infos = [send(log, 0, sequence) for sequence in range(0, 20, 2)]
    assert len(log.segments) > 2

    recovered = reopen(log, clean=False, recovery_point=0)
    duplicate = recovered.append_as_leader(producer_batch(PID, 0, 18, 2), leader_epoch=0)
    assert duplicate.duplicate and duplicate.first_offset == infos[-1].first_offset
    assert refused_code(recovered, 0, 30) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_producer_state_survives_losing_every_snapshot(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300})
    for sequence in range(0, 12, 2):
        send(log, 0, sequence)
    log.flush()
    log.close()
    for name in os.listdir(log.directory):
        if name.endswith(".snapshot"):
            os.remove(os.path.join(log.directory, name))

    reopened = reopen(log, clean=True)
    assert send(reopened, 0, 10).duplicate
    assert send(reopened, 0, 12).first_offset == 12


def test_a_corrupt_snapshot_is_ignored_and_state_rebuilt_from_the_log(tmp_path):
    log = open_log(tmp_path)
    send(log, 0, 0)
    log.close()
    snapshot = SnapshotFiles(log.directory).path(2)
    with open(snapshot, "r+b") as file:
        file.seek(12)
        file.write(b"\x00\x00\x00\x00\x00")

    reopened = reopen(log, clean=True)
    assert send(reopened, 0, 0).duplicate


def test_snapshots_are_written_when_segments_roll(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300})
    for sequence in range(0, 12, 2):
        send(log, 0, sequence)
    bases = [s.base_offset for s in log.segments][1:]
    assert set(bases) <= set(SnapshotFiles(log.directory).offsets())


def test_expired_producers_are_forgotten(tmp_path):
    log = open_log(tmp_path, producer_id_expiration_ms=1000)
    info = send(log, 0, 0)
    assert log.remove_expired_producers(now_ms=info.max_timestamp + 999) == 0
    assert log.remove_expired_producers(now_ms=info.max_timestamp + 1000) == 1
    assert send(log, 0, 9).first_offset == 2  # unknown again: any sequence is accepted


def test_followers_take_producer_state_from_replicated_batches(tmp_path):
    leader = open_log(tmp_path, name="leader-0")
    follower = open_log(tmp_path, name="follower-0")
    send(leader, 0, 0)
    send(leader, 0, 2)
    follower.append_as_follower(bytearray(leader.read(0, 1 << 20).read_bytes()))

    entry = follower.producers.last_entry(PID)
    assert (entry.producer_epoch, entry.last_seq, entry.last_data_offset) == (0, 3, 3)
