"""Delayed operations ("purgatory"): work that completes when a condition holds or its timeout passes.

A produce with acks=all waits until the high watermark passes its last offset; a fetch waits until
`min_bytes` are readable; a rebalance waits until every member rejoined. Such an operation is
tried once when it enters the purgatory; if it cannot complete yet it watches one or more keys
(a topic-partition, a group id) and its timeout is scheduled on the purgatory's `Timer`. Whoever
changes the state behind a key calls `check_and_complete(key)`.

Two ways to wait, one implementation:
- callbacks: override `on_complete()` / `on_expiration()` and call `try_complete_else_watch`;
- awaiting: `await purgatory.wait_for(operation, keys)` returns once it completed or expired.

Kafka's `DelayedOperationPurgatory<T>` with an injected `Timer`: one class, one instance per kind
of wait. Everything runs on the broker's one event loop, so no locks are needed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable

import anyio

from .timer import Timer, TimerTask


class DelayedOperation(ABC):
    """Subclasses implement `try_complete()`: return True (after calling `force_complete()`) when
    the condition holds; they may override `on_complete()` and `on_expiration()`."""

    def __init__(self, timeout_ms: int) -> None:
        self.timeout_ms = max(0, timeout_ms)
        self.completed = False
        self.expired = False
        self._timer_task: TimerTask | None = None
        self._on_done: Callable[[], None] | None = None  # set by the purgatory watching it
        self._done: anyio.Event | None = None  # created by the first `wait()`

    @abstractmethod
    def try_complete(self) -> bool:
        """Complete (through `force_complete()`) and return True if the condition holds now."""

    def on_complete(self) -> None:
        """Runs once, when the operation completes (by its condition or its timeout)."""

    def on_expiration(self) -> None:
        """Runs once, after `on_complete`, when the timeout completed the operation."""

    def force_complete(self) -> bool:
        """Complete now; True only for the call that completed it."""
        if self.completed:
            return False
        self.completed = True
        self._release()
        self.on_complete()
        if self._done is not None:
            self._done.set()
        return True

    def expire(self) -> None:
        """The timeout passed: complete as expired (nothing if already completed)."""
        if self.completed:
            return
        self.expired = True
        self.force_complete()
        self.on_expiration()

    async def wait(self) -> None:
        """Return once the operation completed or expired."""
        if self.completed:
            return
        if self._done is None:
            self._done = anyio.Event()
        await self._done.wait()

    def _release(self) -> None:
        """Stop the timeout and leave the purgatory's watch lists."""
        if self._timer_task is not None:
            self._timer_task.cancel()
        on_done, self._on_done = self._on_done, None
        if on_done is not None:
            on_done()


class DelayedOperationPurgatory:
    """Operations waiting on keys, with their timeouts on one timer."""

    def __init__(self, name: str, timer: Timer) -> None:
        self.name = name
        self.timer = timer
        self._watchers: dict[Hashable, list[DelayedOperation]] = defaultdict(list)

    def try_complete_else_watch(self, operation: DelayedOperation, keys: Iterable[Hashable]) -> bool:
        """Complete now if possible; otherwise watch `keys` until completion or the timeout.
        True if it completed now."""
        if operation.try_complete():
            return True
        keys = list(keys)
        for key in keys:
            self._watchers[key].append(operation)
        operation._on_done = lambda: self._unwatch(operation, keys)
        operation._timer_task = self.timer.schedule(operation.timeout_ms, operation.expire)
        return False

    async def wait_for(self, operation: DelayedOperation, keys: Iterable[Hashable]) -> None:
        """Complete now, or watch `keys` until completion or expiry. A waiter that is cancelled
        takes its operation out of the purgatory (it never completes then)."""
        if self.try_complete_else_watch(operation, keys):
            return
        try:
            await operation.wait()
        finally:
            if not operation.completed:
                operation._release()

    def check_and_complete(self, key: Hashable) -> int:
        """Re-check the operations watching `key`; returns how many completed."""
        completed = 0
        for operation in list(self._watchers.get(key, ())):
            if not operation.completed and operation.try_complete():
                completed += 1
        return completed

    def watched(self, key: Hashable) -> int:
        """How many live operations watch `key`."""
        return sum(1 for op in self._watchers.get(key, ()) if not op.completed)

    def _unwatch(self, operation: DelayedOperation, keys: list[Hashable]) -> None:
        for key in keys:
            waiting = self._watchers.get(key)
            if waiting is None:
                continue
            if operation in waiting:
                waiting.remove(operation)
            if not waiting:
                del self._watchers[key]
