"""How a coordinator keeps its state in an internal topic, as Kafka's coordinator-common does:
it appends record batches through a `PartitionWriter` and rebuilds its state through a
`CoordinatorLoader`. `replication/coordinator_partitions.py` implements both over the replica
manager; a coordinator never sees a partition or its log.

The group coordinator uses them for `__consumer_offsets` (`group/log_io.py`); the transaction
coordinator will use them for `__transaction_state`.
"""

from __future__ import annotations

from typing import Protocol

from ..protocol.errors import ErrorCode

Entry = tuple[int, bytes | None, bytes | None]  # (batch base offset, key, value)


class PartitionWriter(Protocol):
    def is_leader(self, topic: str, partition: int) -> bool:
        """Whether this broker leads the partition now (and so may write and load it)."""
        ...

    async def append(
        self, topic: str, partition: int, batch: bytearray, *, required_acks: int, timeout_ms: int
    ) -> tuple[ErrorCode, int]:
        """Append one record batch as the partition's leader: (error, base offset), once the
        append is acknowledged as `required_acks` asks (-1: by every in-sync replica)."""
        ...


class CoordinatorLoader(Protocol):
    def is_empty(self, topic: str, partition: int) -> bool:
        """Whether there is nothing to load (no local replica, or an empty log)."""
        ...

    async def load(self, topic: str, partition: int) -> list[Entry]:
        """Every data record of the partition from its log start to its log end, read off the
        event loop; control batches are skipped."""
        ...
