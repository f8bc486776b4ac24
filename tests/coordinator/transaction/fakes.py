"""A transaction coordinator on a fake clock, with `__transaction_state` in memory, a fake
partition side for markers and fake metadata, and helpers that call it as the handlers do."""
from __future__ import annotations

import uuid
from collections import defaultdict

import anyio
from anyio import wait_all_tasks_blocked

from pykbroker.cluster.model import BrokerInfo, PartitionState, TopicInfo
from pykbroker.common.time import FAKE_EPOCH_MS, FakeClock
from pykbroker.common.timer import MockTimer
from pykbroker.coordinator.runtime import LoopRuntime
from pykbroker.coordinator.transaction import TransactionConfig, TransactionCoordinator
from pykbroker.coordinator.transaction.formats import decode_key, decode_value
from pykbroker.coordinator.transaction.markers import TransactionMarkerChannelManager
from pykbroker.coordinator.transaction.metadata import STATES_BY_ID
from pykbroker.coordinator.transaction.state_manager import TransactionStateManager
from pykbroker.coordinator.transaction.txn_topic import TRANSACTION_STATE_TOPIC
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import iter_batches

T0 = FAKE_EPOCH_MS
BROKER = 0
COORDINATOR_EPOCH = 5
TIMEOUT_MS = 60_000
ABORT_INTERVAL_MS = 10_000
EXPIRATION_MS = 7 * 24 * 3600 * 1000
EXPIRATION_INTERVAL_MS = 3600 * 1000


class MemoryTxnLog:
    """`__transaction_state` partitions as lists of (offset, key, value): a PartitionWriter and
    a CoordinatorLoader. Appends succeed unless `fail_with` is set."""

    def __init__(self) -> None:
        self.records: dict[int, list] = defaultdict(list)
        self.fail_with: ErrorCode | None = None

    def is_leader(self, topic: str, partition: int) -> bool:
        return True

    async def append(self, topic, partition, batch, *, required_acks, timeout_ms):
        assert topic == TRANSACTION_STATE_TOPIC and required_acks == -1
        if self.fail_with is not None:
            return self.fail_with, -1
        stored = self.records[partition]
        base = len(stored)
        for header, records in iter_batches(bytes(batch)):
            assert header.compression == 0  # Kafka writes it uncompressed
            stored += [(base, r.key, r.value) for r in records]
        return ErrorCode.NONE, base

    def is_empty(self, topic: str, partition: int) -> bool:
        return not self.records[partition]

    async def load(self, topic: str, partition: int):
        return list(self.records[partition])

    def states(self, partition: int = 0) -> list[tuple[str, str | None]]:
        """(transactional id, state name or None for a tombstone) of each record, in order."""
        return [
            (decode_key(key), None if value is None else STATES_BY_ID[decode_value(value).status].name)
            for _, key, value in self.records[partition]
        ]


class FakeMarkerService:
    """The partition side: records the markers it is asked to write; `errors` answers the next
    writes of a partition with an error (once each), `hold` keeps the answers back."""

    def __init__(self) -> None:
        self.written: list = []
        self.errors: dict[tuple[str, int], list[ErrorCode]] = defaultdict(list)
        self.hold: anyio.Event | None = None

    async def write_txn_markers(self, markers):
        if self.hold is not None:
            await self.hold.wait()
        results = []
        for marker in markers:
            self.written.append(marker)
            results.append({tp: self.errors[tp].pop(0) if self.errors[tp] else ErrorCode.NONE
                            for tp in marker.partitions})
        return results


class FakeProducerIds:
    def __init__(self, first: int = 1000) -> None:
        self.next = first

    async def generate_producer_id_async(self) -> int:
        self.next += 1
        return self.next - 1


class FakeMetadata:
    """Topics whose partitions all have `leader`; `__transaction_state` has one partition led
    by this broker at COORDINATOR_EPOCH."""

    def __init__(self, partitions: int = 1) -> None:
        self.listeners: list = []
        self._topics: dict[str, TopicInfo] = {}
        self.add_topic(TRANSACTION_STATE_TOPIC, partitions, epoch=COORDINATOR_EPOCH)
        self.add_topic("orders", 3)
        self.add_topic("__consumer_offsets", 1)

    def add_topic(self, name: str, partitions: int, leader: int = BROKER, epoch: int = 0) -> None:
        self._topics[name] = TopicInfo(name, uuid.uuid4(), {
            i: PartitionState(i, [leader], leader, epoch, [leader]) for i in range(partitions)})
        for listener in self.listeners:
            listener(name, self._topics[name])

    def delete_topic(self, name: str) -> None:
        del self._topics[name]

    def topic(self, name: str):
        return self._topics.get(name)

    def add_topic_listener(self, listener) -> None:
        self.listeners.append(listener)

    def broker_endpoint(self, broker_id: int, listener_name=None):
        return BrokerInfo(broker_id, "127.0.0.1", 9092 + broker_id)


class Harness:
    """The coordinator and its fakes, `__transaction_state` of `partitions` partitions. `run(fn,
    ...)` runs `await fn(...)` on an event loop with the coordinator's background tasks until
    everything settled; `advance(ms)` moves time."""

    def __init__(self, partitions: int = 1) -> None:
        self.timer = MockTimer(FakeClock(T0))
        self.runtime = LoopRuntime(self.timer, "Transaction coordinator")
        self.log = MemoryTxnLog()
        self.partition_side = FakeMarkerService()
        self.metadata = FakeMetadata(partitions)
        self.producer_ids = FakeProducerIds()
        self.config = TransactionConfig(
            transactional_id_expiration_ms=EXPIRATION_MS,
            transaction_max_timeout_ms=900_000,
            abort_timed_out_transactions_interval_ms=ABORT_INTERVAL_MS,
            remove_expired_transactional_ids_interval_ms=EXPIRATION_INTERVAL_MS,
        )
        self.state = TransactionStateManager(self.log, self.log, self.runtime, self.config,
                                            lambda: partitions)
        self.markers = TransactionMarkerChannelManager(
            BROKER, self.state, self.metadata, self.runtime, listener_name="PLAINTEXT",
            local_writer=self.partition_side)
        self.coordinator = TransactionCoordinator(
            BROKER, self.config, self.state, self.markers, self.producer_ids, self.runtime,
            metadata=self.metadata, group_partition_for=lambda group_id: 0)
        self.coordinator.startup()
        self.settle()

    def run(self, fn=None, *args):
        async def main():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self.runtime.run)
                result = None if fn is None else await fn(*args)
                await wait_all_tasks_blocked()
                tasks.cancel_scope.cancel()
            return result
        return anyio.run(main)

    def settle(self) -> None:
        self.run()

    def advance(self, ms: int) -> None:
        self.timer.advance(ms)
        self.settle()

    # -- the calls handlers make --------------------------------------------------------
    def init(self, tid: str, timeout_ms: int = TIMEOUT_MS, producer_id: int = -1, epoch: int = -1):
        return self.run(self.coordinator.init_producer_id, tid, timeout_ms, producer_id, epoch)

    def add(self, tid: str, producer_id: int, epoch: int, *partitions):
        errors = self.run(self.coordinator.add_partitions, tid, producer_id, epoch,
                          list(partitions or [("orders", 0)]))
        assert len(set(errors.values())) == 1
        return next(iter(errors.values()))

    def end(self, tid: str, producer_id: int, epoch: int, commit: bool = True) -> ErrorCode:
        return self.run(self.coordinator.end_txn, tid, producer_id, epoch, commit)[0]

    def describe(self, tid: str):
        return self.coordinator.describe_transaction(tid)

    def metadata_of(self, tid: str):
        return self.state.get_transaction_state(tid)[1].transaction_metadata
