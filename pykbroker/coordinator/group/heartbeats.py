"""The members' heartbeat deadlines (Kafka's heartbeat purgatory, as timers on the broker's one
timer): each member of a group has one, its session timeout from its last heartbeat, JoinGroup
or SyncGroup answer (the new-member join timeout while it waits for its first JoinGroup answer;
a member id handed out with MEMBER_ID_REQUIRED has one as a pending member).

What a missed deadline does is the rebalance's decision: `Heartbeats` calls the `on_expired`
callback it was given with the group, the member id and whether it was a pending member.
"""

from __future__ import annotations

from collections.abc import Callable

from ..runtime import LoopRuntime
from .group import GroupMetadata
from .member import MemberMetadata

OnExpired = Callable[[GroupMetadata, str, bool], None]  # (group, member id, pending)


class Heartbeats:
    def __init__(self, runtime: LoopRuntime, on_expired: OnExpired) -> None:
        self._runtime = runtime
        self._on_expired = on_expired

    def complete_and_schedule_next_heartbeat(self, group: GroupMetadata, member: MemberMetadata) -> None:
        self.schedule_heartbeat_expiration(group, member.member_id, member.session_timeout_ms)

    def schedule_heartbeat_expiration(
        self, group: GroupMetadata, member_id: str, timeout_ms: int, *, pending: bool = False
    ) -> None:
        self.cancel_heartbeat(group, member_id)
        group.heartbeat_timers[member_id] = self._runtime.call_later(
            timeout_ms, lambda: self._expired(group, member_id, pending)
        )

    def cancel_heartbeat(self, group: GroupMetadata, member_id: str) -> None:
        timer = group.heartbeat_timers.pop(member_id, None)
        if timer is not None:
            timer.cancel()

    def cancel_all(self, group: GroupMetadata) -> None:
        for member_id in list(group.heartbeat_timers):
            self.cancel_heartbeat(group, member_id)

    def _expired(self, group: GroupMetadata, member_id: str, pending: bool) -> None:
        group.heartbeat_timers.pop(member_id, None)
        self._on_expired(group, member_id, pending)
