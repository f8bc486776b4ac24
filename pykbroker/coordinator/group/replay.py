"""Replaying a `__consumer_offsets` partition into groups and offsets, as Kafka loads it.

Later records win; a tombstone (null value) removes an offset or a group. Groups with offsets but
no group record (simple consumers, or groups whose record was removed) come back Empty. A group
record with members comes back Stable, one without members Empty.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .formats import GroupKey, GroupRecord, OffsetKey, decode_group_value, decode_key, decode_offset_value
from .group import GroupMetadata
from .member import MemberMetadata
from .offset_cache import StoredOffset, TopicPartition
from .state import EMPTY, STABLE

log = logging.getLogger(__name__)


@dataclass
class ReplayedPartition:
    groups: dict[str, GroupRecord] = field(default_factory=dict)
    removed_groups: set[str] = field(default_factory=set)
    offsets: dict[str, dict[TopicPartition, StoredOffset]] = field(default_factory=dict)

    def group_ids(self) -> list[str]:
        return list(dict.fromkeys([*self.groups, *self.offsets]))


def replay(entries: Iterable[tuple[int, bytes | None, bytes | None]]) -> ReplayedPartition:
    state = ReplayedPartition()
    for batch_offset, key_bytes, value in entries:
        if key_bytes is None:
            log.warning("Skipping a record without key in __consumer_offsets")
            continue
        key = decode_key(key_bytes)
        if isinstance(key, OffsetKey):
            _apply_offset(state, key, value, batch_offset)
        elif isinstance(key, GroupKey):
            _apply_group(state, key.group, value)
        else:
            log.warning(
                "Unknown message key with version %d while loading offsets and group metadata; ignoring it", key.version
            )
    return state


def _apply_offset(state: ReplayedPartition, key: OffsetKey, value: bytes | None, batch_offset: int) -> None:
    offsets = state.offsets.setdefault(key.group, {})
    tp = (key.topic, key.partition)
    if value is None:
        offsets.pop(tp, None)
        if not offsets:
            del state.offsets[key.group]
    else:
        offsets[tp] = StoredOffset(decode_offset_value(value), batch_offset)


def _apply_group(state: ReplayedPartition, group_id: str, value: bytes | None) -> None:
    if value is None:
        state.groups.pop(group_id, None)
        state.removed_groups.add(group_id)
    else:
        state.groups[group_id] = decode_group_value(value)
        state.removed_groups.discard(group_id)


def build_group(
    group_id: str, record: GroupRecord | None, offsets: dict[TopicPartition, StoredOffset], now_ms: Callable[[], int]
) -> GroupMetadata:
    """A group as loaded: from its record if any (Stable with members, else Empty)."""
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
    for tp, stored in offsets.items():
        group.offsets.load(tp, stored)
    return group
