"""JoinGroup: members joining a classic group, which (re)starts a rebalance (Kafka 3.9's
GroupCoordinator rules).

- Dynamic members joining with an empty member id in JoinGroup v4+ get MEMBER_ID_REQUIRED with
  their new id and must join again with it before their session timeout.
- Static members (group.instance.id, KIP-345) that rejoin with an empty member id take over
  their old membership under a new member id; the old id is fenced (FENCED_INSTANCE_ID). A
  Stable group is not rebalanced for that unless the group's protocol would change; JoinGroup
  v9+ lets a rejoining static leader skip the assignment (KIP-814).
- A new member must share the group's protocol type and at least one protocol with every
  member (INCONSISTENT_GROUP_PROTOCOL); `group.max.size` caps the group
  (GROUP_MAX_SIZE_REACHED); the session timeout must lie within
  `group.min.session.timeout.ms`..`group.max.session.timeout.ms` (INVALID_SESSION_TIMEOUT).

The answer is given through a callback once the rebalance's join phase completes (see
`rebalance.py`). `Joining` finds and creates groups through the `GroupMetadataManager`, starts
rebalances through the `Rebalance` and sets the members' deadlines through its `Heartbeats`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from .config import GroupConfig
from .group import GroupMetadata
from .heartbeats import Heartbeats
from .manager import GroupMetadataManager
from .member import JoinCallback, MemberMetadata, Protocols
from .model import UNKNOWN_MEMBER_ID, JoinResult, SyncResult
from .rebalance import Rebalance, current_generation_result
from .state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE

log = logging.getLogger(__name__)

NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000


@dataclass(frozen=True)
class JoinRequest:
    group_id: str
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: Protocols
    require_known_member_id: bool = False
    supports_skipping_assignment: bool = False
    reason: str | None = None


class Joining:
    def __init__(
        self, groups: GroupMetadataManager, config: GroupConfig, rebalance: Rebalance, heartbeats: Heartbeats
    ) -> None:
        self.groups = groups
        self.config = config
        self.rebalance = rebalance
        self.heartbeats = heartbeats

    def handle_join_group(self, request: JoinRequest, callback: JoinCallback) -> None:
        error = self.groups.validate_group_status(request.group_id, ApiKey.JOIN_GROUP)
        if error is not None:
            callback(JoinResult(request.member_id, error))
            return
        config = self.config
        if not (config.min_session_timeout_ms <= request.session_timeout_ms <= config.max_session_timeout_ms):
            callback(JoinResult(request.member_id, ErrorCode.INVALID_SESSION_TIMEOUT))
            return
        is_unknown = request.member_id == UNKNOWN_MEMBER_ID
        group = self.groups.get_or_maybe_create_group(request.group_id, is_unknown)
        if group is None:
            callback(JoinResult(request.member_id, ErrorCode.UNKNOWN_MEMBER_ID))
            return
        if not self._accepts_joining_member(group, request.member_id):
            group.remove(request.member_id)
            callback(JoinResult(UNKNOWN_MEMBER_ID, ErrorCode.GROUP_MAX_SIZE_REACHED))
        elif is_unknown:
            self._join_new_member(group, request, callback)
        else:
            self._join_current_member(group, request, callback)
        if group.is_(PREPARING_REBALANCE):
            self.rebalance.check_join(group)

    def _accepts_joining_member(self, group: GroupMetadata, member_id: str) -> bool:
        max_size = self.config.max_size
        if group.state in (EMPTY, DEAD):
            return True
        if group.is_(PREPARING_REBALANCE):
            return (
                group.has(member_id) and group.get(member_id).is_awaiting_join
            ) or group.num_awaiting_join < max_size
        return group.has(member_id) or group.size < max_size

    def _join_new_member(self, group: GroupMetadata, request: JoinRequest, callback: JoinCallback) -> None:
        if group.is_(DEAD):
            callback(JoinResult(UNKNOWN_MEMBER_ID, ErrorCode.COORDINATOR_NOT_AVAILABLE))
            return
        if not group.supports_protocols(request.protocol_type, _names(request.protocols)):
            callback(JoinResult(UNKNOWN_MEMBER_ID, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
            return
        new_member_id = group.generate_member_id(request.client_id, request.group_instance_id)
        if request.group_instance_id is not None:
            old_member_id = group.current_static_member_id(request.group_instance_id)
            if old_member_id is not None:
                log.info(
                    "Static member with group.instance.id=%s and unknown member id joins "
                    "group %s in %s state; replacing member %s",
                    request.group_instance_id,
                    group.group_id,
                    group.state,
                    old_member_id,
                )
                self._update_static_member_and_rebalance(group, old_member_id, new_member_id, request, callback)
            else:
                self._add_member_and_rebalance(group, new_member_id, request, callback)
        elif request.require_known_member_id:
            group.pending_members.add(new_member_id)
            self.heartbeats.schedule_heartbeat_expiration(
                group, new_member_id, request.session_timeout_ms, pending=True
            )
            callback(JoinResult(new_member_id, ErrorCode.MEMBER_ID_REQUIRED))
        else:
            self._add_member_and_rebalance(group, new_member_id, request, callback)

    def _join_current_member(self, group: GroupMetadata, request: JoinRequest, callback: JoinCallback) -> None:
        member_id = request.member_id
        if group.is_(DEAD):
            callback(JoinResult(member_id, ErrorCode.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(request.protocol_type, _names(request.protocols)):
            callback(JoinResult(member_id, ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
        elif group.is_pending_member(member_id):
            if request.group_instance_id is not None:  # pending members are never static
                callback(JoinResult(member_id, ErrorCode.UNKNOWN_SERVER_ERROR))
                return
            log.info("Pending dynamic member %s joins group %s in %s state", member_id, group.group_id, group.state)
            self._add_member_and_rebalance(group, member_id, request, callback)
        else:
            error = group.validate_current_member(member_id, request.group_instance_id)
            if error is not None:
                callback(JoinResult(member_id, error))
            else:
                self._rejoin_known_member(group, group.get(member_id), request, callback)

    def _rejoin_known_member(
        self, group: GroupMetadata, member: MemberMetadata, request: JoinRequest, callback: JoinCallback
    ) -> None:
        reason = f"client reason: {request.reason or 'not provided'}"
        if group.is_(PREPARING_REBALANCE):
            self._update_member_and_rebalance(
                group, member, request, callback, f"Member {member.member_id} joining; {reason}"
            )
        elif group.is_(COMPLETING_REBALANCE):
            if member.matches(request.protocols):
                # the member may have missed its JoinGroup answer: give it again
                callback(current_generation_result(group, member.member_id))
            else:
                self._update_member_and_rebalance(
                    group, member, request, callback, f"Updating metadata for member {member.member_id}; {reason}"
                )
        elif group.is_(STABLE):
            if group.is_leader(member.member_id) or not member.matches(request.protocols):
                # a leader's JoinGroup forces a rebalance, e.g. for changed topic metadata
                self._update_member_and_rebalance(
                    group, member, request, callback, f"Member {member.member_id} rejoining a stable group; {reason}"
                )
            else:
                callback(current_generation_result(group, member.member_id, with_members=False))
        else:
            log.warning(
                "Rejoining member %s of group %s in unexpected state %s", member.member_id, group.group_id, group.state
            )
            callback(JoinResult(member.member_id, ErrorCode.UNKNOWN_MEMBER_ID))

    def _add_member_and_rebalance(
        self, group: GroupMetadata, member_id: str, request: JoinRequest, callback: JoinCallback
    ) -> None:
        member = MemberMetadata(
            member_id,
            request.group_instance_id,
            request.client_id,
            request.client_host,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            request.protocol_type,
            request.protocols,
        )
        member.is_new = True
        if group.is_(PREPARING_REBALANCE) and group.generation_id == 0:
            group.new_member_added = True
        group.add(member, callback)
        # a new member cannot heartbeat before it has its member id: it gets the longer
        # new-member join timeout instead of its session timeout
        self.heartbeats.schedule_heartbeat_expiration(group, member_id, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self.rebalance.maybe_prepare_rebalance(
            group,
            f"Adding new member {member_id} with group instance id "
            f"{request.group_instance_id}; client reason: {request.reason or 'not provided'}",
        )

    def _update_member_and_rebalance(
        self, group: GroupMetadata, member: MemberMetadata, request: JoinRequest, callback: JoinCallback, reason: str
    ) -> None:
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, callback
        )
        self.rebalance.maybe_prepare_rebalance(group, reason)

    def _update_static_member_and_rebalance(
        self, group: GroupMetadata, old_member_id: str, new_member_id: str, request: JoinRequest, callback: JoinCallback
    ) -> None:
        instance_id = request.group_instance_id
        if instance_id is None:  # the caller replaces only a static member
            raise ValueError(f"member {old_member_id} of group {group.group_id} has no group instance id")
        current_leader = group.leader_id
        member = group.replace_static_member(
            instance_id,
            old_member_id,
            new_member_id,
            JoinResult(old_member_id, ErrorCode.FENCED_INSTANCE_ID),
            SyncResult(ErrorCode.FENCED_INSTANCE_ID),
        )
        self.heartbeats.cancel_heartbeat(group, old_member_id)
        self.heartbeats.complete_and_schedule_next_heartbeat(group, member)
        old_protocols = list(member.protocols)
        old_timeouts = (member.rebalance_timeout_ms, member.session_timeout_ms)
        group.update_member(
            member, request.protocols, request.rebalance_timeout_ms, request.session_timeout_ms, callback
        )
        if group.is_(STABLE):
            if group.protocol_name != group.select_protocol():
                self.rebalance.maybe_prepare_rebalance(
                    group,
                    f"Group's selected protocol will change because static member "
                    f"{new_member_id} with instance id {instance_id} joined with a "
                    "change of protocol",
                )
                return
            log.info(
                "Static member %s of group %s rejoins a stable group without changing its protocol: no rebalance",
                instance_id,
                group.group_id,
            )

            def stored(error: ErrorCode) -> None:
                if error != ErrorCode.NONE:
                    log.warning("Failed to persist metadata for group %s: %s", group.group_id, error.name)
                    group.update_member(member, old_protocols, *old_timeouts, None)
                    reverted = group.replace_static_member(
                        instance_id, new_member_id, old_member_id, JoinResult(new_member_id, error), SyncResult(error)
                    )
                    self.heartbeats.complete_and_schedule_next_heartbeat(group, reverted)
                    callback(
                        JoinResult(
                            UNKNOWN_MEMBER_ID,
                            error,
                            group.generation_id,
                            group.protocol_type,
                            group.protocol_name,
                            current_leader or "",
                        )
                    )
                elif request.supports_skipping_assignment:
                    # KIP-814: the leader learns it leads but skips the assignment
                    group.invoke_join_callback(
                        member,
                        current_generation_result(group, new_member_id, skip_assignment=group.is_leader(new_member_id)),
                    )
                else:
                    # answer with the old leader id, so that a rejoining leader does not
                    # compute an assignment that a Stable group would never hand out
                    group.invoke_join_callback(
                        member,
                        current_generation_result(
                            group, new_member_id, with_members=False, leader_id=current_leader or ""
                        ),
                    )

            self.groups.store_group(group, {m.member_id: m.assignment for m in group.members.values()}, stored)
        elif group.is_(COMPLETING_REBALANCE):
            # the leader may already be assigning under the old member id
            self.rebalance.prepare_rebalance(
                group, f"Updating metadata for static member {new_member_id} with instance id {instance_id}"
            )


def _names(protocols: Protocols) -> set[str]:
    return {name for name, _ in protocols}
