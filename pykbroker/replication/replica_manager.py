"""The partitions this broker hosts: appends with acks, reads with long polling, offsets lookups.

The ReplicaManager follows the metadata store: when a topic appears, grows, changes configs or is
deleted, it opens, reconfigures or deletes the local logs and takes the partition role (leader or
follower) the store assigns. Produce and Fetch handlers call `append_records` and
`fetch_records`; both may wait in a purgatory (acks=all until the ISR has the data; a fetch until
`min_bytes` are available or `max_wait_ms` passes).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from ..config import topic_config_values
from ..protocol.errors import ErrorCode, KafkaError
from ..records.errors import CorruptRecordError, InvalidRecordError, UnsupportedCompressionError
from .partition import Partition
from .purgatory import DelayedOperation, Purgatory

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class ProduceResult:
    error: ErrorCode = ErrorCode.NONE
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    record_errors: list[tuple[int, str | None]] = field(default_factory=list)
    required_offset: int = -1  # acks=all: the high watermark this append waits for


@dataclass
class FetchRequestPartition:
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    log_start_offset: int = -1


@dataclass
class FetchResult:
    error: ErrorCode = ErrorCode.NONE
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: list = field(default_factory=list)  # file regions (or bytes)
    size: int = 0


class DelayedProduce(DelayedOperation):
    """acks=all: done when every partition's high watermark reaches its appended batches."""

    def __init__(self, timeout_ms: int, manager: "ReplicaManager",
                 results: dict[TopicPartition, ProduceResult]) -> None:
        super().__init__(timeout_ms)
        self.manager = manager
        self.results = results

    def try_complete(self) -> bool:
        for tp, result in self.results.items():
            if result.error != ErrorCode.NONE or result.required_offset < 0:
                continue
            partition = self.manager.partitions.get(tp)
            outcome = (ErrorCode.NOT_LEADER_OR_FOLLOWER if partition is None else
                       partition.acks_satisfied(result.required_offset,
                                                self.manager.min_insync_replicas(tp[0])))
            if outcome is None:
                return False
        return self.force_complete()

    def settle(self) -> None:
        """Turn the waiting partitions into their final answers."""
        for tp, result in self.results.items():
            if result.error != ErrorCode.NONE or result.required_offset < 0:
                continue
            partition = self.manager.partitions.get(tp)
            outcome = (ErrorCode.NOT_LEADER_OR_FOLLOWER if partition is None else
                       partition.acks_satisfied(result.required_offset,
                                                self.manager.min_insync_replicas(tp[0])))
            result.error = ErrorCode.REQUEST_TIMED_OUT if outcome is None else outcome


class DelayedFetch(DelayedOperation):
    """A fetch that waits until `min_bytes` of new data are readable."""

    def __init__(self, timeout_ms: int, manager: "ReplicaManager", min_bytes: int,
                 bytes_already: int, start_counters: dict[TopicPartition, int],
                 for_follower: bool) -> None:
        super().__init__(timeout_ms)
        self.manager = manager
        self.min_bytes = min_bytes
        self.bytes_already = bytes_already
        self.start_counters = start_counters
        self.for_follower = for_follower

    def try_complete(self) -> bool:
        available = self.bytes_already
        for tp, start in self.start_counters.items():
            partition = self.manager.partitions.get(tp)
            if partition is None or not partition.is_leader:
                return self.force_complete()  # leadership moved: answer now with the error
            available += partition.readable_bytes_since(start, self.for_follower)
        if available >= self.min_bytes:
            return self.force_complete()
        return False


class ReplicaManager:
    def __init__(self, broker_id: int, config, log_manager, metadata_store) -> None:
        self.broker_id = broker_id
        self.config = config
        self.log_manager = log_manager
        self.metadata = metadata_store
        self.partitions: dict[TopicPartition, Partition] = {}
        self.produce_purgatory = Purgatory("Produce")
        self.fetch_purgatory = Purgatory("Fetch")
        metadata_store.add_topic_listener(self._on_topic_changed)

    # -- following the metadata store ---------------------------------------------------
    def startup(self) -> None:
        for name, info in self.metadata.topics().items():
            self._on_topic_changed(name, info)

    def _on_topic_changed(self, name: str, info) -> None:
        if info is None:
            self._delete_topic_partitions(name)
            return
        config = topic_config_values(info.configs, self.config)
        for index, state in info.partitions.items():
            if self.broker_id not in state.replicas:
                continue
            partition = self.partitions.get((name, index))
            if partition is None:
                partition = self._open_partition(name, index, info.topic_id, config)
            else:
                partition.log.update_config(config)
            self._apply_partition_state(partition, state)

    def _open_partition(self, topic: str, index: int, topic_id, config) -> Partition:
        log_ = self.log_manager.get_or_create(topic, index, config)
        partition = Partition(topic, index, topic_id, log_, self.broker_id)
        self.partitions[(topic, index)] = partition
        return partition

    def _apply_partition_state(self, partition: Partition, state) -> None:
        if state.leader == self.broker_id:
            if partition.is_leader and partition.leader_epoch == state.leader_epoch:
                partition.isr = list(state.isr)
                partition.replicas = list(state.replicas)
                return
            partition.make_leader(state.leader_epoch, state.replicas, state.isr,
                                  state.partition_epoch, now_ms())
        else:
            partition.make_follower(state.leader, state.leader_epoch, state.replicas, state.isr,
                                    state.partition_epoch)

    def _delete_topic_partitions(self, topic: str) -> None:
        for tp in [tp for tp in self.partitions if tp[0] == topic]:
            del self.partitions[tp]
            self.log_manager.delete(*tp)
            self.fetch_purgatory.check_and_complete(tp)
            self.produce_purgatory.check_and_complete(tp)

    # -- lookups -----------------------------------------------------------------------
    def leader_partition(self, topic: str, index: int) -> Partition:
        partition = self.partitions.get((topic, index))
        if partition is None:
            if self.metadata.topic(topic) is None or index not in self.metadata.topic(topic).partitions:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        partition.require_leader()
        return partition

    def min_insync_replicas(self, topic: str) -> int:
        info = self.metadata.topic(topic)
        configs = info.configs if info is not None else {}
        if "min.insync.replicas" in configs:
            return int(configs["min.insync.replicas"])
        return int(self.config["min.insync.replicas"])

    # -- produce -----------------------------------------------------------------------
    async def append_records(self, entries: dict[TopicPartition, bytearray], *,
                             required_acks: int, timeout_ms: int) -> dict[TopicPartition, ProduceResult]:
        now = now_ms()
        results = {tp: self._append_one(tp, records, required_acks, now)
                   for tp, records in entries.items()}
        for tp, result in results.items():
            if result.error == ErrorCode.NONE:
                self.fetch_purgatory.check_and_complete(tp)
        if required_acks == -1 and any(r.required_offset >= 0 for r in results.values()):
            delayed = DelayedProduce(timeout_ms, self, results)
            await self.produce_purgatory.wait_for(delayed, list(results))
            delayed.settle()
        return results

    def _append_one(self, tp: TopicPartition, records: bytearray, required_acks: int,
                    now: int) -> ProduceResult:
        try:
            partition = self.leader_partition(*tp)
            info = partition.append_as_leader(
                records, required_acks=required_acks,
                min_insync_replicas=self.min_insync_replicas(tp[0]), now_ms=now)
        except KafkaError as exc:
            return ProduceResult(exc.code, error_message=exc.message,
                                 record_errors=list(getattr(exc, "record_errors", []) or []))
        except CorruptRecordError as exc:
            return ProduceResult(ErrorCode.CORRUPT_MESSAGE, error_message=str(exc))
        except UnsupportedCompressionError as exc:
            return ProduceResult(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, error_message=str(exc))
        except InvalidRecordError as exc:
            return ProduceResult(ErrorCode.INVALID_RECORD, error_message=str(exc))
        result = ProduceResult(base_offset=info.first_offset,
                               log_append_time=info.log_append_time,
                               log_start_offset=info.log_start_offset)
        if required_acks == -1:
            result.required_offset = info.last_offset + 1
        return result

    # -- fetch -------------------------------------------------------------------------
    async def fetch_records(self, requested: list[tuple[TopicPartition, FetchRequestPartition]], *,
                            replica_id: int, max_wait_ms: int, min_bytes: int, max_bytes: int
                            ) -> dict[TopicPartition, FetchResult]:
        for_follower = replica_id >= 0
        results = self._read_all(requested, max_bytes, for_follower)
        total = sum(r.size for r in results.values())
        has_error = any(r.error != ErrorCode.NONE for r in results.values())
        if max_wait_ms <= 0 or total >= min_bytes or has_error or not requested:
            return results
        counters = {tp: self.partitions[tp].bytes_appended for tp, _ in requested}
        delayed = DelayedFetch(max_wait_ms, self, min_bytes, total, counters, for_follower)
        await self.fetch_purgatory.wait_for(delayed, list(counters))
        return self._read_all(requested, max_bytes, for_follower)

    def _read_all(self, requested, max_bytes: int, for_follower: bool
                  ) -> dict[TopicPartition, FetchResult]:
        results = {}
        remaining = max_bytes
        for tp, request in requested:
            result = self._read_one(tp, request, remaining, for_follower,
                                    min_one_message=remaining == max_bytes)
            remaining = max(0, remaining - result.size)
            results[tp] = result
        return results

    def _read_one(self, tp: TopicPartition, request: FetchRequestPartition, remaining: int,
                  for_follower: bool, min_one_message: bool) -> FetchResult:
        try:
            partition = self.leader_partition(*tp)
            partition.check_leader_epoch(request.current_leader_epoch)
            limit = min(request.max_bytes, remaining)
            data = partition.read(request.fetch_offset, limit, for_follower=for_follower,
                                  min_one_message=min_one_message)
        except KafkaError as exc:
            # As Kafka's createLogReadResult: a failed partition (OFFSET_OUT_OF_RANGE, fenced
            # epochs, ...) reports no high watermark, last stable offset or log start (-1).
            return FetchResult(exc.code)
        return FetchResult(ErrorCode.NONE, partition.high_watermark,
                           partition.last_stable_offset, partition.log_start_offset,
                           data.regions, data.size)

    # -- administration ----------------------------------------------------------------
    def delete_records(self, topic: str, index: int, offset: int) -> int:
        partition = self.leader_partition(topic, index)
        if offset == -1:
            offset = partition.high_watermark
        if offset < 0 or offset > partition.high_watermark:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
        partition.log.delete_records_before(offset)
        return partition.log_start_offset

    def describe_log_dirs(self) -> list[tuple[str, list[tuple[str, int, int, int]]]]:
        by_dir: dict[str, list[tuple[str, int, int, int]]] = {d: [] for d in self.log_manager.log_dirs}
        for (topic, index), partition in sorted(self.partitions.items()):
            entry = (topic, index, partition.log.size, 0)
            by_dir.setdefault(self.log_manager.log_dir_of(topic, index), []).append(entry)
        return list(by_dir.items())

    def high_watermarks(self) -> dict[TopicPartition, int]:
        return {tp: p.high_watermark for tp, p in self.partitions.items()}

    def shutdown(self) -> None:
        self.log_manager.checkpoint_high_watermarks(self.high_watermarks())
        self.log_manager.close()
