"""Timers and background tasks for the group coordinator, on the broker's event loop.

The coordinator's state machine is synchronous: it schedules timeouts (rebalance, session,
pending sync, new-member join) with `call_later`, and hands slow work (appending to and reading
`__consumer_offsets`) to `spawn`. Everything runs on the one event loop, so callbacks never race.

    runtime = LoopRuntime()
    timer = runtime.call_later(3000, on_timeout)   # and later, maybe: timer.cancel()
    runtime.spawn(write_records, batch)             # runs once `run()` is serving
    await runtime.run()                             # until cancelled

Tests use a fake with the same interface whose clock they advance by hand.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import time
from typing import Awaitable, Callable

import anyio

log = logging.getLogger(__name__)


class Timer:
    """A scheduled callback; `cancel()` makes sure it never runs."""

    __slots__ = ("deadline", "callback", "cancelled")

    def __init__(self, deadline: float, callback: Callable[[], None]) -> None:
        self.deadline = deadline
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class LoopRuntime:
    def __init__(self) -> None:
        self._timers: list[tuple[float, int, Timer]] = []
        self._sequence = itertools.count()
        self._wake: anyio.Event | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._queued: list[tuple[Callable[..., Awaitable], tuple]] = []

    @staticmethod
    def now_ms() -> int:
        """Wall-clock milliseconds, for timestamps that are stored or shown."""
        return int(time.time() * 1000)

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(time.monotonic() + max(0.0, delay_ms) / 1000, callback)
        heapq.heappush(self._timers, (timer.deadline, next(self._sequence), timer))
        if self._wake is not None:
            self._wake.set()
        return timer

    def spawn(self, function: Callable[..., Awaitable], *args) -> None:
        """Run `function(*args)` as a background task (queued until `run()` starts)."""
        if self._tasks is None:
            self._queued.append((function, args))
        else:
            self._tasks.start_soon(_logged, function, *args)

    async def run(self) -> None:
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            queued, self._queued = self._queued, []
            for function, args in queued:
                tasks.start_soon(_logged, function, *args)
            try:
                await self._fire_timers()
            finally:
                self._tasks = None

    async def _fire_timers(self) -> None:
        while True:
            self._wake = anyio.Event()
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                _, _, timer = heapq.heappop(self._timers)
                if not timer.cancelled:
                    _call_logged(timer.callback)
            self._drop_cancelled_head()
            delay = self._timers[0][0] - time.monotonic() if self._timers else None
            with anyio.move_on_after(delay):
                await self._wake.wait()

    def _drop_cancelled_head(self) -> None:
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
        if len(self._timers) > 1024 and sum(t.cancelled for _, _, t in self._timers) > len(self._timers) // 2:
            self._timers = [entry for entry in self._timers if not entry[2].cancelled]
            heapq.heapify(self._timers)


def _call_logged(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # one failing timer must not stop the others
        log.exception("Group coordinator timer failed")


async def _logged(function: Callable[..., Awaitable], *args) -> None:
    try:
        await function(*args)
    except Exception:
        log.exception("Group coordinator task failed")
