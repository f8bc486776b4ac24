"""Open file descriptors: a partition costs one (its active segment's `.log`), as in Kafka.

Indexes keep no descriptor (inactive ones are opened for one lookup, the active one is
mirrored in memory), older segments' files are open only while a bounded cache holds them, and a file
region handed to the network keeps its own descriptor until it is sent.
"""
import os
import struct

import pytest

from pykbroker.log import LogConfig, descriptor_limit
from pykbroker.log import log as log_module
from pykbroker.log.errors import ErrorCode, KafkaStorageError
from pykbroker.log.files import HandleCache
from pykbroker.log.manager import LogManager
from pykbroker.log.producer_state import COORDINATOR
from pykbroker.records.control import build_end_txn_marker

from .helpers import T0, kv_batch, offsets_of, open_log, producer_batch, records_of, reopen

PARTITIONS = 200


def open_descriptors(directory=None) -> int:
    """Descriptors of this process (only those on files under `directory`, if given)."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except FileNotFoundError:
            continue  # the descriptor listdir itself used
        if directory is None or target.startswith(str(directory)):
            count += 1
    return count


def test_a_partition_keeps_one_descriptor_open(tmp_path):
    before = open_descriptors()
    manager = LogManager([str(tmp_path)], LogConfig.from_dict({"index.interval.bytes": "1"}))
    try:
        for partition in range(PARTITIONS):
            log = manager.get_or_create("many", partition)
            for _ in range(3):
                log.append_as_leader(kv_batch(2), leader_epoch=0)
            assert records_of(log.read(0, 1 << 20))  # fetched too
        assert log.segments.active.offset_index.entries > 0
        per_partition = (open_descriptors() - before) / PARTITIONS
        assert per_partition <= 1.05  # the active .log, plus the manager's few own
        assert open_descriptors(tmp_path) == PARTITIONS
    finally:
        for log in manager.all_logs():
            log.close()  # without the fsyncs of manager.close()
    assert open_descriptors(tmp_path) == 0


def test_the_aborted_transaction_index_keeps_no_descriptor(tmp_path):
    log = open_log(tmp_path)
    log.append_as_leader(producer_batch(7, 0, 0, is_transactional=True), leader_epoch=0)
    marker = bytearray(build_end_txn_marker(7, 0, False, coordinator_epoch=1, timestamp=T0))
    log.append_as_leader(marker, leader_epoch=0, origin=COORDINATOR)
    log.high_watermark = log.log_end_offset
    assert os.path.exists(log.segments.active.txn_index.path)
    assert log.read(0, 1 << 20, read_committed=True).aborted_transactions
    assert open_descriptors(tmp_path) == 1


def test_reads_of_old_segments_work_after_their_files_are_closed(tmp_path):
    handles = HandleCache(capacity=2)
    log = open_log(tmp_path, config={"segment.bytes": 300, "index.interval.bytes": 1}, handles=handles)
    for i in range(30):
        log.append_as_leader(kv_batch(2, timestamp=T0 + i), leader_epoch=0)
    assert len(log.segments) > 8
    for _ in range(2):  # the second time every old segment's files were closed and are opened again
        assert offsets_of(log) == list(range(60))
        assert log.offset_for_timestamp(T0 + 3).offset == 6
        assert open_descriptors(log.directory) <= 2 + 1  # the cache's, and the active segment's


def test_a_region_being_sent_keeps_its_descriptor_after_the_cache_closes_its_segment(tmp_path):
    handles = HandleCache(capacity=1)
    log = open_log(tmp_path, config={"segment.bytes": 300}, handles=handles)
    for _ in range(20):
        log.append_as_leader(kv_batch(2), leader_epoch=0)
    in_flight = log.read(0, 1 << 20)
    expected = in_flight.read_bytes()
    assert offsets_of(log) == list(range(40))  # every other segment passes through the cache
    assert log.segments.first._file is None
    assert os.pread(in_flight.regions[0].fd, len(expected), in_flight.regions[0].position) == expected
    descriptors = open_descriptors(log.directory)
    del in_flight
    assert open_descriptors(log.directory) == descriptors - 1


def test_the_active_segments_index_reaches_its_file_at_flush_roll_and_close(tmp_path):
    log = open_log(tmp_path, config={"index.interval.bytes": 1})
    for _ in range(5):
        log.append_as_leader(kv_batch(1), leader_epoch=0)
    index_path = log.segments.active.offset_index.path

    def entries_on_disk():
        with open(index_path, "rb") as file:
            return [offset for offset, _ in struct.iter_unpack(">ii", file.read())]

    log.flush()
    assert entries_on_disk() == [1, 2, 3, 4]
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.roll()
    assert entries_on_disk() == [1, 2, 3, 4, 5]
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.close()
    reopened = reopen(log, clean=True)
    assert reopened.segments.active.offset_index.entries == 1
    assert offsets_of(reopened) == list(range(8))


def test_truncating_the_active_segment_cuts_its_index_file_too(tmp_path):
    log = open_log(tmp_path, config={"index.interval.bytes": 1})
    for _ in range(6):
        log.append_as_leader(kv_batch(2), leader_epoch=0)
    log.flush()
    index = log.segments.active.offset_index
    assert os.path.getsize(index.path) == 5 * 8
    log.truncate_to(6)
    assert os.path.getsize(index.path) == 2 * 8 and index.entries == 2
    log.append_as_leader(kv_batch(2), leader_epoch=0)
    entries = index.entries
    log.close()
    reopened = reopen(log, clean=True)
    assert reopened.segments.active.offset_index.entries == entries
    assert offsets_of(reopened) == list(range(8))


def test_a_new_log_is_refused_while_its_descriptor_would_eat_into_the_room_kept_free(tmp_path, monkeypatch):
    # the process's own descriptors are counted as this test opens them, one per log: other tests'
    # threads in the same worker open and close files meanwhile, which /proc/self/fd would see
    in_use = 100
    opened = []
    limit = next(limit for limit in range(in_use, in_use + 1000)
                 if limit - descriptor_limit.kept_free(limit) >= in_use + 3)
    monkeypatch.setattr(descriptor_limit, "open_file_limit", lambda: limit)
    monkeypatch.setattr(descriptor_limit, "descriptors_in_use", lambda: in_use + len(opened))
    monkeypatch.setattr(log_module, "BUDGET", descriptor_limit.DescriptorBudget())
    with pytest.raises(KafkaStorageError) as refused:
        for partition in range(10):
            opened.append(open_log(tmp_path, name=f"many-{partition}"))
    assert 2 <= len(opened) <= 3
    assert "Too many open files" in refused.value.message
    assert refused.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(log.directory) for log in opened)
    for log in opened:
        log.close()
