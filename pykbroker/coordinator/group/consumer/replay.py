"""Rebuilding consumer groups from their records in `__consumer_offsets` (Kafka's replay of
ConsumerGroup* records): later records win, tombstones remove a member's records, a regex's
resolution, or (the group's metadata record) the group."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from . import records as rec
from .group import ConsumerGroup
from .manager import build_member


@dataclass
class ConsumerGroupReplay:
    group_id: str
    epoch: int | None = None
    metadata_hash: int = 0
    assignment_epoch: int = 0
    members: dict[str, rec.MemberMetadataRecord] = field(default_factory=dict)
    current: dict[str, rec.CurrentAssignmentRecord] = field(default_factory=dict)
    targets: dict[str, dict[uuid.UUID, frozenset[int]]] = field(default_factory=dict)
    regexes: dict[str, frozenset[str]] = field(default_factory=dict)

    def apply(self, key: rec.ConsumerKey, value: bytes | None) -> None:
        t = key.record_type
        if t == rec.METADATA:
            if value is None:
                self.epoch = None
            else:
                self.epoch, self.metadata_hash = rec.decode_metadata_value(value)
        elif t == rec.TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = 0 if value is None else rec.decode_target_assignment_metadata_value(value)
        elif t == rec.MEMBER_METADATA and key.member_id is not None:
            _put(self.members, key.member_id, None if value is None else rec.decode_member_metadata_value(value))
        elif t == rec.CURRENT_MEMBER_ASSIGNMENT and key.member_id is not None:
            _put(self.current, key.member_id, None if value is None else rec.decode_current_assignment_value(value))
        elif t == rec.TARGET_ASSIGNMENT_MEMBER and key.member_id is not None:
            _put(
                self.targets, key.member_id, None if value is None else rec.decode_target_assignment_member_value(value)
            )
        elif t == rec.REGULAR_EXPRESSION and key.regex is not None:
            _put(self.regexes, key.regex, None if value is None else rec.decode_regular_expression_value(value).topics)

    @property
    def exists(self) -> bool:
        return self.epoch is not None

    def build(self) -> ConsumerGroup:
        group = ConsumerGroup(self.group_id)
        group.group_epoch = self.epoch or 0
        group.metadata_hash = self.metadata_hash
        group.assignment_epoch = self.assignment_epoch
        group.resolved_regexes = dict(self.regexes)
        group.metadata_refresh_needed = True
        for member_id in self.members:
            group.update_member(build_member(member_id, self.members[member_id], self.current.get(member_id)))
            group.target_assignment[member_id] = dict(self.targets.get(member_id, {}))
        return group


def _put(table: dict[str, Any], key: str, value: object) -> None:
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value
