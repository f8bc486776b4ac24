"""One share partition: the in-flight records of a topic partition for one share group, held by
the partition's leader (Kafka's `SharePartition`).

Records between the start offset and the end offset are in flight, each in a `RecordState`:
a fetch acquires available records (and new ones past the end offset) for a member for the
record lock duration; the member accepts, releases or rejects them, or its lock expires and they
are available again with their delivery count kept, until the delivery count limit archives
them. The start offset moves over records acknowledged or archived. At most
`max_in_flight_records` lie between start and end offsets: beyond that only records already in
flight are acquired again.

State is read from the persister when the partition is first used (start offset -1: chosen from
the group's `share.auto.offset.reset`) and written after every change, before an acknowledgement
is answered; acquired records are written as available, so that a new leader delivers them again.
Everything runs on the broker's event loop; lock expiry is a task on the broker's timer.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field

import anyio

from ....common.timer import Timer, TimerTask
from ....protocol.errors import ErrorCode
from ..persister import PersisterStateBatch, SharePersister
from .states import (
    AcknowledgementBatch,
    AcknowledgeType,
    AcquiredRange,
    FetchedBatch,
    RecordState,
    ShareSettings,
)

log = logging.getLogger(__name__)

UNINITIALIZED_START_OFFSET = -1
_FINISHED = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)
# acknowledgement type -> the state it leaves a record in (RELEASE: available, or archived at the limit)
_ACKNOWLEDGED_STATE = {
    AcknowledgeType.GAP: RecordState.ARCHIVED,
    AcknowledgeType.ACCEPT: RecordState.ACKNOWLEDGED,
    AcknowledgeType.REJECT: RecordState.ARCHIVED,
}
# what the persister answers -> what the share partition answers its clients (Kafka's SharePartition)
_PERSISTER_ERRORS = {
    ErrorCode.NOT_COORDINATOR: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_NOT_AVAILABLE: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.GROUP_ID_NOT_FOUND: ErrorCode.GROUP_ID_NOT_FOUND,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.FENCED_LEADER_EPOCH: ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.FENCED_STATE_EPOCH: ErrorCode.FENCED_STATE_EPOCH,
}
_FENCING_ERRORS = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_STATE_EPOCH)


class AcquisitionLock:
    """The lock of one acquisition: its offsets return to available when `task` fires."""

    __slots__ = ("offsets", "held", "task")

    def __init__(self) -> None:
        self.offsets: list[int] = []
        self.held = 0  # offsets of `offsets` still acquired under this lock
        self.task: TimerTask | None = None


@dataclass(slots=True)
class InFlightRecord:
    state: RecordState
    delivery_count: int
    member_id: str | None = None
    lock: AcquisitionLock | None = field(default=None, repr=False)


def _persister_error(error: int) -> ErrorCode:
    if error == ErrorCode.NONE:
        return ErrorCode.NONE
    return _PERSISTER_ERRORS.get(ErrorCode(error), ErrorCode.UNKNOWN_SERVER_ERROR)


class SharePartition:
    def __init__(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        topic: str,
        index: int,
        *,
        persister: SharePersister,
        timer: Timer,
        settings: Callable[[], ShareSettings],
        spawn: Callable[[Callable[[], Awaitable[object]]], None],
        on_records_available: Callable[[], None] = lambda: None,
    ) -> None:
        self.group_id = group_id
        self.topic_id = topic_id
        self.topic = topic
        self.index = index
        self.persister = persister
        self.timer = timer
        self.settings = settings
        self._spawn = spawn
        self._on_records_available = on_records_available
        self.start_offset = 0
        self.end_offset = 0  # one past the last offset in flight
        self.records: dict[int, InFlightRecord] = {}  # in offset order: offsets only ever grow
        self.state_epoch = 0
        self.leader_epoch = -1
        self.load_error = ErrorCode.NONE
        self.fenced = False  # the persister fenced this leader: the partition must be dropped
        self._loaded: anyio.Event | None = None

    # -- loading ------------------------------------------------------------------------
    async def maybe_initialize(self, leader_epoch: int, reset_offset: Callable[[str], int]) -> ErrorCode:
        """Read the state from the persister on first use (the others wait for it). A start
        offset of -1 is chosen with `reset_offset(share.auto.offset.reset)` and written."""
        if self._loaded is not None:
            await self._loaded.wait()
            return self.load_error
        self._loaded = anyio.Event()
        try:
            self.load_error = await self._load(leader_epoch, reset_offset)
        except Exception:
            log.exception("Loading share partition %s-%d of group %s failed", self.topic, self.index, self.group_id)
            self.load_error = ErrorCode.UNKNOWN_SERVER_ERROR
        finally:
            self._loaded.set()
        if self.load_error in _FENCING_ERRORS:
            self.fenced = True
        return self.load_error

    @property
    def loaded(self) -> bool:
        return self._loaded is not None and self._loaded.is_set() and self.load_error == ErrorCode.NONE

    async def _load(self, leader_epoch: int, reset_offset: Callable[[str], int]) -> ErrorCode:
        state = await self.persister.read_state(self.group_id, self.topic_id, self.index, leader_epoch)
        if state.error != ErrorCode.NONE:
            return _persister_error(state.error)
        self.state_epoch = state.state_epoch
        self.leader_epoch = leader_epoch
        if state.start_offset == UNINITIALIZED_START_OFFSET:
            start = reset_offset(self.settings().auto_offset_reset)
            self.start_offset = self.end_offset = start
            return await self._write(start, [])
        self.start_offset = self.end_offset = state.start_offset
        for batch in state.batches:
            self._restore(batch)
        self.start_offset = self._next_start()
        self._forget_below(self.start_offset)
        return ErrorCode.NONE

    def _restore(self, batch: PersisterStateBatch) -> None:
        """Persisted records in flight; acquired ones (a leader that stopped) are available."""
        state = RecordState(batch.delivery_state)
        if state is RecordState.ACQUIRED:
            state = RecordState.AVAILABLE
        for offset in range(max(batch.first_offset, self.start_offset), batch.last_offset + 1):
            self.records[offset] = InFlightRecord(state, batch.delivery_count)
        self.end_offset = max(self.end_offset, batch.last_offset + 1)

    # -- acquisition ----------------------------------------------------------------------
    def next_fetch_offset(self) -> int:
        """Where a fetch reads from: the first available record in flight, else the end offset."""
        for offset, record in self.records.items():
            if record.state is RecordState.AVAILABLE:
                return offset
        return self.end_offset

    def can_acquire(self, readable_end: int) -> bool:
        """Whether a fetch could acquire something now, the log being readable up to `readable_end`."""
        if any(record.state is RecordState.AVAILABLE for record in self.records.values()):
            return True
        return self.end_offset < readable_end and self._in_flight() < self.settings().max_in_flight_records

    def _in_flight(self) -> int:
        return self.end_offset - self.start_offset

    def acquire(
        self,
        member_id: str,
        batches: Iterable[FetchedBatch],
        max_records: int,
        aborted: frozenset[int] = frozenset(),
    ) -> list[AcquiredRange]:
        """Acquire for `member_id` what the batches read hold that is available or new, whole
        batches at a time, until `max_records` (<= 0: no limit). Records of the batches whose
        first offset is in `aborted` (aborted transactions, read_committed) are archived."""
        settings = self.settings()
        limit = max_records if max_records > 0 else 2**62
        lock = AcquisitionLock()
        acquired: list[tuple[int, int]] = []  # (offset, delivery count)
        for batch in batches:
            if len(acquired) >= limit:
                break
            first = max(batch.first_offset, self.start_offset)
            is_aborted = batch.first_offset in aborted
            for offset in range(first, min(batch.last_offset + 1, self.end_offset)):
                record = self.records.get(offset)
                if record is not None and record.state is RecordState.AVAILABLE:
                    self._acquire_record(offset, record, member_id, lock, settings, acquired, is_aborted)
            if batch.last_offset < self.end_offset:
                continue
            if self._in_flight() >= settings.max_in_flight_records:
                break
            for offset in range(max(first, self.end_offset), batch.last_offset + 1):
                record = self.records[offset] = InFlightRecord(RecordState.AVAILABLE, 0)
                self._acquire_record(offset, record, member_id, lock, settings, acquired, is_aborted)
            self.end_offset = batch.last_offset + 1
        if lock.held:
            lock.task = self.timer.schedule(settings.record_lock_duration_ms, lambda: self._expire(lock))
        if aborted:
            self._write_in_background()
        return _ranges(acquired)

    def _acquire_record(
        self,
        offset: int,
        record: InFlightRecord,
        member_id: str,
        lock: AcquisitionLock,
        settings: ShareSettings,
        acquired: list[tuple[int, int]],
        is_aborted: bool,
    ) -> None:
        if is_aborted or record.delivery_count >= settings.delivery_count_limit:
            record.state = RecordState.ARCHIVED
            return
        record.state = RecordState.ACQUIRED
        record.delivery_count += 1
        record.member_id = member_id
        record.lock = lock
        lock.offsets.append(offset)
        lock.held += 1
        acquired.append((offset, record.delivery_count))

    # -- acknowledgement -----------------------------------------------------------------
    async def acknowledge(self, member_id: str, batches: Sequence[AcknowledgementBatch]) -> ErrorCode:
        """Apply a member's acknowledgements (all or none: INVALID_RECORD_STATE when a record is
        not acquired by it) and write the state before answering; a failed write gives the
        records back as available and answers the persister's error."""
        if not self._held_by(member_id, batches):
            return ErrorCode.INVALID_RECORD_STATE
        settings = self.settings()
        changed: list[tuple[int, InFlightRecord, RecordState]] = []
        for batch in batches:
            for offset, kind in _offset_types(batch):
                record = self.records.get(offset)
                if record is None:  # a gap: no record at this offset
                    continue
                self._unlock(record)
                record.state = self._acknowledged_state(AcknowledgeType(kind), record, settings)
                changed.append((offset, record, record.state))
        error = await self._write(self._next_start(), self._persisted_batches())
        if error != ErrorCode.NONE:
            self._give_back(changed)
            return error
        self._advance_start()
        if any(state is RecordState.AVAILABLE for _, _, state in changed):
            self._on_records_available()
        return ErrorCode.NONE

    def _held_by(self, member_id: str, batches: Sequence[AcknowledgementBatch]) -> bool:
        """Whether every offset acknowledged (gaps aside) is in flight, acquired by `member_id`."""
        for batch in batches:
            if batch.first_offset < self.start_offset or batch.last_offset >= self.end_offset:
                return False
            for offset, kind in _offset_types(batch):
                record = self.records.get(offset)
                if record is None:
                    if kind != AcknowledgeType.GAP:
                        return False
                    continue
                if record.state is not RecordState.ACQUIRED or record.member_id != member_id:
                    return False
        return True

    def _acknowledged_state(
        self, kind: AcknowledgeType, record: InFlightRecord, settings: ShareSettings
    ) -> RecordState:
        if kind is AcknowledgeType.RELEASE:
            return self._released_state(record, settings)
        return _ACKNOWLEDGED_STATE[kind]

    @staticmethod
    def _released_state(record: InFlightRecord, settings: ShareSettings) -> RecordState:
        """Available again, unless the record reached the delivery count limit: archived."""
        if record.delivery_count >= settings.delivery_count_limit:
            return RecordState.ARCHIVED
        return RecordState.AVAILABLE

    def _give_back(self, changed: list[tuple[int, InFlightRecord, RecordState]]) -> None:
        """Acknowledgements that could not be written: their records are available again (still
        delivered as many times), so that they are delivered once more."""
        for offset, record, state in changed:
            if self.records.get(offset) is record and record.state is state:
                record.state = RecordState.AVAILABLE
                record.member_id = None
        self._on_records_available()

    # -- releasing ------------------------------------------------------------------------
    def _expire(self, lock: AcquisitionLock) -> None:
        """The acquisition lock's time is up: what is still acquired under it is released."""
        lock.task = None
        if self._release_where(lambda record: record.lock is lock, lock.offsets):
            self._write_in_background()

    async def release_member(self, member_id: str) -> ErrorCode:
        """A member left: the records it holds are released (and the state written)."""
        offsets = [offset for offset, record in self.records.items() if record.member_id == member_id]
        if not self._release_where(lambda record: record.member_id == member_id, offsets):
            return ErrorCode.NONE
        error = await self._write(self._next_start(), self._persisted_batches())
        if error == ErrorCode.NONE:
            self._advance_start()
        return error

    def _release_where(self, holds: Callable[[InFlightRecord], bool], offsets: Iterable[int]) -> bool:
        settings = self.settings()
        released = False
        for offset in offsets:
            record = self.records.get(offset)
            if record is None or record.state is not RecordState.ACQUIRED or not holds(record):
                continue
            self._unlock(record)
            record.state = self._released_state(record, settings)
            released = True
        if released:
            self._on_records_available()
        return released

    def _unlock(self, record: InFlightRecord) -> None:
        lock, record.lock, record.member_id = record.lock, None, None
        if lock is None:
            return
        lock.held -= 1
        if lock.held <= 0 and lock.task is not None:
            lock.task.cancel()
            lock.task = None

    def skip_to(self, offset: int) -> None:
        """The log starts at `offset` now (retention, DeleteRecords): what lay below is archived."""
        if offset <= self.start_offset:
            return
        for record_offset, record in self.records.items():
            if record_offset < offset and record.state is not RecordState.ARCHIVED:
                self._unlock(record)
                record.state = RecordState.ARCHIVED
        self.end_offset = max(self.end_offset, offset)
        self._advance_start()
        self._write_in_background()

    def close(self) -> None:
        """This broker stops leading the partition: no lock fires any more."""
        for record in self.records.values():
            if record.lock is not None and record.lock.task is not None:
                record.lock.task.cancel()
                record.lock.task = None

    # -- start offset and persistence ----------------------------------------------------
    def _next_start(self) -> int:
        """The first offset from the start offset on that is still to be delivered or acknowledged."""
        offset = self.start_offset
        while offset < self.end_offset:
            record = self.records.get(offset)
            if record is not None and record.state not in _FINISHED:
                break
            offset += 1
        return offset

    def _advance_start(self) -> None:
        start = self._next_start()
        self._forget_below(start)
        self.start_offset = start

    def _forget_below(self, start: int) -> None:
        if self.records and next(iter(self.records)) < start:
            self.records = {offset: record for offset, record in self.records.items() if offset >= start}

    def _persisted_batches(self) -> list[PersisterStateBatch]:
        """The records in flight as the persister keeps them: acquired ones as available."""
        batches: list[PersisterStateBatch] = []
        start = self._next_start()
        for offset, record in self.records.items():
            if offset < start:
                continue
            state = RecordState.AVAILABLE if record.state is RecordState.ACQUIRED else record.state
            last = batches[-1] if batches else None
            if (
                last is not None
                and last.last_offset == offset - 1
                and last.delivery_state == state
                and last.delivery_count == record.delivery_count
            ):
                batches[-1] = PersisterStateBatch(last.first_offset, offset, int(state), record.delivery_count)
            else:
                batches.append(PersisterStateBatch(offset, offset, int(state), record.delivery_count))
        return batches

    async def _write(self, start_offset: int, batches: Sequence[PersisterStateBatch]) -> ErrorCode:
        try:
            error = await self.persister.write_state(
                self.group_id, self.topic_id, self.index, self.state_epoch, self.leader_epoch, start_offset, batches
            )
        except Exception:
            log.exception("Writing share partition %s-%d of group %s failed", self.topic, self.index, self.group_id)
            return ErrorCode.UNKNOWN_SERVER_ERROR
        mapped = _persister_error(error)
        if mapped in _FENCING_ERRORS:
            self.fenced = True
        return mapped

    def _write_in_background(self) -> None:
        async def write() -> None:
            if await self._write(self._next_start(), self._persisted_batches()) == ErrorCode.NONE:
                self._advance_start()

        self._spawn(write)


def _offset_types(batch: AcknowledgementBatch) -> Iterable[tuple[int, int]]:
    """(offset, acknowledge type) of every offset of the batch."""
    if len(batch.types) == 1:
        kind = batch.types[0]
        return ((offset, kind) for offset in range(batch.first_offset, batch.last_offset + 1))
    return zip(range(batch.first_offset, batch.last_offset + 1), batch.types, strict=True)


def _ranges(acquired: list[tuple[int, int]]) -> list[AcquiredRange]:
    """Consecutive offsets delivered the same number of times, as one range each."""
    ranges: list[AcquiredRange] = []
    for offset, count in acquired:
        if ranges and ranges[-1].last_offset == offset - 1 and ranges[-1].delivery_count == count:
            ranges[-1] = ranges[-1]._replace(last_offset=offset)
        else:
            ranges.append(AcquiredRange(offset, offset, count))
    return ranges
