"""The Persister: how the broker reads and writes the durable state of share-partitions.

Kafka's `Persister` (server-common `share/persister/`). The group coordinator initializes and
deletes a share-partition's state; the share-partition leader reads it when it starts serving the
partition and writes it as records are acknowledged. `DefaultStatePersister`
(`default_persister.py`) reaches the share coordinator of the key, here or on another broker;
`InMemorySharePersister` keeps the same state machine in memory, for tests and for a broker
without `__share_group_state`.

Start offset -1 means "not yet chosen": the share-partition leader then picks it from the group's
`share.auto.offset.reset` and writes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Protocol

from ...protocol.errors import ErrorCode
from .combiner import PersisterStateBatch
from .shard import ShareCoordinatorShard, SharePartitionKey
from .state import DEFAULT_LEADER_EPOCH, DEFAULT_STATE_EPOCH, UNINITIALIZED_START_OFFSET, ShareState

__all__ = [
    "InMemorySharePersister",
    "PersisterStateBatch",
    "SharePersister",
    "ShareState",
    "UNINITIALIZED_START_OFFSET",
    "DEFAULT_STATE_EPOCH",
    "DEFAULT_LEADER_EPOCH",
]


class SharePersister(Protocol):
    async def initialize_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> ErrorCode: ...

    async def read_state(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState: ...

    async def write_state(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[PersisterStateBatch],
    ) -> ErrorCode: ...

    async def read_summary(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> ShareState: ...

    async def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode: ...


class InMemorySharePersister:
    """A `SharePersister` over one in-memory shard: the share coordinator's checks and merging
    of batches, with records replayed at once instead of written to `__share_group_state`.

    `partition_exists(topic_id, partition)` answers UNKNOWN_TOPIC_OR_PARTITION as the share
    coordinator does from the metadata; by default every partition exists."""

    def __init__(
        self,
        records_per_snapshot: int = 500,
        partition_exists: Callable[[uuid.UUID, int], bool] = lambda topic_id, partition: True,
        now_ms: Callable[[], int] = lambda: 0,
    ) -> None:
        self.shard = ShareCoordinatorShard(records_per_snapshot, partition_exists, now_ms)

    def _apply(self, records: Sequence[object]) -> None:
        for record in records:
            self.shard.replay(record)  # type: ignore[arg-type]

    async def initialize_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> ErrorCode:
        records, result = self.shard.initialize_state(
            SharePartitionKey(group_id, topic_id, partition), state_epoch, start_offset
        )
        self._apply(records)
        return result.error

    async def read_state(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState:
        records, state = self.shard.read_state(SharePartitionKey(group_id, topic_id, partition), leader_epoch)
        self._apply(records)
        return state

    async def write_state(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[PersisterStateBatch],
    ) -> ErrorCode:
        key = SharePartitionKey(group_id, topic_id, partition)
        records, result = self.shard.write_state(key, state_epoch, leader_epoch, start_offset, batches)
        self._apply(records)
        return result.error

    async def read_summary(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState:
        return self.shard.read_summary(SharePartitionKey(group_id, topic_id, partition), leader_epoch)

    async def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode:
        records, result = self.shard.delete_state(SharePartitionKey(group_id, topic_id, partition))
        self._apply(records)
        return result.error
