"""Online migration between the classic and the consumer protocol (Kafka's
`group.consumer.migration.policy`): members of a consumer group that speak the classic protocol,
and a classic group's conversion when its first consumer-protocol member arrives.

- `upgrade` (policy `upgrade` or `bidirectional`): a classic group of the "consumer" protocol
  type becomes a consumer group (Kafka's ConsumerGroup.fromClassicGroup): each member
  keeps its subscription (from its JoinGroup metadata) and its assignment (from its SyncGroup
  assignment), at an epoch equal to the group's generation, which becomes the group epoch.
- `ClassicMembers` serves classic members of a consumer group as Kafka's
  classicGroupJoinToConsumerGroup and its SyncGroup, Heartbeat and LeaveGroup counterparts do:
  JoinGroup reconciles the member with its target at once (partitions the member still lists as
  owned stay pending revocation) and answers with the member epoch as the generation and no
  leader; SyncGroup hands out the assigned partitions as a ConsumerProtocolAssignment; Heartbeat
  answers REBALANCE_IN_PROGRESS while the member is behind the group, so that it joins again.

A group whose last consumer-protocol member left keeps its classic members as a consumer group;
once empty, a classic JoinGroup turns it back into a classic group (`manager.classic_join`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from ....protocol import messages
from ....protocol.errors import ErrorCode
from ..formats import group_key
from ..model import JoinResult, LeaveMemberResult, LeaveResult, MemberIdentity, SyncResult
from .group import Assignment, ConsumerGroup, ConsumerGroupMember, MemberState

if TYPE_CHECKING:
    from ..group import GroupMetadata
    from ..join import JoinRequest

Records = list[tuple[bytes, bytes | None]]


class MigrationSettings(Protocol):
    @property
    def migration_policy(self) -> str: ...

    @property
    def max_size(self) -> int: ...


class ConsumerGroupManager(Protocol):
    """What migration uses of the consumer groups' manager (`manager.ConsumerGroupManager`)."""

    @property
    def settings(self) -> MigrationSettings: ...

    def on_classic_group_converted(self, holder: GroupMetadata) -> None: ...

    def ids_of(self, by_name: Mapping[str, list[int]]) -> Assignment: ...

    def names_of(self, by_id: Assignment) -> dict[str, list[int]]: ...

    def metadata_hash_of(self, group: ConsumerGroup) -> int: ...

    def group_records(self, group: ConsumerGroup) -> Records: ...

    def schedule_session_timeout(self, group_id: str, member: ConsumerGroupMember) -> None: ...

    def replace_static_member(
        self, group: ConsumerGroup, old: ConsumerGroupMember, member_id: str, records: Records
    ) -> ConsumerGroupMember: ...

    def update_and_reconcile(
        self,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        owned: Assignment | None,
        records: Records,
        *,
        is_new: bool,
    ) -> ConsumerGroupMember: ...

    def write(self, group_id: str, records: Records, callback: Callable[[ErrorCode], None]) -> None: ...

    def fence(self, group: ConsumerGroup, member_id: str, records: Records) -> None: ...


log = logging.getLogger(__name__)

CONSUMER_PROTOCOL_TYPE = "consumer"
_SUBSCRIPTION = messages.by_name("ConsumerProtocolSubscription")
_ASSIGNMENT = messages.by_name("ConsumerProtocolAssignment")
ASSIGNMENT_VERSION = 3


def upgrade_enabled(policy: str) -> bool:
    return policy.lower() in ("upgrade", "bidirectional")


# -- the consumer protocol's embedded messages ------------------------------------------------------


def _decode(message: Any, data: bytes) -> tuple[int, Any]:
    version = int.from_bytes(data[:2], "big", signed=True)
    decoded, _ = message.decode(bytes(data), 2, version=min(version, max(message.versions)))
    return version, decoded


def subscription_of(metadata: bytes) -> tuple[list[str], dict[str, list[int]]]:
    """The topics and owned partitions (v1+, by topic name) of a ConsumerProtocolSubscription."""
    version, decoded = _decode(_SUBSCRIPTION, metadata)
    owned: dict[str, list[int]] = {}
    if version >= 1:
        for tp in decoded.owned_partitions or []:
            owned.setdefault(tp.topic, []).extend(tp.partitions)
    return list(decoded.topics), owned


def assignment_of(data: bytes) -> dict[str, list[int]]:
    """The partitions of a ConsumerProtocolAssignment, by topic name."""
    if len(data) < 2:
        return {}
    _, decoded = _decode(_ASSIGNMENT, data)
    result: dict[str, list[int]] = {}
    for tp in decoded.assigned_partitions:
        result.setdefault(tp.topic, []).extend(tp.partitions)
    return result


def encode_assignment(partitions: dict[str, list[int]]) -> bytes:
    cls = _ASSIGNMENT.cls
    body = cls(
        assigned_partitions=[
            cls.TopicPartition(topic=topic, partitions=sorted(parts)) for topic, parts in sorted(partitions.items())
        ],
        user_data=None,
    )
    return ASSIGNMENT_VERSION.to_bytes(2, "big") + _ASSIGNMENT.encode_bytes(body, version=ASSIGNMENT_VERSION)


# -- upgrading a classic group -------------------------------------------------------------------


def upgrade(manager: ConsumerGroupManager, holder: GroupMetadata, records: Records) -> str | None:
    """Turn the Stable classic group `holder` into a consumer group; None when done, else why
    it cannot be (as Kafka's validateOnlineUpgrade)."""
    if not upgrade_enabled(manager.settings.migration_policy):
        return "the migration policy does not allow an upgrade"
    if holder.protocol_type != CONSUMER_PROTOCOL_TYPE:
        return "the classic group does not use the consumer protocol type"
    if len(holder.members) >= manager.settings.max_size:
        return "the group is full"
    group = ConsumerGroup(holder.group_id)
    group.group_epoch = group.assignment_epoch = holder.generation_id
    for m in holder.members.values():
        chosen = holder.protocol_name if holder.protocol_name in m.protocol_names() else m.protocols[0][0]
        topics, _ = subscription_of(m.metadata(chosen))
        assigned = manager.ids_of(assignment_of(m.assignment))
        member = ConsumerGroupMember(
            m.member_id,
            instance_id=m.group_instance_id,
            client_id=m.client_id,
            client_host=m.client_host,
            subscribed_topic_names=tuple(sorted(set(topics))),
            rebalance_timeout_ms=m.rebalance_timeout_ms,
            member_epoch=holder.generation_id,
            previous_member_epoch=holder.generation_id,
            assigned=assigned,
            classic_protocols=tuple(m.protocols),
            classic_session_timeout_ms=m.session_timeout_ms,
        )
        group.update_member(member)
        group.target_assignment[m.member_id] = dict(assigned)
    group.metadata_hash = manager.metadata_hash_of(group)
    records.append((group_key(holder.group_id), None))
    records.extend(manager.group_records(group))
    manager.on_classic_group_converted(holder)  # the classic bookkeeping is unused from now on
    holder.consumer = group
    for member in group.members.values():
        manager.schedule_session_timeout(group.group_id, member)
    log.info("[GroupId %s] Converted the classic group to a consumer group.", holder.group_id)
    return None


# -- classic members of a consumer group ------------------------------------------------------------


class ClassicMembers:
    def __init__(self, manager: ConsumerGroupManager) -> None:
        self.manager = manager

    def join(self, holder: GroupMetadata, request: JoinRequest, callback: Callable[[JoinResult], None]) -> None:
        group = holder.consumer
        assert group is not None
        if request.protocol_type != CONSUMER_PROTOCOL_TYPE or not request.protocols:
            callback(JoinResult(request.member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        member_id = request.member_id
        existing = group.members.get(member_id) if member_id else None
        if existing is not None and not existing.uses_classic_protocol:
            callback(JoinResult(member_id, ErrorCode.UNKNOWN_MEMBER_ID))
            return
        if not member_id:  # a member id given back after MEMBER_ID_REQUIRED joins as a new member
            member_id = f"{request.client_id}-{uuid.uuid4()}"
            if request.require_known_member_id:
                callback(JoinResult(member_id, ErrorCode.MEMBER_ID_REQUIRED))
                return
        if existing is None and len(group.members) >= self.manager.settings.max_size:
            callback(JoinResult(member_id, ErrorCode.GROUP_MAX_SIZE_REACHED))
            return
        records: Records = []
        if existing is None and request.group_instance_id is not None:
            previous = group.static_member(request.group_instance_id)
            if previous is not None:  # a static member back under a new member id
                existing = self.manager.replace_static_member(group, previous, member_id, records)
        protocol_name, metadata = request.protocols[0]
        try:
            topics, owned_by_name = subscription_of(metadata)
        except (ValueError, IndexError, EOFError):
            callback(JoinResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        member = existing or ConsumerGroupMember(member_id, instance_id=request.group_instance_id)
        updated = replace(
            member,
            client_id=request.client_id,
            client_host=request.client_host,
            subscribed_topic_names=tuple(sorted(set(topics))),
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            classic_protocols=tuple(request.protocols),
            classic_session_timeout_ms=request.session_timeout_ms,
        )
        owned = self.manager.ids_of(owned_by_name)
        reconciled = self.manager.update_and_reconcile(group, member, updated, owned, records, is_new=existing is None)
        result = JoinResult(
            member_id,
            ErrorCode.NONE,
            generation_id=reconciled.member_epoch,
            protocol_type=CONSUMER_PROTOCOL_TYPE,
            protocol_name=protocol_name,
        )
        self.manager.write(
            group.group_id, records, lambda error: callback(result if not error else JoinResult(member_id, error))
        )

    def sync(
        self,
        holder: GroupMetadata,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        callback: Callable[[SyncResult], None],
    ) -> None:
        group = holder.consumer
        assert group is not None
        member = group.members.get(member_id)
        if member is None or not member.uses_classic_protocol:
            callback(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        if generation_id != member.member_epoch:
            callback(SyncResult(ErrorCode.ILLEGAL_GENERATION))
            return
        if protocol_type is not None and protocol_type != CONSUMER_PROTOCOL_TYPE:
            callback(SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        names = member.classic_protocols or ()
        chosen = protocol_name if protocol_name is not None else (names[0][0] if names else None)
        self.manager.schedule_session_timeout(group.group_id, member)
        assignment = encode_assignment(self.manager.names_of(member.assigned))
        callback(SyncResult(ErrorCode.NONE, CONSUMER_PROTOCOL_TYPE, chosen, assignment))

    def heartbeat(self, holder: GroupMetadata, member_id: str, generation_id: int) -> ErrorCode:
        group = holder.consumer
        assert group is not None
        member = group.members.get(member_id)
        if member is None or not member.uses_classic_protocol:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation_id != member.member_epoch:
            return ErrorCode.ILLEGAL_GENERATION
        self.manager.schedule_session_timeout(group.group_id, member)
        if member.state != MemberState.STABLE or member.member_epoch != group.group_epoch:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, holder: GroupMetadata, leaving: list[MemberIdentity]) -> LeaveResult:
        group = holder.consumer
        assert group is not None
        records: Records = []
        results = []
        for identity in leaving:
            member = group.members.get(identity.member_id)
            if member is None and identity.group_instance_id is not None:
                member = group.static_member(identity.group_instance_id)
                if member is not None and identity.member_id and member.member_id != identity.member_id:
                    results.append(
                        LeaveMemberResult(identity.member_id, identity.group_instance_id, ErrorCode.FENCED_INSTANCE_ID)
                    )
                    continue
            if member is None:
                results.append(
                    LeaveMemberResult(identity.member_id, identity.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID)
                )
                continue
            log.info("[GroupId %s] Member %s left the consumer group (LeaveGroup).", group.group_id, member.member_id)
            self.manager.fence(group, member.member_id, records)
            results.append(LeaveMemberResult(member.member_id, identity.group_instance_id, ErrorCode.NONE))
        self.manager.write(group.group_id, records, lambda error: None)
        return LeaveResult(ErrorCode.NONE, results)
