"""Acceptance: the compatibility suite (`python -m compat`) passes against the broker: every
client (kafka-python, confluent-kafka, aiokafka, kcat, Java) passes every scenario it has an
interface for, and docs/compatibility.md shows exactly these results."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compat import run as compat_run
from compat.drivers import NOT_APPLICABLE, PASS
from pykbroker.testing import BrokerProcess

ROOT = Path(__file__).resolve().parents[1]
COMPATIBILITY = ROOT / "docs" / "compatibility.md"
NO_ADMIN = {("kcat", "admin-topics"), ("kcat", "admin-configs")}  # kcat has no admin commands


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("compat"), compat_run.PYKBROKER_OVERRIDES) as b:
        yield b


@pytest.fixture(scope="module")
def table(broker):
    return compat_run.run_suite(broker.bootstrap)


def test_every_client_passes_every_scenario_it_has_an_interface_for(table):
    print(table.text())
    assert table.clients == ["kafka-python", "confluent-kafka", "aiokafka", "kcat", "java"]
    statuses = {cell: result.status for cell, result in table.results.items()}
    expected = {cell: NOT_APPLICABLE if cell in NO_ADMIN else PASS for cell in statuses}
    assert statuses == expected, table.details()


def test_the_documented_table_is_the_suite_result(table):
    documented = re.search(r"^\| scenario \| kafka-python \|.*?(?=\n\n|\Z)",
                           COMPATIBILITY.read_text(), re.M | re.S)
    assert documented, "docs/compatibility.md has no compat table"
    assert documented.group(0).strip() == table.markdown()


def test_the_command_line_prints_the_table_for_a_running_broker(broker):
    result = subprocess.run(
        [sys.executable, "-m", "compat", "--clients", "kcat,confluent-kafka",
         "--scenarios", "metadata,produce-consume"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "KAFKA_BOOTSTRAP": broker.bootstrap})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"compat suite against the broker at {broker.bootstrap}"
    assert lines[1].split() == ["scenario", "confluent-kafka", "kcat"]
    assert lines[2].split() == ["metadata", "pass", "pass"]
    assert lines[3].split() == ["produce-consume", "pass", "pass"]


def test_testcontainers_runs_are_skipped_with_a_message_without_docker(monkeypatch, capsys):
    monkeypatch.setattr(compat_run, "docker_unavailable", lambda: "Docker is not available: x")

    assert compat_run.main(["--testcontainers"]) == 0

    assert capsys.readouterr().out.startswith(
        "skipped: Apache Kafka through testcontainers needs Docker. Docker is not available")
