"""The compaction swap's directory fsync runs outside the log's lock (issue 11).

Appends (on the event loop) take the log's lock; a compaction (on a worker thread) must not
hold it across its directory fsync. While the fsync runs, the swap is committed on disk but
not installed: a truncation then withdraws it, so that a kill -9 at any moment still leaves
a directory that reopens to the log as it was.
"""
import os
import shutil
import threading

import pytest

from pykbroker.log import files

from .helpers import T0, all_records, reopen
from .test_log_compaction import put, reference_records, swaps, three_groups

WAIT = 60  # generous bound on waits, only so that a regression fails instead of hanging


class BlockedSwapFsync:
    """Blocks the compaction thread's directory fsync while a `.log.swap` exists."""

    def __init__(self, monkeypatch, compaction_thread_name="compaction"):
        self.entered, self.release = threading.Event(), threading.Event()
        self.thread_name = compaction_thread_name
        real = files.fsync_dir

        def fsync_dir(path):
            if threading.current_thread().name == self.thread_name and swaps(os.listdir(path)):
                self.entered.set()
                assert self.release.wait(WAIT), "the test never released the fsync"
            real(path)

        monkeypatch.setattr(files, "fsync_dir", fsync_dir)


def start_compaction(log):
    outcome = {}

    def run():
        outcome["stats"] = log.compact(now_ms=T0)

    thread = threading.Thread(target=run, name="compaction", daemon=True)
    thread.start()
    return thread, outcome


def test_an_append_completes_while_the_swap_directory_fsync_is_in_progress(tmp_path, monkeypatch):
    log = three_groups(tmp_path)
    blocked = BlockedSwapFsync(monkeypatch)
    compaction, outcome = start_compaction(log)
    assert blocked.entered.wait(WAIT)

    appended = threading.Event()

    def append():
        put(log, ("z", "during-the-fsync"))
        appended.set()

    appender = threading.Thread(target=append, daemon=True)
    appender.start()
    assert appended.wait(WAIT), "the append waited for the compaction's directory fsync"
    assert not blocked.release.is_set()  # the fsync was still in progress when the append finished

    blocked.release.set()
    compaction.join(WAIT)
    appender.join(WAIT)
    assert outcome["stats"] is not None
    records = all_records(log)
    assert records[-1][1:] == (b"z", b"during-the-fsync")
    assert records[:-1] == reference_records(tmp_path)


def test_a_kill_during_the_swap_fsync_reopens_to_a_consistent_log(tmp_path, monkeypatch):
    """A committed swap whose fsync is in progress is finished by a restart."""
    log = three_groups(tmp_path)
    before = all_records(log)
    second_group = log.segments[4].base_offset
    blocked = BlockedSwapFsync(monkeypatch)
    compaction, _ = start_compaction(log)
    assert blocked.entered.wait(WAIT)
    killed = os.path.join(tmp_path, "killed-0")
    shutil.copytree(log.directory, killed)  # what a kill -9 right now leaves on disk
    blocked.release.set()
    compaction.join(WAIT)

    log.directory = killed
    reopened = reopen(log, clean=False, recovery_point=0)
    assert all_records(reopened) == [before[0]] + [r for r in before if r[0] >= second_group]
    assert not [n for n in os.listdir(killed) if n.endswith((".swap", ".swapend", ".cleaned"))]


@pytest.mark.parametrize("target", [6, 16])  # 6: later segments of the group go; 16: its last is cut
def test_a_truncation_during_the_swap_fsync_withdraws_the_swap(tmp_path, monkeypatch, target):
    log = three_groups(tmp_path)
    before = all_records(log)
    blocked = BlockedSwapFsync(monkeypatch)
    compaction, outcome = start_compaction(log)
    assert blocked.entered.wait(WAIT)

    assert log.truncate_to(target)  # inside the first group, whose swap is committed but not installed
    names = os.listdir(log.directory)
    assert not swaps(names) and not [n for n in names if n.endswith(".swapend")]
    killed = os.path.join(tmp_path, "killed-0")
    shutil.copytree(log.directory, killed)  # a kill -9 right after the truncation

    blocked.release.set()
    compaction.join(WAIT)
    assert outcome["stats"] is None  # the pass noticed and gave up
    assert all_records(log) == before[:target]

    log.directory = killed
    reopened = reopen(log, clean=False, recovery_point=0, log_start_offset=0)
    assert all_records(reopened) == before[:target]  # no truncated record came back with the swap
