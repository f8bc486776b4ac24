"""The state machine of one `__share_group_state` partition: Kafka's ShareCoordinatorShard.

It keeps, per share-partition key (group id, topic id, partition), the latest `ShareGroupOffset`
(snapshot epoch, state epoch, leader epoch, start offset, state batches) and the highest leader
and state epochs seen. Operations check the request and return the records to append plus the
answer; the records change the state only when replayed (after the append, or while loading).

A write produces a ShareSnapshot record (the whole state) when the key has none yet or when
`share.coordinator.snapshot.update.records.per.snapshot` ShareUpdate records (deltas) followed
the last snapshot; otherwise a ShareUpdate. Initialize writes a fresh snapshot; delete writes a
tombstone.
"""

from __future__ import annotations

import base64
import binascii
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...cluster.model import uuid_to_base64
from ...protocol.errors import ErrorCode
from .combiner import PersisterStateBatch, combine_state_batches
from .state import ShareState

log = logging.getLogger(__name__)

NULL_TOPIC_ID = "The topic id cannot be null."
NEGATIVE_PARTITION_ID = "The partition id cannot be a negative number."
WRITE_UNINITIALIZED = "Write operation on uninitialized share partition not allowed."
READ_UNINITIALIZED = "Read operation on uninitialized share partition not allowed."
INVALID_BATCH = "A state batch's first offset must be at least 0 and at most its last offset."


@dataclass(frozen=True)
class SharePartitionKey:
    group_id: str
    topic_id: uuid.UUID
    partition: int

    def coordinator_key(self) -> str:
        """The FindCoordinator key of type SHARE: `groupId:topicId:partition`."""
        return share_coordinator_key(self.group_id, self.topic_id, self.partition)


def share_coordinator_key(group_id: str, topic_id: uuid.UUID, partition: int) -> str:
    """Kafka's SharePartitionKey.asCoordinatorKey (topic id in Kafka's base64 form)."""
    return f"{group_id}:{uuid_to_base64(topic_id)}:{partition}"


def parse_share_coordinator_key(key: str) -> SharePartitionKey | None:
    """The key of a FindCoordinator SHARE key, None when it is malformed (Kafka's
    SharePartitionKey.validate: three `:`-separated parts, a group id, a base64 topic id and a
    non-negative partition number)."""
    parts = key.split(":")
    while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
        parts.pop()
    if len(parts) != 3:
        return None
    group_id, topic_text, partition_text = (part.strip() for part in parts)
    if not group_id or not partition_text.isdigit() or not partition_text.isascii():
        return None
    topic_id = _topic_id(topic_text)
    if topic_id is None or int(partition_text) > 0x7FFFFFFF:
        return None
    return SharePartitionKey(parts[0], topic_id, int(partition_text))


def _topic_id(text: str) -> uuid.UUID | None:
    """Kafka's Uuid.fromString: URL-safe base64 of 16 bytes."""
    if not text or len(text) > 24:
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, binascii.Error):
        return None
    return uuid.UUID(bytes=raw) if len(raw) == 16 else None


@dataclass(frozen=True)
class ShareGroupOffset:
    """A share-partition's state as the records carry it (Kafka's ShareGroupOffset)."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: tuple[PersisterStateBatch, ...]
    create_timestamp: int = -1
    write_timestamp: int = -1


@dataclass(frozen=True)
class ShareStateRecord:
    """One record of `__share_group_state`: a ShareSnapshot (the whole state) or a ShareUpdate
    (a delta; its state epoch is not carried); `value` None is a tombstone."""

    key: SharePartitionKey
    is_snapshot: bool
    value: ShareGroupOffset | None


class ShareCoordinatorShard:
    def __init__(
        self,
        records_per_snapshot: int,
        partition_exists: Callable[[uuid.UUID, int], bool],
        now_ms: Callable[[], int],
    ) -> None:
        self.records_per_snapshot = records_per_snapshot
        self.partition_exists = partition_exists
        self.now_ms = now_ms
        self.states: dict[SharePartitionKey, ShareGroupOffset] = {}
        self.leader_epochs: dict[SharePartitionKey, int] = {}
        self.state_epochs: dict[SharePartitionKey, int] = {}
        self.updates_since_snapshot: dict[SharePartitionKey, int] = {}
        self.snapshot_offsets: dict[SharePartitionKey, int] = {}  # where each key's last snapshot is
        self.end_offset = 0  # the offset after the last record replayed

    def redundant_offset(self) -> int:
        """Below this offset no record is needed to rebuild the state (Kafka's
        ShareCoordinatorOffsetsManager): each key's state starts at its last snapshot."""
        return min(self.snapshot_offsets.values(), default=self.end_offset)

    # -- replay ---------------------------------------------------------------------------------

    def replay(self, record: ShareStateRecord, offset: int | None = None) -> None:
        """Apply a record; `offset` is where it is in the log (None: not written, as in memory)."""
        key, value = record.key, record.value
        if offset is not None:
            self.end_offset = max(self.end_offset, offset + 1)
            if value is None:
                self.snapshot_offsets.pop(key, None)
            elif record.is_snapshot:
                self.snapshot_offsets[key] = offset
        if value is None:
            self._forget(key)
        elif record.is_snapshot:
            self._replay_snapshot(key, value)
        else:
            self._replay_update(key, value)

    def _forget(self, key: SharePartitionKey) -> None:
        for table in (self.states, self.leader_epochs, self.state_epochs, self.updates_since_snapshot):
            table.pop(key, None)

    def _replay_snapshot(self, key: SharePartitionKey, value: ShareGroupOffset) -> None:
        self._raise_epoch(self.leader_epochs, key, value.leader_epoch)
        self._raise_epoch(self.state_epochs, key, value.state_epoch)
        self.states[key] = value
        if self.updates_since_snapshot.get(key, 0) >= self.records_per_snapshot:
            self.updates_since_snapshot[key] = 0

    def _replay_update(self, key: SharePartitionKey, value: ShareGroupOffset) -> None:
        self._raise_epoch(self.leader_epochs, key, value.leader_epoch)
        current = self.states.get(key)
        self.states[key] = value if current is None else _merge_update(current, value)
        self.updates_since_snapshot[key] = (
            self.updates_since_snapshot[key] + 1 if key in self.updates_since_snapshot else 0
        )

    @staticmethod
    def _raise_epoch(table: dict[SharePartitionKey, int], key: SharePartitionKey, epoch: int) -> None:
        if key not in table or table[key] < epoch:
            table[key] = epoch

    # -- operations -----------------------------------------------------------------------------

    def write_state(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[PersisterStateBatch],
    ) -> tuple[list[ShareStateRecord], ShareState]:
        error = (
            self._key_error(key) or self._batches_error(batches) or self._uninitialized_error(key, WRITE_UNINITIALIZED)
        )
        if error is None and leader_epoch != -1 and self.leader_epochs.get(key, leader_epoch) > leader_epoch:
            error = ShareState(ErrorCode.FENCED_LEADER_EPOCH)
        if error is None and state_epoch != -1 and self.state_epochs.get(key, state_epoch) > state_epoch:
            error = ShareState(ErrorCode.FENCED_STATE_EPOCH)
        if error is None:
            error = self._metadata_error(key)
        if error is not None:
            return [], error
        record = self._state_record(key, state_epoch, leader_epoch, start_offset, batches)
        return [record], ShareState(ErrorCode.NONE)

    def read_state(self, key: SharePartitionKey, leader_epoch: int) -> tuple[list[ShareStateRecord], ShareState]:
        """The state, and a record raising the leader epoch when a newer leader reads. A key
        must be initialized before it is read or written (INVALID_REQUEST)."""
        error = self._key_error(key) or self._uninitialized_error(key, READ_UNINITIALIZED)
        if error is None and leader_epoch != -1 and self.leader_epochs.get(key, leader_epoch) > leader_epoch:
            error = ShareState(ErrorCode.FENCED_LEADER_EPOCH)
        if error is None:
            error = self._metadata_error(key)
        if error is not None:
            return [], error
        current = self.states[key]
        recorded_epoch = current.leader_epoch if leader_epoch == -1 else leader_epoch  # once this read is written
        state = ShareState(ErrorCode.NONE, current.state_epoch, current.start_offset, recorded_epoch, current.batches)
        if leader_epoch == -1 or self.leader_epochs.get(key) == leader_epoch:
            return [], state
        log.info("Read with leader epoch update call for key %s having new leader epoch %d.", key, leader_epoch)
        record = self._state_record(key, state.state_epoch, leader_epoch, state.start_offset, ())
        return [record], state

    def read_summary(self, key: SharePartitionKey, leader_epoch: int) -> ShareState:
        error = self._key_error(key)
        if error is None and leader_epoch != -1 and self.leader_epochs.get(key, leader_epoch) > leader_epoch:
            error = ShareState(ErrorCode.FENCED_LEADER_EPOCH)
        if error is None:
            error = self._metadata_error(key)
        if error is not None:
            return error
        current = self.states.get(key)
        if current is None:
            return ShareState(ErrorCode.NONE)
        return ShareState(ErrorCode.NONE, current.state_epoch, current.start_offset, current.leader_epoch)

    def initialize_state(
        self, key: SharePartitionKey, state_epoch: int, start_offset: int
    ) -> tuple[list[ShareStateRecord], ShareState]:
        """A fresh snapshot (no batches, leader epoch -1): initializing starts the state over."""
        error = self._key_error(key)
        if error is None and state_epoch != -1 and self.state_epochs.get(key, state_epoch) > state_epoch:
            error = ShareState(ErrorCode.FENCED_STATE_EPOCH)
        if error is None:
            error = self._metadata_error(key)
        if error is not None:
            return [], error
        current = self.states.get(key)
        now = self.now_ms()
        value = ShareGroupOffset(
            snapshot_epoch=0 if current is None else current.snapshot_epoch + 1,
            state_epoch=state_epoch,
            leader_epoch=-1,
            start_offset=start_offset,
            batches=(),
            create_timestamp=now,
            write_timestamp=now,
        )
        return [ShareStateRecord(key, True, value)], ShareState(ErrorCode.NONE)

    def delete_state(self, key: SharePartitionKey) -> tuple[list[ShareStateRecord], ShareState]:
        error = self._key_error(key) or self._metadata_error(key)
        if error is not None:
            return [], error
        if key not in self.states:
            return [], ShareState(ErrorCode.NONE)
        return [ShareStateRecord(key, True, None)], ShareState(ErrorCode.NONE)

    def cold_snapshot_records(self, interval_ms: int) -> list[ShareStateRecord]:
        """Fresh snapshots of the keys whose last snapshot is `interval_ms` old or older, so
        that time retention of the topic keeps every state in use."""
        now = self.now_ms()
        records = []
        for key, current in self.states.items():
            if now - current.write_timestamp < interval_ms:
                continue
            value = ShareGroupOffset(
                current.snapshot_epoch + 1,
                current.state_epoch,
                current.leader_epoch,
                current.start_offset,
                current.batches,
                current.create_timestamp,
                now,
            )
            records.append(ShareStateRecord(key, True, value))
        return records

    # -- helpers --------------------------------------------------------------------------------

    def _key_error(self, key: SharePartitionKey) -> ShareState | None:
        if key.topic_id.int == 0:
            return ShareState(ErrorCode.INVALID_REQUEST, error_message=NULL_TOPIC_ID)
        if key.partition < 0:
            return ShareState(ErrorCode.INVALID_REQUEST, error_message=NEGATIVE_PARTITION_ID)
        return None

    @staticmethod
    def _batches_error(batches: Sequence[PersisterStateBatch]) -> ShareState | None:
        """A batch must run from a first offset up to a last offset not below it."""
        if all(0 <= batch.first_offset <= batch.last_offset for batch in batches):
            return None
        return ShareState(ErrorCode.INVALID_REQUEST, error_message=INVALID_BATCH)

    def _uninitialized_error(self, key: SharePartitionKey, message: str) -> ShareState | None:
        if key in self.states:
            return None
        return ShareState(ErrorCode.INVALID_REQUEST, state_epoch=0, start_offset=0, error_message=message)

    def _metadata_error(self, key: SharePartitionKey) -> ShareState | None:
        if not self.partition_exists(key.topic_id, key.partition):
            return ShareState(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return None

    def _state_record(
        self,
        key: SharePartitionKey,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[PersisterStateBatch],
    ) -> ShareStateRecord:
        current = self.states.get(key)
        now = self.now_ms()
        if current is None:
            value = ShareGroupOffset(
                0, state_epoch, leader_epoch, start_offset, _combine((), batches, start_offset), now, now
            )
            return ShareStateRecord(key, True, value)
        if self.updates_since_snapshot.get(key, 0) >= self.records_per_snapshot:
            start = current.start_offset if start_offset == -1 else start_offset
            value = ShareGroupOffset(
                snapshot_epoch=current.snapshot_epoch + 1,
                state_epoch=current.state_epoch if state_epoch == -1 else state_epoch,
                leader_epoch=current.leader_epoch if leader_epoch == -1 else leader_epoch,
                start_offset=start,
                batches=_combine(current.batches, batches, start),
                create_timestamp=now,
                write_timestamp=now,
            )
            return ShareStateRecord(key, True, value)
        value = ShareGroupOffset(
            current.snapshot_epoch, -1, leader_epoch, start_offset, _combine((), batches, start_offset)
        )
        return ShareStateRecord(key, False, value)


def _combine(
    so_far: Sequence[PersisterStateBatch], new: Sequence[PersisterStateBatch], start_offset: int
) -> tuple[PersisterStateBatch, ...]:
    return tuple(combine_state_batches(so_far, new, start_offset))


def _merge_update(current: ShareGroupOffset, update: ShareGroupOffset) -> ShareGroupOffset:
    """A ShareUpdate applied to the state so far (its state epoch is not carried)."""
    start = current.start_offset if update.start_offset == -1 else update.start_offset
    return ShareGroupOffset(
        snapshot_epoch=current.snapshot_epoch,
        state_epoch=current.state_epoch,
        leader_epoch=current.leader_epoch if update.leader_epoch == -1 else update.leader_epoch,
        start_offset=start,
        batches=_combine(current.batches, update.batches, start),
        create_timestamp=current.create_timestamp,
        write_timestamp=current.write_timestamp,
    )
