"""The broker's one time source: a `Clock` that every room reads instead of `time.time()`.

    clock = SYSTEM_CLOCK                 # the real one
    clock.now_ms()                       # wall-clock milliseconds: timestamps stored or shown
    clock.monotonic_ms()                 # never goes back: deadlines and durations

    clock = FakeClock()                  # tests: time stands still until they move it
    clock.advance(5_000)

Kafka's `Time`/`MockTime`. The timers that fire callbacks on a clock are in `timer.py`.
"""

from __future__ import annotations

import time
from typing import Protocol

# A fixed, plausible "now" for fake clocks (2023-11-14T22:13:20Z).
FAKE_EPOCH_MS = 1_700_000_000_000


class Clock(Protocol):
    def now_ms(self) -> int:
        """Wall-clock milliseconds since the Unix epoch."""

    def monotonic_ms(self) -> float:
        """Milliseconds on a clock that never goes back (its origin means nothing)."""


class SystemClock:
    """The machine's clocks."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def monotonic_ms(self) -> float:
        return time.monotonic() * 1000


SYSTEM_CLOCK = SystemClock()


def now_ms() -> int:
    """Wall-clock milliseconds on the system clock, for code that is handed no clock."""
    return SYSTEM_CLOCK.now_ms()


class FakeClock:
    """A clock that moves only when `advance` is called; both readings move together."""

    def __init__(self, now_ms: int = FAKE_EPOCH_MS) -> None:
        self.now = now_ms

    def now_ms(self) -> int:
        return self.now

    def monotonic_ms(self) -> float:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms
