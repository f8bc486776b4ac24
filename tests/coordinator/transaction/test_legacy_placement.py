"""Transactional ids an older pykbroker placed in `__transaction_state` by its old rule
(`(hashCode & 0x7fffffff) % partitions`): a restarted coordinator finds them, moves them to the
partition Kafka's rule names, and carries on with their transactions."""
from __future__ import annotations

import anyio
import pytest

from pykbroker.coordinator.placement import coordinator_partition, legacy_partition
from pykbroker.coordinator.transaction import state_manager
from pykbroker.protocol.errors import ErrorCode

from .fakes import COORDINATOR_EPOCH, Harness
from ..test_legacy_placement import misplaced_id

PARTITIONS = 10
NONE = ErrorCode.NONE


def older_version(monkeypatch) -> Harness:
    """A coordinator placing transactional ids as older pykbroker versions did."""
    monkeypatch.setattr(state_manager, "partition_for", legacy_partition)
    return Harness(PARTITIONS)


def restarted(before: Harness) -> Harness:
    """A coordinator of today taking over the same `__transaction_state` (a restart)."""
    after = Harness(PARTITIONS)
    after.log.records = before.log.records
    after.metadata.add_topic("__transaction_state", PARTITIONS, epoch=COORDINATOR_EPOCH + 1)
    after.settle()
    return after


@pytest.mark.parametrize("old_partition_loads_first", [True, False])
def test_a_restart_finds_a_transactional_id_placed_by_the_old_rule(monkeypatch, old_partition_loads_first):
    tid = misplaced_id("tx", old_partition_loads_first=old_partition_loads_first, partitions=PARTITIONS)
    before = older_version(monkeypatch)
    error, producer_id, epoch = before.init(tid)
    assert error == NONE
    monkeypatch.undo()

    after = restarted(before)
    assert after.init(tid) == (NONE, producer_id, epoch + 1)  # the same producer, fenced
    new, old = coordinator_partition(tid, PARTITIONS), legacy_partition(tid, PARTITIONS)
    assert after.log.states(new)[0] == (tid, "Empty")
    assert after.log.states(old)[-1] == (tid, None)  # moved: a tombstone where it was
    assert restarted(after).init(tid) == (NONE, producer_id, epoch + 2)


def test_a_transaction_left_in_prepare_commit_by_the_old_placement_is_completed(monkeypatch):
    tid = misplaced_id("tx", old_partition_loads_first=True, partitions=PARTITIONS)
    before = older_version(monkeypatch)
    _, producer_id, epoch = before.init(tid)
    assert before.add(tid, producer_id, epoch) == NONE
    before.partition_side.hold = anyio.Event()  # the markers never arrive: the broker "dies"
    before.end(tid, producer_id, epoch)
    monkeypatch.undo()

    after = restarted(before)
    assert after.describe(tid).state == "CompleteCommit"
    [marker] = after.partition_side.written
    assert (marker.producer_id, marker.committed) == (producer_id, True)
    assert after.log.states(coordinator_partition(tid, PARTITIONS))[-1] == (tid, "CompleteCommit")


def test_an_id_already_in_its_own_partition_keeps_that_state(monkeypatch):
    tid = misplaced_id("tx", old_partition_loads_first=False, partitions=PARTITIONS)
    current = Harness(PARTITIONS)
    _, current_producer, _ = current.init(tid)  # written where Kafka places it
    before = older_version(monkeypatch)
    before.producer_ids.next = 5000
    before.init(tid)
    monkeypatch.undo()
    old = legacy_partition(tid, PARTITIONS)
    current.log.records[old] = before.log.records[old]

    after = restarted(current)
    assert after.describe(tid).producer_id == current_producer
    assert after.log.states(old)[-1] == (tid, None)


def test_an_id_waits_while_the_partition_of_its_old_placement_loads():
    tid = misplaced_id("tx", old_partition_loads_first=False, partitions=PARTITIONS)
    h = Harness(PARTITIONS)
    h.state.loading_partitions[legacy_partition(tid, PARTITIONS)] = (COORDINATOR_EPOCH, object())
    assert h.state.get_transaction_state(tid) == (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, None)
