"""A share group and its members, as Kafka's ShareGroup and ShareGroupMember keep them.

A share group has a group epoch (bumped whenever its members, their subscriptions or the
partitions of the subscribed topics change), a target assignment computed at an assignment
epoch, and per member the assignment it was given at its member epoch. Members never revoke: a
member's assignment is its target assignment as soon as it heartbeats. The group is Empty
without members and Stable with some.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from ....common.timer import TimerTask
from .records import Assignment

EMPTY = "Empty"
STABLE = "Stable"
DEAD = "Dead"
SHARE_GROUP_TYPE = "share"
SHARE_PROTOCOL_TYPE = "share"
SIMPLE_ASSIGNOR = "simple"


@dataclass
class ShareGroupMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Assignment = field(default_factory=dict)


@dataclass
class ShareGroup:
    group_id: str
    group_epoch: int = 0
    metadata_hash: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareGroupMember] = field(default_factory=dict)
    target: dict[str, Assignment] = field(default_factory=dict)  # by member id
    initializing: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    initialized: dict[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    deleting: set[uuid.UUID] = field(default_factory=set)
    topic_names: dict[uuid.UUID, str] = field(default_factory=dict)  # of the topics with state
    session_timers: dict[str, TimerTask] = field(default_factory=dict, repr=False)

    @property
    def state(self) -> str:
        return STABLE if self.members else EMPTY

    def subscribed_topic_names(self) -> set[str]:
        return {name for member in self.members.values() for name in member.subscribed_topic_names}

    def is_initialized(self, topic_id: uuid.UUID, partition: int) -> bool:
        return partition in self.initialized.get(topic_id, frozenset())

    def has_state(self, topic_id: uuid.UUID, partition: int) -> bool:
        """Whether the partition's share state is initialized or being initialized."""
        return self.is_initialized(topic_id, partition) or partition in self.initializing.get(topic_id, frozenset())
