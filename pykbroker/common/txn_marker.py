"""A transaction marker as the transaction coordinator sends it to partition leaders.

One `TxnMarker` is one entry of a WriteTxnMarkers request: the producer whose transaction ended,
whether it committed, the coordinator epoch that decided it (a leader refuses markers of an
older epoch with TRANSACTION_COORDINATOR_FENCED), and the partitions that get a COMMIT or ABORT
control batch. The transaction coordinator builds them, the partition side
(`replication/txn_markers.py`) writes them.
"""

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
