"""Acceptance: the compatibility suite's client scenarios (`python -m compat`) run against
pykbroker and against Apache Kafka 3.9.0 with the same settings. Every client (kafka-python,
confluent-kafka, aiokafka, kcat, Java) passes every scenario it has an interface for on both; no
scenario passes on Kafka and fails on pykbroker; docs/compatibility.md shows exactly these
results, in a pykbroker and a Kafka column."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from compat import run as compat_run
from compat.drivers import NOT_APPLICABLE, PASS
from compat.realkafka import SINGLE_BROKER_SETTINGS
from compat.scenarios import TRANSACTIONAL

ROOT = Path(__file__).resolve().parents[2]
COMPATIBILITY = ROOT / "docs" / "compatibility.md"
# kcat has no admin commands and no transactional producer
NO_INTERFACE = {("kcat", scenario)
                for scenario in ("admin-topics", "admin-configs", *TRANSACTIONAL)}
CLIENTS = ["kafka-python", "confluent-kafka", "aiokafka", "kcat", "java"]


def expected_statuses(rows) -> dict:
    return {row: NOT_APPLICABLE if row in NO_INTERFACE else PASS for row in rows.results}


def documented_tables() -> list[str]:
    """The docs' tables with a pykbroker and a Kafka column: client scenarios, cluster, security."""
    tables = re.findall(r"^\| client \| scenario \|.*?(?=\n\n|\Z)", COMPATIBILITY.read_text(),
                        re.M | re.S)
    assert len(tables) == 3, "docs/compatibility.md lacks the client, cluster or security scenario tables"
    return [table.strip() for table in tables]


def test_every_client_passes_every_scenario_it_has_an_interface_for_on_pykbroker(client_rows):
    assert sorted({client for client, _ in client_rows.results}) == sorted(CLIENTS)
    assert client_rows.statuses(0) == expected_statuses(client_rows), client_rows.details()


def test_no_scenario_that_passes_on_kafka_fails_on_pykbroker(client_rows):
    assert client_rows.regressions() == {}, client_rows.details()


def test_every_scenario_holds_on_kafka_itself(client_rows):
    """The scenarios describe Kafka's behaviour: each passes on Kafka 3.9.0."""
    assert client_rows.statuses(1) == expected_statuses(client_rows), client_rows.details()


def test_the_documented_table_is_the_suite_result(client_rows):
    assert documented_tables()[0] == client_rows.markdown()


def test_pykbroker_runs_with_the_settings_kafka_sh_gives_kafka(kafka):
    written = dict(line.split("=", 1) for line in kafka.server_properties.read_text().split("\n")
                   if "=" in line and not line.startswith("#"))
    set_up = {"broker.id", "listeners", "advertised.listeners", "log.dirs", "zookeeper.connect"}
    assert {k: v for k, v in written.items() if k not in set_up} == SINGLE_BROKER_SETTINGS
    assert compat_run.PYKBROKER_OVERRIDES == SINGLE_BROKER_SETTINGS


def test_the_command_line_prints_the_table_for_a_running_broker(pykbroker):
    result = subprocess.run(
        [sys.executable, "-m", "compat", "--clients", "kcat,confluent-kafka",
         "--scenarios", "metadata,produce-consume"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "KAFKA_BOOTSTRAP": pykbroker.bootstrap})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"compat suite against the broker at {pykbroker.bootstrap}"
    assert lines[1].split() == ["scenario", "confluent-kafka", "kcat"]
    assert lines[2].split() == ["metadata", "pass", "pass"]
    assert lines[3].split() == ["produce-consume", "pass", "pass"]


def test_testcontainers_runs_are_skipped_with_a_message_without_docker(monkeypatch, capsys):
    monkeypatch.setattr(compat_run, "docker_unavailable", lambda: "Docker is not available: x")

    assert compat_run.main(["--testcontainers"]) == 0

    assert capsys.readouterr().out.startswith(
        "skipped: Apache Kafka through testcontainers needs Docker. Docker is not available")
