"""The LogManager: log directories, checkpoints, clean shutdown, and background maintenance."""
import json
import os

from pykbroker.log import LogConfig, LogManager
from pykbroker.log.checkpoint import read_offsets
from pykbroker.testkit.waiting import wait_until

from .helpers import T0, Clock, batch, kv_batch, offsets_of


def manager_in(tmp_path, dirs=("a",), clock=None, **kwargs) -> LogManager:
    return LogManager([str(tmp_path / d) for d in dirs], kwargs.pop("config", None),
                      time_ms=clock or Clock(), **kwargs)


def fill(log, batches: int, per_batch: int = 2) -> None:
    for _ in range(batches):
        log.append_as_leader(kv_batch(per_batch), leader_epoch=1)
    log.high_watermark = log.log_end_offset


def test_logs_are_spread_over_the_log_directories(tmp_path):
    manager = manager_in(tmp_path, dirs=("a", "b"))
    for partition in range(4):
        manager.get_or_create("spread", partition)
    assert sorted(os.listdir(tmp_path / "a")) == ["spread-0", "spread-2"]
    assert sorted(os.listdir(tmp_path / "b")) == ["spread-1", "spread-3"]
    assert manager.get("spread", 1) is manager.get_or_create("spread", 1)
    assert manager.get("missing", 0) is None


def test_a_closed_manager_leaves_checkpoints_and_the_clean_shutdown_marker(tmp_path):
    manager = manager_in(tmp_path)
    log = manager.get_or_create("orders", 0)
    fill(log, 3)
    manager.close()

    log_dir = tmp_path / "a"
    with open(log_dir / ".kafka_cleanshutdown") as file:
        assert json.load(file) == {"version": "0", "broker_epoch": "-1"}
    assert read_offsets(str(log_dir / "recovery-point-offset-checkpoint")) == {("orders", 0): 6}
    assert read_offsets(str(log_dir / "replication-offset-checkpoint")) == {("orders", 0): 6}
    with open(log_dir / "recovery-point-offset-checkpoint") as file:
        assert file.read() == "0\n1\norders 0 6\n"


def test_a_restart_loads_every_partition_and_removes_the_marker(tmp_path):
    manager = manager_in(tmp_path, dirs=("a", "b"))
    for partition in range(3):
        fill(manager.get_or_create("orders", partition), 2 + partition)
    manager.close()

    restarted = manager_in(tmp_path, dirs=("a", "b"))
    assert sorted((log.topic, log.partition, log.log_end_offset) for log in restarted.all_logs()) == [
        ("orders", 0, 4), ("orders", 1, 6), ("orders", 2, 8)]
    assert restarted.get("orders", 2).high_watermark == 8
    assert not (tmp_path / "a" / ".kafka_cleanshutdown").exists()
    assert offsets_of(restarted.get("orders", 1)) == list(range(6))


def test_without_the_marker_logs_are_recovered_from_their_recovery_points(tmp_path):
    manager = manager_in(tmp_path)
    log = manager.get_or_create("orders", 0)
    fill(log, 4)
    path = log.segments.active.log_path
    with open(path, "ab") as file:
        file.write(b"torn write")

    restarted = manager_in(tmp_path)
    assert restarted.get("orders", 0).log_end_offset == 8
    assert os.path.getsize(path) == 4 * len(kv_batch(2))


def test_high_watermarks_are_checkpointed_through_the_manager(tmp_path):
    manager = manager_in(tmp_path)
    fill(manager.get_or_create("orders", 0), 3)
    fill(manager.get_or_create("orders", 1), 1)
    manager.checkpoint_high_watermarks({("orders", 0): 4})
    assert manager.read_high_watermarks() == {("orders", 0): 4, ("orders", 1): 2}
    assert manager.get("orders", 0).high_watermark == 4


def test_log_start_offsets_survive_a_restart(tmp_path):
    manager = manager_in(tmp_path)
    log = manager.get_or_create("orders", 0)
    fill(log, 5)
    log.delete_records_before(7)
    manager.close()
    assert read_offsets(str(tmp_path / "a" / "log-start-offset-checkpoint")) == {("orders", 0): 7}
    assert manager_in(tmp_path).get("orders", 0).log_start_offset == 7


def test_deleting_a_partition_renames_its_directory_and_removes_it_later(tmp_path):
    clock = Clock()
    manager = manager_in(tmp_path, clock=clock)
    fill(manager.get_or_create("gone", 0), 2)
    manager.checkpoint_recovery_points()

    assert manager.delete("gone", 0)
    names = os.listdir(tmp_path / "a")
    doomed = [name for name in names if name.startswith("gone-0.") and name.endswith("-delete")]
    assert len(doomed) == 1 and "gone-0" not in names
    manager.wait_for_deletions()  # the directory fsync and checkpoints run on a worker thread
    assert read_offsets(str(tmp_path / "a" / "recovery-point-offset-checkpoint")) == {}

    manager.run_retention(now_ms=clock.now + 60_000)
    assert not (tmp_path / "a" / doomed[0]).exists()
    recreated = manager.get_or_create("gone", 0)
    assert recreated.log_end_offset == 0


def test_rolled_segments_are_flushed_soon_after_the_roll_and_the_recovery_point_checkpointed(tmp_path):
    """As Kafka's roll schedules "flush-log": a crash then recovers only the active segment."""
    manager = manager_in(tmp_path, config={"segment.bytes": 250})
    log = manager.get_or_create("orders", 0)
    fill(log, 6)

    wait_until(lambda: log.recovery_point == log.segments.active.base_offset > 0)
    manager.checkpoint_recovery_points()  # every log.flush.offset.checkpoint.interval.ms
    assert read_offsets(str(tmp_path / "a" / "recovery-point-offset-checkpoint")) == {
        ("orders", 0): log.recovery_point}


def test_flush_messages_makes_the_appender_flush_before_acknowledging(tmp_path):
    manager = manager_in(tmp_path, config={"flush.messages": 4})
    log = manager.get_or_create("orders", 0)
    log.append_as_leader(kv_batch(3), leader_epoch=0)
    assert not log.sync_owed()
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    assert log.recovery_point == 0  # appends never sync on their own (they run on the loop)
    assert log.sync_owed()
    log.sync_appended(4)
    assert log.recovery_point == 4


def test_flush_ms_is_applied_by_run_flush(tmp_path):
    clock = Clock()
    manager = manager_in(tmp_path, clock=clock, config={"flush.ms": 1000})
    log = manager.get_or_create("orders", 0)
    log.append_as_leader(kv_batch(3), leader_epoch=0)
    manager.run_flush(now_ms=clock.now + 999)
    assert log.recovery_point == 0
    manager.run_flush(now_ms=clock.now + 1000)
    assert log.recovery_point == 3


def test_fsync_before_ack_appends_still_read_back(tmp_path):
    manager = manager_in(tmp_path, fsync_before_ack=True)
    log = manager.get_or_create("orders", 0)
    fill(log, 2)
    assert offsets_of(log) == [0, 1, 2, 3]


def test_run_retention_applies_each_topics_config(tmp_path):
    manager = manager_in(tmp_path, config={"segment.bytes": 250, "retention.ms": 1000})
    short = manager.get_or_create("short", 0)
    forever = manager.get_or_create("forever", 0, {"retention.ms": -1})
    for log in (short, forever):
        for _ in range(6):
            log.append_as_leader(kv_batch(2, timestamp=T0), leader_epoch=0)
        log.high_watermark = log.log_end_offset

    deleted = manager.run_retention(now_ms=T0 + 5000)
    assert deleted > 0
    assert short.log_start_offset > 0 and forever.log_start_offset == 0


def test_run_compaction_cleans_logs_past_the_dirty_ratio_and_checkpoints(tmp_path):
    manager = manager_in(tmp_path, config={"segment.bytes": 300})
    log = manager.get_or_create("table", 0, {"cleanup.policy": "compact"})
    plain = manager.get_or_create("plain", 0)
    for log_ in (log, plain):
        for round_ in range(6):
            log_.append_as_leader(batch(("k", f"{round_}")), leader_epoch=0)
        log_.roll()
        log_.high_watermark = log_.log_end_offset

    results = manager.run_compaction(now_ms=T0)
    assert list(results) == [("table", 0)]
    assert offsets_of(log) == [5]
    assert read_offsets(str(tmp_path / "a" / "cleaner-offset-checkpoint")) == {("table", 0): 6}
    assert manager.run_compaction(now_ms=T0) == {}
    manager.close()
    assert manager_in(tmp_path).get("table", 0).cleaner_checkpoint == 6


def test_config_updates_reach_every_partition_of_a_topic(tmp_path):
    manager = manager_in(tmp_path)
    logs = [manager.get_or_create("orders", p) for p in range(2)]
    manager.update_topic_config("orders", {"retention.ms": "5"})
    assert [log.config.retention_ms for log in logs] == [5, 5]
    assert manager.default_config == LogConfig()


def test_deleting_a_partition_does_not_wait_for_the_directory_fsync(tmp_path, monkeypatch):
    """`delete` runs on the event loop: the fsync of the log dir happens on a worker thread."""
    import threading

    from pykbroker.log import files

    manager = manager_in(tmp_path)
    fill(manager.get_or_create("gone", 0), 2)
    caller = threading.current_thread()
    entered, release, fsynced_on = threading.Event(), threading.Event(), []
    real = files.fsync_dir

    def fsync_dir(path):
        fsynced_on.append(threading.current_thread())
        entered.set()
        assert release.wait(60), "the test never released the fsync"
        real(path)

    monkeypatch.setattr(files, "fsync_dir", fsync_dir)
    assert manager.delete("gone", 0)  # returns although the fsync cannot finish yet
    assert "gone-0" not in os.listdir(tmp_path / "a")
    assert entered.wait(60)
    assert not release.is_set() and caller not in fsynced_on
    release.set()
    manager.wait_for_deletions()
    assert read_offsets(str(tmp_path / "a" / "recovery-point-offset-checkpoint")) == {}
    manager.close()
