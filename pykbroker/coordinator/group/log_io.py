"""Reading and writing `__consumer_offsets` partitions for the group coordinator.

Writes go through the replica manager like a producer's, with the coordinator's acks
(`offsets.commit.required.acks`, -1: all in-sync replicas) and `offsets.commit.timeout.ms`;
the callback gets the append's error and base offset. Loading reads a partition from its log
start to its log end in a worker thread and hands back every data record as
(batch base offset, key, value); control batches are skipped.
"""
from __future__ import annotations

import logging
from typing import Callable

import anyio.to_thread

from ...protocol.errors import ErrorCode, KafkaError
from ...records.records import build_batch, iter_batches
from .offsets_topic import OFFSETS_TOPIC

log = logging.getLogger(__name__)

Entry = tuple[int, bytes | None, bytes | None]  # (batch base offset, key, value)
AppendCallback = Callable[[ErrorCode, int], None]


class OffsetsTopicLog:
    def __init__(self, replica_manager, runtime, *, compression: int, timeout_ms: int,
                 load_buffer_size: int) -> None:
        self.replica_manager = replica_manager
        self.runtime = runtime
        self.compression = compression
        self.timeout_ms = timeout_ms
        self.load_buffer_size = load_buffer_size

    # -- writing -----------------------------------------------------------------------
    def append(self, partition: int, records: list[tuple[bytes, bytes | None]],
               callback: AppendCallback | None, *, acks: int) -> None:
        now = self.runtime.now_ms()
        batch = bytearray(build_batch([(key, value, [], now) for key, value in records],
                                      compression=self.compression))
        self.runtime.spawn(self._append, partition, batch, acks, callback)

    async def _append(self, partition: int, batch: bytearray, acks: int,
                      callback: AppendCallback | None) -> None:
        tp = (OFFSETS_TOPIC, partition)
        results = await self.replica_manager.append_records(
            {tp: batch}, required_acks=acks, timeout_ms=self.timeout_ms)
        result = results[tp]
        if result.error != ErrorCode.NONE:
            log.debug("Append to %s-%d failed: %s", OFFSETS_TOPIC, partition, result.error.name)
        if callback is not None:
            callback(ErrorCode(result.error), result.base_offset)

    # -- loading -----------------------------------------------------------------------
    def is_leader(self, partition: int) -> bool:
        replica = self.replica_manager.partitions.get((OFFSETS_TOPIC, partition))
        return replica is not None and replica.is_leader

    def load(self, partition: int, callback: Callable[[list[Entry]], None]) -> None:
        """Read the partition and call `callback(entries)` on the event loop (at once when
        the partition is empty)."""
        replica = self.replica_manager.partitions.get((OFFSETS_TOPIC, partition))
        if replica is None or replica.log_end_offset == replica.log_start_offset:
            callback([])
            return
        self.runtime.spawn(self._load, replica.log, callback)

    async def _load(self, partition_log, callback: Callable[[list[Entry]], None]) -> None:
        entries = await anyio.to_thread.run_sync(read_entries, partition_log,
                                                 self.load_buffer_size)
        callback(entries)


def read_entries(partition_log, buffer_size: int) -> list[Entry]:
    """Every data record from the log start to the log end."""
    entries: list[Entry] = []
    offset, end = partition_log.log_start_offset, partition_log.log_end_offset
    try:
        while offset < end:
            data = partition_log.read(offset, buffer_size, max_offset=end,
                                      min_one_message=True).read_bytes()
            next_offset = offset
            for header, records in iter_batches(data, allow_partial_tail=True):
                if not header.is_control:
                    entries += [(header.base_offset, r.key, r.value) for r in records]
                next_offset = header.next_offset
            if next_offset == offset:
                break
            offset = next_offset
    except KafkaError as exc:  # e.g. the log start moved while reading
        log.error("Error loading %s-%d at offset %d: %s", OFFSETS_TOPIC,
                  partition_log.partition, offset, exc)
    return entries
