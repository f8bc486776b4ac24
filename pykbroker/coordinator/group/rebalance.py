"""The rebalance of a classic group and the clocks around it (Kafka 3.9's GroupCoordinator).

PreparingRebalance collects JoinGroup requests until every known member rejoined or the rebalance
timeout passed (dynamic members that did not rejoin are dropped; static ones stay); the next
generation picks a protocol all members support and answers every JoinGroup (the leader gets the
members' metadata); CompletingRebalance waits for the leader's SyncGroup, and for every member's
SyncGroup up to the rebalance timeout; the group is then Stable until a member joins, leaves,
changes its metadata or misses its session timeout.

Each member has a heartbeat deadline: its session timeout (the new-member join timeout while it
waits for its first JoinGroup answer). Members waiting in JoinGroup or SyncGroup are excused.

The join and sync waits are delayed operations in `join_purgatory` and `sync_purgatory`, watching
the group (the object, so that a group re-created under the same id never completes its
predecessor's wait). A member that misses its heartbeat deadline (`heartbeats.py`) is removed
here, and the group rebalances. A group that is loaded may need a rebalance; one that is unloaded
answers its waiting members NOT_COORDINATOR.
"""

from __future__ import annotations

import logging

from ...common.purgatory import DelayedOperationPurgatory
from ...protocol.errors import ErrorCode
from ..runtime import LoopRuntime
from .config import GroupConfig
from .delayed import DelayedJoin, DelayedSync, InitialDelayedJoin
from .group import GroupMetadata
from .heartbeats import Heartbeats
from .manager import GroupMetadataManager
from .member import MemberMetadata
from .model import UNKNOWN_MEMBER_ID, JoinResult, SyncResult
from .state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE

log = logging.getLogger(__name__)


def current_generation_result(
    group: GroupMetadata,
    member_id: str,
    *,
    with_members: bool = True,
    leader_id: str | None = None,
    skip_assignment: bool = False,
) -> JoinResult:
    """The JoinGroup answer of the group's current generation (the leader gets the members)."""
    is_leader = group.is_leader(member_id)
    leader = group.leader_id if leader_id is None else leader_id
    if leader is None:  # a group with a member always has a leader
        raise RuntimeError(f"group {group.group_id} has no leader for member {member_id}")
    return JoinResult(
        member_id=member_id,
        error=ErrorCode.NONE,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader_id=leader,
        skip_assignment=skip_assignment,
        members=group.current_member_metadata() if with_members and is_leader else [],
    )


class Rebalance:
    def __init__(self, groups: GroupMetadataManager, config: GroupConfig, runtime: LoopRuntime) -> None:
        self.groups = groups
        self.config = config
        self.join_purgatory = DelayedOperationPurgatory("Rebalance", runtime.timer)
        self.sync_purgatory = DelayedOperationPurgatory("Sync", runtime.timer)
        self.heartbeats = Heartbeats(runtime, self._on_heartbeat_expired)

    def maybe_prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.can_rebalance:
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: GroupMetadata, reason: str) -> None:
        if group.is_(COMPLETING_REBALANCE):
            self.reset_and_propagate_assignment_error(group, ErrorCode.REBALANCE_IN_PROGRESS)
        self.remove_sync_expiration(group)
        delay = self.config.initial_rebalance_delay_ms
        operation: DelayedJoin
        if group.is_(EMPTY):
            operation = InitialDelayedJoin(self, group, delay, delay, max(group.rebalance_timeout_ms - delay, 0))
        else:
            operation = DelayedJoin(self, group, group.rebalance_timeout_ms)
        group.transition_to(PREPARING_REBALANCE)
        log.info(
            "Preparing to rebalance group %s in state %s with old generation %d (__consumer_offsets-%d) (reason: %s)",
            group.group_id,
            group.state,
            group.generation_id,
            self.groups.partition_for(group.group_id),
            reason,
        )
        self.start_join_operation(group, operation)

    def start_join_operation(self, group: GroupMetadata, operation: DelayedJoin) -> None:
        group.join_operation = operation
        self.join_purgatory.try_complete_else_watch(operation, [group])

    def check_join(self, group: GroupMetadata) -> None:
        self.join_purgatory.check_and_complete(group)

    def on_complete_join(self, group: GroupMetadata) -> None:
        for member in [m for m in group.not_yet_rejoined_members() if not m.is_static]:
            log.info("Group %s removed dynamic member %s, which did not rejoin", group.group_id, member.member_id)
            group.remove(member.member_id)
            self.heartbeats.cancel_heartbeat(group, member.member_id)
        if group.is_(DEAD):
            log.info("Group %s is dead, skipping rebalance stage", group.group_id)
        elif not group.maybe_elect_new_joined_leader() and group.members:
            log.error("Group %s could not complete rebalance because no members rejoined", group.group_id)
            self.start_join_operation(group, DelayedJoin(self, group, group.rebalance_timeout_ms))
        else:
            self._start_next_generation(group)

    def _start_next_generation(self, group: GroupMetadata) -> None:
        group.init_next_generation()
        if group.is_(EMPTY):
            log.info("Group %s with generation %d is now empty", group.group_id, group.generation_id)
            self.groups.store_group(group, {}, lambda error: _warn_if_failed(group, error))
            return
        log.info(
            "Stabilized group %s generation %d (__consumer_offsets-%d) with %d members",
            group.group_id,
            group.generation_id,
            self.groups.partition_for(group.group_id),
            group.size,
        )
        for member in list(group.members.values()):
            group.invoke_join_callback(member, current_generation_result(group, member.member_id))
            self.heartbeats.complete_and_schedule_next_heartbeat(group, member)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        self._schedule_pending_sync(group)

    def _schedule_pending_sync(self, group: GroupMetadata) -> None:
        group.sync_operation = DelayedSync(self, group, group.generation_id, group.rebalance_timeout_ms)
        self.sync_purgatory.try_complete_else_watch(group.sync_operation, [group])

    def remove_pending_sync_member(self, group: GroupMetadata, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        self._check_sync(group)

    def remove_sync_expiration(self, group: GroupMetadata) -> None:
        group.pending_sync_members.clear()
        self._check_sync(group)

    def _check_sync(self, group: GroupMetadata) -> None:
        self.sync_purgatory.check_and_complete(group)

    def is_pending_sync_done(self, group: GroupMetadata, generation_id: int) -> bool:
        if generation_id != group.generation_id:
            return True
        if group.state in (DEAD, EMPTY, PREPARING_REBALANCE):
            return True
        return group.has_received_sync_from_all_members()

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None:
        if generation_id != group.generation_id or group.state not in (COMPLETING_REBALANCE, STABLE):
            return
        if group.has_received_sync_from_all_members():
            return
        missing = sorted(group.pending_sync_members)
        for member_id in missing:
            group.remove(member_id)
            self.heartbeats.cancel_heartbeat(group, member_id)
        log.info("Group %s removed members who did not send their SyncGroup: %s", group.group_id, missing)
        self.prepare_rebalance(group, f"Removing {missing} on pending sync request expiration")

    def set_and_propagate_assignment(self, group: GroupMetadata, assignment: dict[str, bytes]) -> None:
        for member in group.members.values():
            member.assignment = bytes(assignment.get(member.member_id, b""))
        self._propagate_assignment(group, ErrorCode.NONE)

    def reset_and_propagate_assignment_error(self, group: GroupMetadata, error: ErrorCode) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: GroupMetadata, error: ErrorCode) -> None:
        ok = error == ErrorCode.NONE
        for member in list(group.members.values()):
            result = SyncResult(
                error, group.protocol_type if ok else None, group.protocol_name if ok else None, member.assignment
            )
            if group.invoke_sync_callback(member, result):
                # members whose session ran out while waiting get a fresh session
                self.heartbeats.complete_and_schedule_next_heartbeat(group, member)

    def remove_member_and_update_group(self, group: GroupMetadata, member: MemberMetadata, reason: str) -> None:
        # a new member may still wait in JoinGroup: tell it to join again
        group.invoke_join_callback(member, JoinResult(UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        if group.state in (STABLE, COMPLETING_REBALANCE):
            self.maybe_prepare_rebalance(group, reason)
        elif group.is_(PREPARING_REBALANCE):
            self.check_join(group)

    def remove_pending_member(self, group: GroupMetadata, member_id: str) -> None:
        group.remove(member_id)
        if group.is_(PREPARING_REBALANCE):
            self.check_join(group)

    def _on_heartbeat_expired(self, group: GroupMetadata, member_id: str, pending: bool) -> None:
        if group.is_(DEAD):
            return
        if pending:
            if group.is_pending_member(member_id):
                log.info(
                    "Pending member %s in group %s has been removed after session timeout expiration",
                    member_id,
                    group.group_id,
                )
                self.remove_pending_member(group, member_id)
            return
        if not group.has(member_id):
            return
        member = group.get(member_id)
        if member.expires_on_heartbeat_timeout():
            log.info("Member %s in group %s has failed, removing it from the group", member_id, group.group_id)
            self.remove_member_and_update_group(group, member, f"removing member {member_id} on heartbeat expiration")

    def on_group_unloaded(self, group: GroupMetadata) -> None:
        log.info("Unloading group metadata for %s with generation %d", group.group_id, group.generation_id)
        previous = group.state
        group.transition_to(DEAD)
        if previous is PREPARING_REBALANCE:
            for member in list(group.members.values()):
                group.invoke_join_callback(member, JoinResult(member.member_id, ErrorCode.NOT_COORDINATOR))
            self.check_join(group)
        elif previous in (STABLE, COMPLETING_REBALANCE):
            for member in list(group.members.values()):
                group.invoke_sync_callback(member, SyncResult(ErrorCode.NOT_COORDINATOR))
        self.heartbeats.cancel_all(group)
        self.remove_sync_expiration(group)

    def on_group_loaded(self, group: GroupMetadata) -> None:
        log.info("Loading group metadata for %s with generation %d", group.group_id, group.generation_id)
        if group.size > self.config.max_size:
            self.prepare_rebalance(
                group,
                f"Freshly-loaded group is over capacity "
                f"({self.config.max_size}). Rebalancing in order "
                "to give a chance for consumers to commit offsets",
            )
        for member in list(group.members.values()):
            self.heartbeats.complete_and_schedule_next_heartbeat(group, member)


def _warn_if_failed(group: GroupMetadata, error: ErrorCode) -> None:
    # harmless: without members, an older generation coming back after a failover expires
    if error != ErrorCode.NONE:
        log.warning("Failed to write empty metadata for group %s: %s", group.group_id, error.name)
