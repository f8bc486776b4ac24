"""The compatibility suite's brokers and results, once per test session: pykbroker and Kafka
3.9.0 (from `../shared/realkafka`), one broker of each, three of each, and one secured broker of
each (SASL, mTLS and ACLs: `compat/security_setup.py`), always stopped at the end. What the
suite found is printed at the end of the run (`pytest_terminal_summary`): the table with a
pykbroker and a Kafka column, and every difference on the wire."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from compat import authorization_matrix, differences, realkafka, side_by_side, wire_probes
from compat.pykbroker_targets import PykBroker, PykCluster
from compat.security_scenarios import security_rows as run_security_rows
from compat.security_setup import SecureKafkaBroker, SecurePykBroker

from ..ci import skip_or_fail_in_ci

REPORT: dict[str, str] = {}  # section title -> text, printed after the tests


def pytest_terminal_summary(terminalreporter):
    for title, text in REPORT.items():
        terminalreporter.write_sep("=", title)
        terminalreporter.write_line(text)


def session_broker(target, *, is_kafka: bool = False):
    """A fixture: a broker or cluster of `target`'s class for the whole session, in a fresh
    temporary directory, always stopped at the end; Kafka's skipped where it cannot run (and
    failed in CI, where it must)."""
    @pytest.fixture(scope="session")
    def running(tmp_path_factory):
        reason = realkafka.unavailable() if is_kafka else None
        if reason:
            skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
        with target(tmp_path_factory.mktemp(f"compat-{target.__name__}")) as started:
            yield started

    return running


pykbroker = session_broker(PykBroker)
kafka = session_broker(realkafka.KafkaBroker, is_kafka=True)
pykbroker_cluster = session_broker(PykCluster)
# not `kafka_cluster`: that is the pykbroker pytest plugin's three-broker fixture
real_kafka_cluster = session_broker(realkafka.KafkaCluster, is_kafka=True)
secure_pykbroker = session_broker(SecurePykBroker)
secure_kafka = session_broker(SecureKafkaBroker, is_kafka=True)


@pytest.fixture(scope="session")
def client_rows(pykbroker, kafka):
    rows = side_by_side.client_rows(pykbroker.bootstrap, kafka.bootstrap)
    REPORT["compat: client scenarios on pykbroker and on Kafka 3.9.0"] = (
        f"{rows.text()}\n\n{rows.details()}")
    return rows


@pytest.fixture(scope="session")
def cluster_rows(pykbroker_cluster, real_kafka_cluster):
    rows = side_by_side.cluster_rows(pykbroker_cluster, real_kafka_cluster)
    REPORT["compat: cluster scenarios (three brokers) on pykbroker and on Kafka 3.9.0"] = (
        f"{rows.text()}\n\n{rows.details()}".rstrip())
    return rows


@pytest.fixture(scope="session")
def security_rows(secure_pykbroker, secure_kafka):
    rows = run_security_rows(secure_pykbroker, secure_kafka)
    REPORT["compat: security scenarios (SASL, mTLS, ACLs) on pykbroker and on Kafka 3.9.0"] = (
        f"{rows.text()}\n\n{rows.details()}".rstrip())
    return rows


@pytest.fixture(scope="session")
def wire_differences(pykbroker, kafka):
    found = differences.differences(wire_probes.answers(pykbroker.bootstrap),
                                    wire_probes.answers(kafka.bootstrap))
    REPORT[f"compat: {len(found)} differences on the wire from Kafka 3.9.0"] = (
        differences.report(found))
    return found


@dataclass(frozen=True)
class MatrixRun:
    """The authorization matrix's answers from both brokers and their differences."""

    pykbroker: dict
    kafka: dict
    found: list


@pytest.fixture(scope="session")
def authorization_matrix_run(secure_pykbroker, secure_kafka):
    with ThreadPoolExecutor(max_workers=2) as pool:
        ours, theirs = pool.map(authorization_matrix.run, (secure_pykbroker, secure_kafka))
    found = differences.differences(ours, theirs)
    REPORT["compat: the authorization matrix on pykbroker and on Kafka 3.9.0"] = (
        f"{authorization_matrix.markdown(ours, theirs)}\n\n"
        f"{differences.report(found, differences.MATRIX_ACCEPTED)}".rstrip())
    return MatrixRun(ours, theirs, found)
