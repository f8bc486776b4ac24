"""Replaying the share group records of a loaded `__consumer_offsets` partition into share groups
(Kafka's replay of the ShareGroup* records): later records win, a tombstone removes what its key
names, a tombstone of ShareGroupMetadata removes the group.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from ...partition_io import LoadedRecord
from . import records as rec
from .model import ShareGroup, ShareGroupMember

log = logging.getLogger(__name__)


def replay_share_groups(records: Iterable[LoadedRecord]) -> list[ShareGroup]:
    groups: dict[str, ShareGroup] = {}
    for record in records:
        if record.is_control or record.key is None:
            continue
        try:
            key = rec.decode_key(record.key)
        except Exception:  # a record of another coordinator type, or a damaged key
            continue
        if key is None:
            continue
        _apply(groups, key, record.value)
    return list(groups.values())


def _apply(groups: dict[str, ShareGroup], key: rec.ShareKey, value: bytes | None) -> None:
    if key.record_type == rec.GROUP_METADATA and value is None:
        groups.pop(key.group_id, None)
        return
    group = groups.get(key.group_id)
    if group is None:
        if value is None:
            return
        group = groups[key.group_id] = ShareGroup(key.group_id)
    if key.record_type == rec.GROUP_METADATA and value is not None:
        group.group_epoch, group.metadata_hash = rec.decode_group_metadata(value)
    elif key.record_type == rec.TARGET_ASSIGNMENT_METADATA:
        group.assignment_epoch = 0 if value is None else rec.decode_target_assignment_metadata(value)
    elif key.record_type == rec.STATE_PARTITION_METADATA:
        _apply_state_partitions(group, value)
    elif key.member_id is not None:
        _apply_member_record(group, key.record_type, key.member_id, value)


def _apply_state_partitions(group: ShareGroup, value: bytes | None) -> None:
    if value is None:
        group.initializing, group.initialized, group.deleting = {}, {}, set()
        return
    state = rec.decode_state_partitions(value)
    group.initializing = dict(state.initializing)
    group.initialized = dict(state.initialized)
    group.deleting = set(state.deleting)
    group.topic_names = dict(state.names)


def _apply_member_record(group: ShareGroup, record_type: int, member_id: str, value: bytes | None) -> None:
    if record_type == rec.TARGET_ASSIGNMENT_MEMBER:
        if value is None:
            group.target.pop(member_id, None)
        else:
            group.target[member_id] = rec.decode_target_assignment_member(value)
        return
    if record_type == rec.MEMBER_METADATA and value is None:
        group.members.pop(member_id, None)
        return
    member = group.members.get(member_id)
    if member is None:
        if value is None:
            return
        member = group.members[member_id] = ShareGroupMember(member_id)
    if record_type == rec.MEMBER_METADATA and value is not None:
        metadata = rec.decode_member_metadata(value)
        member.rack_id, member.client_id, member.client_host = (
            metadata.rack_id,
            metadata.client_id,
            metadata.client_host,
        )
        member.subscribed_topic_names = metadata.subscribed_topic_names
    elif record_type == rec.CURRENT_MEMBER_ASSIGNMENT:
        if value is None:
            member.member_epoch, member.previous_member_epoch, member.assigned = 0, 0, {}
        else:
            current = rec.decode_current_assignment(value)
            member.member_epoch = current.member_epoch
            member.previous_member_epoch = current.previous_member_epoch
            member.assigned = dict(current.assigned)
