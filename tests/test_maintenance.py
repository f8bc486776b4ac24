"""Periodic checkpoints cost in proportion to what changed: an idle broker writes none."""

import os
import time

import pytest

from pykbroker.log import LogManager
from pykbroker.log import checkpoint as checkpoint_module
from pykbroker.maintenance import checkpoint_jobs
from pykbroker.testkit.process import BrokerProcess

from .log.helpers import Clock, kv_batch

PARTITIONS = 200


@pytest.fixture
def written(monkeypatch):
    """The checkpoint files written, by name, in order."""
    names: list[str] = []
    real = checkpoint_module.write_offsets

    def counting(path, offsets, **kwargs):
        names.append(os.path.basename(path))
        return real(path, offsets, **kwargs)

    monkeypatch.setattr(checkpoint_module, "write_offsets", counting)
    return names


@pytest.fixture
def manager(tmp_path):
    manager = LogManager([str(tmp_path / "logs")], time_ms=Clock())
    for partition in range(PARTITIONS):
        manager.get_or_create("idle", partition)
    yield manager
    manager.close()


def run_all(jobs) -> None:
    for job in jobs.values():
        job()


def test_idle_partitions_are_checkpointed_once_then_never_again(manager, written):
    jobs = checkpoint_jobs(manager)
    run_all(jobs)
    assert sorted(written) == sorted(
        [
            checkpoint_module.REPLICATION_OFFSET_CHECKPOINT,
            checkpoint_module.RECOVERY_POINT_CHECKPOINT,
            checkpoint_module.LOG_START_OFFSET_CHECKPOINT,
        ]
    )
    written.clear()
    for _ in range(5):
        run_all(jobs)
    assert written == []


def test_a_moved_high_watermark_rewrites_only_the_high_watermark_checkpoint(manager, written):
    jobs = checkpoint_jobs(manager)
    run_all(jobs)
    written.clear()
    busy = manager.get("idle", 7)
    busy.append_as_leader(kv_batch(3), leader_epoch=1)
    busy.high_watermark = busy.log_end_offset
    run_all(jobs)
    assert written == [checkpoint_module.REPLICATION_OFFSET_CHECKPOINT]
    assert checkpoint_module.read_offsets(
        os.path.join(manager.log_dirs[0], checkpoint_module.REPLICATION_OFFSET_CHECKPOINT)
    )[("idle", 7)] == busy.log_end_offset


def test_a_flush_and_a_moved_log_start_rewrite_their_checkpoints(manager, written):
    jobs = checkpoint_jobs(manager)
    run_all(jobs)
    busy = manager.get("idle", 3)
    busy.append_as_leader(kv_batch(3), leader_epoch=1)
    busy.high_watermark = busy.log_end_offset
    busy.flush()
    run_all(jobs)
    assert checkpoint_module.RECOVERY_POINT_CHECKPOINT in written
    written.clear()
    busy.delete_records_before(2)
    run_all(jobs)
    assert written == [checkpoint_module.LOG_START_OFFSET_CHECKPOINT]


def test_an_idle_broker_leaves_its_checkpoint_files_alone(tmp_path):
    """The checkpoints' intervals are short; once written, the idle broker's files keep their
    inode and modification time (a rewrite replaces the file)."""
    intervals = {
        "replica.high.watermark.checkpoint.interval.ms": "50",
        "log.flush.offset.checkpoint.interval.ms": "50",
        "log.flush.start.offset.checkpoint.interval.ms": "50",
        "num.partitions": "20",
    }
    with BrokerProcess(tmp_path, intervals) as broker:
        from kafka.admin import KafkaAdminClient, NewTopic

        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        try:
            admin.create_topics([NewTopic("quiet", 20, 1)])
        finally:
            admin.close()
        logs = tmp_path / "kafka-logs"
        names = [
            checkpoint_module.REPLICATION_OFFSET_CHECKPOINT,
            checkpoint_module.RECOVERY_POINT_CHECKPOINT,
            checkpoint_module.LOG_START_OFFSET_CHECKPOINT,
        ]

        def files_now():
            return {name: os.stat(logs / name) for name in names if (logs / name).exists()}

        deadline = time.monotonic() + 30
        while "quiet 19" not in (logs / names[0]).read_text() if (logs / names[0]).exists() else True:
            assert time.monotonic() < deadline, "the high watermarks were never checkpointed"
            time.sleep(0.05)
        time.sleep(0.3)  # the other checkpoints' first writes
        before = files_now()
        time.sleep(1.0)  # twenty intervals
        after = files_now()
    assert set(before) == set(names)
    assert {n: (s.st_ino, s.st_mtime_ns) for n, s in after.items()} == {
        n: (s.st_ino, s.st_mtime_ns) for n, s in before.items()
    }
