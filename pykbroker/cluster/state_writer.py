"""One writer thread that puts a store's snapshots on disk, off the event loop.

The embedded metadata store changes its state on the event loop and hands a snapshot (immutable:
the parts of its serialized text) to `submit` with the number of the newest change it covers; the
call returns at once. A single worker thread writes the snapshots in order; a snapshot submitted
while another is being written supersedes any not yet started (they are whole states, so only the
newest matters): changes made during one write go out together in the next (group commit). The
thread runs while there is something to write and ends when idle.

Whoever must not answer before a change is on disk asks `when_durable(seq, loop, fn)`: `fn(None)`
runs on `loop` once a snapshot covering change `seq` is written, or `fn(error)` if the write that
covered it failed (a later snapshot tries again). `flush()` blocks until the thread is idle: the
broker calls it when it closes, before the log directories are unlocked.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

DurableCallback = Callable[["BaseException | None"], None]
Snapshot = TypeVar("Snapshot")


class SnapshotWriter(Generic[Snapshot]):
    def __init__(self, write: Callable[[Snapshot], None], name: str) -> None:
        self._write = write
        self._name = name
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._submitted = 0  # the number of the newest change handed over
        self._durable = 0  # the number of the newest change on disk
        self._writes = 0  # snapshots written so far
        self._pending: tuple[int, Snapshot] | None = None
        self._thread: threading.Thread | None = None
        self._waiters: list[tuple[int, asyncio.AbstractEventLoop, DurableCallback]] = []

    @property
    def submitted(self) -> int:
        return self._submitted

    @property
    def durable(self) -> int:
        return self._durable

    @property
    def writes(self) -> int:
        return self._writes

    def submit(self, snapshot: Snapshot, seq: int) -> int:
        """Hand over a snapshot covering the changes up to number `seq` (never blocks)."""
        with self._lock:
            if seq <= self._submitted:
                raise ValueError(f"snapshot {seq} is not newer than {self._submitted}")
            self._submitted = seq
            self._pending = (seq, snapshot)
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
                seq, snapshot = self._pending
                self._pending = None
            error: BaseException | None = None
            try:
                self._write(snapshot)
                self._writes += 1
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
