"""Reading and writing `__consumer_offsets` partitions for the group coordinator.

Writes go through a `PartitionWriter` (`coordinator/partition_io.py`) with the coordinator's
origin and acks (`offsets.commit.required.acks`, -1: all in-sync replicas) and
`offsets.commit.timeout.ms`; the callback gets the append's error and base offset. A
transactional offset commit is written as Kafka does: one transactional batch carrying the
producer's id and epoch (base sequence 0, which the log does not check for a coordinator's
writes). Loading goes through a `CoordinatorLoader`, which reads a partition from its log start to
its log end off the event loop and hands back every record, control records included, with its
batch's base offset, producer and flags (`LoadedRecord`).

The coordinator's collaborators see `OffsetsLog`, the interface `OffsetsTopicLog` implements
(tests give them an in-memory one).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ...protocol.errors import ErrorCode
from ...records.records import RecordLike, build_batch
from ..partition_io import COORDINATOR_ORIGIN, CoordinatorLoader, LoadedRecord, PartitionWriter
from ..runtime import LoopRuntime
from .offsets_topic import OFFSETS_TOPIC

log = logging.getLogger(__name__)

AppendCallback = Callable[[ErrorCode, int], None]  # (the append's error, its base offset)
LoadCallback = Callable[[list[LoadedRecord]], None]
Records = list[tuple[bytes, bytes | None]]  # (key, value); a None value is a tombstone


@dataclass(frozen=True)
class TxnProducer:
    """The transactional producer a transactional offset commit is written for."""

    producer_id: int
    producer_epoch: int
    verification_guard: object = None  # what the verification of the group's partition gave (KIP-890)


class OffsetsLog(Protocol):
    """Appending to and loading the partitions of `__consumer_offsets`, answering callbacks on
    the event loop."""

    def append(
        self,
        partition: int,
        records: Records,
        callback: AppendCallback | None,
        *,
        acks: int,
        producer: TxnProducer | None = None,
    ) -> None: ...

    def is_leader(self, partition: int) -> bool: ...

    def load(self, partition: int, callback: LoadCallback) -> None: ...


class OffsetsTopicLog:
    def __init__(
        self,
        writer: PartitionWriter,
        loader: CoordinatorLoader,
        runtime: LoopRuntime,
        *,
        compression: int,
        timeout_ms: int,
    ) -> None:
        self.writer = writer
        self.loader = loader
        self.runtime = runtime
        self.compression = compression
        self.timeout_ms = timeout_ms

    # -- writing -----------------------------------------------------------------------
    def append(
        self,
        partition: int,
        records: Records,
        callback: AppendCallback | None,
        *,
        acks: int,
        producer: TxnProducer | None = None,
    ) -> None:
        """Append `records` as one batch; with `producer`, a transactional batch of that
        producer (a transactional offset commit)."""
        now = self.runtime.now_ms()
        items: list[RecordLike] = [(key, value, [], now) for key, value in records]
        if producer is None:
            batch = bytearray(build_batch(items, compression=self.compression))
        else:
            batch = bytearray(
                build_batch(
                    items,
                    compression=self.compression,
                    producer_id=producer.producer_id,
                    producer_epoch=producer.producer_epoch,
                    base_sequence=0,
                    is_transactional=True,
                )
            )
        guard = None if producer is None else producer.verification_guard
        self.runtime.spawn(self._append, partition, batch, acks, callback, guard)

    async def _append(
        self, partition: int, batch: bytearray, acks: int, callback: AppendCallback | None, guard: object = None
    ) -> None:
        error, base_offset = await self.writer.append(
            OFFSETS_TOPIC,
            partition,
            batch,
            required_acks=acks,
            timeout_ms=self.timeout_ms,
            origin=COORDINATOR_ORIGIN,
            verification_guard=guard,
        )
        if error != ErrorCode.NONE:
            log.debug("Append to %s-%d failed: %s", OFFSETS_TOPIC, partition, error.name)
        if callback is not None:
            callback(error, base_offset)

    # -- loading -----------------------------------------------------------------------
    def is_leader(self, partition: int) -> bool:
        return self.writer.is_leader(OFFSETS_TOPIC, partition)

    def load(self, partition: int, callback: LoadCallback) -> None:
        """Read the partition and call `callback(records)` on the event loop (at once when
        the partition is empty)."""
        if self.loader.is_empty(OFFSETS_TOPIC, partition):
            callback([])
            return
        self.runtime.spawn(self._load, partition, callback)

    async def _load(self, partition: int, callback: LoadCallback) -> None:
        callback(await self.loader.load_batches(OFFSETS_TOPIC, partition))
