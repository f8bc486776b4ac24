"""Loading the logs at start: per log dir on `num.recovery.threads.per.data.dir` worker threads,
each partition usable as soon as it is loaded, recovery after a crash limited to the segments
after the recovery-point checkpoint, the clean shutdown marker skipping recovery, and progress
logged per log dir, never per partition.

A "slow loader" (a LogManager whose load of chosen partitions waits for the test) holds a
partition in the loading state; nothing here measures time.
"""
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

from pykbroker.log import LogManager
from pykbroker.log.checkpoint import RECOVERY_POINT_CHECKPOINT, read_offsets
from pykbroker.log.manager import LogLoadingError

from .helpers import kv_batch, offsets_of

LONG_ENOUGH = 10  # seconds: a bound on waiting, never reached when the code works


class HeldLoads(LogManager):
    """A LogManager whose load of the partitions in `hold` waits for `release`, and which notes
    the threads that load."""

    def __init__(self, *args, hold=(), **kwargs) -> None:
        self.hold = set(hold)
        self.release = threading.Event()
        self.loading_threads: set[str] = set()
        self.loaded: list = []
        super().__init__(*args, **kwargs)

    def _load_log(self, item, **kwargs):
        self.loading_threads.add(threading.current_thread().name)
        if item.key in self.hold:
            self.release.wait(LONG_ENOUGH)
        return super()._load_log(item, **kwargs)


def fill(log, batches: int, per_batch: int = 2) -> None:
    for _ in range(batches):
        log.append_as_leader(kv_batch(per_batch), leader_epoch=1)
    log.high_watermark = log.log_end_offset


def written_cleanly(tmp_path, dirs=("a",), partitions=4, **kwargs) -> list[str]:
    """Log dirs holding `partitions` partitions of topic `t` each, closed cleanly."""
    paths = [str(tmp_path / d) for d in dirs]
    manager = LogManager(paths, **kwargs)
    for partition in range(partitions * len(dirs)):
        fill(manager.get_or_create("t", partition), 1 + partition % 3)
    manager.close()
    return paths


def started(paths, **kwargs) -> HeldLoads:
    manager = HeldLoads(paths, load_logs=False, **kwargs)
    manager.start_loading(manager.loaded.append)
    return manager


# -- crash recovery ------------------------------------------------------------------------------

CRASHING_WRITER = textwrap.dedent("""
    import os, signal, sys, time
    from pykbroker.log import LogManager
    from tests.log.helpers import kv_batch
    manager = LogManager([sys.argv[1]], {"segment.bytes": "1000"})
    logs = [manager.get_or_create("crash", p) for p in range(int(sys.argv[2]))]
    for log in logs:
        for _ in range(30):  # several segments per partition, each rolled segment flushed soon after
            log.append_as_leader(kv_batch(3), leader_epoch=1)
    deadline = time.monotonic() + 10
    while any(log.recovery_point < log.segments.active.base_offset for log in logs):
        assert time.monotonic() < deadline, "rolled segments were never flushed"
        time.sleep(0.01)
    manager.checkpoint_recovery_points()   # as every log.flush.offset.checkpoint.interval.ms
    for log in logs:
        info = log.append_as_leader(kv_batch(2), leader_epoch=1)  # acknowledged, never flushed
    print(" ".join(str(len(log.segments)) for log in logs), info.last_offset, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_after_a_crash_only_the_segments_after_the_recovery_point_are_scanned(tmp_path, caplog):
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    child = subprocess.run([sys.executable, "-c", CRASHING_WRITER, str(tmp_path), "20"],
                           capture_output=True, text=True, cwd=root, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr
    *segment_counts, last_offset = (int(word) for word in child.stdout.split())
    assert min(segment_counts) >= 3
    assert not os.path.exists(tmp_path / ".kafka_cleanshutdown")

    with caplog.at_level(logging.INFO, logger="pykbroker.log"):
        manager = LogManager([str(tmp_path)])
    for partition in range(20):
        log = manager.get("crash", partition)
        assert log.recovery.segments_scanned == 1  # the active segment: the others were flushed
        assert offsets_of(log) == list(range(last_offset + 1))  # acknowledged records all there
    recovered = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Recovered")]
    assert recovered == [f"Recovered 20 logs in {tmp_path} after an unclean shutdown: "
                         "20 segments scanned, 0 bytes truncated, 0 segments dropped"]
    manager.close()


def test_the_clean_shutdown_marker_skips_recovery_and_is_removed_before_anything_is_served(
        tmp_path, caplog):
    paths = written_cleanly(tmp_path, partitions=3)
    with caplog.at_level(logging.INFO, logger="pykbroker.log"):
        manager = started(paths, hold={("t", 0)})
        assert not os.path.exists(os.path.join(paths[0], ".kafka_cleanshutdown"))
        manager.release.set()
        manager.wait_until_loaded()
    assert all(log.recovery is None for log in manager.all_logs())
    messages = [r.getMessage() for r in caplog.records]
    assert f"Skipping recovery of 3 logs from {paths[0]} since clean shutdown file was found" in messages
    assert not any("Recover" in m or "Attempting recovery" in m for m in messages)
    manager.close()


def test_a_crash_while_loading_recovers_from_the_checkpointed_recovery_points(tmp_path):
    """The marker is gone once loading starts: logs written to meanwhile are recovered next time."""
    paths = written_cleanly(tmp_path, partitions=3)
    manager = started(paths, hold={("t", 2)})
    manager.wait_until_loaded(lambda key: key != ("t", 2))
    fill(manager.get("t", 0), 1)  # served while t-2 still loads; then the process dies

    crashed = LogManager(paths)
    assert crashed.get("t", 0).recovery.segments_scanned == 1
    assert crashed.get("t", 0).log_end_offset == 4
    crashed.close()
    manager.release.set()


# -- loading in the background -------------------------------------------------------------------

def test_loaded_partitions_are_usable_while_another_one_still_loads(tmp_path):
    paths = written_cleanly(tmp_path, partitions=4)
    manager = started(paths, hold={("t", 3)})
    manager.wait_until_loaded(lambda key: key != ("t", 3))

    assert sorted(manager.loaded) == [("t", 0), ("t", 1), ("t", 2)]
    assert manager.get("t", 0).log_end_offset == 2
    fill(manager.get("t", 0), 1)
    assert manager.is_loading("t", 3) and manager.get("t", 3) is None
    with pytest.raises(LogLoadingError):
        manager.get_or_create("t", 3)  # never a fresh empty log over the one on disk

    manager.release.set()
    manager.wait_until_loaded()
    assert sorted(manager.loaded) == [("t", p) for p in range(4)]
    assert manager.get("t", 3).log_end_offset == 2 * (1 + 3 % 3)
    assert manager.loading_finished
    manager.close()


def test_checkpoints_written_while_loading_keep_the_entries_of_partitions_not_loaded_yet(tmp_path):
    paths = written_cleanly(tmp_path, partitions=3)
    checkpoint = os.path.join(paths[0], RECOVERY_POINT_CHECKPOINT)
    before = read_offsets(checkpoint)
    manager = started(paths, hold={("t", 2)})  # the last of the directory: the others load
    manager.wait_until_loaded(lambda key: key != ("t", 2))

    manager.checkpoint_recovery_points()
    manager.write_all_checkpoints()
    assert read_offsets(checkpoint) == before
    manager.release.set()
    manager.close()


def test_a_partition_deleted_while_it_loads_goes_once_loaded(tmp_path):
    paths = written_cleanly(tmp_path, partitions=2)
    manager = started(paths, hold={("t", 1)})
    assert manager.delete("t", 1)
    manager.release.set()
    manager.wait_until_loaded()

    assert manager.get("t", 1) is None
    manager.wait_for_deletions()
    assert "t-1" not in os.listdir(paths[0])
    assert ("t", 1) in manager.loaded  # whoever waits for it is told
    manager.close()


def test_a_stop_while_loading_leaves_no_clean_shutdown_marker_in_that_log_dir(tmp_path):
    paths = written_cleanly(tmp_path, dirs=("a", "b"), partitions=2)
    in_b = sorted(name for name in os.listdir(paths[1]) if name.startswith("t-"))
    held = ("t", int(in_b[0][2:]))  # loading when the stop comes; the others of b are queued behind
    manager = started(paths, hold={held})
    manager.wait_until_loaded(lambda key: manager.log_dir_of(*key) == paths[0])
    # the running load finishes during close, once the queued ones can no longer start
    threading.Thread(target=lambda: manager.loading_stopped.wait(LONG_ENOUGH) and manager.release.set()).start()
    manager.close()

    assert os.path.exists(os.path.join(paths[0], ".kafka_cleanshutdown"))
    assert not os.path.exists(os.path.join(paths[1], ".kafka_cleanshutdown"))
    restarted = LogManager(paths)
    assert sorted(log.partition for log in restarted.all_logs()) == list(range(4))
    in_b_now = [log for log in restarted.all_logs() if restarted.log_dir_of("t", log.partition) == paths[1]]
    assert in_b_now and all(log.recovery is not None for log in in_b_now)
    restarted.close()


@pytest.mark.parametrize("threads", [1, 3])
def test_each_log_dir_loads_on_num_recovery_threads_per_data_dir_worker_threads(tmp_path, threads):
    paths = written_cleanly(tmp_path, dirs=("a", "b"), partitions=6)
    barrier = threading.Barrier(threads * 2, timeout=LONG_ENOUGH)

    loading_threads: set[str] = set()

    class Parallel(LogManager):
        def _load_log(self, item, **kwargs):
            name = threading.current_thread().name
            if name not in loading_threads:
                loading_threads.add(name)
                barrier.wait()  # passes only when every thread of both dirs is loading at once
            return super()._load_log(item, **kwargs)

    manager = Parallel(paths, recovery_threads_per_data_dir=threads)
    assert len(manager.all_logs()) == 12
    assert len(loading_threads) == threads * 2
    assert threading.current_thread().name not in loading_threads
    manager.close()


def test_progress_is_logged_per_log_dir_never_per_partition(tmp_path, caplog):
    paths = written_cleanly(tmp_path, dirs=("a", "b"), partitions=30)
    with caplog.at_level(logging.DEBUG, logger="pykbroker.log"):
        manager = LogManager(paths, progress_interval_s=0)
    messages = [r.getMessage() for r in caplog.records]

    for path in paths:
        assert messages.count(f"Loading logs from log dir {path}") == 1
        loaded = [m for m in messages if m.startswith("Loaded ") and m.endswith(f"in log dir {path}")]
        assert len(loaded) == 1 and loaded[0].startswith("Loaded 30 logs in ")
    progress = [m for m in messages if m.startswith("In the last ")]
    assert progress and all(" of 30 logs were loaded in log dir " in m for m in progress)
    without_paths = [m.replace(str(tmp_path), "") for m in messages]
    assert not any(f"t-{p}" in m for m in without_paths for p in range(60))
    manager.close()
