"""The persister of share-partition state: what the share-partition leader reads when it starts
leading a share partition and writes after every change of its in-flight records.

Kafka's `Persister` (server-common), backed by the share coordinator and `__share_group_state`.
Batches carry Kafka's RecordState codes (0 available, 2 acknowledged, 4 archived).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ...protocol.errors import ErrorCode


@dataclass(frozen=True)
class PersisterStateBatch:
    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclass(frozen=True)
class ShareState:
    error: ErrorCode
    state_epoch: int
    start_offset: int
    leader_epoch: int
    batches: tuple[PersisterStateBatch, ...]


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
