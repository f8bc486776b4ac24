"""The programs the docs show: each ```python block whose first line names a file
(`# test_kafka_python.py`) is that file's whole text, and so is each ```java block whose first
line names its class's file (`// TransactionsExample.java`)."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
TESTING_DOC = DOCS / "testing.md"

NAMED_BLOCK = re.compile(r"^```(?:python\n# (\w+\.py)|java\n// (\w+\.java))\n(.*?)^```$", re.M | re.S)


def documented_files(doc: Path) -> dict[str, str]:
    """file name -> code of every named block of `doc`, in the page's order."""
    return {python or java: code for python, java, code in NAMED_BLOCK.findall(doc.read_text())}


def documented_test_files() -> dict[str, str]:
    """The test files docs/testing.md shows: file name -> code, in the page's order."""
    return {name: code for name, code in documented_files(TESTING_DOC).items() if name.startswith("test_")}
