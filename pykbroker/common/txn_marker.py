"""A transaction marker: what the transaction coordinator asks a partition leader to write
(WriteTxnMarkers), one COMMIT or ABORT control batch per partition."""

from __future__ import annotations

from dataclasses import dataclass

from .topic_partition import TopicPartition


@dataclass(frozen=True)
class TxnMarker:
    producer_id: int
    producer_epoch: int
    committed: bool  # COMMIT (True) or ABORT (False)
    coordinator_epoch: int
    partitions: tuple[TopicPartition, ...]
