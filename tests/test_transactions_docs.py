"""docs/transactions.md's client code runs as written against the broker `make run` starts
(Kafka's example `config/server.properties`, the settings of `pykbroker --dev`), each program
against a broker of its own on a free port instead of 127.0.0.1:9092: the records of the
committed transactions are read, the aborted one's never."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compat import java
from pykbroker import BrokerProcess

from .docs_examples import DOCS, documented_files

EXAMPLE_CONFIG = DOCS.parent / "config" / "server.properties"
DOCUMENTED_BOOTSTRAP = "127.0.0.1:9092"
PYTHON_PROGRAMS = ("transactions_confluent_kafka.py", "transactions_kafka_python.py")
JAVA_PROGRAM = "TransactionsExample.java"
LOOP_PROGRAM = "consume_transform_produce.py"


@pytest.fixture(scope="module")
def programs() -> dict[str, str]:
    return documented_files(DOCS / "transactions.md")


@pytest.fixture
def dev_broker(tmp_path):
    command = [sys.executable, "-m", "pykbroker", str(EXAMPLE_CONFIG)]
    with BrokerProcess(tmp_path / "broker", command=command) as running:
        yield running


def test_the_page_opens_with_a_program_for_each_client(programs):
    assert list(programs) == [*PYTHON_PROGRAMS, JAVA_PROGRAM, LOOP_PROGRAM]


def assert_reads_only_the_committed_records(output: str, broker: BrokerProcess) -> None:
    last_line = output.strip().splitlines()[-1] if output.strip() else ""
    assert "order-1" in last_line and "order-2" in last_line and "order-4" in last_line, (
        f"output: {output!r}\n--- broker log ---\n{broker.log_text()[-3000:]}")
    assert "order-3" not in last_line


def run_python(programs: dict[str, str], name: str, broker: BrokerProcess, tmp_path: Path) -> str:
    """The program's output, run against `broker`."""
    program = tmp_path / name
    program.write_text(programs[name].replace(DOCUMENTED_BOOTSTRAP, broker.bootstrap))
    done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{done.stderr}\n--- broker log ---\n{broker.log_text()[-3000:]}"
    return done.stdout


@pytest.mark.parametrize("name", PYTHON_PROGRAMS)
def test_the_python_program_reads_the_committed_transactions(programs, dev_broker, tmp_path, name):
    assert_reads_only_the_committed_records(run_python(programs, name, dev_broker, tmp_path), dev_broker)


def test_the_java_program_reads_the_committed_transactions(programs, dev_broker, tmp_path):
    source = tmp_path / "src" / JAVA_PROGRAM
    source.parent.mkdir()
    source.write_text(programs[JAVA_PROGRAM].replace(DOCUMENTED_BOOTSTRAP, dev_broker.bootstrap))
    classes = java.compile_sources([source], tmp_path / "classes")
    done = java.run_main(classes, Path(JAVA_PROGRAM).stem)
    assert done.returncode == 0, java.without_logging_noise(done.stderr)
    assert_reads_only_the_committed_records(done.stdout, dev_broker)


def test_the_loop_commits_its_output_and_its_offsets_together(programs, dev_broker, tmp_path):
    output = run_python(programs, LOOP_PROGRAM, dev_broker, tmp_path)
    assert output.strip() == "checked 3 payments; the group resumes at offset 3"
