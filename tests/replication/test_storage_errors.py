"""Files the broker cannot open (no descriptor left, disk full, permissions) fail the request
that needed them with KAFKA_STORAGE_ERROR and leave nothing half done: a topic whose logs
cannot all be created does not exist, a produce that needed a new segment appends nothing,
a fetch of a segment whose file cannot be opened fails for its partition only."""
import errno
import os

import anyio
import pytest

from pykbroker.cluster.embedded import EmbeddedMetadataStore
from pykbroker.cluster.model import BrokerInfo
from pykbroker.log import files
from pykbroker.log.manager import LogManager
from pykbroker.log.segment import Segment
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.replication.fetch_types import PartitionFetchRequest
from pykbroker.replication.replica_manager import ReplicaManager
from tests.log.helpers import kv_batch

from .helpers import BROKER, TP, replica_manager


def out_of_descriptors(*_args, **_kwargs):
    raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))


def fail_after(calls: int, original):
    """`original`, failing with EMFILE from call number `calls` + 1 on."""
    made = []

    def create(*args, **kwargs):
        if len(made) >= calls:
            out_of_descriptors()
        made.append(args)
        return original(*args, **kwargs)
    return create


def partition_dirs(directory, topic: str) -> list[str]:
    return [name for name in os.listdir(directory)
            if (files.parse_partition_dir(name) or ("",))[0] == topic]


def produce(manager, topic_partition, batch) -> "ErrorCode":
    async def main():
        return await manager.append_records({topic_partition: batch}, required_acks=1, timeout_ms=1000)
    return anyio.run(main)[topic_partition].error


def fetch(manager, topic_partition, offset: int):
    async def main():
        return await manager.fetch_records([(topic_partition, PartitionFetchRequest(fetch_offset=offset,
                                                                                    max_bytes=1 << 20))],
                                           replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20)
    return anyio.run(main)[topic_partition]


def test_a_topic_whose_logs_cannot_all_be_created_does_not_exist(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path)
    store = manager.metadata
    monkeypatch.setattr(Segment, "create", classmethod(fail_after(3, Segment.create.__func__)))

    with pytest.raises(KafkaError) as failure:
        store.create_topic("half", 5, 1)

    assert failure.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert "Error while creating log for half-3 in dir" in failure.value.message
    assert "Too many open files" in failure.value.message
    assert store.topic("half") is None
    assert not [tp for tp in manager.partitions if tp[0] == "half"]
    assert partition_dirs(tmp_path, "half") == []  # the three made are on their way out as `-delete`
    monkeypatch.undo()
    store.close()
    reloaded = EmbeddedMetadataStore([str(tmp_path)], BrokerInfo(BROKER, "127.0.0.1", 9092))
    assert reloaded.topic("half") is None and reloaded.topic(TP[0]) is not None
    reloaded.close()


def test_a_produce_whose_roll_cannot_create_a_segment_appends_nothing(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path)
    log = manager.partitions[TP].log
    log.update_config({"segment.bytes": "100"})
    assert produce(manager, TP, kv_batch(2)) == ErrorCode.NONE
    segments_before = [segment.base_offset for segment in log.segments]
    monkeypatch.setattr(Segment, "create", classmethod(out_of_descriptors))

    assert produce(manager, TP, kv_batch(2)) == ErrorCode.KAFKA_STORAGE_ERROR
    assert log.log_end_offset == 2
    assert [segment.base_offset for segment in log.segments] == segments_before
    monkeypatch.undo()
    assert produce(manager, TP, kv_batch(2)) == ErrorCode.NONE
    assert log.log_end_offset == 4 and len(log.segments) == 2
    logs_on_disk = sorted(name for name in os.listdir(log.directory) if name.endswith(".log"))
    assert logs_on_disk == [files.file_name(s.base_offset, ".log") for s in log.segments]


def test_a_new_active_segment_whose_log_cannot_be_opened_leaves_no_file(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path)
    log = manager.partitions[TP].log
    log.update_config({"segment.bytes": "100"})
    assert produce(manager, TP, kv_batch(2)) == ErrorCode.NONE
    files_before = sorted(os.listdir(log.directory))
    monkeypatch.setattr(files.OpenFile, "__init__", out_of_descriptors)

    assert produce(manager, TP, kv_batch(2)) == ErrorCode.KAFKA_STORAGE_ERROR
    assert sorted(os.listdir(log.directory)) == files_before
    monkeypatch.undo()
    assert produce(manager, TP, kv_batch(2)) == ErrorCode.NONE
    assert log.log_end_offset == 4


def test_a_fetch_of_a_segment_that_cannot_be_opened_fails_for_its_partition_only(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path, replicas=(BROKER,))
    log = manager.partitions[TP].log
    log.update_config({"segment.bytes": "100"})
    for _ in range(3):
        assert produce(manager, TP, kv_batch(2)) == ErrorCode.NONE
    assert len(log.segments) == 3
    for segment in list(log.segments)[:-1]:
        segment.release_files()  # as the handle cache does
    monkeypatch.setattr(files.OpenFile, "__init__", out_of_descriptors)

    old = fetch(manager, TP, 0)
    assert old.error_code == ErrorCode.KAFKA_STORAGE_ERROR
    recent = fetch(manager, TP, 4)  # the active segment's file is open already
    assert recent.error_code == ErrorCode.NONE and recent.records_size > 0
    monkeypatch.undo()
    assert fetch(manager, TP, 0).error_code == ErrorCode.NONE


def test_partitions_whose_logs_cannot_all_be_created_are_not_added(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path)
    store = manager.metadata
    store.create_topic("growing", 2, 1)
    monkeypatch.setattr(Segment, "create", classmethod(fail_after(2, Segment.create.__func__)))

    with pytest.raises(KafkaError) as failure:
        store.add_partitions("growing", 6, [[BROKER]] * 4)

    assert failure.value.code == ErrorCode.KAFKA_STORAGE_ERROR
    assert sorted(store.topic("growing").partitions) == [0, 1]
    assert sorted(tp[1] for tp in manager.partitions if tp[0] == "growing") == [0, 1]
    assert sorted(partition_dirs(tmp_path, "growing")) == ["growing-0", "growing-1"]


def test_a_topic_whose_logs_cannot_be_opened_at_start_does_not_stop_the_others(tmp_path, monkeypatch):
    manager = replica_manager(tmp_path / "first")
    store = manager.metadata
    store.create_topic("later", 2, 1)
    logs = LogManager([str(tmp_path / "second")], time_ms=manager.clock.now_ms)  # as with logs missing
    monkeypatch.setattr(Segment, "create", classmethod(fail_after(1, Segment.create.__func__)))
    starting = ReplicaManager(BROKER, manager.config, logs, store, timer=manager.timer)

    starting.startup()

    assert TP in starting.partitions
    assert not [tp for tp in starting.partitions if tp[0] == "later"]
