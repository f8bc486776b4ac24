"""A share partition's in-flight records (Kafka's SharePartition), on a fake clock and an
in-memory persister: acquisition, lock expiry and redelivery, accept/release/reject, archival at
the delivery count limit, the start offset, the in-flight limit, loading persisted state."""
from __future__ import annotations

import uuid

import anyio
import pytest

from pykbroker.common.timer import MockTimer
from pykbroker.coordinator.share.partitions import (
    AcknowledgementBatch,
    AcquiredRange,
    InMemorySharePersister,
    RecordState,
    SharePartition,
    ShareSettings,
)
from pykbroker.coordinator.share.partitions.fetch_utils import aborted_batches, parse_duration_ms
from pykbroker.coordinator.share.partitions.states import FetchedBatch
from pykbroker.coordinator.share.persister import PersisterStateBatch
from pykbroker.log.results import AbortedTransaction
from pykbroker.protocol.errors import ErrorCode

GROUP, TOPIC_ID = "share-group", uuid.UUID(int=7)
ACCEPT, RELEASE, REJECT, GAP = 1, 2, 3, 0
LOCK_MS = 30000


class Harness:
    def __init__(self, persister: InMemorySharePersister | None = None, **settings) -> None:
        self.timer = MockTimer()
        self.persister = persister or InMemorySharePersister()
        self.pending: list = []
        self.settings = ShareSettings(record_lock_duration_ms=LOCK_MS, **settings)
        self.partition = SharePartition(
            GROUP, TOPIC_ID, "orders", 0,
            persister=self.persister, timer=self.timer, settings=lambda: self.settings,
            spawn=self.pending.append,
        )

    def load(self, reset_offset: int = 0) -> ErrorCode:
        return anyio.run(self.partition.maybe_initialize, 3, lambda strategy: reset_offset)

    def acquire(self, member: str, *batches: tuple[int, int], max_records: int = 0, aborted=frozenset()):
        fetched = [FetchedBatch(first, last, 0, 0, -1, False, False) for first, last in batches]
        return self.partition.acquire(member, fetched, max_records, aborted)

    def acknowledge(self, member: str, first: int, last: int, *types: int) -> ErrorCode:
        return anyio.run(self.partition.acknowledge, member, [AcknowledgementBatch(first, last, types)])

    def expire_locks(self) -> None:
        self.timer.advance(LOCK_MS)
        self.run_background_writes()

    def run_background_writes(self) -> None:
        async def drain():
            while self.pending:
                await self.pending.pop(0)()

        anyio.run(drain)

    def state(self, offset: int) -> RecordState | None:
        record = self.partition.records.get(offset)
        return None if record is None else record.state

    def persisted(self):
        return anyio.run(self.persister.read_state, GROUP, TOPIC_ID, 0, 3)


@pytest.fixture
def share():
    harness = Harness()
    assert harness.load() == ErrorCode.NONE
    return harness


def test_a_fetch_acquires_new_records_for_the_member_with_delivery_count_one(share):
    assert share.acquire("m1", (0, 4), (5, 9)) == [AcquiredRange(0, 9, 1)]
    assert all(share.state(offset) is RecordState.ACQUIRED for offset in range(10))
    assert share.partition.end_offset == 10


def test_acquired_records_are_not_acquired_by_another_member(share):
    share.acquire("m1", (0, 4))
    assert share.acquire("m2", (0, 4)) == []
    assert share.acquire("m2", (0, 4), (5, 6)) == [AcquiredRange(5, 6, 1)]


def test_an_expired_lock_makes_records_available_again_and_the_next_delivery_counts_two(share):
    share.acquire("m1", (0, 4))
    share.expire_locks()
    assert all(share.state(offset) is RecordState.AVAILABLE for offset in range(5))
    assert share.partition.next_fetch_offset() == 0
    assert share.acquire("m2", (0, 4)) == [AcquiredRange(0, 4, 2)]
    persisted = share.persisted()
    assert persisted.start_offset == 0
    assert [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in persisted.batches] == [
        (0, 4, RecordState.AVAILABLE, 1)]


def test_acknowledged_records_never_expire(share):
    share.acquire("m1", (0, 4))
    assert share.acknowledge("m1", 0, 4, ACCEPT) == ErrorCode.NONE
    share.expire_locks()
    assert share.partition.start_offset == 5 and share.partition.records == {}


def test_release_makes_records_available_at_once_keeping_their_delivery_count(share):
    share.acquire("m1", (0, 4))
    assert share.acknowledge("m1", 0, 4, RELEASE, RELEASE, ACCEPT, ACCEPT, ACCEPT) == ErrorCode.NONE
    assert share.partition.start_offset == 0
    assert share.acquire("m2", (0, 4)) == [AcquiredRange(0, 1, 2)]


def test_rejected_records_are_archived_and_never_delivered_again(share):
    share.acquire("m1", (0, 4))
    assert share.acknowledge("m1", 0, 4, REJECT) == ErrorCode.NONE
    share.expire_locks()
    assert share.acquire("m2", (0, 4)) == []
    assert share.partition.start_offset == 5


def test_records_are_archived_once_the_delivery_count_limit_is_reached():
    share = Harness(delivery_count_limit=2)
    share.load()
    assert share.acquire("m1", (0, 0)) == [AcquiredRange(0, 0, 1)]
    share.expire_locks()
    assert share.acquire("m1", (0, 0)) == [AcquiredRange(0, 0, 2)]
    share.expire_locks()
    assert share.partition.start_offset == 1
    assert share.acquire("m1", (0, 0)) == []
    assert share.persisted().start_offset == 1


def test_the_start_offset_moves_only_over_a_prefix_of_finished_records(share):
    share.acquire("m1", (0, 9))
    assert share.acknowledge("m1", 3, 9, ACCEPT) == ErrorCode.NONE
    assert share.partition.start_offset == 0
    assert share.acknowledge("m1", 0, 2, ACCEPT, REJECT, GAP) == ErrorCode.NONE
    assert share.partition.start_offset == 10
    assert share.persisted().start_offset == 10


def test_no_new_records_are_acquired_beyond_the_in_flight_limit():
    share = Harness(max_in_flight_records=10)
    share.load()
    assert share.acquire("m1", (0, 4), (5, 9), (10, 14)) == [AcquiredRange(0, 9, 1)]
    assert share.acquire("m2", (10, 14)) == []
    assert share.partition.can_acquire(readable_end=15) is False
    assert share.acknowledge("m1", 0, 4, ACCEPT) == ErrorCode.NONE
    assert share.acquire("m2", (10, 14)) == [AcquiredRange(10, 14, 1)]


def test_max_records_stops_at_a_batch_boundary(share):
    assert share.acquire("m1", (0, 4), (5, 9), (10, 14), max_records=7) == [AcquiredRange(0, 9, 1)]


@pytest.mark.parametrize("member, first, last", [("m2", 0, 4), ("m1", 0, 5), ("m1", 6, 6)])
def test_acknowledging_records_not_held_by_the_member_is_invalid_record_state_and_changes_nothing(
        share, member, first, last):
    share.acquire("m1", (0, 4))
    assert share.acknowledge(member, first, last, ACCEPT) == ErrorCode.INVALID_RECORD_STATE
    assert all(share.state(offset) is RecordState.ACQUIRED for offset in range(5))


def test_an_acknowledgement_the_persister_refuses_gives_the_records_back():
    class Failing(InMemorySharePersister):
        fail = False

        async def write_state(self, *args, **kwargs):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE if self.fail else await super().write_state(*args, **kwargs)

    persister = Failing()
    share = Harness(persister)
    share.load()
    share.acquire("m1", (0, 4))
    persister.fail = True
    assert share.acknowledge("m1", 0, 4, ACCEPT) == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert share.partition.start_offset == 0
    assert share.acquire("m2", (0, 4)) == [AcquiredRange(0, 4, 2)]


def test_a_new_leader_loads_the_persisted_state_and_redelivers_what_was_in_flight():
    persister = InMemorySharePersister()
    first = Harness(persister)
    first.load()
    first.acquire("m1", (0, 9))
    assert first.acknowledge("m1", 0, 4, ACCEPT) == ErrorCode.NONE  # 5-9 stay acquired (persisted as available)

    second = Harness(persister)
    assert second.load() == ErrorCode.NONE
    assert second.partition.start_offset == 5
    assert second.partition.next_fetch_offset() == 5
    assert second.acquire("m2", (0, 9)) == [AcquiredRange(5, 9, 2)]


def test_an_uninitialized_start_offset_is_chosen_from_share_auto_offset_reset_and_written():
    share = Harness()
    assert share.load(reset_offset=42) == ErrorCode.NONE
    assert share.partition.start_offset == share.partition.end_offset == 42
    assert share.persisted().start_offset == 42
    assert share.acquire("m1", (40, 44)) == [AcquiredRange(42, 44, 1)]


def test_loading_with_an_older_leader_epoch_is_refused_as_not_leader():
    persister = InMemorySharePersister()
    anyio.run(persister.write_state, GROUP, TOPIC_ID, 0, 0, 9, 0, [PersisterStateBatch(0, 0, 0, 1)])
    share = Harness(persister)
    assert share.load() == ErrorCode.NOT_LEADER_OR_FOLLOWER  # loads at leader epoch 3
    assert share.partition.fenced


def test_records_of_aborted_transactions_are_archived_not_delivered(share):
    batches = [FetchedBatch(0, 1, 0, 0, 7, True, False), FetchedBatch(2, 2, 0, 0, 7, True, True),
               FetchedBatch(3, 4, 0, 0, 8, False, False)]
    aborted = aborted_batches(batches, [AbortedTransaction(producer_id=7, first_offset=0)])
    assert aborted == frozenset({0})
    assert share.partition.acquire("m1", batches, 0, aborted) == [AcquiredRange(2, 4, 1)]
    assert share.state(0) is RecordState.ARCHIVED


@pytest.mark.parametrize("text, ms", [("PT1H", 3_600_000), ("P1DT30M", 88_200_000), ("PT0.5S", 500)])
def test_by_duration_reads_iso_8601_durations(text, ms):
    assert parse_duration_ms(text) == ms
