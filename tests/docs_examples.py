"""The test files docs/testing.md shows: each ```python block whose first line names one
(`# test_kafka_python.py`) is that file's whole text."""

from __future__ import annotations

import re
from pathlib import Path

TESTING_DOC = Path(__file__).resolve().parents[1] / "docs" / "testing.md"


def documented_test_files() -> dict[str, str]:
    """file name -> code, in the page's order."""
    blocks = re.findall(r"^```python\n# (test_\w+\.py)\n(.*?)^```$", TESTING_DOC.read_text(), re.M | re.S)
    return {name: code for name, code in blocks}
