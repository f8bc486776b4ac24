"""Truncation (followers), full truncation, and DeleteRecords."""
import os

import pytest

from pykbroker.protocol.errors import ErrorCode, KafkaError

from .helpers import kv_batch, offsets_of, open_log, producer_batch, reopen


def fill(log, batches: int, epoch: int = 0, per_batch: int = 2) -> None:
    for _ in range(batches):
        log.append_as_leader(kv_batch(per_batch), leader_epoch=epoch)


def test_truncate_to_removes_everything_from_the_offset(tmp_path):
    log = open_log(tmp_path)
    fill(log, 5)
    assert log.truncate_to(6)
    assert log.log_end_offset == 6
    assert offsets_of(log) == list(range(6))
    assert log.append_as_leader(kv_batch(1), leader_epoch=0).first_offset == 6


def test_truncating_at_or_past_the_end_does_nothing(tmp_path):
    log = open_log(tmp_path)
    fill(log, 2)
    assert not log.truncate_to(4)
    assert not log.truncate_to(10)
    assert log.log_end_offset == 4


def test_truncation_across_segments_deletes_later_segments(tmp_path):
    clock_log = open_log(tmp_path, config={"segment.bytes": 250})
    fill(clock_log, 10)
    bases = [s.base_offset for s in clock_log.segments]
    assert len(bases) > 3

    clock_log.truncate_to(bases[1] + 2)
    assert [s.base_offset for s in clock_log.segments] == bases[:2]
    assert clock_log.log_end_offset == bases[1] + 2
    assert offsets_of(clock_log) == list(range(bases[1] + 2))
    live = [name for name in os.listdir(clock_log.directory) if name.endswith(".log")]
    assert len(live) == 2


def test_truncation_lowers_the_high_watermark_and_trims_leader_epochs(tmp_path):
    log = open_log(tmp_path)
    fill(log, 2, epoch=1)
    fill(log, 2, epoch=2)
    log.high_watermark = 8
    log.truncate_to(3)
    assert log.high_watermark == 3
    assert log.epoch_cache.entries() == [(1, 0)]


def test_truncation_rolls_producer_state_back(tmp_path):
    log = open_log(tmp_path)
    for sequence in (0, 2, 4):
        log.append_as_leader(producer_batch(9, 0, sequence, 2), leader_epoch=0)
    log.truncate_to(4)
    assert log.producers.last_entry(9).last_seq == 3
    again = log.append_as_leader(producer_batch(9, 0, 4, 2), leader_epoch=0)
    assert not again.duplicate and again.first_offset == 4


def test_truncated_state_survives_a_restart(tmp_path):
    log = open_log(tmp_path)
    fill(log, 5)
    log.truncate_to(4)
    log.flush()
    log.close()
    assert reopen(log, clean=True).log_end_offset == 4


def test_truncate_fully_and_start_at_empties_the_log(tmp_path):
    log = open_log(tmp_path)
    fill(log, 3, epoch=2)
    log.truncate_fully_and_start_at(100)
    assert (log.log_start_offset, log.log_end_offset) == (100, 100)
    assert [s.base_offset for s in log.segments] == [100]
    assert log.epoch_cache.entries() == []
    assert log.append_as_leader(kv_batch(1), leader_epoch=3).first_offset == 100


def test_truncating_below_the_first_segment_starts_over(tmp_path):
    log = open_log(tmp_path)
    log.truncate_fully_and_start_at(50)
    fill(log, 2)
    log.truncate_to(10)
    assert (log.log_start_offset, log.log_end_offset) == (10, 10)


def test_delete_records_moves_the_log_start_offset(tmp_path):
    log = open_log(tmp_path)
    fill(log, 5, epoch=1)
    log.high_watermark = 10
    assert log.delete_records_before(7) == 7
    assert log.log_start_offset == 7
    assert log.offset_for_timestamp(-2) == (7, -1, 1)
    assert log.epoch_cache.entries() == [(1, 7)]
    assert log.delete_records_before(5) == 7


def test_delete_records_cannot_pass_the_high_watermark(tmp_path):
    log = open_log(tmp_path)
    fill(log, 5)
    log.high_watermark = 4
    with pytest.raises(KafkaError) as raised:
        log.delete_records_before(5)
    assert raised.value.code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert log.delete_records_before(-1) == 4


def test_segments_below_a_deleted_records_offset_go_at_the_next_retention_run(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 250, "retention.ms": -1})
    fill(log, 10)
    log.high_watermark = log.log_end_offset
    third = list(log.segments)[2].base_offset
    log.delete_records_before(third + 1)
    assert log.delete_old_segments() == 2
    assert log.segments.first.base_offset == third
    assert log.log_start_offset == third + 1
