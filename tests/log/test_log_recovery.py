"""Reopening logs: after a clean close nothing is lost; after a crash the torn tail is cut."""
import os
import signal
import subprocess
import sys
import textwrap

from pykbroker.log import LogManager
from pykbroker.records.batch import parse_header

from .helpers import kv_batch, offsets_of, open_log, reopen, segment_files


def fill(log, batches: int, per_batch: int = 2, epoch: int = 0) -> None:
    for _ in range(batches):
        log.append_as_leader(kv_batch(per_batch), leader_epoch=epoch)


def active_log_file(log) -> str:
    return log.segments.active.log_path


def chop(path: str, count: int) -> None:
    with open(path, "r+b") as file:
        file.truncate(os.path.getsize(path) - count)


def test_a_clean_reopen_keeps_everything(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 400})
    fill(log, 10, epoch=3)
    log.flush()
    log.close()

    reopened = reopen(log, clean=True)
    assert reopened.log_end_offset == 20
    assert offsets_of(reopened) == list(range(20))
    assert reopened.epoch_cache.entries() == [(3, 0)]
    assert reopened.recovery_point == 20
    assert reopened.append_as_leader(kv_batch(1), leader_epoch=3).first_offset == 20


def test_a_torn_last_batch_is_cut_off_and_appends_continue(tmp_path):
    log = open_log(tmp_path)
    fill(log, 5)
    chop(active_log_file(log), 7)

    recovered = reopen(log, clean=False, recovery_point=0)
    assert recovered.log_end_offset == 8
    assert offsets_of(recovered) == list(range(8))
    assert recovered.append_as_leader(kv_batch(2), leader_epoch=0).first_offset == 8
    assert offsets_of(recovered) == list(range(10))


def test_garbage_after_the_last_batch_is_removed(tmp_path):
    log = open_log(tmp_path)
    fill(log, 3)
    size = os.path.getsize(active_log_file(log))
    with open(active_log_file(log), "ab") as file:
        file.write(os.urandom(100))

    recovered = reopen(log, clean=False, recovery_point=0)
    assert recovered.log_end_offset == 6
    assert os.path.getsize(active_log_file(recovered)) == size


def test_zeros_after_the_last_batch_are_removed(tmp_path):
    log = open_log(tmp_path)
    fill(log, 3)
    with open(active_log_file(log), "ab") as file:
        file.write(bytes(4096))
    assert reopen(log, clean=False, recovery_point=0).log_end_offset == 6


def test_a_batch_with_a_bad_crc_ends_the_log_there(tmp_path):
    log = open_log(tmp_path)
    fill(log, 4)
    batch_size = len(kv_batch(2))
    with open(active_log_file(log), "r+b") as file:
        file.seek(2 * batch_size + 70)
        file.write(b"\xff\xff")

    recovered = reopen(log, clean=False, recovery_point=0)
    assert recovered.log_end_offset == 4
    assert offsets_of(recovered) == [0, 1, 2, 3]


def test_corruption_in_an_older_segment_drops_every_later_segment(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 250})
    fill(log, 8)
    segments = list(log.segments)
    assert len(segments) >= 3
    torn_batch_offset = [header.base_offset for _, header in segments[1].iter_headers()][-1]
    chop(segments[1].log_path, 5)

    recovered = reopen(log, clean=False, recovery_point=0)
    assert recovered.log_end_offset == torn_batch_offset
    assert len(recovered.segments) == 2
    assert segment_files(recovered) == [os.path.basename(s.log_path) for s in segments[:2]]


def test_recovery_rebuilds_the_indexes(tmp_path):
    log = open_log(tmp_path, config={"index.interval.bytes": 50})
    fill(log, 30)
    entries = log.segments.active.offset_index.entries
    os.truncate(log.segments.active.offset_index.path, 0)

    recovered = reopen(log, clean=False, recovery_point=0)
    assert recovered.segments.active.offset_index.entries == entries
    fetch = recovered.read(41, 1)
    assert parse_header(fetch.read_bytes()).base_offset == 40


def test_missing_index_files_are_rebuilt_even_after_a_clean_shutdown(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 300, "index.interval.bytes": 50})
    fill(log, 10)
    log.flush()
    log.close()
    for name in segment_files(log, ".index") + segment_files(log, ".timeindex"):
        os.remove(os.path.join(log.directory, name))

    reopened = reopen(log, clean=True)
    assert offsets_of(reopened) == list(range(20))
    assert all(os.path.exists(s.offset_index.path) for s in reopened.segments)


def test_leftover_files_of_deletions_and_compactions_are_removed(tmp_path):
    log = open_log(tmp_path)
    fill(log, 2)
    log.flush()
    log.close()
    for name in ("00000000000000000000.log.deleted", "00000000000000000000.log.cleaned",
                 "00000000000000000000.index.swap", "00000000000000000099.index",
                 "leader-epoch-checkpoint.tmp"):
        open(os.path.join(log.directory, name), "wb").close()

    reopened = reopen(log, clean=True)
    assert sorted(os.listdir(reopened.directory)) == [
        "00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
        "00000000000000000004.snapshot", "leader-epoch-checkpoint"]
    assert offsets_of(reopened) == [0, 1, 2, 3]


def test_an_interrupted_compaction_swap_is_completed(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 200})
    fill(log, 6)
    segments = list(log.segments)
    first, second = segments[0], segments[1]
    replacement = open(first.log_path, "rb").read() + open(second.log_path, "rb").read()
    log.close()
    with open(first.log_path + ".swap", "wb") as file:
        file.write(replacement)

    reopened = reopen(log, clean=False, recovery_point=0)
    assert [s.base_offset for s in reopened.segments][0] == first.base_offset
    assert second.base_offset not in [s.base_offset for s in reopened.segments]
    assert offsets_of(reopened) == list(range(12))
    assert not any(name.endswith(".swap") for name in os.listdir(reopened.directory))


def test_the_leader_epoch_cache_tail_is_rebuilt_from_the_log(tmp_path):
    log = open_log(tmp_path)
    fill(log, 2, epoch=1)
    fill(log, 2, epoch=4)
    os.remove(os.path.join(log.directory, "leader-epoch-checkpoint"))

    recovered = reopen(log, clean=False, recovery_point=0)
    assert recovered.epoch_cache.entries() == [(1, 0), (4, 4)]


def test_an_unreadable_epoch_checkpoint_is_rebuilt_from_the_log(tmp_path):
    log = open_log(tmp_path, config={"segment.bytes": 250})
    fill(log, 3, epoch=1)
    fill(log, 3, epoch=2)
    log.flush()
    log.close()
    with open(os.path.join(log.directory, "leader-epoch-checkpoint"), "w") as file:
        file.write("garbage")

    reopened = reopen(log, clean=True)
    assert reopened.epoch_cache.entries() == [(1, 0), (2, 6)]


def test_stale_epochs_beyond_the_recovered_log_end_are_dropped(tmp_path):
    log = open_log(tmp_path)
    fill(log, 2, epoch=1)
    fill(log, 1, epoch=2)
    chop(active_log_file(log), 3)

    recovered = reopen(log, clean=False, recovery_point=0)
    assert recovered.log_end_offset == 4
    assert recovered.epoch_cache.entries() == [(1, 0)]


CRASHING_WRITER = textwrap.dedent("""
    import os, signal, sys
    from pykbroker.log import LogManager
    from tests.log.helpers import kv_batch
    manager = LogManager([sys.argv[1]], {"segment.bytes": "2000"})
    log = manager.get_or_create("crash", 0)
    for _ in range(int(sys.argv[2])):
        info = log.append_as_leader(kv_batch(3), leader_epoch=5)
        print(info.last_offset, flush=True)
    manager.run_flush()
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_broker_loses_no_acknowledged_append(tmp_path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    child = subprocess.run([sys.executable, "-c", CRASHING_WRITER, str(tmp_path), "40"],
                           capture_output=True, text=True, cwd=root, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr
    acknowledged = int(child.stdout.split()[-1])
    assert not os.path.exists(tmp_path / ".kafka_cleanshutdown")

    manager = LogManager([str(tmp_path)])
    log = manager.get("crash", 0)
    assert log.log_end_offset == acknowledged + 1
    assert offsets_of(log) == list(range(acknowledged + 1))
    assert log.append_as_leader(kv_batch(1), leader_epoch=5).first_offset == acknowledged + 1
    manager.close()
