"""Handing work from other threads (ZooKeeper's, the controller's) to the broker's event loop.

All broker state is touched from the one event loop thread. ZooKeeper watches fire on the
ZooKeeper client's threads and the controller runs on its own; they never touch broker state themselves but
`post(fn, *args)` it, which schedules `fn(*args)` on the event loop without waiting for it
(a watch callback never blocks on the loop). Before the loop runs (while the broker opens) posts
are queued and run, in order, once `attach()` is called from the loop; after `detach()` they are
dropped.

    bridge.post(store.apply_partition_state, "orders", 0, state)   # from any thread
    result = await bridge.wait(concurrent_future)                   # on the loop
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from typing import Any

import anyio

log = logging.getLogger(__name__)


class LoopBridge:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[tuple[Callable[..., Any], tuple]] | None = []

    def attach(self) -> None:
        """Start delivering to the running event loop (call from the loop), queued posts first."""
        loop = asyncio.get_running_loop()
        with self._lock:
            pending, self._pending = self._pending or [], None
            self._loop = loop
        for fn, args in pending:
            _run_logged(fn, args)

    def flush_pending(self) -> None:
        """Run what was posted so far, now, on this thread (before the loop runs)."""
        with self._lock:
            if self._pending is None:
                return
            pending, self._pending = self._pending, []
        for fn, args in pending:
            _run_logged(fn, args)

    def detach(self) -> None:
        """Stop delivering: later posts are dropped (the broker is stopping)."""
        with self._lock:
            self._loop = None
            self._pending = None

    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the event loop soon; never blocks."""
        with self._lock:
            if self._pending is not None:
                self._pending.append((fn, args))
                return
            loop = self._loop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(_run_logged, fn, args)
        except RuntimeError:  # the loop closed meanwhile
            pass

    async def wait(self, future: concurrent.futures.Future) -> Any:
        """Await a future completed on another thread, without blocking the loop."""
        done = anyio.Event()
        loop = asyncio.get_running_loop()
        future.add_done_callback(lambda _: loop.call_soon_threadsafe(done.set))
        await done.wait()
        return future.result()


def _run_logged(fn: Callable[..., Any], args: tuple) -> None:
    try:
        fn(*args)
    except Exception:  # one failing update must not stop the others
        log.exception("Error applying %s", getattr(fn, "__qualname__", fn))
