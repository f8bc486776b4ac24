"""Replaying a `__consumer_offsets` partition into groups and offsets, as Kafka loads it.

Later records win; a tombstone (null value) removes an offset or a group. Groups with offsets but
no group record (simple consumers, or groups whose record was removed) come back Empty. A group
record with members comes back Stable, one without members Empty.

Consumer groups (KIP-848) come back from their records (`consumer/replay.py`) with their
epochs, members, target and current assignments.

Offsets in a transactional batch (TxnOffsetCommit) are pending for their producer until that
producer's control record: COMMIT makes them committed (each unless an offset written later to
the log holds its partition), ABORT drops them; those without a marker yet stay pending, and the
group comes back with them (as Kafka's loadGroupsAndOffsets does).
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ...records.control import COMMIT, parse_control_type
from ...records.errors import InvalidRecordError
from ..partition_io import LoadedRecord
from .consumer.record_types import RECORD_TYPES as CONSUMER_RECORD_TYPES
from .formats import GroupKey, GroupRecord, OffsetKey, decode_group_value, decode_key, decode_offset_value
from .group import GroupMetadata
from .member import MemberMetadata
from .offset_cache import StoredOffset, TopicPartition
from .share.record_types import is_share_record
from .state import EMPTY, STABLE

if TYPE_CHECKING:
    from .consumer.replay import ConsumerGroupReplay

log = logging.getLogger(__name__)


GroupOffsets = dict[tuple[str, TopicPartition], StoredOffset]  # by (group, topic-partition)


@dataclass
class ReplayedPartition:
    groups: dict[str, GroupRecord] = field(default_factory=dict)
    removed_groups: set[str] = field(default_factory=set)
    committed: GroupOffsets = field(default_factory=dict)
    pending: dict[int, GroupOffsets] = field(default_factory=dict)  # by producer id
    consumer_groups: dict[str, ConsumerGroupReplay] = field(default_factory=dict)
    last_offset: int = -1  # of the last batch read
    _committed_index: dict[str, dict[TopicPartition, StoredOffset]] | None = field(default=None, repr=False)
    _pending_index: dict[str, dict[int, dict[TopicPartition, StoredOffset]]] | None = field(default=None, repr=False)

    def group_ids(self) -> list[str]:
        with_offsets = [group for group, _ in self.committed]
        with_pending = [group for offsets in self.pending.values() for group, _ in offsets]
        consumer = [group for group, replayed in self.consumer_groups.items() if replayed.exists]
        return list(dict.fromkeys([*self.groups, *consumer, *with_offsets, *with_pending]))

    def offsets_of(self, group_id: str) -> dict[TopicPartition, StoredOffset]:
        return self._offsets_by_group().get(group_id, {})

    def pending_of(self, group_id: str) -> dict[int, dict[TopicPartition, StoredOffset]]:
        """The group's pending transactional offsets, by producer id."""
        return self._pending_by_group().get(group_id, {})

    def _offsets_by_group(self) -> dict[str, dict[TopicPartition, StoredOffset]]:
        """The committed offsets by group, built once after the replay: asking for each group's
        offsets costs what that group has, not what the whole partition holds."""
        if self._committed_index is None:
            self._committed_index = {}
            for (group, tp), stored in self.committed.items():
                self._committed_index.setdefault(group, {})[tp] = stored
        return self._committed_index

    def _pending_by_group(self) -> dict[str, dict[int, dict[TopicPartition, StoredOffset]]]:
        if self._pending_index is None:
            self._pending_index = {}
            for producer_id, offsets in self.pending.items():
                for (group, tp), stored in offsets.items():
                    self._pending_index.setdefault(group, {}).setdefault(producer_id, {})[tp] = stored
        return self._pending_index


def replay(records: Iterable[LoadedRecord]) -> ReplayedPartition:
    state = ReplayedPartition()
    for record in records:
        state.last_offset = max(state.last_offset, record.batch_offset)
        if record.is_control:
            _apply_control(state, record)
            continue
        if record.key is None:
            log.warning("Skipping a record without key in __consumer_offsets")
            continue
        key = decode_key(record.key)
        if isinstance(key, OffsetKey):
            _apply_offset(state, key, record)
        elif isinstance(key, GroupKey):
            _apply_group(state, key.group, record.value)
        elif key.version in CONSUMER_RECORD_TYPES:
            _apply_consumer_group_record(state, key.version, record)
        elif is_share_record(key.version):
            continue  # replayed by the share groups
        else:
            log.warning(
                "Unknown message key with version %d while loading offsets and group metadata; ignoring it", key.version
            )
    return state


def _apply_control(state: ReplayedPartition, record: LoadedRecord) -> None:
    """A transaction marker ends its producer's pending offsets (committed on COMMIT)."""
    try:
        control_type = parse_control_type(record.key)
    except InvalidRecordError:
        log.warning("Skipping a control record with an invalid key in __consumer_offsets")
        return
    pending = state.pending.pop(record.producer_id, {})
    if control_type != COMMIT:
        return
    for group_tp, stored in pending.items():
        current = state.committed.get(group_tp)
        if current is None or current.batch_offset < stored.batch_offset:
            state.committed[group_tp] = stored


def _apply_offset(state: ReplayedPartition, key: OffsetKey, record: LoadedRecord) -> None:
    if record.is_transactional:
        offsets = state.pending.setdefault(record.producer_id, {})
    else:
        offsets = state.committed
    group_tp = (key.group, (key.topic, key.partition))
    if record.value is None:
        offsets.pop(group_tp, None)
    else:
        offsets[group_tp] = StoredOffset(decode_offset_value(record.value), record.batch_offset)


def _apply_consumer_group_record(state: ReplayedPartition, record_type: int, record: LoadedRecord) -> None:
    assert record.key is not None
    try:
        from .consumer import records as consumer_records  # a consumer group's records: loaded with them
        from .consumer.replay import ConsumerGroupReplay

        key = consumer_records.decode_key(record_type, record.key)
        replayed = state.consumer_groups.setdefault(key.group_id, ConsumerGroupReplay(key.group_id))
        replayed.apply(key, record.value)
    except (ValueError, IndexError, UnicodeDecodeError, struct.error) as e:
        log.warning("Skipping an unreadable consumer group record of type %d in __consumer_offsets: %s", record_type, e)


def _apply_group(state: ReplayedPartition, group_id: str, value: bytes | None) -> None:
    if value is None:
        state.groups.pop(group_id, None)
        state.removed_groups.add(group_id)
    else:
        state.groups[group_id] = decode_group_value(value)
        state.removed_groups.discard(group_id)


def build_group(
    group_id: str,
    record: GroupRecord | None,
    offsets: dict[TopicPartition, StoredOffset],
    now_ms: Callable[[], int],
    pending: dict[int, dict[TopicPartition, StoredOffset]] | None = None,
    consumer: ConsumerGroupReplay | None = None,
) -> GroupMetadata:
    """A group as loaded: from its record if any (Stable with members, else Empty), with its
    offsets and its pending transactional offsets by producer id."""
    if record is None:
        group = GroupMetadata(group_id, EMPTY, now_ms)
    else:
        group = GroupMetadata(group_id, STABLE if record.members else EMPTY, now_ms)
        group.generation_id = record.generation
        group.protocol_type = record.protocol_type or None
        group.protocol_name = record.protocol
        group.current_state_timestamp = None if record.current_state_timestamp == -1 else record.current_state_timestamp
        for m in record.members:
            # As in Kafka, the record's protocol is taken as it is: it is null only for a group
            # without members, so a member's protocol name is never None in practice.
            member = MemberMetadata(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms,
                m.session_timeout_ms,
                record.protocol_type,
                [(record.protocol, m.subscription)],  # type: ignore[list-item]  # never None with members, see above
            )
            member.assignment = m.assignment
            group.add(member)
        group.leader_id = record.leader
        group.subscribed_topics = group.compute_subscribed_topics()
    if consumer is not None and consumer.exists:
        group.consumer = consumer.build()
        group.protocol_type = "consumer"
    for tp, stored in offsets.items():
        group.offsets.load(tp, stored)
    for producer_id, producer_offsets in (pending or {}).items():
        group.offsets.load_pending_txn(producer_id, producer_offsets)
    return group
