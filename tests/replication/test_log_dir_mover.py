"""The copy of a replica into its future log follows what happens to the current log meanwhile:
a truncation (a follower's), a log start offset that moved; then the future log is swapped in with
exactly the current log's records and leader epochs."""

import time
import uuid

import anyio

from pykbroker.log import LogManager
from pykbroker.replication.log_dir_mover import THROTTLE, LogDirMovers, copy_slice
from pykbroker.replication.partition import Partition

from ..log.helpers import Clock, all_records, kv_batch

KEY = ("moving", 0)


class Hosted:
    """The replica manager, as far as the movers see it."""

    config: dict = {}

    def __init__(self, manager: LogManager, partition: Partition) -> None:
        self.log_manager = manager
        self.partitions = {KEY: partition}

    def replaced_log(self, partition, replacement) -> None:
        partition.log = replacement


def moving(tmp_path):
    manager = LogManager([str(tmp_path / "a"), str(tmp_path / "b")], time_ms=Clock())
    current = manager.get_or_create(*KEY)
    for _ in range(5):
        current.append_as_leader(kv_batch(3), leader_epoch=1)
    partition = Partition(*KEY, uuid.uuid4(), current, 0)
    future = manager.create_future_log(*KEY, str(tmp_path / "b"))
    while future.log_end_offset < current.log_end_offset:
        copy_slice(current, future, 100)
    return manager, partition, LogDirMovers(Hosted(manager, partition))


def test_a_truncated_current_log_truncates_the_future_log_before_the_swap(tmp_path):
    manager, partition, movers = moving(tmp_path)
    current = partition.log
    current.truncation_listener = lambda end: movers._note_truncation(KEY, end)
    current.truncate_to(9)
    current.append_as_leader(kv_batch(3, prefix="new"), leader_epoch=2)
    expected = all_records(current)

    anyio.run(movers._copy_until_swapped, KEY)

    assert partition.log is manager.get(*KEY) and partition.log.parent_dir == str(tmp_path / "b")
    assert all_records(partition.log) == expected
    assert partition.log.epoch_cache.entries() == [(1, 0), (2, 9)]
    manager.close()


def test_a_log_start_offset_moved_past_the_copy_restarts_it_there(tmp_path):
    manager, partition, movers = moving(tmp_path)
    current = partition.log
    for _ in range(5):
        current.append_as_leader(kv_batch(3), leader_epoch=1)
    current.high_watermark = current.log_end_offset
    current.delete_records_before(24)
    expected = all_records(current)

    anyio.run(movers._copy_until_swapped, KEY)

    assert partition.log.log_start_offset == 24 and all_records(partition.log) == expected
    manager.close()


def test_the_alter_log_dirs_throttle_holds_the_copy_back_while_the_recent_rate_is_above_it(tmp_path):
    manager, _, movers = moving(tmp_path)
    movers._replicas.config = {THROTTLE: 1000}  # bytes per second, over 11 windows of 1 s
    assert not movers._throttled()
    movers._copied.append((time.monotonic(), 20000))  # 20000 bytes over at least 10 s
    assert movers._throttled()
    movers._replicas.config = {THROTTLE: 5000}
    assert not movers._throttled()
    movers._replicas.config = {}  # unset: no limit
    assert not movers._throttled()
    manager.close()
