"""Future logs of the LogManager (AlterReplicaLogDirs): created in the destination directory, swapped
in, loaded again after a stop, and what a stop between the two renames of a swap left behind."""

import os
import shutil

from pykbroker.log import LogManager
from pykbroker.replication.log_dir_mover import copy_slice

from .helpers import Clock, all_records, kv_batch


def manager_in(tmp_path) -> LogManager:
    return LogManager([str(tmp_path / "a"), str(tmp_path / "b")], time_ms=Clock())


def filled(manager: LogManager, batches: int = 5):
    log = manager.get_or_create("moving", 0)
    for _ in range(batches):
        log.append_as_leader(kv_batch(3), leader_epoch=1)
    log.high_watermark = log.log_end_offset
    return log


def copied(manager: LogManager, destination: str):
    current, future = manager.get("moving", 0), manager.create_future_log("moving", 0, destination)
    while future.log_end_offset < current.log_end_offset:
        copy_slice(current, future, 100)
    return future


def stopped_while_moving(tmp_path) -> None:
    """A broker stopped after copying "moving-0" from directory a into a future log in b."""
    manager = manager_in(tmp_path)
    filled(manager)
    copied(manager, str(tmp_path / "b"))
    manager.close()


def future_dirs(path) -> list[str]:
    return [name for name in os.listdir(path) if name.endswith("-future")]


def test_a_future_log_is_swapped_in_and_the_old_directory_deleted(tmp_path):
    manager = manager_in(tmp_path)
    current = filled(manager)
    assert manager.log_dir_of("moving", 0) == str(tmp_path / "a")
    future = copied(manager, str(tmp_path / "b"))
    assert future.is_future and future_dirs(tmp_path / "b")
    records = all_records(current)

    replacement = manager.replace_current_with_future("moving", 0)

    assert manager.get("moving", 0) is replacement and manager.get_future("moving", 0) is None
    assert replacement.directory == str(tmp_path / "b" / "moving-0")
    assert all_records(replacement) == records and current.local.closed
    assert replacement.log_end_offset == 15 and replacement.high_watermark == 15
    assert [name for name in os.listdir(tmp_path / "a") if name.startswith("moving-0")][0].endswith("-delete")
    manager.close()


def test_a_future_log_found_at_start_is_loaded_beside_its_current_log(tmp_path):
    stopped_while_moving(tmp_path)

    again = manager_in(tmp_path)
    assert again.get("moving", 0).parent_dir == str(tmp_path / "a")
    assert again.get_future("moving", 0).parent_dir == str(tmp_path / "b")
    assert again.get_future("moving", 0).log_end_offset == 15
    again.close()


def test_a_lone_future_log_left_by_a_stop_in_the_swap_becomes_the_current_log(tmp_path):
    stopped_while_moving(tmp_path)
    shutil.rmtree(tmp_path / "a" / "moving-0")  # the old one was renamed -delete, and is gone

    again = manager_in(tmp_path)
    assert again.get("moving", 0).directory == str(tmp_path / "b" / "moving-0")
    assert again.get("moving", 0).log_end_offset == 15 and again.get_future("moving", 0) is None
    again.close()


def test_of_two_current_logs_left_by_a_stop_in_the_swap_the_larger_is_kept(tmp_path):
    manager = manager_in(tmp_path)
    filled(manager, batches=2)
    manager.close()
    shutil.copytree(tmp_path / "a" / "moving-0", tmp_path / "b" / "moving-0")
    with open(next((tmp_path / "b" / "moving-0").glob("*.log")), "ab") as segment:
        segment.write(b"\0" * 8)  # a torn tail: more bytes, recovered away

    again = manager_in(tmp_path)
    assert again.get("moving", 0).directory == str(tmp_path / "b" / "moving-0")
    assert [name.endswith("-delete") for name in os.listdir(tmp_path / "a") if name.startswith("moving-0")] == [True]
    again.close()
