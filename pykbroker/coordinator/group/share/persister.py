"""How the share group coordinator reaches share-partition state: the share persister
(`coordinator/share/persister.py`, the share coordinator's `SharePersister`), seen here through
the part of its interface the group side calls.

`InMemorySharePersister` keeps the state in memory: a stand-in for a broker built without the
share coordinator, and the fake the tests use.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Protocol

from ....protocol.errors import ErrorCode


class StateSummary(Protocol):
    @property
    def error(self) -> ErrorCode: ...
    @property
    def state_epoch(self) -> int: ...
    @property
    def start_offset(self) -> int: ...
    @property
    def leader_epoch(self) -> int: ...


class SharePersister(Protocol):
    async def initialize_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> ErrorCode: ...

    async def read_summary(
        self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int
    ) -> StateSummary: ...

    async def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode: ...


@dataclass(frozen=True)
class Summary:
    error: ErrorCode
    state_epoch: int = 0
    start_offset: int = -1
    leader_epoch: int = 0


class InMemorySharePersister:
    """Share-partition state in memory: (group, topic id, partition) -> (state epoch, start offset)."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, uuid.UUID, int], tuple[int, int]] = {}

    async def initialize_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> ErrorCode:
        current = self.states.get((group_id, topic_id, partition))
        if current is not None and current[0] > state_epoch:
            return ErrorCode.FENCED_STATE_EPOCH
        self.states[(group_id, topic_id, partition)] = (state_epoch, start_offset)
        return ErrorCode.NONE

    async def read_summary(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> Summary:
        state = self.states.get((group_id, topic_id, partition))
        if state is None:
            return Summary(ErrorCode.NONE, 0, -1, 0)
        return Summary(ErrorCode.NONE, state[0], state[1], 0)

    async def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode:
        self.states.pop((group_id, topic_id, partition), None)
        return ErrorCode.NONE
