"""Consumer groups (KIP-848): ConsumerGroupHeartbeat, leaving, session and rebalance timeouts,
the target assignment and ConsumerGroupDescribe, as Kafka's GroupMetadataManager serves them.

A heartbeat (Kafka's consumerGroupHeartbeat) checks the request, finds or creates the member
(static members by instance id), records a changed subscription and bumps the group epoch when the
subscriptions or the subscribed topics' metadata changed, computes a new target assignment with
the server assignor when the group epoch passed the assignment epoch, then moves the member
towards its target (`group.reconcile`). Every change is written to `__consumer_offsets` as
Kafka 4's records (`records.py`); the answer waits for the write.

Errors as Kafka's: INVALID_REQUEST (with Kafka's messages), UNSUPPORTED_ASSIGNOR,
GROUP_ID_NOT_FOUND (the group is of another type), GROUP_MAX_SIZE_REACHED, UNKNOWN_MEMBER_ID,
FENCED_MEMBER_EPOCH, UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, INVALID_REGULAR_EXPRESSION.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import logging
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ....protocol.api_keys import ApiKey
from ....protocol.errors import ErrorCode
from ...runtime import LoopRuntime
from ..formats import group_key
from ..group import GroupMetadata
from ..state import EMPTY as CLASSIC_EMPTY
from . import records as rec
from .assignment import (
    ASSIGNORS,
    InvalidTopicRegex,
    MemberSubscription,
    PartitionAssignorError,
    TopicDescription,
    assignor_names,
    compile_topic_regex,
)
from .classic_members import ClassicMembers, upgrade
from .group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    Assignment,
    ConsumerGroup,
    ConsumerGroupMember,
    CurrentPartitionEpoch,
    MemberState,
    reconcile,
)

if TYPE_CHECKING:
    from ....cluster.store import MetadataStore
    from ....common.timer import TimerTask
    from ....config.broker import BrokerConfig
    from ..manager import GroupMetadataManager

log = logging.getLogger(__name__)

Records = list[tuple[bytes, bytes | None]]
GroupConfigLookup = Callable[[str], Mapping[str, str]]


class GroupError(Exception):
    """A heartbeat's failure: Kafka's error code and message."""

    def __init__(self, error: ErrorCode, message: str | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


@dataclass(frozen=True)
class ConsumerGroupSettings:
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    max_size: int = 2**31 - 1
    assignors: tuple[str, ...] = ("uniform", "range")
    enabled: bool = True
    migration_policy: str = "bidirectional"

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> ConsumerGroupSettings:
        return cls(
            int(config["group.consumer.session.timeout.ms"]),
            int(config["group.consumer.heartbeat.interval.ms"]),
            int(config["group.consumer.max.size"]),
            tuple(assignor_names(list(config["group.consumer.assignors"]))),
            "consumer" in config["group.coordinator.rebalance.protocols"],
            str(config["group.consumer.migration.policy"]).lower(),
        )


@dataclass
class HeartbeatRequest:
    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: list[str] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Assignment | None = None  # the request's TopicPartitions; None when absent
    client_id: str = ""
    client_host: str = ""
    api_version: int = 1
    authorized_topics: Callable[[set[str]], set[str]] | None = None  # topics the member may DESCRIBE


@dataclass
class HeartbeatResult:
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


@dataclass
class DescribedMember:
    member: ConsumerGroupMember
    target: Assignment


@dataclass
class DescribedGroup:
    group_id: str
    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor: str = ""
    members: list[DescribedMember] = field(default_factory=list)


Reply = Callable[[HeartbeatResult], None]


@dataclass(frozen=True)
class _Snapshot:
    """A group's consumer group state before a heartbeat, to restore if the heartbeat fails."""

    holder: GroupMetadata | None
    consumer: ConsumerGroup | None
    protocol_type: str | None
    generation_id: int

    @classmethod
    def of(cls, holder: GroupMetadata | None) -> _Snapshot:
        if holder is None:
            return cls(None, None, None, 0)
        consumer = None if holder.consumer is None else copy.deepcopy(holder.consumer)
        return cls(holder, consumer, holder.protocol_type, holder.generation_id)


class ConsumerGroupManager:
    def __init__(
        self,
        groups: GroupMetadataManager,
        runtime: LoopRuntime,
        settings: ConsumerGroupSettings,
        metadata: MetadataStore | None,
        group_config: GroupConfigLookup = lambda group_id: {},
        on_classic_group_converted: Callable[[GroupMetadata], None] = lambda holder: None,
    ) -> None:
        self.groups = groups
        self.runtime = runtime
        self.settings = settings
        self.metadata = metadata
        self.group_config = group_config
        self.on_classic_group_converted = on_classic_group_converted  # cancels the classic group's timers
        self.classic_members = ClassicMembers(self)
        self._session_timers: dict[tuple[str, str], TimerTask] = {}
        self._rebalance_timers: dict[tuple[str, str], TimerTask] = {}

    # -- settings per group ---------------------------------------------------------------------
    def session_timeout_ms(self, group_id: str) -> int:
        return int(self.group_config(group_id).get("consumer.session.timeout.ms", self.settings.session_timeout_ms))

    def heartbeat_interval_ms(self, group_id: str) -> int:
        value = self.group_config(group_id).get("consumer.heartbeat.interval.ms", self.settings.heartbeat_interval_ms)
        return int(value)

    @property
    def default_assignor(self) -> str:
        return self.settings.assignors[0]

    # -- ConsumerGroupHeartbeat --------------------------------------------------------------------
    def handle_heartbeat(self, request: HeartbeatRequest, reply: Reply) -> None:
        if not self.groups.is_active:
            reply(HeartbeatResult(ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        records: Records = []
        before = _Snapshot.of(self.groups.get_group(request.group_id))
        try:
            _validate_request(request, self.settings.assignors)
            error = self.groups.validate_group_status(request.group_id, ApiKey.CONSUMER_GROUP_HEARTBEAT)
            if error is not None:
                raise GroupError(error)
            if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                result = self._leave(request, records)
            else:
                result = self._heartbeat(request, records)
        except GroupError as e:
            self._restore(request.group_id, before)
            reply(HeartbeatResult(e.error, e.message))
            return

        def written(error: ErrorCode) -> None:
            if error != ErrorCode.NONE:
                self._restore(request.group_id, before)
                reply(HeartbeatResult(error))
            else:
                reply(result)

        self._write(request.group_id, records, written)

    def _restore(self, group_id: str, before: _Snapshot) -> None:
        """Undo what a heartbeat changed in memory when it failed or its records were not
        written (Kafka reverts to its last committed snapshot)."""
        holder = self.groups.get_group(group_id)
        if holder is None:
            return
        if before.holder is None:
            if holder.consumer is not None and not holder.offsets.has_offsets():
                self.groups.remove_group(holder)
            else:
                holder.consumer, holder.protocol_type = None, None
            return
        if holder is before.holder:
            holder.consumer, holder.protocol_type, holder.generation_id = (
                before.consumer,
                before.protocol_type,
                before.generation_id,
            )

    def _heartbeat(self, request: HeartbeatRequest, records: Records) -> HeartbeatResult:
        holder = self._group_for_heartbeat(request.group_id, request.member_epoch == 0, records)
        group = _consumer_group(holder)
        if request.member_epoch == 0 and request.member_id not in group.members:
            if len(group.members) >= self.settings.max_size:
                raise GroupError(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The consumer group has reached its maximum capacity of {self.settings.max_size} members.",
                )
        if request.instance_id is None:
            member = self._dynamic_member(group, request)
        else:
            member = self._static_member(group, request, records)
        updated = replace(
            member,
            instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(
                request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1 else member.rebalance_timeout_ms
            ),
            server_assignor=request.server_assignor if request.server_assignor is not None else member.server_assignor,
            subscribed_topic_names=(
                tuple(sorted(set(request.subscribed_topic_names)))
                if request.subscribed_topic_names is not None
                else member.subscribed_topic_names
            ),
            subscribed_topic_regex=(
                (request.subscribed_topic_regex or None)
                if request.subscribed_topic_regex is not None
                else member.subscribed_topic_regex
            ),
            client_id=request.client_id,
            client_host=request.client_host,
        )
        is_new = member.member_id not in group.members
        reconciled = self.update_and_reconcile(
            group, member, updated, request.owned, records, is_new=is_new, authorized=request.authorized_topics
        )
        full_request = request.member_epoch == 0 or (
            request.rebalance_timeout_ms != -1
            and (request.subscribed_topic_names is not None or request.subscribed_topic_regex is not None)
            and request.owned is not None
        )
        return HeartbeatResult(
            member_id=reconciled.member_id,
            member_epoch=reconciled.member_epoch,
            heartbeat_interval_ms=self.heartbeat_interval_ms(group.group_id),
            assignment=reconciled.assigned if full_request or reconciled.assigned != member.assigned else None,
        )

    def update_and_reconcile(
        self,
        group: ConsumerGroup,
        member: ConsumerGroupMember,
        updated: ConsumerGroupMember,
        owned: Assignment | None,
        records: Records,
        *,
        is_new: bool,
        authorized: Callable[[set[str]], set[str]] | None = None,
    ) -> ConsumerGroupMember:
        """Record `updated` (the member as its request describes it), bump the group epoch when
        the subscriptions or the subscribed topics changed, compute a new target assignment if
        the group epoch passed it, and move the member towards its target; the member now."""
        bump = False
        if not updated.metadata_equals(member) or is_new:
            records.append(_member_metadata_record(group.group_id, updated))
            bump = not updated.subscription_equals(member) or is_new
        group.update_member(updated)
        refresh = group.metadata_refresh_needed or bump
        group.metadata_refresh_needed = False
        if self._refresh_regexes(group, records, authorized, only_new=not refresh):
            bump = True
        metadata_hash = self._metadata_hash(group) if refresh or bump else group.metadata_hash
        if metadata_hash != group.metadata_hash:
            bump = True
        if bump:
            group.group_epoch += 1
            group.metadata_hash = metadata_hash
            records.append(
                (rec.key(rec.METADATA, group.group_id), rec.metadata_value(group.group_epoch, metadata_hash))
            )
            log.info("[GroupId %s] Bumped group epoch to %d.", group.group_id, group.group_epoch)
        if group.group_epoch > group.assignment_epoch:
            self._update_target_assignment(group, records)
        target = group.target_assignment.get(updated.member_id, {})
        reconciled = reconcile(updated, group.assignment_epoch, target, CurrentPartitionEpoch(group), owned)
        if not reconciled.assignment_equals(member) or is_new:
            records.append(_current_assignment_record(group.group_id, reconciled))
        group.update_member(reconciled)
        self.schedule_session_timeout(group.group_id, reconciled)
        self._maybe_schedule_rebalance_timeout(group.group_id, reconciled)
        return reconciled

    def schedule_session_timeout(self, group_id: str, member: ConsumerGroupMember) -> None:
        """(Re)start a member's session (a classic member's own session timeout)."""
        self._schedule_session_timeout(group_id, member.member_id, member.classic_session_timeout_ms)

    def _dynamic_member(self, group: ConsumerGroup, request: HeartbeatRequest) -> ConsumerGroupMember:
        member = group.members.get(request.member_id)
        if request.member_epoch == 0:
            if member is None:
                member_id = request.member_id or _new_member_id()
                request.member_id = member_id
                return ConsumerGroupMember(member_id)
            return member
        if member is None:
            raise GroupError(
                ErrorCode.UNKNOWN_MEMBER_ID,
                f"Member {request.member_id} is not a member of group {group.group_id}.",
            )
        _check_member_epoch(member, request)
        return member

    def _static_member(self, group: ConsumerGroup, request: HeartbeatRequest, records: Records) -> ConsumerGroupMember:
        instance_id = request.instance_id
        assert instance_id is not None
        existing = group.static_member(instance_id)
        if request.member_epoch == 0:
            if request.member_id == "":
                request.member_id = _new_member_id()
            if existing is None or existing.member_id == request.member_id and existing.member_epoch == 0:
                return existing or ConsumerGroupMember(request.member_id, instance_id=instance_id)
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                raise GroupError(
                    ErrorCode.UNRELEASED_INSTANCE_ID,
                    f"Static member {request.member_id} with instance id {instance_id} in {group.group_id} cannot "
                    f"join the group because the instance id is is owned by {existing.member_id} member.",
                )
            return self._replace_static_member(group, existing, request.member_id, records)
        if existing is None:
            raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != request.member_id:
            raise GroupError(
                ErrorCode.FENCED_INSTANCE_ID,
                f"Static member {request.member_id} with instance id {instance_id} is fenced by existing "
                f"member {existing.member_id}.",
            )
        _check_member_epoch(existing, request)
        return existing

    def _replace_static_member(
        self, group: ConsumerGroup, old: ConsumerGroupMember, member_id: str, records: Records
    ) -> ConsumerGroupMember:
        """A static member back within its session: the new member id takes over the old
        member's assignment and target, at epoch 0."""
        target = group.target_assignment.get(old.member_id, {})
        self._cancel_timers(group.group_id, old.member_id)
        records.extend(_member_tombstones(group.group_id, old.member_id))
        group.remove_member(old.member_id)
        member = replace(old, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        group.target_assignment[member_id] = target
        group.update_member(member)
        records.append(_member_metadata_record(group.group_id, member))
        records.append(
            (
                rec.key(rec.TARGET_ASSIGNMENT_MEMBER, group.group_id, member_id),
                rec.target_assignment_member_value(target),
            )
        )
        records.append(_current_assignment_record(group.group_id, member))
        return member

    def _leave(self, request: HeartbeatRequest, records: Records) -> HeartbeatResult:
        holder = self._group_for_heartbeat(request.group_id, False, records)
        group = _consumer_group(holder)
        if request.instance_id is None:
            member = group.members.get(request.member_id)
            if member is None:
                raise GroupError(
                    ErrorCode.UNKNOWN_MEMBER_ID,
                    f"Member {request.member_id} is not a member of group {group.group_id}.",
                )
        else:
            member = group.static_member(request.instance_id)
            if member is None:
                raise GroupError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {request.instance_id} is unknown.")
            if member.member_id != request.member_id:
                raise GroupError(
                    ErrorCode.FENCED_INSTANCE_ID,
                    f"Static member {request.member_id} with instance id {request.instance_id} is fenced by "
                    f"existing member {member.member_id}.",
                )
            if request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                log.info(
                    "[GroupId %s] Static member %s with instance id %s temporarily left the consumer group.",
                    group.group_id,
                    member.member_id,
                    request.instance_id,
                )
                leaving = replace(member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
                group.update_member(leaving)
                records.append(_current_assignment_record(group.group_id, leaving))
                self._schedule_session_timeout(group.group_id, member.member_id)
                return HeartbeatResult(member_id=member.member_id, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
        log.info("[GroupId %s] Member %s left the consumer group.", group.group_id, member.member_id)
        self._fence(group, member.member_id, records)
        return HeartbeatResult(member_id=member.member_id, member_epoch=request.member_epoch)

    def _fence(self, group: ConsumerGroup, member_id: str, records: Records) -> None:
        """Remove the member, its records, and bump the group epoch (Kafka's
        removeMemberAndCancelTimers + bump)."""
        self._cancel_timers(group.group_id, member_id)
        records.extend(_member_tombstones(group.group_id, member_id))
        group.remove_member(member_id)
        for regex in set(group.resolved_regexes) - group.regexes_in_use():
            del group.resolved_regexes[regex]
            records.append((rec.key(rec.REGULAR_EXPRESSION, group.group_id, regex=regex), None))
        group.metadata_hash = self._metadata_hash(group)
        group.group_epoch += 1
        records.append(
            (rec.key(rec.METADATA, group.group_id), rec.metadata_value(group.group_epoch, group.metadata_hash))
        )

    def classic_join(self, group_id: str) -> None:
        """A classic JoinGroup for an empty consumer group: it becomes a classic group again (its
        records deleted, its offsets kept), as Kafka's maybeDeleteEmptyConsumerGroup. (A consumer
        group with members serves the classic member itself: `classic_members`.)"""
        holder = self.groups.get_group(group_id)
        if holder is None or holder.consumer is None or holder.consumer.members:
            return
        records = group_tombstones(holder.consumer)
        holder.consumer = None
        holder.protocol_type = None
        self._write(group_id, records, lambda error: None)
        log.info("[GroupId %s] Converted the empty consumer group to a classic group.", group_id)

    # -- the group ----------------------------------------------------------------------------------
    def _group_for_heartbeat(self, group_id: str, create: bool, records: Records) -> GroupMetadata:
        holder = self.groups.get_group(group_id)
        if holder is not None and holder.consumer is None:
            if create and holder.is_(CLASSIC_EMPTY) and not holder.members:
                # an empty classic group becomes a consumer group: its record goes, its offsets stay
                if holder.generation_id > 0:
                    records.append((group_key(group_id), None))
                holder.consumer = ConsumerGroup(group_id)
                holder.protocol_type = "consumer"
                holder.generation_id = 0
                return holder
            why_not = upgrade(self, holder, records) if create and holder.members else "it is not empty"
            if why_not is None:
                return holder
            log.info("[GroupId %s] Cannot upgrade the classic group to a consumer group: %s.", group_id, why_not)
            raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        if holder is None or holder.consumer is None or holder.consumer.deleted:
            if not create:
                raise GroupError(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            holder = self.groups.get_or_create_group(group_id)
            holder.consumer = ConsumerGroup(group_id)
            holder.protocol_type = "consumer"
        return holder

    def _refresh_regexes(
        self,
        group: ConsumerGroup,
        records: Records,
        authorized: Callable[[set[str]], set[str]] | None,
        only_new: bool = False,
    ) -> bool:
        """Resolve the regexes the members use against the topics now (those the member may
        see); whether any resolution changed."""
        changed = False
        regexes = group.regexes_in_use()
        if only_new:
            regexes -= set(group.resolved_regexes)
        if not regexes:
            return False
        topics = set(self._topic_names())
        if authorized is not None:
            topics = authorized(topics)
        for regex in regexes:
            try:
                compiled = compile_topic_regex(regex)
            except InvalidTopicRegex:
                continue
            matching = frozenset(t for t in topics if compiled.matches(t))
            if group.resolved_regexes.get(regex) != matching:
                group.resolved_regexes[regex] = matching
                records.append(
                    (
                        rec.key(rec.REGULAR_EXPRESSION, group.group_id, regex=regex),
                        rec.regular_expression_value(
                            rec.ResolvedRegexRecord(matching, group.group_epoch + 1, self.runtime.now_ms())
                        ),
                    )
                )
                changed = True
        return changed

    def _update_target_assignment(self, group: ConsumerGroup, records: Records) -> None:
        topics = self._topic_descriptions(group.subscribed_topic_names())
        ids_by_name = {t.name: t.topic_id for t in topics.values()}
        subscriptions = {
            m.member_id: MemberSubscription(
                m.member_id,
                m.instance_id,
                m.rack_id,
                frozenset(ids_by_name[n] for n in group.member_topic_names(m) if n in ids_by_name),
                group.target_assignment.get(m.member_id, {}),
            )
            for m in group.members.values()
        }
        assignor = ASSIGNORS[group.preferred_server_assignor(self.default_assignor)]
        try:
            new_target = assignor.assign(subscriptions, topics) if subscriptions else {}
        except PartitionAssignorError as e:
            log.error("[GroupId %s] The '%s' assignor failed: %s", group.group_id, assignor.name, e)
            raise GroupError(ErrorCode.UNKNOWN_SERVER_ERROR, str(e)) from None
        for member_id in group.members:
            assignment = {t: ps for t, ps in new_target.get(member_id, {}).items() if ps}
            if assignment != group.target_assignment.get(member_id):
                group.target_assignment[member_id] = assignment
                records.append(
                    (
                        rec.key(rec.TARGET_ASSIGNMENT_MEMBER, group.group_id, member_id),
                        rec.target_assignment_member_value(assignment),
                    )
                )
        group.assignment_epoch = group.group_epoch
        records.append(
            (
                rec.key(rec.TARGET_ASSIGNMENT_METADATA, group.group_id),
                rec.target_assignment_metadata_value(group.assignment_epoch),
            )
        )
        log.info(
            "[GroupId %s] Computed a new target assignment for epoch %d with '%s' assignor.",
            group.group_id,
            group.assignment_epoch,
            assignor.name,
        )

    # -- topics ------------------------------------------------------------------------------------
    def _topic_names(self) -> list[str]:
        return [] if self.metadata is None else list(self.metadata.topics())

    def _topic_descriptions(self, names: set[str]) -> dict[uuid.UUID, TopicDescription]:
        if self.metadata is None:
            return {}
        racks = {b.broker_id: b.rack for b in self.metadata.brokers()}
        result = {}
        for name in sorted(names):
            info = self.metadata.topic(name)
            if info is None or not info.partitions:
                continue
            partition_racks = {
                p: frozenset(r for r in (racks.get(b) for b in state.replicas) if r is not None)
                for p, state in info.partitions.items()
            }
            result[info.topic_id] = TopicDescription(info.topic_id, name, len(info.partitions), partition_racks)
        return result

    def ids_of(self, by_name: Mapping[str, list[int]]) -> Assignment:
        """Partitions by topic name as partitions by topic id (unknown topics left out)."""
        result: Assignment = {}
        for name, partitions in by_name.items():
            info = None if self.metadata is None else self.metadata.topic(name)
            if info is not None and partitions:
                result[info.topic_id] = result.get(info.topic_id, frozenset()) | frozenset(partitions)
        return result

    def names_of(self, by_id: Assignment) -> dict[str, list[int]]:
        result: dict[str, list[int]] = {}
        for topic_id, partitions in by_id.items():
            name = self.topic_name(topic_id)
            if name is not None:
                result[name] = sorted(partitions)
        return result

    def metadata_hash_of(self, group: ConsumerGroup) -> int:
        return self._metadata_hash(group)

    def group_records(self, group: ConsumerGroup) -> Records:
        """Every record of `group` (a group converted from a classic one)."""
        records: Records = []
        for member in group.members.values():
            records.append(_member_metadata_record(group.group_id, member))
            records.append(
                (
                    rec.key(rec.TARGET_ASSIGNMENT_MEMBER, group.group_id, member.member_id),
                    rec.target_assignment_member_value(group.target_assignment.get(member.member_id, {})),
                )
            )
            records.append(_current_assignment_record(group.group_id, member))
        records.append(
            (rec.key(rec.METADATA, group.group_id), rec.metadata_value(group.group_epoch, group.metadata_hash))
        )
        records.append(
            (
                rec.key(rec.TARGET_ASSIGNMENT_METADATA, group.group_id),
                rec.target_assignment_metadata_value(group.assignment_epoch),
            )
        )
        return records

    def write(self, group_id: str, records: Records, callback: Callable[[ErrorCode], None]) -> None:
        self._write(group_id, records, callback)

    def fence(self, group: ConsumerGroup, member_id: str, records: Records) -> None:
        self._fence(group, member_id, records)

    def replace_static_member(
        self, group: ConsumerGroup, old: ConsumerGroupMember, member_id: str, records: Records
    ) -> ConsumerGroupMember:
        return self._replace_static_member(group, old, member_id, records)

    def topic_name(self, topic_id: uuid.UUID) -> str | None:
        if self.metadata is None:
            return None
        info = self.metadata.topic_by_id(topic_id)
        return None if info is None else info.name

    def _metadata_hash(self, group: ConsumerGroup) -> int:
        """A hash of the subscribed topics' ids, names, partition counts and racks: when it
        changes (a topic created, deleted or grown) the group epoch moves."""
        digest = hashlib.sha256()
        for topic in sorted(self._topic_descriptions(group.subscribed_topic_names()).values(), key=lambda t: t.name):
            digest.update(f"{topic.topic_id}|{topic.name}|{topic.partition_count}|".encode())
            for p in sorted(topic.partition_racks):
                digest.update(f"{p}:{','.join(sorted(topic.partition_racks[p]))};".encode())
        return int.from_bytes(digest.digest()[:8], "big", signed=True)

    def on_topic_changed(self, name: str) -> None:
        """A topic was created, deleted or changed: groups subscribed to it (or with a regex)
        rebalance on their next heartbeat."""
        for holder in self.groups.current_groups():
            group = holder.consumer
            if group is not None and (group.regexes_in_use() or name in group.subscribed_topic_names()):
                group.metadata_refresh_needed = True

    # -- timers -------------------------------------------------------------------------------------
    def _schedule_session_timeout(self, group_id: str, member_id: str, timeout_ms: int = -1) -> None:
        """(Re)start the member's session: the group's session timeout, or `timeout_ms` (a
        classic member's own)."""
        key = (group_id, member_id)
        old = self._session_timers.pop(key, None)
        if old is not None:
            old.cancel()
        self._session_timers[key] = self.runtime.call_later(
            timeout_ms if timeout_ms > 0 else self.session_timeout_ms(group_id),
            lambda: self._on_session_timeout(group_id, member_id),
        )

    def _on_session_timeout(self, group_id: str, member_id: str) -> None:
        self._session_timers.pop((group_id, member_id), None)
        self._expire(group_id, member_id, "failed")

    def _maybe_schedule_rebalance_timeout(self, group_id: str, member: ConsumerGroupMember) -> None:
        key = (group_id, member.member_id)
        if member.state != MemberState.UNREVOKED_PARTITIONS:
            old = self._rebalance_timers.pop(key, None)
            if old is not None:
                old.cancel()
            return
        if key in self._rebalance_timers:
            return
        epoch = member.member_epoch
        timeout = member.rebalance_timeout_ms if member.rebalance_timeout_ms > 0 else self.session_timeout_ms(group_id)

        def expire() -> None:
            self._rebalance_timers.pop(key, None)
            holder = self.groups.get_group(group_id)
            group = None if holder is None else holder.consumer
            current = None if group is None else group.members.get(member.member_id)
            if (
                current is not None
                and current.state == MemberState.UNREVOKED_PARTITIONS
                and current.member_epoch == epoch
            ):
                self._expire(group_id, member.member_id, "failed to revoke partitions within the rebalance timeout")

        self._rebalance_timers[key] = self.runtime.call_later(timeout, expire)

    def _expire(self, group_id: str, member_id: str, why: str) -> None:
        holder = self.groups.get_group(group_id)
        group = None if holder is None else holder.consumer
        if group is None or member_id not in group.members or not self.groups.is_group_local(group_id):
            return
        log.info("[GroupId %s] Member %s %s, removing it from the group.", group_id, member_id, why)
        records: Records = []
        self._fence(group, member_id, records)
        self._write(group_id, records, lambda error: None)

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        for timers in (self._session_timers, self._rebalance_timers):
            task = timers.pop((group_id, member_id), None)
            if task is not None:
                task.cancel()

    def on_group_loaded(self, holder: GroupMetadata) -> None:
        """A loaded consumer group's members get a fresh session."""
        if holder.consumer is not None:
            for member_id in holder.consumer.members:
                self._schedule_session_timeout(holder.group_id, member_id)

    def on_group_unloaded(self, holder: GroupMetadata) -> None:
        if holder.consumer is not None:
            for member_id in list(holder.consumer.members):
                self._cancel_timers(holder.group_id, member_id)

    # -- writing ------------------------------------------------------------------------------------
    def _write(self, group_id: str, records: Records, callback: Callable[[ErrorCode], None]) -> None:
        if not records:
            callback(ErrorCode.NONE)
            return
        from ..manager import _store_group_error

        self.groups.offsets_log.append(
            self.groups.partition_for(group_id),
            records,
            lambda error, _offset: callback(_store_group_error(error)),
            acks=self.groups.config.commit_required_acks,
        )

    # -- ConsumerGroupDescribe ----------------------------------------------------------------------
    def describe(self, group_id: str) -> DescribedGroup:
        error = self.groups.validate_group_status(group_id, ApiKey.CONSUMER_GROUP_DESCRIBE)
        if error is not None:
            return DescribedGroup(group_id, error)
        holder = self.groups.get_group(group_id)
        if holder is None or holder.consumer is not None and holder.consumer.deleted:
            return DescribedGroup(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if holder.consumer is None:
            return DescribedGroup(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        group = holder.consumer
        return DescribedGroup(
            group_id,
            state=group.state,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor=group.preferred_server_assignor(self.default_assignor),
            members=[DescribedMember(m, group.target_assignment.get(m.member_id, {})) for m in group.members.values()],
        )


# -- checks ------------------------------------------------------------------------------------------


def _validate_request(request: HeartbeatRequest, assignors: tuple[str, ...]) -> None:
    """Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid."""
    if request.api_version >= 1 or request.member_epoch > 0 or request.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
        _require_not_empty(request.member_id, "MemberId can't be empty.")
    _require_not_empty(request.group_id, "GroupId can't be empty.")
    _require_not_empty(request.instance_id, "InstanceId can't be empty.")
    _require_not_empty(request.rack_id, "RackId can't be empty.")
    if request.member_epoch == 0:
        if request.rebalance_timeout_ms == -1:
            raise GroupError(ErrorCode.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
        if request.owned is None or request.owned:
            raise GroupError(ErrorCode.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
        if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
            raise GroupError(
                ErrorCode.INVALID_REQUEST,
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
            )
    elif request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if request.instance_id is None:
            raise GroupError(ErrorCode.INVALID_REQUEST, "InstanceId can't be null.")
    elif request.member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise GroupError(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
    if request.server_assignor is not None and request.server_assignor not in assignors:
        raise GroupError(
            ErrorCode.UNSUPPORTED_ASSIGNOR,
            f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: {', '.join(assignors)}.",
        )
    if request.subscribed_topic_regex:
        try:
            compile_topic_regex(request.subscribed_topic_regex)
        except InvalidTopicRegex as e:
            raise GroupError(ErrorCode.INVALID_REGULAR_EXPRESSION, str(e)) from None


def _require_not_empty(value: str | None, message: str) -> None:
    if value is not None and value.strip() == "":
        raise GroupError(ErrorCode.INVALID_REQUEST, message)


def _check_member_epoch(member: ConsumerGroupMember, request: HeartbeatRequest) -> None:
    """Kafka's throwIfMemberEpochIsInvalid: a member one epoch behind that owns no more than
    its assignment only lost the last answer."""
    received = request.member_epoch
    if received > member.member_epoch:
        raise GroupError(
            ErrorCode.FENCED_MEMBER_EPOCH,
            f"The consumer group member has a greater member epoch ({received}) than the one known by the group "
            f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
        )
    if received < member.member_epoch:
        if received != member.previous_member_epoch or not _is_subset(request.owned, member.assigned):
            raise GroupError(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The consumer group member has a smaller member epoch ({received}) than the one known by the group "
                f"coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )


def _is_subset(owned: Assignment | None, assigned: Assignment) -> bool:
    if owned is None:
        return True
    return all(parts <= assigned.get(topic_id, frozenset()) for topic_id, parts in owned.items())


def _consumer_group(holder: GroupMetadata) -> ConsumerGroup:
    assert holder.consumer is not None
    return holder.consumer


def _new_member_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


# -- records ------------------------------------------------------------------------------------------


def _member_metadata_record(group_id: str, member: ConsumerGroupMember) -> tuple[bytes, bytes]:
    return (
        rec.key(rec.MEMBER_METADATA, group_id, member.member_id),
        rec.member_metadata_value(
            rec.MemberMetadataRecord(
                member.instance_id,
                member.rack_id,
                member.client_id,
                member.client_host,
                member.subscribed_topic_names,
                member.subscribed_topic_regex,
                member.rebalance_timeout_ms,
                member.server_assignor,
                member.classic_protocols,
            )
        ),
    )


def _current_assignment_record(group_id: str, member: ConsumerGroupMember) -> tuple[bytes, bytes]:
    return (
        rec.key(rec.CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id),
        rec.current_assignment_value(
            rec.CurrentAssignmentRecord(
                member.member_epoch,
                member.previous_member_epoch,
                int(member.state),
                member.assigned,
                member.pending_revocation,
            )
        ),
    )


def group_tombstones(group: ConsumerGroup) -> Records:
    """The tombstones that delete an empty consumer group (Kafka's createGroupTombstoneRecords)."""
    group.deleted = True
    result: Records = [
        (rec.key(rec.REGULAR_EXPRESSION, group.group_id, regex=regex), None) for regex in group.resolved_regexes
    ]
    result.append((rec.key(rec.TARGET_ASSIGNMENT_METADATA, group.group_id), None))
    result.append((rec.key(rec.METADATA, group.group_id), None))
    return result


def _member_tombstones(group_id: str, member_id: str) -> Records:
    return [
        (rec.key(rec.CURRENT_MEMBER_ASSIGNMENT, group_id, member_id), None),
        (rec.key(rec.TARGET_ASSIGNMENT_MEMBER, group_id, member_id), None),
        (rec.key(rec.MEMBER_METADATA, group_id, member_id), None),
    ]


def build_member(
    member_id: str, metadata: rec.MemberMetadataRecord | None, current: rec.CurrentAssignmentRecord | None
) -> ConsumerGroupMember:
    """A member as replayed from its records."""
    member = ConsumerGroupMember(member_id)
    if metadata is not None:
        member = replace(
            member,
            instance_id=metadata.instance_id,
            rack_id=metadata.rack_id,
            client_id=metadata.client_id,
            client_host=metadata.client_host,
            subscribed_topic_names=metadata.subscribed_topic_names,
            subscribed_topic_regex=metadata.subscribed_topic_regex,
            rebalance_timeout_ms=metadata.rebalance_timeout_ms,
            server_assignor=metadata.server_assignor,
            classic_protocols=metadata.classic_protocols,
        )
    if current is not None:
        member = replace(
            member,
            member_epoch=current.member_epoch,
            previous_member_epoch=current.previous_member_epoch,
            state=MemberState(current.state)
            if current.state in MemberState._value2member_map_
            else MemberState.UNKNOWN,
            assigned=dict(current.assigned),
            pending_revocation=dict(current.pending_revocation),
        )
    return member
