"""Writing transaction markers as partition leader (the partition side of WriteTxnMarkers).

    writer = TxnMarkerWriter(replica_manager)
    writer.on_offsets_marker = group_coordinator.complete_transaction   # set by broker.py
    errors = await writer.write_txn_markers([TxnMarker(pid, epoch, True, coordinator_epoch, (("t", 0),))])
    # [{("t", 0): ErrorCode.NONE}]

For each marker and each of its partitions a COMMIT or ABORT control batch (transactional, the
producer's id and epoch, the coordinator epoch in its value) is appended as Kafka's
KafkaApis.handleWriteTxnMarkersRequest does: origin coordinator (the log refuses a marker of
an older coordinator epoch than the last one it took with TRANSACTION_COORDINATOR_FENCED, and an
older producer epoch with INVALID_PRODUCER_EPOCH), acks=-1, waiting at most
`request.timeout.ms`. A partition with no local replica is UNKNOWN_TOPIC_OR_PARTITION; a local
replica that is not the leader, NOT_LEADER_OR_FOLLOWER. The append moves the last stable offset
once the marker is replicated, adds an aborted transaction to the segment's `.txnindex`, and
wakes the fetches waiting on the partition.

Once a marker is in a partition of `__consumer_offsets`, `on_offsets_marker(partition index,
producer id, committed, marker offset)` lets the group coordinator materialise or drop the
producer's pending transactional offsets; if it raises, the partition's answer is
UNKNOWN_SERVER_ERROR (as Kafka's, the marker stays written).

All markers of one call are appended first, in order, then their acknowledgements are awaited
together.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio

from ..common.topic_partition import TopicPartition
from ..log.append_origin import COORDINATOR
from ..protocol.errors import ErrorCode
from .replica_manager import ProduceResult, ReplicaManager

if TYPE_CHECKING:
    from ..common.txn_marker import TxnMarker

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"

OffsetsMarkerHook = Callable[[int, int, bool, int], None]


class TxnMarkerWriter:
    """The `TxnMarkerService` of this broker: markers for the partitions it leads."""

    def __init__(self, replica_manager: ReplicaManager) -> None:
        self.replica_manager = replica_manager
        self.on_offsets_marker: OffsetsMarkerHook | None = None

    async def write_txn_markers(self, markers: list[TxnMarker]) -> list[dict[TopicPartition, ErrorCode]]:
        """One dict per marker, in order: the error of each of its partitions."""
        answers: list[dict[TopicPartition, ErrorCode]] = [{} for _ in markers]
        appended: list[dict[TopicPartition, ProduceResult]] = []
        for marker, answer in zip(markers, answers):
            appended.append(self._append_locally(marker, answer))
        async with anyio.create_task_group() as tasks:
            for marker, results, answer in zip(markers, appended, answers):
                if results:
                    tasks.start_soon(self._complete, marker, results, answer)
        return [{tp: answer[tp] for tp in marker.partitions} for marker, answer in zip(markers, answers)]

    def _append_locally(self, marker: TxnMarker, answer: dict[TopicPartition, ErrorCode]) -> dict:
        """Append the marker to each partition hosted here; the others are answered now."""
        from ..records.control import build_end_txn_marker  # the records load with the first marker

        now = self.replica_manager.clock.now_ms()
        entries: dict[TopicPartition, bytearray] = {}
        for tp in marker.partitions:
            if tp not in self.replica_manager.partitions:
                answer[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            entries[tp] = bytearray(
                build_end_txn_marker(
                    marker.producer_id, marker.producer_epoch, marker.committed, marker.coordinator_epoch, timestamp=now
                )
            )
        if not entries:
            return {}
        return self.replica_manager.append_to_local_logs(entries, required_acks=-1, origin=COORDINATOR)

    async def _complete(
        self, marker: TxnMarker, results: dict[TopicPartition, ProduceResult], answer: dict[TopicPartition, ErrorCode]
    ) -> None:
        timeout_ms = int(self.replica_manager.config["request.timeout.ms"])
        await self.replica_manager.wait_for_acks(results, required_acks=-1, timeout_ms=timeout_ms)
        for tp, result in results.items():
            answer[tp] = result.error
            if result.error == ErrorCode.NONE and tp[0] == OFFSETS_TOPIC:
                answer[tp] = self._tell_group_coordinator(marker, tp[1], result.base_offset)

    def _tell_group_coordinator(self, marker: TxnMarker, partition: int, marker_offset: int) -> ErrorCode:
        if self.on_offsets_marker is None:
            return ErrorCode.NONE
        try:
            self.on_offsets_marker(partition, marker.producer_id, marker.committed, marker_offset)
        except Exception:
            log.exception("Received an exception while trying to update the offsets cache on transaction marker append")
            return ErrorCode.UNKNOWN_SERVER_ERROR
        return ErrorCode.NONE
