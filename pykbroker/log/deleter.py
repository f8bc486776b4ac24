"""Delayed file deletion, as Kafka's `file.delete.delay.ms`: renamed now, removed later.

Segments dropped by retention, truncation or compaction are renamed to `*.deleted` at once
and removed when their time comes, so a fetch already handed a region of them can still
send it. `run_due` is called from the maintenance thread. An action that fails with an OSError
is handed to `on_error` (the log manager reports it to the log directory failure channel) and
the others still run.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable


class DelayedDeleter:
    def __init__(self, on_error: Callable[[OSError], None] | None = None) -> None:
        self._queue: list[tuple[int, int, Callable[[], None]]] = []
        self._sequence = itertools.count()
        self._lock = threading.Lock()
        self.on_error = on_error

    def _run(self, action: Callable[[], None]) -> None:
        try:
            action()
        except OSError as error:
            if self.on_error is None:
                raise
            self.on_error(error)

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
            self._run(action)
        return len(due)

    def run_all(self) -> int:
        """Run everything pending regardless of time (shutdown)."""
        with self._lock:
            pending, self._queue = self._queue, []
        for _, _, action in sorted(pending):
            self._run(action)
        return len(pending)

    def __len__(self) -> int:
        return len(self._queue)
