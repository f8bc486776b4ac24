"""ListOffsets lookups by timestamp, and OffsetForLeaderEpoch."""
from pykbroker.log.lookups import EARLIEST_TIMESTAMP, LATEST_TIERED_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP

from .helpers import T0, batch, kv_batch, open_log


def timed_batch(*timestamps) -> bytearray:
    return batch(*[(f"k{i}", "v", [], ts) for i, ts in enumerate(timestamps)])


def test_a_timestamp_inside_a_batch_finds_the_first_record_at_or_after_it(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(timed_batch(T0, T0 + 10, T0 + 20), leader_epoch=2)
    log.append_as_leader(timed_batch(T0 + 30, T0 + 40), leader_epoch=2)

    assert log.offset_for_timestamp(T0 + 5) == (1, T0 + 10, 2)
    assert log.offset_for_timestamp(T0 + 10) == (1, T0 + 10, 2)
    assert log.offset_for_timestamp(T0 + 21) == (3, T0 + 30, 2)
    assert log.offset_for_timestamp(T0 - 100) == (0, T0, 2)
    assert log.offset_for_timestamp(T0 + 41) is None


def test_record_timestamps_need_not_be_ordered(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(timed_batch(T0 + 50, T0 + 10, T0 + 60), leader_epoch=0)
    assert log.offset_for_timestamp(T0 + 20) == (0, T0 + 50, 0)
    assert log.offset_for_timestamp(T0 + 55) == (2, T0 + 60, 0)


def test_timestamp_lookups_span_segments(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300, "index.interval.bytes": 1})
    for i in range(12):
        log.append_as_leader(timed_batch(T0 + 100 * i, T0 + 100 * i + 50), leader_epoch=0)
    assert len(log.segments) > 3

    for i in range(12):
        assert log.offset_for_timestamp(T0 + 100 * i + 1) == (2 * i + 1, T0 + 100 * i + 50, 0)


def test_timestamp_lookups_skip_records_below_the_log_start_offset(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(timed_batch(T0, T0 + 10, T0 + 20), leader_epoch=0)
    log.high_watermark = 3
    log.delete_records_before(2)
    assert log.offset_for_timestamp(T0) == (2, T0 + 20, 0)


def test_log_append_time_batches_answer_with_the_append_time(tmp_path):
    log = open_log(tmp_path, config={"message.timestamp.type": "LogAppendTime"})
    log.append_as_leader(timed_batch(1, 2, 3), leader_epoch=0, now_ms=T0)
    assert log.offset_for_timestamp(T0 - 1) == (0, T0, 0)


def test_earliest_and_latest_carry_leader_epochs(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(3), leader_epoch=1)
    log.append_as_leader(kv_batch(3), leader_epoch=4)
    assert log.offset_for_timestamp(EARLIEST_TIMESTAMP) == (0, -1, 1)
    assert log.offset_for_timestamp(LATEST_TIMESTAMP) == (6, -1, 4)
    assert log.offset_for_timestamp(LATEST_TIERED_TIMESTAMP) == (-1, -1, -1)


def test_max_timestamp_finds_the_record_holding_it(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 200})
    log.append_as_leader(timed_batch(T0, T0 + 5), leader_epoch=0)
    log.append_as_leader(timed_batch(T0 + 1, T0 + 900, T0 + 2), leader_epoch=3)
    log.append_as_leader(timed_batch(T0 + 3), leader_epoch=3)
    assert log.offset_for_timestamp(MAX_TIMESTAMP) == (3, T0 + 900, 3)
    assert log.max_timestamp() == (3, T0 + 900, 3)


def test_end_offsets_for_leader_epochs(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(3), leader_epoch=1)
    log.append_as_leader(kv_batch(2), leader_epoch=3)
    log.append_as_leader(kv_batch(4), leader_epoch=5)

    assert log.end_offset_for_epoch(1) == (1, 3)
    assert log.end_offset_for_epoch(2) == (1, 3)
    assert log.end_offset_for_epoch(3) == (3, 5)
    assert log.end_offset_for_epoch(5) == (5, 9)
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.end_offset_for_epoch(6) is None
    assert log.end_offset_for_epoch(-1) is None


def test_a_new_leader_epoch_can_start_before_any_append(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(3), leader_epoch=1)
    log.maybe_assign_epoch_start_offset(2, log.log_end_offset)
    assert log.end_offset_for_epoch(1) == (1, 3)
    assert log.end_offset_for_epoch(2) == (2, 3)


def test_the_leader_epoch_checkpoint_is_kafkas_text_format(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(3), leader_epoch=1)
    log.append_as_leader(kv_batch(2), leader_epoch=3)
    with open(f"{log.directory}/leader-epoch-checkpoint") as file:
        assert file.read() == "0\n2\n1 0\n3 3\n"
