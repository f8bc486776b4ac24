"""The log directory failure channel and what the log manager does with a failed directory."""
import errno
import logging

import pytest

from pykbroker.log.dir_failure import LogDirFailureChannel, is_dir_failure
from pykbroker.log.errors import KafkaStorageError
from pykbroker.log.manager import LogManager


def test_a_directory_fails_once_one_error_line_and_one_call_of_each_listener(tmp_path, caplog):
    channel = LogDirFailureChannel()
    told = []
    channel.add_listener(told.append)
    full = OSError(errno.ENOSPC, "No space left on device", f"{tmp_path}/t-0/00000000000000000000.log")

    with caplog.at_level(logging.DEBUG, logger="pykbroker.log.dir_failure"):
        channel.fail(str(tmp_path), "Error while appending records to t-0", full)
        channel.fail(str(tmp_path), "Error while appending records to t-1", full)

    assert told == [str(tmp_path)]
    assert channel.is_offline(str(tmp_path)) and channel.offline_dirs() == {str(tmp_path)}
    [error] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert error == (f"Log directory {tmp_path} failed and goes offline: Error while appending records to t-0: "
                     f"file {tmp_path}/t-0/00000000000000000000.log: ENOSPC (No space left on device)")


def test_running_out_of_descriptors_is_no_failure_of_the_directory():
    assert not is_dir_failure(OSError(errno.EMFILE, "Too many open files"))
    assert is_dir_failure(OSError(errno.EROFS, "Read-only file system"))


def test_a_failed_dirs_partitions_are_not_created_again_elsewhere_and_new_ones_go_to_the_others(tmp_path):
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    manager = LogManager([first, second])
    manager.get_or_create("kept", 0)
    lost = manager.get_or_create("lost", 0)
    assert manager.log_dir_of("lost", 0) == second

    manager.dir_failures.fail(second, "a test", OSError(errno.EIO, "Input/output error"))
    assert manager.handle_log_dir_failure(second) == [("lost", 0)]

    assert lost.closed and manager.get("lost", 0) is None
    with pytest.raises(KafkaStorageError):
        manager.get_or_create("lost", 0)
    manager.get_or_create("new", 0)
    manager.get_or_create("new", 1)
    assert manager.log_dir_of("new", 0) == manager.log_dir_of("new", 1) == first
    assert manager.online_dirs() == [first]
    manager.close()
    assert (tmp_path / "first" / ".kafka_cleanshutdown").exists()
    assert not (tmp_path / "second" / ".kafka_cleanshutdown").exists()
