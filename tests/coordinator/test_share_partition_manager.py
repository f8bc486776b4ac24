"""The share partitions of a broker (SharePartitionManager) over a fake replica manager: a
member that leaves has its records released and its session removed, a share partition is
dropped when this broker stops leading and the next leader epoch loads it from the persister,
and the share session cache's limit."""
from __future__ import annotations

import uuid
from types import SimpleNamespace

import anyio
import pytest

from pykbroker.common.timer import MockTimer
from pykbroker.coordinator.share.partitions import (
    AcknowledgementBatch,
    AcquiredRange,
    InMemorySharePersister,
    SessionError,
    SharePartitionManager,
    ShareSessionCache,
    ShareSessionKey,
    ShareTopicPartition,
)
from pykbroker.protocol.errors import ErrorCode, KafkaError
from pykbroker.replication.fetch_types import PartitionFetchResult
from pykbroker.records.records import build_batch

TOPIC_ID = uuid.UUID(int=11)
KEY = ShareTopicPartition(TOPIC_ID, "orders", 0)
CONFIG = {
    "group.share.record.lock.duration.ms": 30000,
    "group.share.delivery.count.limit": 5,
    "group.share.partition.max.record.locks": 2000,
    "group.share.max.share.sessions": 10,
}


class Region:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read_bytes(self) -> bytes:
        return self.data


class FakeReplicaManager:
    """One partition, led here at `leader_epoch`, holding batches of two records from offset 0."""

    def __init__(self, batches: int) -> None:
        self.log = b"".join(build_batch([(None, b"a"), (None, b"b")], base_offset=2 * i) for i in range(batches))
        self.partition = SimpleNamespace(is_leader=True, leader_epoch=1, log_start_offset=0,
                                         readable_end=lambda *_: 2 * batches)
        self.partitions = {("orders", 0): self.partition}
        self.listeners: list = []

    def add_partition_change_listener(self, listener) -> None:
        self.listeners.append(listener)

    def leader_partition(self, topic, index):
        if not self.partition.is_leader:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return self.partition

    async def fetch_records(self, requested, **_):
        [(tp, request)] = requested
        start = next(pos for pos, offset in self._positions() if offset >= request.fetch_offset)
        return {tp: PartitionFetchResult(records=[Region(self.log[start:])], records_size=len(self.log) - start)}

    def _positions(self):
        from pykbroker.records.batch import iter_headers

        yield from ((pos, header.base_offset) for pos, header in iter_headers(self.log))
        yield len(self.log), 2**62

    def lose_leadership(self) -> None:
        self.partition.is_leader = False
        for listener in self.listeners:
            listener(("orders", 0))

    def lead_again(self) -> None:
        self.partition.is_leader = True
        self.partition.leader_epoch += 1


@pytest.fixture
def broker():
    replicas = FakeReplicaManager(batches=3)
    persister = InMemorySharePersister()
    manager = SharePartitionManager(replicas, persister, MockTimer(), lambda: CONFIG,
                                    group_config=lambda group: {"share.auto.offset.reset": "earliest"})
    return SimpleNamespace(replicas=replicas, persister=persister, manager=manager)


def fetch(manager, member, max_records=0):
    results = anyio.run(lambda: manager.fetch("g", member, [KEY], max_wait_ms=0, min_bytes=1,
                                              max_bytes=1 << 20, max_records=max_records))
    return results[KEY]


def test_a_fetch_returns_the_stored_batches_with_the_acquired_ranges(broker):
    result = fetch(broker.manager, "m1", max_records=2)
    assert result.error_code == ErrorCode.NONE
    assert result.acquired == [AcquiredRange(0, 1, 1)]
    assert result.records == broker.replicas.log[: len(result.records)] and result.records


def test_a_member_that_leaves_has_its_records_released_and_its_session_removed(broker):
    broker.manager.sessions.open(ShareSessionKey("g", "m1"))
    assert fetch(broker.manager, "m1").acquired == [AcquiredRange(0, 5, 1)]
    anyio.run(broker.manager.release_member, "g", "m1")
    assert ShareSessionKey("g", "m1") not in broker.manager.sessions.sessions
    assert fetch(broker.manager, "m2").acquired == [AcquiredRange(0, 5, 2)]


def test_a_partition_no_longer_led_here_is_dropped_and_the_next_leader_loads_the_persisted_state(broker):
    assert fetch(broker.manager, "m1").acquired == [AcquiredRange(0, 5, 1)]
    acknowledged = anyio.run(broker.manager.acknowledge, "g", "m1", {KEY: [AcknowledgementBatch(0, 1, (1,))]})
    assert acknowledged == {KEY: ErrorCode.NONE}
    broker.replicas.lose_leadership()
    assert broker.manager.partitions == {}
    assert fetch(broker.manager, "m1").error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    broker.replicas.lead_again()
    assert fetch(broker.manager, "m2").acquired == [AcquiredRange(2, 5, 2)]


def test_sessions_beyond_the_limit_are_refused():
    cache = ShareSessionCache(max_sessions=2)
    cache.open(ShareSessionKey("g", "a"))
    cache.open(ShareSessionKey("g", "b"))
    cache.open(ShareSessionKey("g", "b"))  # reopening replaces the member's own session
    with pytest.raises(SessionError) as refused:
        cache.open(ShareSessionKey("g", "c"))
    assert refused.value.code == ErrorCode.SHARE_SESSION_LIMIT_REACHED


def test_session_epochs_increment_and_must_match():
    cache = ShareSessionCache(max_sessions=2)
    key = ShareSessionKey("g", "a")
    cache.open(key)
    assert cache.continue_session(key, 1).epoch == 2
    with pytest.raises(SessionError) as wrong:
        cache.continue_session(key, 1)
    assert wrong.value.code == ErrorCode.INVALID_SHARE_SESSION_EPOCH


def test_a_closed_connection_ends_the_sessions_it_opened_and_releases_their_records(broker):
    broker.manager.sessions.open(ShareSessionKey("g", "m1"), "conn-1")
    broker.manager.sessions.open(ShareSessionKey("g", "m2"), "conn-2")
    assert fetch(broker.manager, "m1").acquired == [AcquiredRange(0, 5, 1)]

    async def close_and_serve_background_work():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(broker.manager.run)
            broker.manager.connection_closed("conn-1")
            await anyio.wait_all_tasks_blocked()
            tasks.cancel_scope.cancel()

    anyio.run(close_and_serve_background_work)
    assert list(broker.manager.sessions.sessions) == [ShareSessionKey("g", "m2")]
    assert fetch(broker.manager, "m2").acquired == [AcquiredRange(0, 5, 2)]


def test_closing_a_session_releases_what_the_member_still_holds(broker):
    broker.manager.sessions.open(ShareSessionKey("g", "m1"))
    assert fetch(broker.manager, "m1").acquired == [AcquiredRange(0, 5, 1)]
    assert anyio.run(broker.manager.release_session, "g", "m1") == ErrorCode.NONE
    assert anyio.run(broker.manager.release_session, "g", "m1") == ErrorCode.SHARE_SESSION_NOT_FOUND
    assert fetch(broker.manager, "m2").acquired == [AcquiredRange(0, 5, 2)]
