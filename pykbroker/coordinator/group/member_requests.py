"""What members send within a generation: SyncGroup (the leader's assignment in, each
member's assignment out), Heartbeat (keeps the session; REBALANCE_IN_PROGRESS tells the member to
rejoin) and LeaveGroup (by member id, or by group instance id for an administrator removing a
static member).

`MemberRequests` finds groups through the `GroupMetadataManager` and moves their rebalance through
the `Rebalance`; SyncGroup answers through a callback, since followers wait for the leader's
assignment.
"""

from __future__ import annotations

import logging

from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from .group import GroupMetadata
from .heartbeats import Heartbeats
from .manager import GroupMetadataManager
from .member import SyncCallback, chain_callbacks
from .model import UNKNOWN_MEMBER_ID, LeaveMemberResult, LeaveResult, MemberIdentity, SyncResult
from .rebalance import Rebalance
from .state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE

log = logging.getLogger(__name__)


class MemberRequests:
    def __init__(self, groups: GroupMetadataManager, rebalance: Rebalance, heartbeats: Heartbeats) -> None:
        self.groups = groups
        self.rebalance = rebalance
        self.heartbeats = heartbeats

    def handle_sync_group(
        self,
        group_id: str,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
        assignments: dict[str, bytes],
        callback: SyncCallback,
    ) -> None:
        error = self.groups.validate_group_status(group_id, ApiKey.SYNC_GROUP)
        if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            # the rebalance's state was lost with the old coordinator: start over at JoinGroup
            callback(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
            return
        if error is not None:
            callback(SyncResult(error))
            return
        group = self.groups.get_group(group_id)
        if group is None:
            callback(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
            return
        error = self._validate_sync_group(
            group, generation_id, member_id, protocol_type, protocol_name, group_instance_id
        )
        if error is not None:
            callback(SyncResult(error))
        elif group.is_(EMPTY):
            callback(SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))
        elif group.is_(PREPARING_REBALANCE):
            callback(SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        elif group.is_(COMPLETING_REBALANCE):
            self._sync_completing_group(group, member_id, assignments, callback)
        elif group.is_(STABLE):
            self.rebalance.remove_pending_sync_member(group, member_id)
            member = group.get(member_id)
            callback(SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment))
            self.heartbeats.complete_and_schedule_next_heartbeat(group, member)

    def _validate_sync_group(
        self,
        group: GroupMetadata,
        generation_id: int,
        member_id: str,
        protocol_type: str | None,
        protocol_name: str | None,
        group_instance_id: str | None,
    ) -> ErrorCode | None:
        if group.is_(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = group.validate_current_member(member_id, group_instance_id)
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if protocol_type is not None and protocol_type != group.protocol_type:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        if protocol_name is not None and protocol_name != group.protocol_name:
            return ErrorCode.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _sync_completing_group(
        self, group: GroupMetadata, member_id: str, assignments: dict[str, bytes], callback: SyncCallback
    ) -> None:
        member = group.get(member_id)
        member.awaiting_sync = chain_callbacks(member.awaiting_sync, callback)
        self.rebalance.remove_pending_sync_member(group, member_id)
        if not group.is_leader(member_id):
            return
        log.info(
            "Assignment received from leader %s for group %s for generation %d. The "
            "group has %d members, %d of which are static.",
            member_id,
            group.group_id,
            group.generation_id,
            group.size,
            len(group.static_members),
        )
        missing = [m for m in group.members if m not in assignments]
        if missing:
            log.warning(
                "Setting empty assignments for members %s of %s for generation %d",
                missing,
                group.group_id,
                group.generation_id,
            )
        assignment = {**assignments, **{m: b"" for m in missing}}
        generation_id = group.generation_id

        def stored(error: ErrorCode) -> None:
            if not (group.is_(COMPLETING_REBALANCE) and group.generation_id == generation_id):
                return  # the group moved on while the assignment was being stored
            if error != ErrorCode.NONE:
                self.rebalance.reset_and_propagate_assignment_error(group, error)
                self.rebalance.maybe_prepare_rebalance(
                    group, f"Error {error.name} when storing group assignment during SyncGroup (member: {member_id})"
                )
            else:
                self.rebalance.set_and_propagate_assignment(group, assignment)
                group.transition_to(STABLE)

        self.groups.store_group(group, assignment, stored)

    def handle_heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation_id: int
    ) -> ErrorCode:
        error = self.groups.validate_group_status(group_id, ApiKey.HEARTBEAT)
        if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
            return ErrorCode.NONE  # the group is still loading: answer blindly
        if error is not None:
            return error
        group = self.groups.get_group(group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if group.is_(DEAD):
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        error = group.validate_current_member(member_id, group_instance_id)
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        if group.is_(EMPTY):
            return ErrorCode.UNKNOWN_MEMBER_ID
        self.heartbeats.complete_and_schedule_next_heartbeat(group, group.get(member_id))
        if group.is_(PREPARING_REBALANCE):
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def handle_leave_group(self, group_id: str, leaving: list[MemberIdentity]) -> LeaveResult:
        error = self.groups.validate_group_status(group_id, ApiKey.LEAVE_GROUP)
        if error is not None:
            return LeaveResult(error)
        group = self.groups.get_group(group_id)
        if group is None:
            return LeaveResult(
                ErrorCode.NONE,
                [LeaveMemberResult(m.member_id, m.group_instance_id, ErrorCode.UNKNOWN_MEMBER_ID) for m in leaving],
            )
        if group.is_(DEAD):
            return LeaveResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
        return LeaveResult(
            ErrorCode.NONE,
            [LeaveMemberResult(m.member_id, m.group_instance_id, self._leave(group, m)) for m in leaving],
        )

    def _leave(self, group: GroupMetadata, leaving: MemberIdentity) -> ErrorCode:
        reason = leaving.reason or "not provided"
        if leaving.member_id == UNKNOWN_MEMBER_ID:
            # administrative removal of a static member by its group.instance.id
            member_id = group.current_static_member_id(leaving.group_instance_id)
            if member_id is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            self._remove_current_member(group, member_id, reason)
            return ErrorCode.NONE
        if group.is_pending_member(leaving.member_id):
            self.rebalance.remove_pending_member(group, leaving.member_id)
            self.heartbeats.cancel_heartbeat(group, leaving.member_id)
            log.info(
                "Pending member %s has left group %s through explicit LeaveGroup", leaving.member_id, group.group_id
            )
            return ErrorCode.NONE
        error = group.validate_current_member(leaving.member_id, leaving.group_instance_id)
        if error is not None:
            return error
        self._remove_current_member(group, leaving.member_id, reason)
        return ErrorCode.NONE

    def _remove_current_member(self, group: GroupMetadata, member_id: str, reason: str) -> None:
        member = group.get(member_id)
        self.rebalance.remove_member_and_update_group(
            group, member, f"Removing member {member_id} on LeaveGroup; client reason: {reason}"
        )
        self.heartbeats.cancel_heartbeat(group, member_id)
        log.info(
            "Member %s has left group %s through explicit LeaveGroup; client reason: %s",
            member_id,
            group.group_id,
            reason,
        )
