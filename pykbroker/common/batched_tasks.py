"""Running one coroutine per item of a request in small groups, so that a request naming a great
many items (partitions) takes its time without holding up the event loop's other connections."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import anyio
import anyio.lowlevel

T = TypeVar("T")

ITEMS_AT_ONCE = 64


async def run_in_groups(
    items: Sequence[T], operate: Callable[[T], Coroutine[Any, Any, None]], at_once: int = ITEMS_AT_ONCE
) -> None:
    """`operate(item)` for every item, `at_once` of them concurrently, the loop given back between groups."""
    for start in range(0, len(items), at_once):
        async with anyio.create_task_group() as tasks:
            for item in items[start : start + at_once]:
                tasks.start_soon(operate, item)
        await anyio.lowlevel.checkpoint()
