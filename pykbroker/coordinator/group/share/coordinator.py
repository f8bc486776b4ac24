"""The share group coordinator (KIP-932, as Kafka 4.1's GroupMetadataManager serves share groups):
ShareGroupHeartbeat, ShareGroupDescribe, the share-group part of ListGroups and DeleteGroups, and
Describe/Alter/DeleteShareGroupOffsets through the share persister.

Share groups live beside the classic groups, in the same `__consumer_offsets` partition
(`partition_for(group_id)`), loaded and unloaded with it; the group id namespace is shared: a
share request for a group of another type answers GROUP_ID_NOT_FOUND ("Group g is not a share
group."), and classic requests for a share group are refused by the classic coordinator.

A heartbeat, in order: request checks (INVALID_REQUEST), coordinator checks, the group (created by
a member joining with epoch 0), the member (joining: GROUP_MAX_SIZE_REACHED past
`group.share.max.size`; else UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH), its subscription; a new
member, a changed subscription or a changed partition count of a subscribed topic bumps the group
epoch; a group epoch past the assignment epoch computes the target assignment (the `simple`
assignor, over the partitions whose share state is initialized); the member takes its target
assignment at once (share members never revoke) and its session timer restarts. The records of
each change are written before the answer. Partitions of subscribed topics without share state
are then initialized through the persister (start offset -1: the share-partition leader chooses
it from `share.auto.offset.reset`), recorded as initializing then initialized, and the group
epoch is bumped so that the next heartbeat assigns them.

A member leaves with epoch -1 or when its session (`share.session.timeout.ms`, the group's config
or the broker's `group.share.session.timeout.ms`) expires; listeners added with
`add_share_group_listener` hear of it (share sessions release its records).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ....config.groups import SHARE_HEARTBEAT_INTERVAL, SHARE_SESSION_TIMEOUT
from ....protocol.api_keys import ApiKey
from ....protocol.errors import ErrorCode
from ...partition_io import LoadedRecord, runtime_append_error
from ...runtime import LoopRuntime, Reply
from ...share.persister import SharePersister
from ..assignors import MemberSubscription, SimpleAssignor, TopicDescription
from ..log_io import OffsetsLog, Records
from ..manager import GroupMetadataManager
from ..state import DEAD
from . import records as rec
from .model import EMPTY, SHARE_GROUP_TYPE, SHARE_PROTOCOL_TYPE, SIMPLE_ASSIGNOR, ShareGroup, ShareGroupMember
from .records import Assignment
from .replay import replay_share_groups
from .results import (
    DescribedMember,
    DescribedShareGroup,
    HeartbeatResult,
    OffsetsResult,
    PartitionResult,
    TopicResult,
)

if TYPE_CHECKING:
    from ....config.broker import BrokerConfig

log = logging.getLogger(__name__)

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
UNINITIALIZED_START_OFFSET = -1

MemberLeaveListener = Callable[[str, str], None]  # (group id, member id)
GroupConfigSource = Callable[[str], Mapping[str, str]]


@dataclass(frozen=True)
class ShareGroupConfig:
    """The broker's share group settings (group configs override the timeouts per group)."""

    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 5000
    max_size: int = 200

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> ShareGroupConfig:
        return cls(
            int(config["group.share.session.timeout.ms"]),
            int(config["group.share.heartbeat.interval.ms"]),
            int(config["group.share.max.size"]),
        )


class TopicsView:
    """What the share coordinator reads of the cluster's topics (a MetadataStore)."""

    def __init__(self, metadata: object | None) -> None:
        self._metadata = metadata

    def by_name(self, name: str) -> tuple[uuid.UUID, int] | None:
        info = None if self._metadata is None else self._metadata.topic(name)  # type: ignore[attr-defined]
        return None if info is None else (info.topic_id, len(info.partitions))

    def name_of(self, topic_id: uuid.UUID) -> str | None:
        if self._metadata is None:
            return None
        info = self._metadata.topic_by_id(topic_id)  # type: ignore[attr-defined]
        return None if info is None else str(info.name)


class _AppendFailed(Exception):
    def __init__(self, error: ErrorCode) -> None:
        super().__init__(error.name)
        self.error = error


class ShareGroupCoordinator:
    def __init__(
        self,
        manager: GroupMetadataManager,
        offsets_log: OffsetsLog,
        runtime: LoopRuntime,
        config: ShareGroupConfig,
        topics: TopicsView,
        persister: SharePersister,
        group_config: GroupConfigSource = lambda group_id: {},
        acks: int = -1,
    ) -> None:
        self.manager = manager
        self.offsets_log = offsets_log
        self.runtime = runtime
        self.config = config
        self.topics = topics
        self.persister = persister
        self.group_config = group_config
        self.acks = acks
        self.groups: dict[str, ShareGroup] = {}
        self._listeners: list[MemberLeaveListener] = []

    # -- hooks -----------------------------------------------------------------------------
    def add_share_group_listener(self, on_member_leave: MemberLeaveListener) -> None:
        self._listeners.append(on_member_leave)

    def is_share_group(self, group_id: str) -> bool:
        return group_id in self.groups

    # -- loading ---------------------------------------------------------------------------
    def on_partition_loaded(self, partition: int, records: Sequence[LoadedRecord]) -> None:
        for group in replay_share_groups(records):
            if self.manager.partition_for(group.group_id) != partition:
                continue
            self.groups[group.group_id] = group
            group.initializing = {}  # interrupted: initialized again on the next heartbeat, as Kafka retries
            for member_id in group.members:
                self._schedule_session(group, member_id)

    def on_partition_unloaded(self, partition: int) -> None:
        for group in [g for g in self.groups.values() if self.manager.partition_for(g.group_id) == partition]:
            self._cancel_sessions(group)
            del self.groups[group.group_id]

    # -- ShareGroupHeartbeat ---------------------------------------------------------------
    async def heartbeat(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        rack_id: str | None,
        subscribed_topic_names: list[str] | None,
        client_id: str,
        client_host: str,
    ) -> HeartbeatResult:
        invalid = _invalid_heartbeat(group_id, member_id, member_epoch, rack_id, subscribed_topic_names)
        if invalid is not None:
            return HeartbeatResult(ErrorCode.INVALID_REQUEST, invalid)
        error = self.manager.validate_group_status(group_id, ApiKey.SHARE_GROUP_HEARTBEAT)
        if error is not None:
            return HeartbeatResult(error)
        if self._is_other_type(group_id):
            return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        try:
            if member_epoch == LEAVE_EPOCH:
                return await self._leave(group_id, member_id)
            return await self._heartbeat(
                group_id, member_id, member_epoch, rack_id, subscribed_topic_names, client_id, client_host
            )
        except _AppendFailed as failed:
            return HeartbeatResult(runtime_append_error(failed.error))

    async def _heartbeat(
        self,
        group_id: str,
        member_id: str,
        member_epoch: int,
        rack_id: str | None,
        subscribed_topic_names: list[str] | None,
        client_id: str,
        client_host: str,
    ) -> HeartbeatResult:
        group = self.groups.get(group_id)
        if group is None:
            if member_epoch != JOIN_EPOCH:
                return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
            group = ShareGroup(group_id)
        member = group.members.get(member_id)
        if member is None:
            if member_epoch != JOIN_EPOCH:
                return HeartbeatResult(
                    ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}."
                )
            if len(group.members) >= self.config.max_size:
                return HeartbeatResult(
                    ErrorCode.GROUP_MAX_SIZE_REACHED,
                    f"The share group has reached its maximum capacity of {self.config.max_size} members.",
                )
            member = ShareGroupMember(member_id)
        elif member_epoch not in (JOIN_EPOCH, member.member_epoch):
            return HeartbeatResult(
                ErrorCode.FENCED_MEMBER_EPOCH,
                f"The share group member has a {'smaller' if member_epoch < member.member_epoch else 'larger'} "
                f"member epoch ({member_epoch}) than the one known by the group coordinator "
                f"({member.member_epoch}). The member must abandon all its partitions and rejoin.",
            )
        self.groups.setdefault(group_id, group)
        records: Records = []
        bump = self._update_member(group, member, rack_id, subscribed_topic_names, client_id, client_host, records)
        metadata_hash = self._metadata_hash(group)
        if bump or metadata_hash != group.metadata_hash:
            group.group_epoch += 1
            group.metadata_hash = metadata_hash
            records.append(_group_metadata_record(group))
        if group.group_epoch > group.assignment_epoch:
            self._compute_target_assignment(group, records)
        previous = dict(member.assigned)
        self._reconcile(group, member, records)
        self._schedule_session(group, member.member_id)
        to_initialize = self._mark_initializing(group, records)
        await self._append(group_id, records)
        if to_initialize:
            self.runtime.spawn(self._initialize_state, group, to_initialize)
        full = member_epoch == JOIN_EPOCH or subscribed_topic_names is not None
        return HeartbeatResult(
            member_id=member.member_id,
            member_epoch=member.member_epoch,
            heartbeat_interval_ms=self._heartbeat_interval_ms(group_id),
            assignment=dict(member.assigned) if full or member.assigned != previous else None,
        )

    def _update_member(
        self,
        group: ShareGroup,
        member: ShareGroupMember,
        rack_id: str | None,
        subscribed_topic_names: list[str] | None,
        client_id: str,
        client_host: str,
        records: Records,
    ) -> bool:
        """Take the member's new details; whether the group epoch must be bumped."""
        is_new = member.member_id not in group.members
        changed = is_new or member.client_id != client_id or member.client_host != client_host
        subscription_changed = False
        if rack_id is not None and rack_id != member.rack_id:
            member.rack_id = rack_id
            changed = True
        if subscribed_topic_names is not None:
            topics = tuple(sorted(set(subscribed_topic_names)))
            if topics != member.subscribed_topic_names:
                member.subscribed_topic_names = topics
                changed = subscription_changed = True
        member.client_id, member.client_host = client_id, client_host
        group.members[member.member_id] = member
        if changed:
            records.append(_member_metadata_record(group.group_id, member))
        return is_new or subscription_changed

    def _metadata_hash(self, group: ShareGroup) -> int:
        """A hash of the subscribed topics' ids and partition counts: it changes when they do."""
        parts = []
        for name in sorted(group.subscribed_topic_names()):
            topic = self.topics.by_name(name)
            if topic is not None:
                parts.append(f"{name}:{topic[0]}:{topic[1]}")
        if not parts:
            return 0
        digest = hashlib.sha256(";".join(parts).encode()).digest()
        return int.from_bytes(digest[:8], "big", signed=True)

    def _compute_target_assignment(self, group: ShareGroup, records: Records) -> None:
        assignor = SimpleAssignor()
        topic_ids: dict[str, uuid.UUID] = {}
        descriptions = {}
        for name in group.subscribed_topic_names():
            topic = self.topics.by_name(name)
            if topic is None:
                continue
            topic_id, count = topic
            initialized = group.initialized.get(topic_id, frozenset())
            if not initialized:
                continue
            topic_ids[name] = topic_id
            # Only the partitions with initialized share state are assigned (Kafka 4.1).
            descriptions[topic_id] = TopicDescription(topic_id, name, count, {})
        subscriptions = {
            m.member_id: MemberSubscription(
                m.member_id,
                None,
                m.rack_id,
                frozenset(topic_ids[n] for n in m.subscribed_topic_names if n in topic_ids),
                group.target.get(m.member_id, {}),
            )
            for m in group.members.values()
        }
        computed = assignor.assign(subscriptions, descriptions, assignable=dict(group.initialized))
        target: dict[str, Assignment] = {}
        for member_id in group.members:
            assignment = {
                tid: frozenset(p for p in parts if group.is_initialized(tid, p))
                for tid, parts in computed.get(member_id, {}).items()
            }
            target[member_id] = {tid: parts for tid, parts in assignment.items() if parts}
            if target[member_id] != group.target.get(member_id):
                records.append(_target_member_record(group.group_id, member_id, target[member_id]))
        group.target = target
        group.assignment_epoch = group.group_epoch
        records.append(
            (
                rec.key(rec.TARGET_ASSIGNMENT_METADATA, group.group_id),
                rec.target_assignment_metadata_value(group.assignment_epoch),
            )
        )

    def _reconcile(self, group: ShareGroup, member: ShareGroupMember, records: Records) -> None:
        """A share member takes its target assignment as soon as it heartbeats."""
        target = group.target.get(member.member_id, {})
        if member.member_epoch == group.assignment_epoch and member.assigned == target:
            return
        member.previous_member_epoch = member.member_epoch
        member.member_epoch = group.assignment_epoch
        member.assigned = dict(target)
        records.append(_current_assignment_record(group.group_id, member))

    # -- leaving ---------------------------------------------------------------------------
    async def _leave(self, group_id: str, member_id: str) -> HeartbeatResult:
        group = self.groups.get(group_id)
        if group is None:
            return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        if member_id not in group.members:
            return HeartbeatResult(
                ErrorCode.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}."
            )
        await self._append(group_id, self._remove_member(group, member_id))
        return HeartbeatResult(
            member_id=member_id, member_epoch=LEAVE_EPOCH, heartbeat_interval_ms=self._heartbeat_interval_ms(group_id)
        )

    def _remove_member(self, group: ShareGroup, member_id: str) -> Records:
        """Forget the member; the records that say so (the group epoch is bumped)."""
        group.members.pop(member_id, None)
        group.target.pop(member_id, None)
        timer = group.session_timers.pop(member_id, None)
        if timer is not None:
            timer.cancel()
        group.group_epoch += 1
        records: Records = [
            (rec.key(rec.CURRENT_MEMBER_ASSIGNMENT, group.group_id, member_id), None),
            (rec.key(rec.TARGET_ASSIGNMENT_MEMBER, group.group_id, member_id), None),
            (rec.key(rec.MEMBER_METADATA, group.group_id, member_id), None),
            _group_metadata_record(group),
        ]
        for listener in self._listeners:
            try:
                listener(group.group_id, member_id)
            except Exception:
                log.exception("A share group listener failed on member %s leaving %s", member_id, group.group_id)
        return records

    def _schedule_session(self, group: ShareGroup, member_id: str) -> None:
        timer = group.session_timers.pop(member_id, None)
        if timer is not None:
            timer.cancel()
        timeout = self._session_timeout_ms(group.group_id)
        group.session_timers[member_id] = self.runtime.call_later(
            timeout, lambda: self._session_expired(group, member_id)
        )

    def _session_expired(self, group: ShareGroup, member_id: str) -> None:
        group.session_timers.pop(member_id, None)
        if self.groups.get(group.group_id) is not group or member_id not in group.members:
            return
        log.info("[GroupId %s] Member %s fenced from the group because its session expired.", group.group_id, member_id)
        records = self._remove_member(group, member_id)
        self.offsets_log.append(self.manager.partition_for(group.group_id), records, None, acks=self.acks)

    def _cancel_sessions(self, group: ShareGroup) -> None:
        for timer in group.session_timers.values():
            timer.cancel()
        group.session_timers.clear()

    def _session_timeout_ms(self, group_id: str) -> int:
        return int(self.group_config(group_id).get(SHARE_SESSION_TIMEOUT, self.config.session_timeout_ms))

    def _heartbeat_interval_ms(self, group_id: str) -> int:
        return int(self.group_config(group_id).get(SHARE_HEARTBEAT_INTERVAL, self.config.heartbeat_interval_ms))

    # -- share-partition state -------------------------------------------------------------
    def _mark_initializing(self, group: ShareGroup, records: Records) -> dict[uuid.UUID, frozenset[int]]:
        """The partitions of subscribed topics without share state, now being initialized."""
        wanted: dict[uuid.UUID, frozenset[int]] = {}
        for name in group.subscribed_topic_names():
            topic = self.topics.by_name(name)
            if topic is None:
                continue
            topic_id, count = topic
            missing = frozenset(p for p in range(count) if not group.has_state(topic_id, p))
            if missing:
                wanted[topic_id] = missing
                group.topic_names[topic_id] = name
        if wanted:
            for topic_id, partitions in wanted.items():
                group.initializing[topic_id] = group.initializing.get(topic_id, frozenset()) | partitions
            records.append(_state_partitions_record(group))
        return wanted

    async def _initialize_state(
        self, group: ShareGroup, partitions: dict[uuid.UUID, frozenset[int]], start_offset: int = -1
    ) -> dict[tuple[uuid.UUID, int], ErrorCode]:
        """Initialize the partitions' share state; record those done as initialized and bump the
        group epoch so that they are assigned. The error of each partition."""
        errors: dict[tuple[uuid.UUID, int], ErrorCode] = {}
        for topic_id, parts in partitions.items():
            for partition in sorted(parts):
                try:
                    errors[(topic_id, partition)] = await self.persister.initialize_state(
                        group.group_id, topic_id, partition, group.group_epoch, start_offset
                    )
                except Exception:
                    log.exception(
                        "Initializing the share state of %s %s-%d failed", group.group_id, topic_id, partition
                    )
                    errors[(topic_id, partition)] = ErrorCode.UNKNOWN_SERVER_ERROR
        if self.groups.get(group.group_id) is not group:
            return errors
        for (topic_id, partition), error in errors.items():
            group.initializing[topic_id] = group.initializing.get(topic_id, frozenset()) - {partition}
            if error == ErrorCode.NONE:
                group.initialized[topic_id] = group.initialized.get(topic_id, frozenset()) | {partition}
        group.initializing = {t: p for t, p in group.initializing.items() if p}
        group.group_epoch += 1
        try:
            await self._append(group.group_id, [_state_partitions_record(group), _group_metadata_record(group)])
        except _AppendFailed as failed:
            log.warning("Recording the initialized share state of %s failed: %s", group.group_id, failed.error.name)
        return errors

    def on_topic_deleted(self, name: str) -> None:
        """A deleted topic's partitions are no longer initialized in the group (Kafka's
        maybeCleanupShareGroupState); the share coordinator deletes their state itself, as the
        metadata drops the topic (the persister would refuse: the topic is unknown by then)."""
        for group in list(self.groups.values()):
            if not self.manager.is_group_local(group.group_id):
                continue
            topic_ids = [
                t
                for t, n in group.topic_names.items()
                if n == name and (t in group.initialized or t in group.initializing)
            ]
            if topic_ids:
                self.runtime.spawn(self._clean_up_deleted_topics, group, topic_ids)

    async def _clean_up_deleted_topics(self, group: ShareGroup, topic_ids: list[uuid.UUID]) -> None:
        for topic_id in topic_ids:
            group.initialized.pop(topic_id, None)
            group.initializing.pop(topic_id, None)
            group.deleting.discard(topic_id)
        if self.groups.get(group.group_id) is group:
            try:
                await self._append(group.group_id, [_state_partitions_record(group)])
            except _AppendFailed as failed:
                log.warning("Recording the deleted share state of %s failed: %s", group.group_id, failed.error.name)

    # -- writing ---------------------------------------------------------------------------
    async def _append(self, group_id: str, records: Records) -> None:
        if not records:
            return
        reply: Reply[ErrorCode] = Reply()
        self.offsets_log.append(
            self.manager.partition_for(group_id), records, lambda error, _offset: reply.set(error), acks=self.acks
        )
        error = await reply.wait()
        if error != ErrorCode.NONE:
            raise _AppendFailed(error)

    def _is_other_type(self, group_id: str) -> bool:
        classic = self.manager.get_group(group_id)
        return classic is not None and not classic.is_(DEAD)

    # -- ShareGroupDescribe ----------------------------------------------------------------
    def describe(self, group_id: str) -> DescribedShareGroup:
        error = self.manager.validate_group_status(group_id, ApiKey.SHARE_GROUP_DESCRIBE)
        if error is not None:
            return DescribedShareGroup(group_id, error)
        group = self.groups.get(group_id)
        if group is None:
            if self._is_other_type(group_id):
                return DescribedShareGroup(
                    group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group."
                )
            return DescribedShareGroup(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        return DescribedShareGroup(
            group_id,
            state=group.state,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor=SIMPLE_ASSIGNOR,
            members=[self._describe_member(m) for m in group.members.values()],
        )

    def _describe_member(self, member: ShareGroupMember) -> DescribedMember:
        assignment = []
        for topic_id, partitions in sorted(member.assigned.items()):
            name = self.topics.name_of(topic_id)
            if name is not None:
                assignment.append((topic_id, name, sorted(partitions)))
        return DescribedMember(
            member.member_id,
            member.rack_id,
            member.member_epoch,
            member.client_id,
            member.client_host,
            list(member.subscribed_topic_names),
            assignment,
        )

    # -- ListGroups and DeleteGroups -------------------------------------------------------
    def overviews(self, states: list[str] | None, types: list[str] | None) -> list[tuple[str, str, str, str]]:
        """(group id, protocol type, state, group type) of the share groups the filters keep."""
        wanted_states = {s.lower() for s in states or []}
        wanted_types = {t.lower() for t in types or []}
        if wanted_types and SHARE_GROUP_TYPE not in wanted_types:
            return []
        return [
            (g.group_id, SHARE_PROTOCOL_TYPE, g.state, SHARE_GROUP_TYPE)
            for g in self.groups.values()
            if self.manager.is_group_local(g.group_id) and (not wanted_states or g.state.lower() in wanted_states)
        ]

    def delete_group(self, group_id: str) -> ErrorCode:
        """Delete an empty share group: tombstones for its records, its share state deleted
        through the persister (in the background). NON_EMPTY_GROUP while it has members."""
        group = self.groups[group_id]
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        with_state = {
            t: group.initialized.get(t, frozenset()) | group.initializing.get(t, frozenset())
            for t in set(group.initialized) | set(group.initializing)
        }
        del self.groups[group_id]
        self._cancel_sessions(group)
        self.offsets_log.append(self.manager.partition_for(group_id), _group_tombstones(group), None, acks=self.acks)
        if with_state:
            self.runtime.spawn(self._delete_state, group_id, with_state)
        return ErrorCode.NONE

    async def _delete_state(self, group_id: str, partitions: dict[uuid.UUID, frozenset[int]]) -> None:
        for topic_id, parts in partitions.items():
            for partition in sorted(parts):
                error = await self.persister.delete_state(group_id, topic_id, partition)
                if error != ErrorCode.NONE:
                    log.warning("Deleting the share state of %s %s-%d: %s", group_id, topic_id, partition, error.name)

    # -- Describe/Alter/DeleteShareGroupOffsets --------------------------------------------
    def _share_group_or_error(self, group_id: str, api: ApiKey) -> tuple[ShareGroup | None, OffsetsResult | None]:
        error = self.manager.validate_group_status(group_id, api)
        if error is not None:
            return None, OffsetsResult(error, error.message)
        group = self.groups.get(group_id)
        if group is None:
            if self._is_other_type(group_id):
                return None, OffsetsResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
            return None, OffsetsResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
        return group, None

    async def describe_offsets(self, group_id: str, topics: list[tuple[str, list[int]]] | None) -> OffsetsResult:
        """The start offsets of the partitions asked for, as the persister's state summaries give
        them, as Kafka's describeShareGroupOffsets: an unknown topic, or a partition the persister
        has no state for, is "no data" (start offset -1), not an error. Without `topics`: every
        partition with initialized state (the group must be a share group)."""
        if topics is None:
            group, failed = self._share_group_or_error(group_id, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS)
            if group is None:
                return failed or OffsetsResult()
            topics = [
                (name, sorted(group.initialized[tid]))
                for tid in sorted(group.initialized)
                if (name := self.topics.name_of(tid)) is not None
            ]
        else:
            error = self.manager.validate_group_status(group_id, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS)
            if error is not None:
                return OffsetsResult(error, error.message)
        known, unknown = [], []
        for name, partitions in topics:
            topic = self.topics.by_name(name)
            if topic is None:
                unknown.append(TopicResult(name, uuid.UUID(int=0), [_no_offset(p) for p in partitions]))
            else:
                known.append(
                    TopicResult(
                        name, topic[0], [await self._describe_partition(group_id, topic[0], p) for p in partitions]
                    )
                )
        return OffsetsResult(topics=known + unknown)  # Kafka lists the unknown topics last

    async def _describe_partition(self, group_id: str, topic_id: uuid.UUID, partition: int) -> PartitionResult:
        summary = await self.persister.read_summary(group_id, topic_id, partition, 0)
        if summary.error != ErrorCode.NONE:
            return _no_offset(partition)
        return PartitionResult(partition, start_offset=summary.start_offset, leader_epoch=summary.leader_epoch)

    async def alter_offsets(self, group_id: str, topics: list[tuple[str, list[tuple[int, int]]]]) -> OffsetsResult:
        error = self.manager.validate_group_status(group_id, ApiKey.ALTER_SHARE_GROUP_OFFSETS)
        if error is not None:
            return OffsetsResult(error, error.message)
        if self._is_other_type(group_id) and group_id not in self.groups:
            return OffsetsResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        group = self.groups.get(group_id)
        if group is not None and group.members:
            return OffsetsResult(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
        if group is None:  # altering offsets creates an empty share group, as in Kafka
            group = ShareGroup(group_id)
            self.groups[group_id] = group
            try:
                await self._append(group_id, [_group_metadata_record(group)])
            except _AppendFailed as failed:
                return OffsetsResult(runtime_append_error(failed.error))
        results = []
        for name, partitions in topics:
            results.append(await self._alter_topic(group, name, partitions))
        return OffsetsResult(topics=results)

    async def _alter_topic(self, group: ShareGroup, name: str, partitions: list[tuple[int, int]]) -> TopicResult:
        topic = self.topics.by_name(name)
        unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if topic is None:
            return TopicResult(
                name, uuid.UUID(int=0), [PartitionResult(p, unknown, unknown.message) for p, _ in partitions]
            )
        topic_id, count = topic
        group.topic_names[topic_id] = name
        results: dict[int, PartitionResult] = {}
        for partition, offset in partitions:
            if not 0 <= partition < count:
                results[partition] = PartitionResult(partition, unknown, unknown.message)
                continue
            group.initializing[topic_id] = group.initializing.get(topic_id, frozenset()) | {partition}
            errors = await self._initialize_state(group, {topic_id: frozenset({partition})}, offset)
            error = errors.get((topic_id, partition), ErrorCode.NONE)
            results[partition] = PartitionResult(partition, error, None if error == ErrorCode.NONE else error.message)
        return TopicResult(name, topic_id, [results[p] for p, _ in partitions if p in results])

    async def delete_offsets(self, group_id: str, topic_names: list[str]) -> OffsetsResult:
        group, failed = self._share_group_or_error(group_id, ApiKey.DELETE_SHARE_GROUP_OFFSETS)
        if group is None:
            return failed or OffsetsResult()
        if group.members:
            return OffsetsResult(ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
        results = []
        for name in topic_names:
            topic = self.topics.by_name(name)
            topic_id = None if topic is None else topic[0]
            if topic_id is None or (topic_id not in group.initialized and topic_id not in group.initializing):
                unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                results.append(TopicResult(name, topic_id or uuid.UUID(int=0), error=unknown, message=unknown.message))
                continue
            results.append(await self._delete_topic_state(group, name, topic_id))
        return OffsetsResult(topics=results)

    async def _delete_topic_state(self, group: ShareGroup, name: str, topic_id: uuid.UUID) -> TopicResult:
        partitions = group.initialized.get(topic_id, frozenset()) | group.initializing.get(topic_id, frozenset())
        group.deleting.add(topic_id)
        try:
            await self._append(group.group_id, [_state_partitions_record(group)])
        except _AppendFailed as failed:
            return TopicResult(name, topic_id, error=runtime_append_error(failed.error))
        error = ErrorCode.NONE
        for partition in sorted(partitions):
            result = await self.persister.delete_state(group.group_id, topic_id, partition)
            if result != ErrorCode.NONE:
                error = result
        group.deleting.discard(topic_id)
        if error == ErrorCode.NONE:
            group.initialized.pop(topic_id, None)
            group.initializing.pop(topic_id, None)
        try:
            await self._append(group.group_id, [_state_partitions_record(group)])
        except _AppendFailed as failed:
            error = runtime_append_error(failed.error)
        return TopicResult(name, topic_id, error=error, message=None if error == ErrorCode.NONE else error.message)


# -- request checks -----------------------------------------------------------------------------


def _no_offset(partition: int) -> PartitionResult:
    """A partition without share state to describe: start offset -1, the default leader epoch."""
    return PartitionResult(partition, start_offset=UNINITIALIZED_START_OFFSET, leader_epoch=0)


def _invalid_heartbeat(
    group_id: str, member_id: str, member_epoch: int, rack_id: str | None, topics: list[str] | None
) -> str | None:
    """Kafka's message for a malformed ShareGroupHeartbeat; None if it is well formed."""
    if not member_id.strip():
        return "MemberId can't be empty."
    if not group_id.strip():
        return "GroupId can't be empty."
    if rack_id is not None and not rack_id.strip():
        return "RackId can't be empty."
    if member_epoch == JOIN_EPOCH:
        if not topics:
            return "SubscribedTopicNames must be set in first request."
    elif member_epoch < LEAVE_EPOCH:
        return "MemberEpoch is invalid."
    return None


# -- records of a group ------------------------------------------------------------------------


def _group_metadata_record(group: ShareGroup) -> tuple[bytes, bytes | None]:
    return rec.key(rec.GROUP_METADATA, group.group_id), rec.group_metadata_value(group.group_epoch, group.metadata_hash)


def _member_metadata_record(group_id: str, member: ShareGroupMember) -> tuple[bytes, bytes | None]:
    return (
        rec.key(rec.MEMBER_METADATA, group_id, member.member_id),
        rec.member_metadata_value(
            rec.MemberMetadata(member.rack_id, member.client_id, member.client_host, member.subscribed_topic_names)
        ),
    )


def _target_member_record(group_id: str, member_id: str, assignment: Assignment) -> tuple[bytes, bytes | None]:
    return rec.key(rec.TARGET_ASSIGNMENT_MEMBER, group_id, member_id), rec.target_assignment_member_value(assignment)


def _current_assignment_record(group_id: str, member: ShareGroupMember) -> tuple[bytes, bytes | None]:
    return (
        rec.key(rec.CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id),
        rec.current_assignment_value(
            rec.CurrentAssignment(member.member_epoch, member.previous_member_epoch, member.assigned)
        ),
    )


def _state_partitions_record(group: ShareGroup) -> tuple[bytes, bytes | None]:
    return (
        rec.key(rec.STATE_PARTITION_METADATA, group.group_id),
        rec.state_partitions_value(
            rec.StatePartitions(
                dict(group.initializing), dict(group.initialized), frozenset(group.deleting), dict(group.topic_names)
            )
        ),
    )


def _group_tombstones(group: ShareGroup) -> Records:
    records: Records = []
    for member_id in group.members:
        records += [
            (rec.key(rec.CURRENT_MEMBER_ASSIGNMENT, group.group_id, member_id), None),
            (rec.key(rec.TARGET_ASSIGNMENT_MEMBER, group.group_id, member_id), None),
            (rec.key(rec.MEMBER_METADATA, group.group_id, member_id), None),
        ]
    return records + [
        (rec.key(rec.TARGET_ASSIGNMENT_METADATA, group.group_id), None),
        (rec.key(rec.STATE_PARTITION_METADATA, group.group_id), None),
        (rec.key(rec.GROUP_METADATA, group.group_id), None),
    ]


__all__ = ["EMPTY", "ShareGroupConfig", "ShareGroupCoordinator", "TopicsView"]
