"""One writer thread that puts a store's snapshots on disk, off the event loop.

The embedded metadata store changes its state on the event loop and hands each new snapshot
(already serialized) to `submit`, which numbers it and returns at once. A single worker thread
writes the snapshots in order; a snapshot submitted while another is being written supersedes any
not yet started (they are whole states, so only the newest matters). The thread runs while
there is something to write and ends when idle.

Whoever must not answer before a change is on disk asks `when_durable(seq, loop, fn)`: `fn(None)`
runs on `loop` once snapshot `seq` (or a later one) is written, or `fn(error)` if the write that
covered it failed (a later snapshot tries again). `flush()` blocks until the thread is idle: the
broker calls it when it closes, before the log directories are unlocked.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

DurableCallback = Callable[["BaseException | None"], None]


class SnapshotWriter:
    def __init__(self, write: Callable[[str], None], name: str) -> None:
        self._write = write
        self._name = name
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._submitted = 0  # the number of the newest snapshot handed over
        self._durable = 0  # the number of the newest snapshot on disk
        self._pending: tuple[int, str] | None = None
        self._thread: threading.Thread | None = None
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, DurableCallback]] = []

    @property
    def submitted(self) -> int:
        return self._submitted

    @property
    def durable(self) -> int:
        return self._durable

    def submit(self, text: str) -> int:
        """Hand over a new snapshot; its number (never blocks)."""
        with self._lock:
            self._submitted += 1
            self._pending = (self._submitted, text)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            return self._submitted

    def when_durable(self, seq: int, loop: asyncio.AbstractEventLoop, fn: DurableCallback) -> None:
        """Call `fn` on `loop` once snapshot `seq` is on disk (or its write failed)."""
        with self._lock:
            if self._durable < seq:
                self._waiters.append((seq, loop, fn))
                return
        fn(None)

    def flush(self) -> bool:
        """Block until every snapshot handed over is written; False if the last write failed."""
        with self._lock:
            while self._thread is not None:
                self._idle.wait()
            return self._durable >= self._submitted

    def _run(self) -> None:
        while True:
            with self._lock:
                if self._pending is None:
                    self._thread = None
                    self._idle.notify_all()
                    return
                seq, text = self._pending
                self._pending = None
            error: BaseException | None = None
            try:
                self._write(text)
            except Exception as exc:  # reported to the waiters; the next snapshot tries again
                log.exception("Could not write %s snapshot %d", self._name, seq)
                error = exc
            with self._lock:
                if error is None:
                    self._durable = seq
                ready = [(loop, fn) for s, loop, fn in self._waiters if s <= seq]
                self._waiters = [w for w in self._waiters if w[0] > seq]
            for loop, fn in ready:
                try:
                    loop.call_soon_threadsafe(fn, error)
                except RuntimeError:  # the loop closed meanwhile: nobody waits any more
                    pass
