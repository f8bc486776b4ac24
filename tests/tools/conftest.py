"""Fixtures for the command-line tools: one broker per module, and `pykbroker` run in-process."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from pykbroker import cli


@dataclass
class ToolRun:
    status: int
    out: str
    err: str


@pytest.fixture
def pykbroker(capsys):
    """Run `pykbroker ARGS...` in this process; usage errors give status 2 as on the command line."""

    def run(*args: str) -> ToolRun:
        capsys.readouterr()
        try:
            status = cli.main(list(args))
        except SystemExit as exit_:
            status = int(exit_.code or 0)
        captured = capsys.readouterr()
        return ToolRun(status, captured.out, captured.err)

    return run


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
