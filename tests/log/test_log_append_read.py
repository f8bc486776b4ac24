"""Appending batches and reading them back as file regions."""
import os
import socket

import pytest

from pykbroker.log import LogConfig
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.records.batch import parse_header

from .helpers import T0, Clock, batch, kv_batch, open_log, records_of


def test_appends_get_consecutive_offsets_and_read_back_byte_for_byte(tmp_path):
    log = open_log(tmp_path)
    first = log.append_as_leader(kv_batch(3), leader_epoch=0)
    second = log.append_as_leader(kv_batch(2), leader_epoch=0)

    assert (first.first_offset, first.last_offset, first.record_count) == (0, 2, 3)
    assert (second.first_offset, second.last_offset) == (3, 4)
    assert log.log_end_offset == 5
    fetch = log.read(0, 1 << 20)
    assert [offset for offset, _, _ in records_of(fetch)] == [0, 1, 2, 3, 4]
    with open(os.path.join(log.directory, "00000000000000000000.log"), "rb") as file:
        assert fetch.read_bytes() == file.read()


def test_the_stored_batch_carries_the_assigned_offset_and_leader_epoch(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.append_as_leader(kv_batch(2), leader_epoch=7)

    header = parse_header(log.read(1, 1 << 20).read_bytes())
    assert (header.base_offset, header.partition_leader_epoch) == (1, 7)


def test_the_callers_buffer_is_rewritten_in_place(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(4), leader_epoch=0)
    produced = kv_batch(1)
    log.append_as_leader(produced, leader_epoch=2)
    assert parse_header(produced).base_offset == 4


def test_a_fetch_offset_inside_a_batch_returns_that_whole_batch(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(5), leader_epoch=0)
    log.append_as_leader(kv_batch(5), leader_epoch=0)

    fetch = log.read(7, 1 << 20)
    assert parse_header(fetch.read_bytes()).base_offset == 5
    assert fetch.fetch_offset == 7


def test_reads_from_the_middle_of_a_segment_use_the_offset_index(tmp_path):
    log = open_log(tmp_path, config={"index.interval.bytes": 100})
    for _ in range(200):
        log.append_as_leader(kv_batch(2), leader_epoch=0)

    assert log.segments.active.offset_index.entries > 10
    for offset in (0, 1, 151, 298, 399):
        fetch = log.read(offset, 1)
        header = parse_header(fetch.read_bytes())
        assert header.base_offset <= offset <= header.last_offset


def test_the_first_batch_comes_whole_even_when_larger_than_max_bytes(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(10, value_size=500), leader_epoch=0)
    log.append_as_leader(kv_batch(1), leader_epoch=0)

    fetch = log.read(0, 100)
    first_size = parse_header(fetch.read_bytes()).size
    assert fetch.size == first_size > 100
    assert not fetch.first_entry_incomplete


def test_without_min_one_message_an_oversized_first_batch_is_cut_and_flagged(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(10, value_size=500), leader_epoch=0)

    fetch = log.read(0, 100, min_one_message=False)
    assert fetch.first_entry_incomplete
    assert fetch.size == 100


def test_max_bytes_may_end_the_read_inside_a_later_batch_as_kafka_does(tmp_path):
    log = open_log(tmp_path)
    sizes = [len(log_batch) for log_batch in (kv_batch(3), kv_batch(3))]
    log.append_as_leader(kv_batch(3), leader_epoch=0)
    log.append_as_leader(kv_batch(3), leader_epoch=0)

    fetch = log.read(0, sizes[0] + 10)
    assert fetch.size == sizes[0] + 10
    assert [offset for offset, _, _ in records_of(fetch)] == [0, 1, 2]


def test_reads_never_pass_max_offset(tmp_path):
    log = open_log(tmp_path)
    for _ in range(3):
        log.append_as_leader(kv_batch(2), leader_epoch=0)
    log.high_watermark = 4

    fetch = log.read(0, 1 << 20, max_offset=log.high_watermark)
    assert [offset for offset, _, _ in records_of(fetch)] == [0, 1, 2, 3]
    assert log.read(4, 1 << 20, max_offset=4).regions == []
    assert log.read(5, 1 << 20, max_offset=4).regions == []


def test_reading_at_the_log_end_returns_nothing(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(2), leader_epoch=0)
    fetch = log.read(2, 1 << 20)
    assert fetch.regions == [] and fetch.size == 0


@pytest.mark.parametrize("offset", [-1, 3])
def test_offsets_outside_the_log_are_out_of_range(tmp_path, offset):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(2), leader_epoch=0)
    with pytest.raises(KafkaError) as raised:
        log.read(offset, 1 << 20)
    assert raised.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_offsets_below_the_log_start_are_out_of_range(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(5), leader_epoch=0)
    log.high_watermark = 5
    log.delete_records_before(3)
    with pytest.raises(KafkaError) as raised:
        log.read(2, 1 << 20)
    assert raised.value.code == ErrorCode.OFFSET_OUT_OF_RANGE


def test_a_region_can_be_sent_with_sendfile(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(3), leader_epoch=0)
    region = log.read(0, 1 << 20).regions[0]

    sender, receiver = socket.socketpair()
    with sender, receiver:
        sent = os.sendfile(sender.fileno(), region.fd, region.position, len(region))
        assert receiver.recv(1 << 16) == region.read_bytes()
    assert sent == region.length


def test_reads_continue_into_the_next_segment(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300})
    for _ in range(6):
        log.append_as_leader(kv_batch(2), leader_epoch=0)
    assert len(log.segments) > 1

    seen = []
    offset = 0
    while offset < log.log_end_offset:
        records = records_of(log.read(offset, 1 << 20))
        seen.extend(o for o, _, _ in records)
        offset = seen[-1] + 1
    assert seen == list(range(12))


def test_log_append_time_stamps_the_batch_with_the_broker_time(tmp_path):
    clock = Clock()
    log = open_log(tmp_path, clock, config={"message.timestamp.type": "LogAppendTime"})
    info = log.append_as_leader(kv_batch(2, timestamp=T0 - 5000), leader_epoch=0, now_ms=T0 + 1)

    header = parse_header(log.read(0, 1 << 20).read_bytes())
    assert info.log_append_time == T0 + 1
    assert header.is_log_append_time and header.max_timestamp == T0 + 1


def test_create_time_topics_report_no_log_append_time(tmp_path):
    log = open_log(tmp_path)
    info = log.append_as_leader(kv_batch(1), leader_epoch=0)
    assert info.log_append_time == -1


def test_config_can_be_updated_at_runtime(tmp_path):
    log = open_log(tmp_path)
    log.update_config({"segment.bytes": "400", "retention.ms": 10})
    assert log.config.segment_bytes == 400 and log.config.retention_ms == 10
    assert LogConfig.from_dict({"cleanup.policy": "compact,delete"}).compact


def test_follower_appends_keep_the_leaders_offsets(tmp_path):
    leader = open_log(tmp_path, name="leader-0")
    follower = open_log(tmp_path, name="follower-0")
    for epoch in (1, 1, 2):
        leader.append_as_leader(kv_batch(3), leader_epoch=epoch)

    info = follower.append_as_follower(bytearray(leader.read(0, 1 << 20).read_bytes()))
    assert (info.first_offset, info.last_offset) == (0, 8)
    assert follower.log_end_offset == 9
    assert follower.read(0, 1 << 20).read_bytes() == leader.read(0, 1 << 20).read_bytes()
    assert follower.end_offset_for_epoch(1) == (1, 6)


def test_follower_appends_below_the_log_end_are_refused(tmp_path):
    from pykbroker.log import UnexpectedAppendOffsetError

    leader = open_log(tmp_path, name="leader-0")
    follower = open_log(tmp_path, name="follower-0")
    leader.append_as_leader(kv_batch(3), leader_epoch=0)
    data = leader.read(0, 1 << 20).read_bytes()
    follower.append_as_follower(bytearray(data))
    with pytest.raises(UnexpectedAppendOffsetError):
        follower.append_as_follower(bytearray(data))


def test_batch_bytes_are_stored_verbatim_apart_from_offset_and_epoch(tmp_path):
    log = open_log(tmp_path)
    produced = batch(("a", "1"), ("b", "2"))
    original = bytes(produced)
    log.append_as_leader(produced, leader_epoch=4)
    stored = log.read(0, 1 << 20).read_bytes()
    assert stored[12:16] == (4).to_bytes(4, "big")
    assert stored[16:] == original[16:]
