"""The rebalance's delayed operations: they complete when their condition holds (the
rebalance re-checks them whenever the group changes) or when their timeout passes.

- `DelayedJoin`: the PreparingRebalance phase; done when every known member has rejoined (and
  no member id handed out with MEMBER_ID_REQUIRED is still outstanding), or after the
  rebalance timeout (the largest rebalance timeout of the members).
- `InitialDelayedJoin`: the first rebalance of an Empty group waits
  `group.initial.rebalance.delay.ms`, again as long as new members keep arriving, up to the
  rebalance timeout, so that a group starting up rebalances once rather than once per member.
  Even with a delay of 0 the wait ends on a later turn of the timer, never inside the JoinGroup
  that started it: in Kafka the purgatory's timer thread completes it while the request threads
  go on handling what arrived meanwhile, so JoinGroups that reach the broker together (members
  started together) join the same first generation. Here the wait lasts at least one tick of
  Kafka's timing wheel (`TIMER_TICK_MS`), in which the event loop serves the requests already
  received before it fires.
- `DelayedSync`: after the JoinGroup answers, waits up to the rebalance timeout for every
  member's SyncGroup; those that did not send it are removed.

They wait in the rebalance's purgatories (`common/purgatory.py`), keyed by group, with their
timeouts on the broker's one timer, and call back the rebalance (`rebalance.py`) through the
`JoinPhase` and `SyncPhase` interfaces.
"""

from __future__ import annotations

from typing import Protocol

from ...common.purgatory import DelayedOperation
from .group import GroupMetadata

TIMER_TICK_MS = 1  # Kafka's purgatory timing wheel: tickMs


class JoinPhase(Protocol):
    """What the join waits call: the end of the join phase, or a further initial delay."""

    def on_complete_join(self, group: GroupMetadata) -> None: ...

    def start_join_operation(self, group: GroupMetadata, operation: DelayedJoin) -> None: ...


class SyncPhase(Protocol):
    """What the sync wait calls: whether every member synced, and what happens when not."""

    def is_pending_sync_done(self, group: GroupMetadata, generation_id: int) -> bool: ...

    def on_expire_pending_sync(self, group: GroupMetadata, generation_id: int) -> None: ...


class DelayedJoin(DelayedOperation):
    def __init__(self, rebalance: JoinPhase, group: GroupMetadata, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.rebalance = rebalance
        self.group = group

    def try_complete(self) -> bool:
        return self.group.has_all_members_joined and self.force_complete()

    def on_complete(self) -> None:
        self.rebalance.on_complete_join(self.group)


class InitialDelayedJoin(DelayedJoin):
    def __init__(
        self, rebalance: JoinPhase, group: GroupMetadata, configured_delay_ms: int, delay_ms: int, remaining_ms: int
    ) -> None:
        super().__init__(rebalance, group, max(delay_ms, TIMER_TICK_MS))
        self.configured_delay_ms = configured_delay_ms
        self.delay_ms = delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        group = self.group
        if group.new_member_added and self.remaining_ms != 0:
            group.new_member_added = False
            delay = min(self.configured_delay_ms, self.remaining_ms)
            remaining = max(self.remaining_ms - self.delay_ms, 0)
            self.rebalance.start_join_operation(
                group, InitialDelayedJoin(self.rebalance, group, self.configured_delay_ms, delay, remaining)
            )
        else:
            super().on_complete()


class DelayedSync(DelayedOperation):
    def __init__(self, rebalance: SyncPhase, group: GroupMetadata, generation_id: int, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.rebalance = rebalance
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        return self.rebalance.is_pending_sync_done(self.group, self.generation_id) and self.force_complete()

    def on_expiration(self) -> None:
        self.rebalance.on_expire_pending_sync(self.group, self.generation_id)
