"""Waiting for a condition with a deadline: tests wait with this, never with sleeps of a guessed
length."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

_Result = TypeVar("_Result")


def wait_until(
    condition: Callable[[], _Result], what: str = "condition", *, timeout: float = 30.0, interval: float = 0.05
) -> _Result:
    """Poll `condition` until it returns something truthy (which is returned); raise
    AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)
