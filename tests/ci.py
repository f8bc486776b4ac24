"""Tests that need a real component (Spark's connector, Kafka 3.9.0 from `../shared`) may skip on
a developer's machine that lacks it, with one line saying why; in CI (`CI=true`) they fail
instead, so that a green CI always means they ran."""
from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def skip_or_fail_in_ci(reason: str) -> None:
    """Skip the calling test (or module, at import) with `reason`, or fail it in CI."""
    if in_ci():
        pytest.fail(f"CI=true, and this must run here: {reason}", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
