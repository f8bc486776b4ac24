"""fsync before ack: appends only write to the page cache (they run on the event loop); the
appender then calls `sync_appended` on a worker thread, which fdatasyncs what is not yet on disk
and, after a roll, the directory holding the new segment."""
import os

import pytest

from pykbroker.log import files

from .helpers import kv_batch, open_log


class SyncCounter:
    def __init__(self) -> None:
        self.datasyncs = 0
        self.dir_syncs = 0


@pytest.fixture
def syncs(monkeypatch):
    counter = SyncCounter()
    real_fdatasync, real_fsync_dir = os.fdatasync, files.fsync_dir

    def fdatasync(fd):
        counter.datasyncs += 1
        real_fdatasync(fd)

    def fsync_dir(path):
        counter.dir_syncs += 1
        real_fsync_dir(path)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    monkeypatch.setattr(files, "fsync_dir", fsync_dir)
    return counter


def test_an_append_owes_a_sync_and_never_syncs_on_its_own(tmp_path, syncs):
    log = open_log(tmp_path, fsync_before_ack=True)
    log.append_as_leader(kv_batch(2), leader_epoch=0)
    assert log.sync_owed()
    assert syncs.datasyncs == 0
    log.sync_appended(2)
    assert syncs.datasyncs == 1


def test_appends_already_covered_by_an_earlier_sync_need_no_other(tmp_path, syncs):
    log = open_log(tmp_path, fsync_before_ack=True)
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.sync_appended(2)  # the second appender's sync covers the first one's append too
    log.sync_appended(1)
    assert syncs.datasyncs == 1


def test_after_a_roll_the_directory_is_synced_once_with_every_segment_written_since(tmp_path, syncs):
    log = open_log(tmp_path, fsync_before_ack=True)
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.roll()
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.sync_appended(2)
    assert (syncs.datasyncs, syncs.dir_syncs) == (2, 1)
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.sync_appended(3)
    assert (syncs.datasyncs, syncs.dir_syncs) == (3, 1)


def test_appends_after_a_truncation_are_synced_again(tmp_path, syncs):
    log = open_log(tmp_path, fsync_before_ack=True)
    log.append_as_leader(kv_batch(4), leader_epoch=0)
    log.sync_appended(4)
    log.truncate_to(1)
    log.append_as_leader(kv_batch(1), leader_epoch=0)
    log.sync_appended(2)
    assert syncs.datasyncs == 2


def test_without_fsync_before_ack_nothing_is_owed(tmp_path, syncs):
    log = open_log(tmp_path)
    log.append_as_leader(kv_batch(2), leader_epoch=0)
    assert not log.sync_owed()
