"""Replication's side of the coordinators' seam (`coordinator/partition_io.py`): appends to an
internal topic's partitions as their leader, and reads them back to rebuild a coordinator's
state, as Kafka's CoordinatorPartitionWriter and CoordinatorLoaderImpl do.

    writer = CoordinatorPartitionWriter(replica_manager)
    error, base_offset = await writer.append("__consumer_offsets", 7, batch, required_acks=-1,
                                             timeout_ms=5000)
    loader = CoordinatorLogLoader(replica_manager, buffer_size=5 * 1024 * 1024)
    entries = await loader.load("__consumer_offsets", 7)   # [(batch base offset, key, value)]
    records = await loader.load_batches("__consumer_offsets", 7)  # control records too, with
                                                       # their batch's producer and flags
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, NamedTuple

import anyio.to_thread

from ..log.append_origin import COORDINATOR, VerificationGuard
from ..protocol.errors import ErrorCode, KafkaError
from .replica_manager import ReplicaManager, TxnVerifier

if TYPE_CHECKING:
    from ..log.log import Log
    from ..records.batch import BatchHeader
    from ..records.records import Record

log = logging.getLogger(__name__)

Entry = tuple[int, bytes | None, bytes | None]  # (batch base offset, key, value)


class LoadedRecord(NamedTuple):
    """A record as `load_batches` reads it, with what its batch says of it (a transactional
    offset commit, for one, is pending until its producer's COMMIT or ABORT control record)."""

    batch_offset: int  # the base offset of the batch holding it
    key: bytes | None
    value: bytes | None
    producer_id: int = -1
    producer_epoch: int = -1
    is_transactional: bool = False
    is_control: bool = False


class CoordinatorPartitionWriter:
    """Appends a coordinator's batches through the replica manager, like a producer's."""

    def __init__(self, replica_manager: ReplicaManager) -> None:
        self.replica_manager = replica_manager

    def is_leader(self, topic: str, partition: int) -> bool:
        replica = self.replica_manager.partitions.get((topic, partition))
        return replica is not None and replica.is_leader

    async def append(
        self,
        topic: str,
        partition: int,
        batch: bytearray,
        *,
        required_acks: int,
        timeout_ms: int,
        origin: str = COORDINATOR,
        verification_guard: object = None,
    ) -> tuple[ErrorCode, int]:
        """Append as the partition's leader; a transactional batch (TxnOffsetCommit) that
        starts the producer's transaction here needs the guard of
        `maybe_start_transaction_verification` while verification is on."""
        tp = (topic, partition)
        guards = {tp: verification_guard} if isinstance(verification_guard, VerificationGuard) else None
        results = await self.replica_manager.append_records(
            {tp: batch}, required_acks=required_acks, timeout_ms=timeout_ms, origin=origin, verification_guards=guards
        )
        return results[tp].error, results[tp].base_offset

    async def delete_records(self, topic: str, partition: int, before_offset: int) -> ErrorCode:
        """DeleteRecords as the partition's leader (Kafka's CoordinatorPartitionWriter.deleteRecords)."""
        try:
            self.replica_manager.delete_records(topic, partition, before_offset)
        except KafkaError as exc:
            return exc.code
        return ErrorCode.NONE

    async def maybe_start_transaction_verification(
        self,
        topic: str,
        partition: int,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        verifier: TxnVerifier | None,
    ) -> tuple[ErrorCode, VerificationGuard]:
        """KIP-890 part 1 for a coordinator's transactional append (Kafka's
        CoordinatorPartitionWriter.maybeStartTransactionVerification): (the coordinator's error,
        the guard to append with)."""
        return await self.replica_manager.maybe_start_transaction_verification_for_partition(
            (topic, partition), transactional_id, producer_id, producer_epoch, verifier
        )


class CoordinatorLogLoader:
    """Reads a partition of an internal topic from its log start to its log end in a worker
    thread, `buffer_size` bytes at a time (`offsets.load.buffer.size`)."""

    def __init__(self, replica_manager: ReplicaManager, buffer_size: int) -> None:
        self.replica_manager = replica_manager
        self.buffer_size = buffer_size

    def is_empty(self, topic: str, partition: int) -> bool:
        replica = self.replica_manager.partitions.get((topic, partition))
        return replica is None or replica.log_end_offset == replica.log_start_offset

    async def load(self, topic: str, partition: int) -> list[Entry]:
        replica = self.replica_manager.partitions.get((topic, partition))
        if replica is None:
            return []
        return await anyio.to_thread.run_sync(read_entries, replica.log, self.buffer_size)

    async def load_batches(self, topic: str, partition: int) -> list[LoadedRecord]:
        replica = self.replica_manager.partitions.get((topic, partition))
        if replica is None:
            return []
        return await anyio.to_thread.run_sync(read_records, replica.log, self.buffer_size)


def read_entries(partition_log: Log, buffer_size: int) -> list[Entry]:
    """Every data record from the log start to the log end."""
    entries: list[Entry] = []
    for header, records in _read_batches(partition_log, buffer_size):
        if not header.is_control:
            entries += [(header.base_offset, r.key, r.value) for r in records]
    return entries


def read_records(partition_log: Log, buffer_size: int) -> list[LoadedRecord]:
    """Every record, control records included, from the log start to the log end."""
    return [
        LoadedRecord(
            header.base_offset,
            record.key,
            record.value,
            header.producer_id,
            header.producer_epoch,
            header.is_transactional,
            header.is_control,
        )
        for header, records in _read_batches(partition_log, buffer_size)
        for record in records
    ]


def _read_batches(partition_log: Log, buffer_size: int) -> list[tuple[BatchHeader, list[Record]]]:
    from ..records.records import iter_batches  # the records load with the first partition here

    batches: list[tuple[BatchHeader, list[Record]]] = []
    offset, end = partition_log.log_start_offset, partition_log.log_end_offset
    try:
        while offset < end:
            data = partition_log.read(offset, buffer_size, max_offset=end, min_one_message=True).read_bytes()
            next_offset = offset
            for header, records in iter_batches(data, allow_partial_tail=True):
                batches.append((header, records))
                next_offset = header.next_offset
            if next_offset == offset:
                break
            offset = next_offset
    except KafkaError as exc:  # e.g. the log start moved while reading
        log.error("Error loading %s-%d at offset %d: %s", partition_log.topic, partition_log.partition, offset, exc)
    return batches
