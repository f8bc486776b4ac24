"""Segment files, rolling, and the sparse offset and time indexes."""
import os
import struct

from pykbroker.log.files import HandleCache
from pykbroker.log.index import OffsetIndex, TimeIndex

from .helpers import T0, Clock, kv_batch, offsets_of, open_log, segment_files


def test_the_partition_directory_uses_kafkas_file_names(tmp_path):
    log = open_log(tmp_path, name="orders-3")
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    assert os.path.basename(log.directory) == "orders-3"
    assert {"00000000000000000000.log", "00000000000000000000.index",
            "00000000000000000000.timeindex"} <= set(os.listdir(log.directory))


def test_segments_roll_when_segment_bytes_would_be_exceeded(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 500})
    size = len(kv_batch(2))
    for _ in range(10):
        log.append_as_leader(kv_batch(2), leader_epoch=0)

    assert len(log.segments) > 1
    for segment in list(log.segments)[:-1]:
        assert segment.size <= 500 and segment.size + size > 500
    bases = [segment.base_offset for segment in log.segments]
    assert segment_files(log) == [f"{base:020d}.log" for base in bases]
    assert offsets_of(log) == list(range(20))


def test_a_new_segment_starts_at_the_first_offset_of_the_append_that_rolled_it(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300})
    for _ in range(5):
        log.append_as_leader(kv_batch(3), leader_epoch=0)
    for segment in log.segments:
        assert segment.base_offset % 3 == 0


def test_segments_roll_after_segment_ms_counted_from_the_first_batch_timestamp(tmp_path):
    clock = Clock()
    log = open_log(tmp_path, clock, config={"segment.ms": 1000})
    log.append_as_leader(kv_batch(1, timestamp=T0), leader_epoch=0)
    log.append_as_leader(kv_batch(1, timestamp=T0 + 1000), leader_epoch=0)
    assert len(log.segments) == 1

    log.append_as_leader(kv_batch(1, timestamp=T0 + 1001), leader_epoch=0)
    assert [segment.base_offset for segment in log.segments] == [0, 2]


def test_without_timestamps_segment_ms_counts_from_segment_creation(tmp_path):
    clock = Clock()
    log = open_log(tmp_path, clock, config={"segment.ms": 1000})
    log.append_as_leader(kv_batch(1, timestamp=-1), leader_epoch=0)
    clock.advance(1001)
    log.append_as_leader(kv_batch(1, timestamp=-1), leader_epoch=0)
    assert len(log.segments) == 2


def test_a_full_offset_index_rolls_the_segment(tmp_path):
    log = open_log(tmp_path, config={"segment.index.bytes": 16, "index.interval.bytes": 1})
    for _ in range(8):
        log.append_as_leader(kv_batch(1), leader_epoch=0)
    assert len(log.segments) > 1
    assert all(segment.offset_index.entries <= 2 for segment in log.segments)


def test_offsets_beyond_the_index_range_roll_a_new_segment(tmp_path):
    leader = open_log(tmp_path, name="leader-0")
    follower = open_log(tmp_path, name="follower-0")
    leader.append_as_leader(kv_batch(1), leader_epoch=0)
    follower.append_as_follower(bytearray(leader.read(0, 100).read_bytes()))
    far = kv_batch(1, base_offset=2**31 + 10)
    follower.append_as_follower(far)
    assert [segment.base_offset for segment in follower.segments] == [0, 2**31 + 10]


def test_an_index_entry_is_written_per_index_interval_bytes(tmp_path):
    log = open_log(tmp_path, config={"index.interval.bytes": 1000})
    size = len(kv_batch(2))
    for _ in range(50):
        log.append_as_leader(kv_batch(2), leader_epoch=0)
    expected = (50 * size) // (1000 + size)
    assert abs(log.segments.active.offset_index.entries - expected) <= 1


def test_index_files_hold_kafkas_binary_entries(tmp_path):
    log = open_log(tmp_path, config={"index.interval.bytes": 1, "segment.bytes": 10_000})
    for i in range(5):
        log.append_as_leader(kv_batch(1, timestamp=T0 + i), leader_epoch=0)
    log.roll()
    index = open(os.path.join(log.directory, "00000000000000000000.index"), "rb").read()
    time_index = open(os.path.join(log.directory, "00000000000000000000.timeindex"), "rb").read()
    entries = list(struct.iter_unpack(">ii", index))
    assert [offset for offset, _ in entries] == [1, 2, 3, 4]
    assert all(b > a for (_, a), (_, b) in zip(entries, entries[1:]))
    times = list(struct.iter_unpack(">qi", time_index))
    assert times[-1] == (T0 + 4, 4)  # a rolled segment records its max timestamp last


def test_offset_index_lookup_finds_the_last_entry_at_or_below(tmp_path):
    index = OffsetIndex(str(tmp_path / "00000000000000000100.index"), 100, 1 << 20)
    for i in range(2000):
        index.append(100 + i * 3, i * 50)
    assert index.lookup(99) == (100, 0)
    assert index.lookup(100) == (100, 0)
    assert index.lookup(104) == (103, 50)
    assert index.lookup(100 + 1999 * 3 + 7) == (100 + 1999 * 3, 1999 * 50)
    index.warm()
    assert index.lookup(104) == (103, 50)
    index.truncate_to(106)
    assert index.entries == 2 and index.last_offset == 103


def test_time_index_lookup_and_append_rules(tmp_path):
    index = TimeIndex(str(tmp_path / "00000000000000000000.timeindex"), 0, 1 << 20)
    index.maybe_append(-1, 0)
    assert index.entries == 0
    index.maybe_append(T0, 5)
    index.maybe_append(T0, 6)
    index.maybe_append(T0 + 10, 9)
    assert index.entries == 2
    assert index.lookup(T0 - 1) == (-1, 0)
    assert index.lookup(T0 + 5) == (T0, 5)
    assert index.last_entry == (T0 + 10, 9)


def test_inactive_segments_close_their_files_beyond_the_handle_cache_capacity(tmp_path):
    handles = HandleCache(capacity=2)
    log = open_log(tmp_path, config={"segment.bytes": 200}, handles=handles)
    for _ in range(10):
        log.append_as_leader(kv_batch(2), leader_epoch=0)
    assert len(log.segments) > 4
    assert offsets_of(log) == list(range(20))
    log.offset_for_timestamp(T0 + 1)  # looks at every segment's time index
    assert len(handles) <= 2
    inactive = list(log.segments)[:-1]
    assert sum(s._file is not None for s in inactive) <= 2
