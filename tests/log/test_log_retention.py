"""Retention (cleanup.policy=delete): whole segments by age and by size, deleted after a delay."""
import os

from pykbroker.log.deleter import DelayedDeleter

from .helpers import T0, Clock, kv_batch, open_log, records_of


def fill_segments(log, count: int, *, start_ts: int = T0, step_ms: int = 1000) -> None:
    """Append until `count` segments are closed, the i-th one's records stamped start_ts + i*step."""
    while len(log.segments) <= count:
        closed = len(log.segments) - 1
        log.append_as_leader(kv_batch(2, timestamp=start_ts + closed * step_ms), leader_epoch=0)
    log.high_watermark = log.log_end_offset


def test_segments_older_than_retention_ms_are_deleted(tmp_path):
    clock = Clock(T0)
    log = open_log(tmp_path, clock, config={"segment.bytes": 250, "retention.ms": 1500})
    fill_segments(log, 4)
    first_kept = list(log.segments)[2].base_offset

    deleted = log.delete_old_segments(now_ms=T0 + 3000)
    assert deleted == 2  # newest records T0 and T0+1000 are more than 1.5 s old at T0+3000
    assert log.segments.first.base_offset == first_kept
    assert log.log_start_offset == first_kept


def test_unlimited_retention_deletes_nothing(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 250, "retention.ms": -1, "retention.bytes": -1})
    fill_segments(log, 4)
    assert log.delete_old_segments(now_ms=T0 + 10**12) == 0


def test_segments_beyond_retention_bytes_are_deleted_oldest_first(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 250, "retention.bytes": 500, "retention.ms": -1})
    fill_segments(log, 5)
    sizes = [s.size for s in log.segments]

    log.delete_old_segments(now_ms=T0)
    assert log.size >= 500
    assert log.size - log.segments.first.size < 500
    assert len(log.segments) < len(sizes)


def test_retention_never_deletes_past_the_high_watermark(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 250, "retention.ms": 1})
    fill_segments(log, 4)
    log.high_watermark = list(log.segments)[1].base_offset
    assert log.delete_old_segments(now_ms=T0 + 10**9) == 1
    assert log.log_start_offset == log.high_watermark


def test_an_expired_active_segment_goes_too_after_a_roll_as_in_kafka(tmp_path):
    log = open_log(tmp_path, config={"retention.ms": 1000})
    log.append_as_leader(kv_batch(2, timestamp=T0), leader_epoch=0)
    log.high_watermark = log.log_end_offset

    assert log.delete_old_segments(now_ms=T0 + 5000) == 1
    assert [s.base_offset for s in log.segments] == [2]
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)
    assert log.append_as_leader(kv_batch(1), leader_epoch=0).first_offset == 2


def test_compact_only_logs_are_not_deleted_by_time(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 250, "retention.ms": 1, "cleanup.policy": "compact"})
    fill_segments(log, 3)
    assert log.delete_old_segments(now_ms=T0 + 10**9) == 0


def test_deleted_segments_linger_as_deleted_files_until_the_delay_passes(tmp_path):
    deleter = DelayedDeleter()
    log = open_log(tmp_path, config={"segment.bytes": 250, "retention.ms": 1000,
                                     "file.delete.delay.ms": 60000}, deleter=deleter)
    fill_segments(log, 3)
    doomed = log.segments.first
    region = log.read(0, 1 << 20).regions[0]
    before = records_of_region(region)

    log.delete_old_segments(now_ms=T0 + 10_000)
    assert os.path.exists(doomed.log_path) and doomed.log_path.endswith(".log.deleted")
    assert records_of_region(region) == before  # a region handed out before still reads

    deleter.run_due(T0 + 10_000 + 59_999)
    assert os.path.exists(doomed.log_path)
    deleter.run_due(T0 + 10_000 + 60_000)
    assert not os.path.exists(doomed.log_path)
    assert records_of_region(region) == before  # the open descriptor outlives the unlink


def records_of_region(region) -> list[int]:
    class Fetched:
        def read_bytes(self):
            return region.read_bytes()
    return [offset for offset, _, _ in records_of(Fetched())]
