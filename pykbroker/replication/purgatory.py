"""Delayed operations ("purgatory"): requests that complete when a condition holds or time runs out.

A produce with acks=all waits until the high watermark passes its last offset; a fetch waits until
`min_bytes` are available. Such an operation is checked once when it is created; if it cannot
complete yet it watches one or more keys (e.g. a topic-partition), and whoever changes the state
behind a key calls `check_and_complete(key)`. The waiting request handler awaits `wait()`, which
returns when the operation completed or expired, whichever came first.

Everything runs on the broker's one event loop, so no locks are needed.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from typing import Hashable, Iterable

import anyio


class DelayedOperation(ABC):
    """Subclasses implement `try_complete()`: return True (after calling `force_complete()`) when
    the condition holds, and may override `on_expiration()`."""

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = max(0, timeout_ms)
        self.completed = False
        self.expired = False
        self._done = anyio.Event()

    @abstractmethod
    def try_complete(self) -> bool:
        """Complete (through `force_complete()`) and return True if the condition holds now."""

    def force_complete(self) -> bool:
        """Mark complete; True only for the call that completed it."""
        if self.completed:
            return False
        self.completed = True
        self._done.set()
        return True

    def on_expiration(self) -> None:
        """Called once when the timeout passes before completion."""

    async def wait(self) -> None:
        with anyio.move_on_after(self.timeout_ms / 1000):
            await self._done.wait()
        if not self.completed:
            self.expired = True
            self.force_complete()
            self.on_expiration()


class Purgatory:
    """Operations waiting on keys; `check_and_complete(key)` re-checks the ones watching a key."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._watchers: dict[Hashable, list[DelayedOperation]] = defaultdict(list)

    def try_complete_else_watch(self, operation: DelayedOperation, keys: Iterable[Hashable]) -> bool:
        """Complete now if possible; otherwise watch `keys`. True if completed now."""
        if operation.try_complete():
            return True
        for key in keys:
            self._watchers[key].append(operation)
        return False

    async def wait_for(self, operation: DelayedOperation, keys: Iterable[Hashable]) -> None:
        """Complete now, or watch `keys` until completion or expiry; never leaves it watched."""
        keys = list(keys)
        if self.try_complete_else_watch(operation, keys):
            return
        try:
            await operation.wait()
        finally:
            self._unwatch(operation, keys)

    def _unwatch(self, operation: DelayedOperation, keys: list[Hashable]) -> None:
        for key in keys:
            waiting = self._watchers.get(key)
            if waiting is None:
                continue
            if operation in waiting:
                waiting.remove(operation)
            if not waiting:
                del self._watchers[key]

    def check_and_complete(self, key: Hashable) -> int:
        """Re-check operations watching `key`; returns how many completed."""
        waiting = self._watchers.get(key)
        if not waiting:
            return 0
        completed = 0
        still_waiting = []
        for operation in waiting:
            if operation.completed:
                continue
            if operation.try_complete():
                completed += 1
            else:
                still_waiting.append(operation)
        if still_waiting:
            self._watchers[key] = still_waiting
        else:
            del self._watchers[key]
        return completed

    def watched(self, key: Hashable) -> int:
        """How many live operations watch `key`."""
        return sum(1 for op in self._watchers.get(key, ()) if not op.completed)
