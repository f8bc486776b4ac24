"""The share coordinator (Kafka's ShareCoordinatorService): serves the share-partition states of
the `__share_group_state` partitions this broker leads, and follows leadership changes of them.

    coordinator = ShareCoordinator.for_broker(broker_id, config, writer, loader, metadata, timer)
    coordinator.startup()           # load the partitions led now; follow the metadata store
    await coordinator.run()         # background loads, until cancelled
    state = await coordinator.read_state(SharePartitionKey("g", topic_id, 0), leader_epoch=3)

Each led partition has a `ShareCoordinatorShard`, rebuilt from the partition's records when this
broker becomes its leader, or leads it at a new leader epoch (meanwhile its keys answer
COORDINATOR_LOAD_IN_PROGRESS), and dropped when it resigns. A key whose partition this broker
does not lead answers NOT_COORDINATOR, and every key COORDINATOR_NOT_AVAILABLE once the
coordinator is shut down.

An operation asks the shard for its records and its answer; the records are appended (acks=-1,
`share.coordinator.write.timeout.ms`) and then replayed, one operation at a time per partition,
so each starts from the state the log holds. Append errors are answered as Kafka's coordinator
runtime does (`partition_io.runtime_append_error`).

Every `share.coordinator.cold.partition.snapshot.interval.ms` a fresh ShareSnapshot is written for
each key whose last snapshot is older than that, so that the topic's time retention (it is not
compacted) never removes a state still in use; every
`share.coordinator.state.topic.prune.interval.ms` the records below the oldest last snapshot of a
key (or all, when no key has a state) are deleted, as nothing needs them to rebuild the state.

When the metadata drops a topic, every led partition writes tombstones for the keys of topics
that no longer exist (Kafka's handleTopicsDeletion): a deleted topic takes its share state along.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from ...common.timer import Timer
from ...protocol.errors import ErrorCode
from ...records.records import RecordLike, build_batch
from ..internal_topic import follow_leadership, follow_topic, led_partitions
from ..partition_io import CoordinatorLoader, Entry, PartitionWriter, runtime_append_error
from ..runtime import LoopRuntime
from .combiner import PersisterStateBatch
from .persister import ShareState
from .records import decode_record, encode_record
from .shard import ShareCoordinatorShard, SharePartitionKey, ShareStateRecord
from .state_topic import SHARE_GROUP_STATE_TOPIC, partition_count, partition_for

if TYPE_CHECKING:
    from ...cluster.model import TopicInfo
    from ...cluster.store import MetadataStore
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

Operation = Callable[[ShareCoordinatorShard], tuple[list[ShareStateRecord], ShareState]]


@dataclass(frozen=True)
class ShareCoordinatorConfig:
    """Kafka's ShareCoordinatorConfig, as far as the coordinator uses it."""

    records_per_snapshot: int = 500
    write_timeout_ms: int = 5000
    compression: int = 0
    cold_snapshot_interval_ms: int = 300000
    prune_interval_ms: int = 300000

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> ShareCoordinatorConfig:
        return cls(
            records_per_snapshot=int(config["share.coordinator.snapshot.update.records.per.snapshot"]),
            write_timeout_ms=int(config["share.coordinator.write.timeout.ms"]),
            compression=int(config["share.coordinator.state.topic.compression.codec"]),
            cold_snapshot_interval_ms=int(config["share.coordinator.cold.partition.snapshot.interval.ms"]),
            prune_interval_ms=int(config["share.coordinator.state.topic.prune.interval.ms"]),
        )


class _LoadedPartition:
    """A led partition's shard, the leader epoch it was loaded at, and the lock that runs its
    operations one at a time."""

    def __init__(self, shard: ShareCoordinatorShard, leader_epoch: int) -> None:
        self.shard = shard
        self.leader_epoch = leader_epoch
        self.lock = anyio.Lock()
        self.pruned_offset = 0  # records below it were deleted by this coordinator


class ShareCoordinator:
    def __init__(
        self,
        broker_id: int,
        config: ShareCoordinatorConfig,
        writer: PartitionWriter,
        loader: CoordinatorLoader,
        runtime: LoopRuntime,
        partition_count: Callable[[], int],
        *,
        metadata: MetadataStore | None = None,
        partition_exists: Callable[[uuid.UUID, int], bool] | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.config = config
        self.writer = writer
        self.loader = loader
        self.runtime = runtime
        self.partition_count = partition_count
        self.metadata = metadata
        self.partition_exists = partition_exists or self._partition_in_metadata
        self.loaded: dict[int, _LoadedPartition] = {}
        self.loading: dict[int, tuple[object, int]] = {}  # partition -> (the token of its load, leader epoch)
        self.is_active = False

    @classmethod
    def for_broker(
        cls,
        broker_id: int,
        config: BrokerConfig,
        writer: PartitionWriter,
        loader: CoordinatorLoader,
        metadata: MetadataStore,
        timer: Timer,
    ) -> ShareCoordinator:
        runtime = LoopRuntime(timer, "Share coordinator")
        count = partition_count(metadata, config)  # fixed for the broker's lifetime, as in Kafka
        return cls(
            broker_id,
            ShareCoordinatorConfig.from_broker_config(config),
            writer,
            loader,
            runtime,
            lambda: count,
            metadata=metadata,
        )

    # -- lifecycle -------------------------------------------------------------------------
    def startup(self) -> None:
        follow_topic(self.metadata, SHARE_GROUP_STATE_TOPIC, self._on_topic_changed)
        self.runtime.call_later(self.config.cold_snapshot_interval_ms, self._snapshot_cold_partitions)
        self.runtime.call_later(self.config.prune_interval_ms, self._prune_partitions)
        self.is_active = True
        log.info("Share coordinator %d started", self.broker_id)

    async def run(self) -> None:
        await self.runtime.run()

    def shutdown(self) -> None:
        self.is_active = False
        for partition in sorted(self.loaded.keys() | self.loading.keys()):
            self.on_resignation(partition)
        log.info("Share coordinator %d stopped", self.broker_id)

    def partition_for(self, key: SharePartitionKey) -> int:
        return partition_for(key.coordinator_key(), self.partition_count())

    def _partition_in_metadata(self, topic_id: uuid.UUID, partition: int) -> bool:
        if self.metadata is None:
            return True
        info = self.metadata.topic_by_id(topic_id)
        return info is not None and partition in info.partitions

    # -- following leadership of __share_group_state ---------------------------------------
    def on_election(self, partition: int, leader_epoch: int = 0) -> None:
        """Load the partition (again, at a new leader epoch: another leader may have written)."""
        log.info("Elected as the share coordinator for partition %d at epoch %d", partition, leader_epoch)
        self.loaded.pop(partition, None)
        token = object()
        self.loading[partition] = (token, leader_epoch)
        if self.loader.is_empty(SHARE_GROUP_STATE_TOPIC, partition):
            self._finish_load(partition, token, [])
        else:
            self.runtime.spawn(self._load, partition, token)

    async def _load(self, partition: int, token: object) -> None:
        entries = await self.loader.load(SHARE_GROUP_STATE_TOPIC, partition)
        self._finish_load(partition, token, entries)

    def _finish_load(self, partition: int, token: object, entries: list[Entry]) -> None:
        loading = self.loading.get(partition)
        if loading is None or loading[0] is not token:
            return  # resigned (or elected again) while loading
        del self.loading[partition]
        shard = self._new_shard()
        for batch_offset, key, value in entries:  # a batch's records count from its base offset: none is lost
            if key is None:
                continue
            try:
                record = decode_record(key, value)
            except (ValueError, IndexError, UnicodeDecodeError) as exc:
                log.error("Skipping an unreadable record of %s-%d: %s", SHARE_GROUP_STATE_TOPIC, partition, exc)
                continue
            if record is not None:
                shard.replay(record, batch_offset)
        self.loaded[partition] = _LoadedPartition(shard, loading[1])
        log.info(
            "Finished loading %s-%d: %d records, %d share-partitions",
            SHARE_GROUP_STATE_TOPIC,
            partition,
            len(entries),
            len(shard.states),
        )

    def _new_shard(self) -> ShareCoordinatorShard:
        return ShareCoordinatorShard(self.config.records_per_snapshot, self.partition_exists, self.runtime.now_ms)

    def on_resignation(self, partition: int) -> None:
        if self.loaded.pop(partition, None) is not None or self.loading.pop(partition, None) is not None:
            log.info("Resigned as the share coordinator for partition %d", partition)

    def _on_topic_changed(self, name: str, info: TopicInfo | None) -> None:
        if name != SHARE_GROUP_STATE_TOPIC:
            if info is None and self.is_active:
                self._delete_states_of_deleted_topics()
            return
        served = {partition: loaded.leader_epoch for partition, loaded in self.loaded.items()}
        served.update({partition: epoch for partition, (_token, epoch) in self.loading.items()})
        led = led_partitions(info, self.broker_id, lambda index: self.writer.is_leader(SHARE_GROUP_STATE_TOPIC, index))
        follow_leadership(served, led, self.on_election, self.on_resignation)

    # -- the operations --------------------------------------------------------------------
    async def write_state(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[PersisterStateBatch],
    ) -> ShareState:
        return await self._run(
            key, lambda shard: shard.write_state(key, state_epoch, leader_epoch, start_offset, batches)
        )

    async def read_state(self, key: SharePartitionKey, leader_epoch: int) -> ShareState:
        return await self._run(key, lambda shard: shard.read_state(key, leader_epoch))

    async def initialize_state(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> ShareState:
        return await self._run(key, lambda shard: shard.initialize_state(key, state_epoch, start_offset))

    async def delete_state(self, key: SharePartitionKey) -> ShareState:
        return await self._run(key, lambda shard: shard.delete_state(key))

    async def read_summary(self, key: SharePartitionKey, leader_epoch: int) -> ShareState:
        partition, error = self._serving(key)
        if error is not None:
            return ShareState(error)
        return self.loaded[partition].shard.read_summary(key, leader_epoch)

    def _serving(self, key: SharePartitionKey) -> tuple[int, ErrorCode | None]:
        if not self.is_active:
            return -1, ErrorCode.COORDINATOR_NOT_AVAILABLE
        partition = self.partition_for(key)
        if partition in self.loading:
            return partition, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        if partition not in self.loaded:
            return partition, ErrorCode.NOT_COORDINATOR
        return partition, None

    async def _run(self, key: SharePartitionKey, operation: Operation) -> ShareState:
        partition, error = self._serving(key)
        if error is not None:
            return ShareState(error)
        loaded = self.loaded[partition]
        async with loaded.lock:
            if self.loaded.get(partition) is not loaded:
                return ShareState(ErrorCode.NOT_COORDINATOR)  # resigned while waiting
            records, answer = operation(loaded.shard)
            if records:
                error, base_offset = await self._append(partition, records)
                if self.loaded.get(partition) is not loaded:
                    return ShareState(ErrorCode.NOT_COORDINATOR)
                if error != ErrorCode.NONE:
                    return ShareState(error)
                for index, record in enumerate(records):
                    loaded.shard.replay(record, base_offset + index)
            return answer

    async def _append(self, partition: int, records: list[ShareStateRecord]) -> tuple[ErrorCode, int]:
        now = self.runtime.now_ms()
        items: list[RecordLike] = [(*encode_record(record), [], now) for record in records]
        batch = bytearray(build_batch(items, compression=self.config.compression))
        error, base_offset = await self.writer.append(
            SHARE_GROUP_STATE_TOPIC,
            partition,
            batch,
            required_acks=-1,
            timeout_ms=self.config.write_timeout_ms,
        )
        if error != ErrorCode.NONE:
            log.debug("Append to %s-%d failed: %s", SHARE_GROUP_STATE_TOPIC, partition, error.name)
        return runtime_append_error(error), base_offset

    # -- snapshots of cold share-partitions ------------------------------------------------
    def _snapshot_cold_partitions(self) -> None:
        if not self.is_active:
            return
        for partition in sorted(self.loaded):
            self.runtime.spawn(self._snapshot_cold, partition)
        self.runtime.call_later(self.config.cold_snapshot_interval_ms, self._snapshot_cold_partitions)

    async def _snapshot_cold(self, partition: int) -> None:
        interval_ms = self.config.cold_snapshot_interval_ms
        await self._write_records(partition, lambda shard: shard.cold_snapshot_records(interval_ms))

    async def _write_records(
        self, partition: int, records_of: Callable[[ShareCoordinatorShard], list[ShareStateRecord]]
    ) -> None:
        """Append and replay the records the partition's shard gives (a background job)."""
        loaded = self.loaded.get(partition)
        if loaded is None:
            return
        async with loaded.lock:
            if self.loaded.get(partition) is not loaded:
                return
            records = records_of(loaded.shard)
            if not records:
                return
            error, base_offset = await self._append(partition, records)
            if error == ErrorCode.NONE and self.loaded.get(partition) is loaded:
                for index, record in enumerate(records):
                    loaded.shard.replay(record, base_offset + index)

    # -- deleted topics --------------------------------------------------------------------
    def _delete_states_of_deleted_topics(self) -> None:
        for partition in sorted(self.loaded):
            self.runtime.spawn(self._write_records, partition, self._deleted_topic_tombstones)

    def _deleted_topic_tombstones(self, shard: ShareCoordinatorShard) -> list[ShareStateRecord]:
        metadata = self.metadata
        if metadata is None:
            return []
        return shard.deleted_topic_tombstones(lambda topic_id: metadata.topic_by_id(topic_id) is not None)

    # -- pruning records no state needs ----------------------------------------------------
    def _prune_partitions(self) -> None:
        if not self.is_active:
            return
        for partition in sorted(self.loaded):
            self.runtime.spawn(self._prune, partition)
        self.runtime.call_later(self.config.prune_interval_ms, self._prune_partitions)

    async def _prune(self, partition: int) -> None:
        """Delete the records below the partition's redundant offset (Kafka's
        share.coordinator.state.topic.prune.interval.ms job)."""
        loaded = self.loaded.get(partition)
        if loaded is None:
            return
        offset = loaded.shard.redundant_offset()
        if offset <= loaded.pruned_offset:
            return
        error = await self.writer.delete_records(SHARE_GROUP_STATE_TOPIC, partition, offset)
        if error == ErrorCode.NONE:
            loaded.pruned_offset = offset
            log.debug("Pruned %s-%d below offset %d", SHARE_GROUP_STATE_TOPIC, partition, offset)
        else:
            log.debug("Pruning %s-%d below %d failed: %s", SHARE_GROUP_STATE_TOPIC, partition, offset, error.name)
