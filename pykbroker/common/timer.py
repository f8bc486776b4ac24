"""Callbacks that run when a delay has passed on a `Clock`: the broker's one timer.

    timer = SystemTimer(SYSTEM_CLOCK)
    task = timer.schedule(3000, on_timeout)     # later, maybe: task.cancel()
    await timer.run()                           # fires due callbacks on the event loop, until cancelled

    timer = MockTimer()                         # tests: a FakeClock that fires what falls due
    timer.advance(3000)

Kafka's `Timer`/`SystemTimer`/`MockTimer`. Callbacks run on the event loop one at a time, so they
never race; one that raises is logged and the others still run.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
from collections.abc import Callable

import anyio

from .time import Clock, FakeClock

log = logging.getLogger(__name__)


class TimerTask:
    """A scheduled callback; `cancel()` makes sure it never runs."""

    __slots__ = ("deadline_ms", "callback", "cancelled")

    def __init__(self, deadline_ms: float, callback: Callable[[], None]) -> None:
        self.deadline_ms = deadline_ms
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class Timer:
    """Tasks ordered by deadline on `clock.monotonic_ms()`; `run_due()` runs those that passed."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._tasks: list[tuple[float, int, TimerTask]] = []
        self._sequence = itertools.count()

    def schedule(self, delay_ms: float, callback: Callable[[], None]) -> TimerTask:
        task = TimerTask(self.clock.monotonic_ms() + max(0.0, delay_ms), callback)
        heapq.heappush(self._tasks, (task.deadline_ms, next(self._sequence), task))
        self._scheduled()
        return task

    def _scheduled(self) -> None:
        """A task was added (a running timer may need to wake earlier)."""

    def run_due(self) -> int:
        """Run every live task whose deadline has passed, in deadline order; returns how many."""
        ran = 0
        while self._tasks and self._tasks[0][0] <= self.clock.monotonic_ms():
            _, _, task = heapq.heappop(self._tasks)
            if not task.cancelled:
                _call_logged(task.callback)
                ran += 1
        return ran

    def next_deadline_ms(self) -> float | None:
        """The deadline of the earliest live task, if any."""
        while self._tasks and self._tasks[0][2].cancelled:
            heapq.heappop(self._tasks)
        self._compact()
        return self._tasks[0][0] if self._tasks else None

    def _compact(self) -> None:
        """Drop cancelled tasks once they are most of a large heap."""
        if len(self._tasks) > 1024 and sum(t.cancelled for _, _, t in self._tasks) > len(self._tasks) // 2:
            self._tasks = [entry for entry in self._tasks if not entry[2].cancelled]
            heapq.heapify(self._tasks)


class SystemTimer(Timer):
    """A timer on the event loop: `run()` sleeps until the next deadline and fires what is due."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(clock)
        self._wake: anyio.Event | None = None
        self._sleeping_until: float | None = None  # the deadline `run()` sleeps towards; None: none

    def _scheduled(self) -> None:
        """Wake `run()` only when the new task falls due before the deadline it sleeps towards
        (a long-poll fetch or an acks=all produce schedules one task each)."""
        if self._wake is None:
            return
        if self._sleeping_until is None or self._tasks[0][0] < self._sleeping_until:
            self._wake.set()

    async def run(self) -> None:
        """Fire tasks as they fall due, until cancelled."""
        try:
            while True:
                self._wake = anyio.Event()
                self.run_due()
                deadline = self.next_deadline_ms()
                self._sleeping_until = deadline
                delay = None if deadline is None else max(0.0, deadline - self.clock.monotonic_ms()) / 1000
                with anyio.move_on_after(delay):
                    await self._wake.wait()
        finally:
            self._wake = None
            self._sleeping_until = None


class MockTimer(Timer):
    """A timer on a `FakeClock` that fires tasks only when a test calls `advance`."""

    def __init__(self, clock: FakeClock | None = None) -> None:
        super().__init__(clock if clock is not None else FakeClock())
        self.clock: FakeClock

    def advance(self, ms: int) -> None:
        """Move the clock by `ms`, stopping at each deadline on the way to run what is due."""
        target = self.clock.now + ms
        while (deadline := self.next_deadline_ms()) is not None and deadline <= target:
            self.clock.now = max(self.clock.now, math.ceil(deadline))
            self.run_due()
        self.clock.now = target


def _call_logged(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # one failing timer must not stop the others
        log.exception("Timer task failed")
