"""Delayed file deletion, as Kafka's `file.delete.delay.ms`: renamed now, removed later.

Segments dropped by retention, truncation or compaction are renamed to `*.deleted` at once
and removed when their time comes, so a fetch already handed a region of them can still
send it. `run_due` is called from the maintenance thread.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable


class DelayedDeleter:
    def __init__(self) -> None:
        self._queue: list[tuple[int, int, Callable[[], None]]] = []
        self._sequence = itertools.count()
        self._lock = threading.Lock()

    def schedule(self, due_ms: int, action: Callable[[], None]) -> None:
        with self._lock:
            heapq.heappush(self._queue, (due_ms, next(self._sequence), action))

    def run_due(self, now_ms: int) -> int:
        """Run every action due at `now_ms`; returns how many ran."""
        due = []
        with self._lock:
            while self._queue and self._queue[0][0] <= now_ms:
                due.append(heapq.heappop(self._queue)[2])
        for action in due:
            action()
        return len(due)

    def run_all(self) -> int:
        """Run everything pending regardless of time (shutdown)."""
        with self._lock:
            pending, self._queue = self._queue, []
        for _, _, action in sorted(pending):
            action()
        return len(pending)

    def __len__(self) -> int:
        return len(self._queue)
