"""One consumer group (KIP-848): its members, epochs, target assignment and who owns which
partition, as Kafka's ConsumerGroup and ConsumerGroupMember keep them.

The group epoch moves when the group's subscriptions (or the subscribed topics' metadata) change;
the assignment epoch is the group epoch the target assignment was computed for; each member's
epoch reaches the assignment epoch once it has reconciled with its target (`reconcile`).
A partition is owned (its "partition epoch" set) by the member it is assigned to or that still
has to revoke it; it is given to a new member only once it is free.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from enum import IntEnum

Assignment = dict[uuid.UUID, frozenset[int]]

LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

EMPTY, ASSIGNING, RECONCILING, STABLE, DEAD = "Empty", "Assigning", "Reconciling", "Stable", "Dead"


class MemberState(IntEnum):
    """Kafka's MemberState, as stored in the current assignment record."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1
    UNRELEASED_PARTITIONS = 2
    UNKNOWN = 127


@dataclass(frozen=True)
class ConsumerGroupMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    # a member using the classic protocol (JoinGroup/SyncGroup/Heartbeat) inside a consumer group:
    # its protocols (name, metadata) and session timeout; None for a consumer protocol member
    classic_protocols: tuple[tuple[str, bytes], ...] | None = None
    classic_session_timeout_ms: int = -1

    @property
    def uses_classic_protocol(self) -> bool:
        return self.classic_protocols is not None

    def subscription_equals(self, other: ConsumerGroupMember) -> bool:
        return (
            self.subscribed_topic_names == other.subscribed_topic_names
            and self.subscribed_topic_regex == other.subscribed_topic_regex
        )

    def metadata_equals(self, other: ConsumerGroupMember) -> bool:
        return (
            self.subscription_equals(other)
            and self.instance_id == other.instance_id
            and self.rack_id == other.rack_id
            and self.client_id == other.client_id
            and self.client_host == other.client_host
            and self.rebalance_timeout_ms == other.rebalance_timeout_ms
            and self.server_assignor == other.server_assignor
            and self.classic_protocols == other.classic_protocols
        )

    def assignment_equals(self, other: ConsumerGroupMember) -> bool:
        return (
            self.member_epoch == other.member_epoch
            and self.previous_member_epoch == other.previous_member_epoch
            and self.state == other.state
            and self.assigned == other.assigned
            and self.pending_revocation == other.pending_revocation
        )


class ConsumerGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 0
        self.assignment_epoch = 0
        self.metadata_hash = 0
        self.members: dict[str, ConsumerGroupMember] = {}
        self.static_members: dict[str, str] = {}  # instance id -> member id
        self.target_assignment: dict[str, Assignment] = {}
        self.partition_epochs: dict[tuple[uuid.UUID, int], int] = {}  # owned partition -> owner's epoch
        self.resolved_regexes: dict[str, frozenset[str]] = {}  # regex -> matching topic names
        self.metadata_refresh_needed = True
        self.deleted = False

    # -- members -----------------------------------------------------------------------------
    def update_member(self, member: ConsumerGroupMember) -> None:
        """Add or replace `member`, keeping the static members and partition epochs in step."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._remove_partition_epochs(old)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        self._add_partition_epochs(member)

    def remove_member(self, member_id: str) -> ConsumerGroupMember | None:
        old = self.members.pop(member_id, None)
        if old is None:
            return None
        self._remove_partition_epochs(old)
        if old.instance_id is not None and self.static_members.get(old.instance_id) == member_id:
            del self.static_members[old.instance_id]
        self.target_assignment.pop(member_id, None)
        return old

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        member_id = self.static_members.get(instance_id)
        return None if member_id is None else self.members.get(member_id)

    def current_partition_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.partition_epochs.get((topic_id, partition), -1)

    def _add_partition_epochs(self, member: ConsumerGroupMember) -> None:
        for assignment in (member.assigned, member.pending_revocation):
            for topic_id, partitions in assignment.items():
                for p in partitions:
                    self.partition_epochs[(topic_id, p)] = member.member_epoch

    def _remove_partition_epochs(self, member: ConsumerGroupMember) -> None:
        for assignment in (member.assigned, member.pending_revocation):
            for topic_id, partitions in assignment.items():
                for p in partitions:
                    if self.partition_epochs.get((topic_id, p)) == member.member_epoch:
                        del self.partition_epochs[(topic_id, p)]

    # -- subscriptions -------------------------------------------------------------------------
    def subscribed_topic_names(self) -> set[str]:
        names: set[str] = set()
        for member in self.members.values():
            names.update(member.subscribed_topic_names)
            if member.subscribed_topic_regex is not None:
                names.update(self.resolved_regexes.get(member.subscribed_topic_regex, ()))
        return names

    def member_topic_names(self, member: ConsumerGroupMember) -> set[str]:
        names = set(member.subscribed_topic_names)
        if member.subscribed_topic_regex is not None:
            names.update(self.resolved_regexes.get(member.subscribed_topic_regex, ()))
        return names

    def is_subscribed_to_topic(self, topic: str) -> bool:
        return topic in self.subscribed_topic_names()

    def regexes_in_use(self) -> set[str]:
        return {m.subscribed_topic_regex for m in self.members.values() if m.subscribed_topic_regex is not None}

    # -- state -----------------------------------------------------------------------------------
    @property
    def state(self) -> str:
        if self.deleted:
            return DEAD
        if not self.members:
            return EMPTY
        if self.group_epoch != self.assignment_epoch:
            return ASSIGNING
        for member in self.members.values():
            if member.member_epoch != self.assignment_epoch or member.state != MemberState.STABLE:
                return RECONCILING
        return STABLE

    def preferred_server_assignor(self, default: str) -> str:
        """The server assignor most members ask for (Kafka's computePreferredServerAssignor)."""
        counts: dict[str, int] = {}
        for member in self.members.values():
            if member.server_assignor is not None:
                counts[member.server_assignor] = counts.get(member.server_assignor, 0) + 1
        if not counts:
            return default
        return max(sorted(counts), key=lambda name: counts[name])


# -- reconciliation (Kafka's CurrentAssignmentBuilder) ----------------------------------------------


def reconcile(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Assignment,
    current_partition_epoch: CurrentPartitionEpoch,
    owned: Assignment | None,
) -> ConsumerGroupMember:
    """The member's next assignment towards `target` (computed at `target_epoch`): partitions it
    must give up are revoked first (its epoch holds until it reports them gone in `owned`, None
    when the heartbeat did not say), new partitions are given only once their owner released them."""
    if member.state == MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return _next_assignment(member, target_epoch, target, current_partition_epoch, owned)
        return member
    if member.state == MemberState.UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
        return _next_assignment(member, target_epoch, target, current_partition_epoch, owned)
    if member.state == MemberState.UNRELEASED_PARTITIONS:
        return _next_assignment(member, target_epoch, target, current_partition_epoch, owned)
    return member


class CurrentPartitionEpoch:
    """Who owns a partition now: a callable (topic id, partition) -> owner's epoch, -1 if free."""

    def __init__(self, group: ConsumerGroup) -> None:
        self.group = group

    def __call__(self, topic_id: uuid.UUID, partition: int) -> int:
        return self.group.current_partition_epoch(topic_id, partition)


def _owns_any(owned: Assignment | None, revoked: Assignment) -> bool:
    if owned is None:
        return True
    return any(owned.get(topic_id, frozenset()) & parts for topic_id, parts in revoked.items())


def _next_assignment(
    member: ConsumerGroupMember,
    target_epoch: int,
    target: Assignment,
    current_partition_epoch: CurrentPartitionEpoch,
    owned: Assignment | None,
) -> ConsumerGroupMember:
    has_unreleased = False
    new_assigned: dict[uuid.UUID, frozenset[int]] = {}
    pending_revocation: dict[uuid.UUID, frozenset[int]] = {}
    pending_assignment: dict[uuid.UUID, frozenset[int]] = {}
    for topic_id in set(target) | set(member.assigned):
        wanted = target.get(topic_id, frozenset())
        current = member.assigned.get(topic_id, frozenset())
        kept = current & wanted
        revoking = current - wanted
        free = set()
        for p in wanted - current:
            if current_partition_epoch(topic_id, p) == -1:
                free.add(p)
            else:
                has_unreleased = True
        if kept:
            new_assigned[topic_id] = kept
        if revoking:
            pending_revocation[topic_id] = revoking
        if free:
            pending_assignment[topic_id] = frozenset(free)
    if pending_revocation and _owns_any(owned, pending_revocation):
        return replace(
            member,
            state=MemberState.UNREVOKED_PARTITIONS,
            previous_member_epoch=member.member_epoch,
            assigned=new_assigned,
            pending_revocation=pending_revocation,
        )
    for topic_id, parts in pending_assignment.items():
        new_assigned[topic_id] = new_assigned.get(topic_id, frozenset()) | parts
    return replace(
        member,
        state=MemberState.UNRELEASED_PARTITIONS if has_unreleased else MemberState.STABLE,
        member_epoch=target_epoch,
        previous_member_epoch=member.member_epoch,
        assigned=new_assigned,
        pending_revocation={},
    )
