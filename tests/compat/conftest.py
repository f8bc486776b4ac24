"""The compatibility suite's brokers and results, once per test session: pykbroker and Kafka
3.9.0 (from `../shared/realkafka`), one broker of each, three of each, and one secured broker of
each (SASL, mTLS and ACLs: `compat/security_setup.py`), each pair started together and always
stopped at the end. What the suite found is printed at the end of the run (`pytest_terminal_summary`): the table with a
pykbroker and a Kafka column, and every difference on the wire."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
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


@dataclass(frozen=True)
class Pair:
    """A pykbroker set-up and the Kafka one it is compared with (None where Kafka cannot run,
    and why)."""

    pykbroker: object
    kafka: object | None
    kafka_unavailable: str | None


def session_pair(ours, theirs):
    """A fixture: a set-up of `ours` (pykbroker) and one of `theirs` (Kafka) for the whole
    session, each in a fresh temporary directory, started together and always stopped at the
    end; Kafka's is discarded (killed, its data removed: nothing is checked after the session)."""

    @pytest.fixture(scope="session")
    def running(tmp_path_factory):
        reason = realkafka.unavailable()
        targets = [ours(tmp_path_factory.mktemp(f"compat-{ours.__name__}"))]
        if not reason:
            targets.append(theirs(tmp_path_factory.mktemp(f"compat-{theirs.__name__}")))
        with started_together(targets):
            yield Pair(targets[0], None if reason else targets[1], reason)

    return running


@contextmanager
def started_together(targets):
    """Starts every target at once (each in a thread of its own); at the end stops them, also at
    once: Kafka's by `discard`, pykbroker's by `stop`. One that fails to start fails the block
    after the others are stopped again."""
    with ThreadPoolExecutor(max_workers=len(targets)) as pool:
        starts = [pool.submit(target.start) for target in targets]
        wait(starts)
        try:
            for start in starts:
                start.result()
            yield targets
        finally:
            stops = [pool.submit(getattr(target, "discard", target.stop))
                     for target, start in zip(targets, starts) if start.exception() is None]
            for stop in stops:
                stop.result()


def pykbroker_of(pair_fixture: str):
    @pytest.fixture(scope="session")
    def pykbroker_side(request):
        return request.getfixturevalue(pair_fixture).pykbroker

    return pykbroker_side


def kafka_of(pair_fixture: str):
    """Kafka's side of the pair; skipped where Kafka cannot run (and failed in CI, where it must)."""

    @pytest.fixture(scope="session")
    def kafka_side(request):
        pair = request.getfixturevalue(pair_fixture)
        if pair.kafka is None:
            skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {pair.kafka_unavailable}")
        return pair.kafka

    return kafka_side


single_brokers = session_pair(PykBroker, realkafka.KafkaBroker)
clusters = session_pair(PykCluster, realkafka.KafkaCluster)
secure_brokers = session_pair(SecurePykBroker, SecureKafkaBroker)

pykbroker = pykbroker_of("single_brokers")
kafka = kafka_of("single_brokers")
pykbroker_cluster = pykbroker_of("clusters")
# not `kafka_cluster`: that is the pykbroker pytest plugin's three-broker fixture
real_kafka_cluster = kafka_of("clusters")
secure_pykbroker = pykbroker_of("secure_brokers")
secure_kafka = kafka_of("secure_brokers")


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
