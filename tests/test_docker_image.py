"""The Docker image: its entrypoint turns KAFKA_* and PYKBROKER_* environment variables into
--override flags (Confluent's and Apache Kafka's naming rule) between the image's defaults and the
arguments of `docker run`, which are appended; its health check asks /health. The entrypoint runs
here with `sh` and a stand-in `pykbroker` that prints its arguments; the image itself is built and
checked healthy only where Docker runs."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
ENTRYPOINT = CHECKOUT / "docker" / "entrypoint.sh"
DEFAULTS = [
    "--override",
    "listeners=PLAINTEXT://0.0.0.0:9092",
    "--override",
    "advertised.listeners=PLAINTEXT://localhost:9092",
    "--override",
    "log.dirs=/var/lib/pykbroker",
    "--override",
    "pykbroker.metrics.listener=http://0.0.0.0:9404",
]


@pytest.fixture
def run_entrypoint(tmp_path):
    """The arguments the entrypoint starts `pykbroker` with, given an environment and arguments."""
    fake = tmp_path / "pykbroker"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    fake.chmod(0o755)

    def run(*arguments: str, **environment: str) -> list[str]:
        result = subprocess.run(
            ["sh", str(ENTRYPOINT), *arguments],
            env={"PATH": f"{tmp_path}:/usr/bin:/bin", **environment},
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        lines = result.stdout.splitlines()
        assert lines[0] == "/opt/pykbroker/config/server.properties"
        return lines[1:]

    return run


def overrides(arguments: list[str]) -> list[str]:
    return [value for flag, value in zip(arguments, arguments[1:]) if flag == "--override"]


def test_without_settings_the_broker_starts_with_the_image_defaults(run_entrypoint):
    assert run_entrypoint() == DEFAULTS


def test_docker_run_arguments_are_appended_to_the_defaults(run_entrypoint):
    assert run_entrypoint("--override", "num.partitions=3") == [*DEFAULTS, "--override", "num.partitions=3"]


def test_kafka_variables_become_overrides_by_confluents_naming_rule(run_entrypoint):
    arguments = run_entrypoint(
        KAFKA_BROKER_ID="3",
        KAFKA_LISTENER_SECURITY_PROTOCOL_MAP="INTERNAL:PLAINTEXT",
        KAFKA_LOG_RETENTION_HOURS="1",
        KAFKA_CFG_NUM_PARTITIONS="4",
        KAFKA_SOME__UNDERSCORED___DASHED="x",
        PYKBROKER_FSYNC_BEFORE_ACK="true",
    )
    assert overrides(arguments)[4:] == [
        "broker.id=3",
        "num.partitions=4",
        "listener.security.protocol.map=INTERNAL:PLAINTEXT",
        "log.retention.hours=1",
        "some_underscored-dashed=x",
        "pykbroker.fsync.before.ack=true",
    ]


def test_advertised_listeners_from_the_environment_replace_the_default_one(run_entrypoint):
    arguments = run_entrypoint(
        KAFKA_LISTENERS="INTERNAL://0.0.0.0:9092,EXTERNAL://0.0.0.0:19092",
        KAFKA_ADVERTISED_LISTENERS="INTERNAL://broker1:9092,EXTERNAL://localhost:19092",
    )
    assert overrides(arguments) == [
        "listeners=PLAINTEXT://0.0.0.0:9092",
        "log.dirs=/var/lib/pykbroker",
        "pykbroker.metrics.listener=http://0.0.0.0:9404",
        "advertised.listeners=INTERNAL://broker1:9092,EXTERNAL://localhost:19092",
        "listeners=INTERNAL://0.0.0.0:9092,EXTERNAL://0.0.0.0:19092",
    ]


def test_listeners_given_as_arguments_drop_the_default_advertised_listener(run_entrypoint):
    arguments = run_entrypoint("--override", "listeners=PLAINTEXT://0.0.0.0:19092")
    assert "advertised.listeners=PLAINTEXT://localhost:9092" not in overrides(arguments)
    assert overrides(arguments)[-1] == "listeners=PLAINTEXT://0.0.0.0:19092"


def test_argument_values_keep_their_spaces_and_arguments_win_over_the_environment(run_entrypoint):
    arguments = run_entrypoint(
        "--override", "sasl.jaas.config=a b; c", "--override", "num.partitions=5", KAFKA_NUM_PARTITIONS="2"
    )
    assert overrides(arguments)[-3:] == ["num.partitions=2", "sasl.jaas.config=a b; c", "num.partitions=5"]


def test_the_jvms_variables_are_left_out_and_the_root_log_level_sets_log_level(run_entrypoint):
    arguments = run_entrypoint(
        KAFKA_HEAP_OPTS="-Xmx1G",
        KAFKA_OPTS="-javaagent:x.jar",
        KAFKA_JMX_PORT="9999",
        KAFKA_LOG4J_LOGGERS="kafka=WARN",
        KAFKA_LOG4J_ROOT_LOGLEVEL="DEBUG",
        PYKBROKER_HEALTH_URL="http://127.0.0.1:1/health",
    )
    assert arguments == ["--log-level", "DEBUG", *DEFAULTS]


def test_a_command_instead_of_options_runs_as_given():
    result = subprocess.run(
        ["sh", str(ENTRYPOINT), "echo", "hello"], env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True
    )
    assert result.stdout == "hello\n"


def test_the_image_checks_its_health_on_health_and_starts_through_the_entrypoint():
    dockerfile = (CHECKOUT / "docker" / "Dockerfile").read_text()
    assert "HEALTHCHECK" in dockerfile and "/health" in dockerfile
    assert 'ENTRYPOINT ["pykbroker-entrypoint"]' in dockerfile
    compose = (CHECKOUT / "docker" / "compose.yaml").read_text()
    assert compose.count("condition: service_healthy") == 4  # ZooKeeper for the brokers, the brokers for cluster-ready


def _docker_unavailable() -> str | None:
    from compat.run import docker_unavailable

    return docker_unavailable()


@pytest.mark.timeout(900)
def test_the_built_image_reports_healthy_once_the_broker_serves():
    reason = _docker_unavailable()
    if reason:
        pytest.skip(reason)
    tag = "pykbroker:health-test"
    subprocess.run(
        ["docker", "build", "-q", "-f", "docker/Dockerfile", "-t", tag, "."], cwd=CHECKOUT, check=True, timeout=600
    )
    container = subprocess.run(
        ["docker", "run", "-d", "--rm", tag, "--override", "num.partitions=2"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    try:
        deadline = time.monotonic() + 120
        status = ""
        while time.monotonic() < deadline and status != "healthy":
            status = subprocess.run(
                ["docker", "inspect", "-f", "{{.State.Health.Status}}", container],
                capture_output=True,
                text=True,
            ).stdout.strip()
            time.sleep(1)
        assert status == "healthy"
    finally:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True)
