"""What a read of a share-partition's durable state answers: `ShareState`, with Kafka's defaults
for a state never written (PartitionFactory's constants)."""

from __future__ import annotations

from dataclasses import dataclass

from ...protocol.errors import ErrorCode
from .combiner import PersisterStateBatch

UNINITIALIZED_START_OFFSET = -1  # Kafka's PartitionFactory constants
DEFAULT_STATE_EPOCH = 0
DEFAULT_LEADER_EPOCH = -1


@dataclass(frozen=True)
class ShareState:
    """The answer to a read: an error, or the share-partition's state (batches empty in a summary)."""

    error: ErrorCode
    state_epoch: int = DEFAULT_STATE_EPOCH
    start_offset: int = UNINITIALIZED_START_OFFSET
    leader_epoch: int = DEFAULT_LEADER_EPOCH
    batches: tuple[PersisterStateBatch, ...] = ()
    error_message: str | None = None
