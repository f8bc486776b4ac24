"""The rebalance's delayed operations: they complete when their condition holds (the
coordinator re-checks them whenever the group changes) or when their timeout passes.

- `DelayedJoin`: the PreparingRebalance phase; done when every known member has rejoined (and
  no member id handed out with MEMBER_ID_REQUIRED is still outstanding), or after the
  rebalance timeout (the largest rebalance timeout of the members).
- `InitialDelayedJoin`: the first rebalance of an Empty group waits
  `group.initial.rebalance.delay.ms`, again as long as new members keep arriving, up to the
  rebalance timeout, so that a group starting up rebalances once rather than once per member.
- `DelayedSync`: after the JoinGroup answers, waits up to the rebalance timeout for every
  member's SyncGroup; those that did not send it are removed.
"""
from __future__ import annotations

from abc import ABC, abstractmethod


class DelayedOperation(ABC):
    """Timer-driven like `replication.purgatory.DelayedOperation`, but on the coordinator's
    runtime (a clock that tests can drive), so that every group timeout is testable."""

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = max(0, timeout_ms)
        self.completed = False
        self._timer = None

    @abstractmethod
    def try_complete(self) -> bool:
        """Complete (through `force_complete`) and return True if the condition holds."""

    def on_complete(self) -> None:
        """Runs once, when the operation completes (by its condition or its timeout)."""

    def on_expiration(self) -> None:
        """Runs once, after `on_complete`, when the timeout completed the operation."""

    def start(self, runtime) -> None:
        if not self.try_complete():
            self._timer = runtime.call_later(self.timeout_ms, self._expire)

    def check(self) -> None:
        if not self.completed:
            self.try_complete()

    def force_complete(self) -> bool:
        if self.completed:
            return False
        self.completed = True
        if self._timer is not None:
            self._timer.cancel()
        self.on_complete()
        return True

    def _expire(self) -> None:
        if self.force_complete():
            self.on_expiration()


class DelayedJoin(DelayedOperation):
    def __init__(self, coordinator, group, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group

    def try_complete(self) -> bool:
        return self.group.has_all_members_joined and self.force_complete()

    def on_complete(self) -> None:
        self.coordinator.on_complete_join(self.group)


class InitialDelayedJoin(DelayedJoin):
    def __init__(self, coordinator, group, configured_delay_ms: int, delay_ms: int,
                 remaining_ms: int) -> None:
        super().__init__(coordinator, group, delay_ms)
        self.configured_delay_ms = configured_delay_ms
        self.remaining_ms = remaining_ms

    def try_complete(self) -> bool:
        return False

    def on_complete(self) -> None:
        group = self.group
        if group.new_member_added and self.remaining_ms != 0:
            group.new_member_added = False
            delay = min(self.configured_delay_ms, self.remaining_ms)
            remaining = max(self.remaining_ms - self.timeout_ms, 0)
            self.coordinator.start_join_operation(group, InitialDelayedJoin(
                self.coordinator, group, self.configured_delay_ms, delay, remaining))
        else:
            super().on_complete()


class DelayedSync(DelayedOperation):
    def __init__(self, coordinator, group, generation_id: int, timeout_ms: int) -> None:
        super().__init__(timeout_ms)
        self.coordinator = coordinator
        self.group = group
        self.generation_id = generation_id

    def try_complete(self) -> bool:
        return (self.coordinator.is_pending_sync_done(self.group, self.generation_id)
                and self.force_complete())

    def on_expiration(self) -> None:
        self.coordinator.on_expire_pending_sync(self.group, self.generation_id)
