"""How long the fuzzer runs and with which hypothesis settings.

In the normal suite (no FUZZ_MINUTES in the environment) each fuzz test runs a fixed number of
examples, derandomized and without a database, so that every run sends the same requests. With
`FUZZ_MINUTES=30` (`make fuzz`) the tests share those minutes (each its `share`) and keep
running fresh rounds of examples, seeded from FUZZ_SEED (default 0) plus the round's number, so
that a failure names the seed that reproduces it.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

EXAMPLES_PER_ROUND = 200

BASE = settings(
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


def fuzz_minutes() -> float | None:
    value = os.environ.get("FUZZ_MINUTES")
    return float(value) if value else None


def run(strategy: st.SearchStrategy, check: Callable[[object], None], *, examples: int, share: float) -> None:
    """Feed what `strategy` draws to `check`: `examples` derandomized examples, or under
    FUZZ_MINUTES rounds of fresh ones for `share` of those minutes."""
    minutes = fuzz_minutes()
    if minutes is None:
        settings(BASE, derandomize=True, max_examples=examples)(_property(strategy, check))()
        return
    first_seed = int(os.environ.get("FUZZ_SEED", "0"))
    stop_at = time.monotonic() + minutes * 60 * share
    round_number = 0
    while time.monotonic() < stop_at:
        test = settings(BASE, max_examples=EXAMPLES_PER_ROUND)(_property(strategy, check))
        seed(first_seed + round_number)(test)()
        round_number += 1


def _property(strategy: st.SearchStrategy, check: Callable[[object], None]):
    @given(strategy)
    def fuzzed(example) -> None:
        check(example)

    return fuzzed
