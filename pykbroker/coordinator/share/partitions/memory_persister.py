"""A share persister that keeps state in memory: for tests, and for a broker whose share
coordinator is not there. State written is merged as the share coordinator merges a ShareUpdate
into its snapshot (batches below the start offset go; newer batches replace the offsets they
cover), and a leader epoch older than the last one written is fenced."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from ....protocol.errors import ErrorCode
from ..persister import PersisterStateBatch, ShareState

Key = tuple[str, uuid.UUID, int]
UNINITIALIZED_START_OFFSET = -1


@dataclass
class _Stored:
    state_epoch: int = 0
    start_offset: int = UNINITIALIZED_START_OFFSET
    leader_epoch: int = -1
    offsets: dict[int, tuple[int, int]] = field(default_factory=dict)  # offset -> (state, delivery count)


class InMemorySharePersister:
    """`SharePersister` in memory. A partition never initialized reads as start offset -1."""

    def __init__(self) -> None:
        self.states: dict[Key, _Stored] = {}
        self.writes = 0  # how many write_state calls succeeded

    async def initialize_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> ErrorCode:
        self.states[(group_id, topic_id, partition)] = _Stored(state_epoch, start_offset)
        return ErrorCode.NONE

    async def read_state(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState:
        stored = self.states.setdefault((group_id, topic_id, partition), _Stored())
        if leader_epoch < stored.leader_epoch:
            return ShareState(ErrorCode.FENCED_LEADER_EPOCH, stored.state_epoch, -1, stored.leader_epoch, ())
        stored.leader_epoch = leader_epoch
        return ShareState(
            ErrorCode.NONE, stored.state_epoch, stored.start_offset, leader_epoch, _batches(stored.offsets)
        )

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
        stored = self.states.setdefault((group_id, topic_id, partition), _Stored())
        if state_epoch < stored.state_epoch:
            return ErrorCode.FENCED_STATE_EPOCH
        if leader_epoch < stored.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        stored.leader_epoch = leader_epoch
        if start_offset >= 0:
            stored.start_offset = start_offset
        for batch in batches:
            for offset in range(batch.first_offset, batch.last_offset + 1):
                stored.offsets[offset] = (batch.delivery_state, batch.delivery_count)
        stored.offsets = {o: s for o, s in stored.offsets.items() if o >= stored.start_offset}
        self.writes += 1
        return ErrorCode.NONE

    async def read_summary(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState:
        stored = self.states.get((group_id, topic_id, partition))
        if stored is None:
            return ShareState(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0, -1, -1, ())
        return ShareState(ErrorCode.NONE, stored.state_epoch, stored.start_offset, stored.leader_epoch, ())

    async def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode:
        self.states.pop((group_id, topic_id, partition), None)
        return ErrorCode.NONE


def _batches(offsets: dict[int, tuple[int, int]]) -> tuple[PersisterStateBatch, ...]:
    """Consecutive offsets with the same state and delivery count, as one batch each."""
    batches: list[PersisterStateBatch] = []
    for offset in sorted(offsets):
        state, count = offsets[offset]
        last = batches[-1] if batches else None
        if (
            last is not None
            and last.last_offset == offset - 1
            and (last.delivery_state, last.delivery_count)
            == (
                state,
                count,
            )
        ):
            batches[-1] = PersisterStateBatch(last.first_offset, offset, state, count)
        else:
            batches.append(PersisterStateBatch(offset, offset, state, count))
    return tuple(batches)
