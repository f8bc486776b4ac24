"""How a coordinator keeps its state in an internal topic, as Kafka's coordinator-common does:
it appends record batches through a `PartitionWriter` and rebuilds its state through a
`CoordinatorLoader`. `replication/coordinator_partitions.py` implements both over the replica
manager; a coordinator never sees a partition or its log.

The group coordinator uses them for `__consumer_offsets` (`group/log_io.py`), loading with
`load_batches` since transactional offset commits stay pending until their transaction's marker;
the transaction coordinator uses them for `__transaction_state`, the share coordinator for
`__share_group_state`. `runtime_append_error` is the error Kafka 4's coordinator runtime answers
for a failed append (the share coordinator's and the share groups'; Kafka 3.9's classic group and
transaction coordinators keep their own conversions).
"""

from __future__ import annotations

from typing import Protocol

from ..protocol.errors import ErrorCode
from ..replication.coordinator_partitions import LoadedRecord

Entry = tuple[int, bytes | None, bytes | None]  # (batch base offset, key, value)

COORDINATOR_ORIGIN = "coordinator"  # the append origin of a coordinator's writes (log.producer_state)

__all__ = [
    "COORDINATOR_ORIGIN",
    "CoordinatorLoader",
    "Entry",
    "LoadedRecord",
    "PartitionWriter",
    "runtime_append_error",
]

_RUNTIME_APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.INVALID_FETCH_SIZE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


def runtime_append_error(error: ErrorCode) -> ErrorCode:
    """What Kafka 4's coordinator runtime answers for a failed append of a coordinator's records:
    COORDINATOR_NOT_AVAILABLE for UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND) and
    REQUEST_TIMED_OUT; NOT_COORDINATOR for NOT_LEADER_OR_FOLLOWER and KAFKA_STORAGE_ERROR;
    UNKNOWN_SERVER_ERROR for MESSAGE_TOO_LARGE, RECORD_LIST_TOO_LARGE and INVALID_FETCH_SIZE; any
    other error as it is."""
    return _RUNTIME_APPEND_ERRORS.get(error, error)


class PartitionWriter(Protocol):
    def is_leader(self, topic: str, partition: int) -> bool:
        """Whether this broker leads the partition now (and so may write and load it)."""
        ...

    async def append(
        self,
        topic: str,
        partition: int,
        batch: bytearray,
        *,
        required_acks: int,
        timeout_ms: int,
        origin: str = COORDINATOR_ORIGIN,
        verification_guard: object = None,
    ) -> tuple[ErrorCode, int]:
        """Append one record batch as the partition's leader: (error, base offset), once the
        append is acknowledged as `required_acks` asks (-1: by every in-sync replica). The
        `origin` is the log's (a coordinator's writes skip the checks of clients' sequences);
        a transactional batch that starts its producer's transaction on the partition needs the
        `verification_guard` its verification gave (KIP-890), while verification is on."""
        ...

    async def delete_records(self, topic: str, partition: int, before_offset: int) -> ErrorCode:
        """Delete the partition's records below `before_offset` (at most its high watermark), as
        the leader: the share coordinator prunes what no state needs any more."""
        ...


class CoordinatorLoader(Protocol):
    def is_empty(self, topic: str, partition: int) -> bool:
        """Whether there is nothing to load (no local replica, or an empty log)."""
        ...

    async def load(self, topic: str, partition: int) -> list[Entry]:
        """Every data record of the partition from its log start to its log end, read off the
        event loop; control batches are skipped."""
        ...

    async def load_batches(self, topic: str, partition: int) -> list[LoadedRecord]:
        """Every record of the partition from its log start to its log end, read off the event
        loop, control records included, each with its batch's producer and flags."""
        ...
