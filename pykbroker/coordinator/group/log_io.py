"""Reading and writing `__consumer_offsets` partitions for the group coordinator.

Writes go through a `PartitionWriter` (`coordinator/partition_io.py`) like a producer's, with the
coordinator's acks (`offsets.commit.required.acks`, -1: all in-sync replicas) and
`offsets.commit.timeout.ms`; the callback gets the append's error and base offset. Loading goes
through a `CoordinatorLoader`, which reads a partition from its log start to its log end off the
event loop and hands back every data record as (batch base offset, key, value); control batches
are skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...protocol.errors import ErrorCode
from ...records.records import build_batch
from ..partition_io import CoordinatorLoader, Entry, PartitionWriter
from .offsets_topic import OFFSETS_TOPIC

log = logging.getLogger(__name__)

AppendCallback = Callable[[ErrorCode, int], None]


class OffsetsTopicLog:
    def __init__(
        self, writer: PartitionWriter, loader: CoordinatorLoader, runtime, *, compression: int, timeout_ms: int
    ) -> None:
        self.writer = writer
        self.loader = loader
        self.runtime = runtime
        self.compression = compression
        self.timeout_ms = timeout_ms

    # -- writing -----------------------------------------------------------------------
    def append(
        self, partition: int, records: list[tuple[bytes, bytes | None]], callback: AppendCallback | None, *, acks: int
    ) -> None:
        now = self.runtime.now_ms()
        batch = bytearray(build_batch([(key, value, [], now) for key, value in records], compression=self.compression))
        self.runtime.spawn(self._append, partition, batch, acks, callback)

    async def _append(self, partition: int, batch: bytearray, acks: int, callback: AppendCallback | None) -> None:
        error, base_offset = await self.writer.append(
            OFFSETS_TOPIC, partition, batch, required_acks=acks, timeout_ms=self.timeout_ms
        )
        if error != ErrorCode.NONE:
            log.debug("Append to %s-%d failed: %s", OFFSETS_TOPIC, partition, error.name)
        if callback is not None:
            callback(error, base_offset)

    # -- loading -----------------------------------------------------------------------
    def is_leader(self, partition: int) -> bool:
        return self.writer.is_leader(OFFSETS_TOPIC, partition)

    def load(self, partition: int, callback: Callable[[list[Entry]], None]) -> None:
        """Read the partition and call `callback(entries)` on the event loop (at once when
        the partition is empty)."""
        if self.loader.is_empty(OFFSETS_TOPIC, partition):
            callback([])
            return
        self.runtime.spawn(self._load, partition, callback)

    async def _load(self, partition: int, callback: Callable[[list[Entry]], None]) -> None:
        callback(await self.loader.load(OFFSETS_TOPIC, partition))
