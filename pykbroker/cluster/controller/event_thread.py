"""The controller's event thread: submitted work runs one item at a time, in submission order.

    events = EventThread("controller-event-thread")
    events.start()
    future = events.submit(controller_method, arg)    # from any thread; never blocks
    events.stop()

Kafka's controller works the same way: watch callbacks and requests only enqueue events, and one
thread processes them, so the controller's own state needs no locks.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Event = tuple[Callable[..., Any], tuple[Any, ...], "concurrent.futures.Future[Any]"]


class EventThread:
    def __init__(self, name: str) -> None:
        self._queue: queue.Queue[Event | None] = queue.Queue()  # None: stop
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._queue.put((fn, args, future))
        return future

    def stop(self, timeout: float = 10.0) -> None:
        self._queue.put(None)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            fn, args, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:  # the thread keeps serving the next events
                log.exception("Controller event %s failed", getattr(fn, "__name__", fn))
                future.set_exception(exc)
