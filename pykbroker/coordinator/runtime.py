"""What the coordinators run on: the broker's clock and timer, and background tasks.

A coordinator's state machine is synchronous: it reads the time with `now_ms`, schedules
timeouts (session, new-member join, offset expiration, transaction timeouts) with `call_later` on
the broker's one timer (`common/timer.py`), and hands slow work (appending to and reading its
internal topic, sending transaction markers) to `spawn`. Everything runs on the one event loop, so
callbacks never race. The group and the transaction coordinators each have one. A request
handler awaits an answer the state machine gives to a callback through a `Reply`.

    runtime = LoopRuntime(timer)                   # the broker runs `timer.run()`
    task = runtime.call_later(3000, on_timeout)    # and later, maybe: task.cancel()
    runtime.spawn(write_records, batch)            # runs once `run()` is serving
    await runtime.run()                            # until cancelled

Tests give it a `MockTimer` and move its fake clock by hand.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio
import anyio.abc

from ..common.timer import Timer, TimerTask

log = logging.getLogger(__name__)

T = TypeVar("T")
Task = Callable[..., Awaitable[object]]  # an async function, called with the arguments given to `spawn`


class LoopRuntime:
    def __init__(self, timer: Timer, name: str = "Group coordinator") -> None:
        self.timer = timer
        self.name = name
        self._tasks: anyio.abc.TaskGroup | None = None
        self._queued: list[tuple[Task, tuple[object, ...]]] = []

    def now_ms(self) -> int:
        """Wall-clock milliseconds, for timestamps that are stored or shown."""
        return self.timer.clock.now_ms()

    def call_later(self, delay_ms: float, callback: Callable[[], None]) -> TimerTask:
        return self.timer.schedule(delay_ms, callback)

    def spawn(self, function: Task, *args: object) -> None:
        """Run `function(*args)` as a background task (queued until `run()` starts)."""
        if self._tasks is None:
            self._queued.append((function, args))
        else:
            self._tasks.start_soon(_logged, self.name, function, *args)

    async def run(self) -> None:
        """Serve spawned tasks until cancelled."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            queued, self._queued = self._queued, []
            for function, args in queued:
                tasks.start_soon(_logged, self.name, function, *args)
            try:
                await anyio.sleep_forever()
            finally:
                self._tasks = None


class Reply(Generic[T]):
    """One answer, given by a callback and awaited by a request handler."""

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._answer: list[T] = []  # the first answer given; later ones are ignored

    def set(self, value: T) -> None:
        if not self._event.is_set():
            self._answer.append(value)
            self._event.set()

    async def wait(self) -> T:
        await self._event.wait()
        return self._answer[0]


async def _logged(name: str, function: Task, *args: object) -> None:
    try:
        await function(*args)
    except Exception:
        log.exception("%s task failed", name)
