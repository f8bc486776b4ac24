"""Runs the compatibility suite and prints a pass/fail table by client and scenario.

    python -m compat                         # against a pykbroker it starts (and stops)
    python compat/run.py                     # the same
    KAFKA_BOOTSTRAP=host:port python -m compat   # against any running broker
    python -m compat --bootstrap host:port
    python -m compat --testcontainers        # against Apache Kafka 3.9 in Docker
    python -m compat --against-kafka         # pykbroker and Kafka 3.9.0 (../shared/realkafka)
                                             # side by side, plus the wire comparison
    python -m compat --against-kafka --cluster   # and the cluster scenarios on three of each
    python -m compat --against-kafka --security  # and the security scenarios (SASL, mTLS, ACLs)
                                                 # on a secured broker of each
    python -m compat --markdown              # the table as Markdown (docs/compatibility.md)
    python -m compat --clients java,kcat --scenarios metadata,consumer-group

Exit status: 0 when no scenario failed, 1 when one did (2: bad arguments); with
--against-kafka, 1 when a scenario passes on Kafka and fails on pykbroker or pykbroker answers a
request differently from Kafka in a way not accepted in compat/differences.py. A cell is `pass`,
`FAIL`, `n/a` (the client has no interface for the scenario) or `skipped` (the client is not
installed here).
"""
from __future__ import annotations

import sys
from pathlib import Path

if __name__ == "__main__" and not __package__:  # run as `python compat/run.py`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from compat.run import main

    sys.exit(main())

import argparse
import contextlib
import os
import shutil
import tempfile

from .drivers import Driver, all_drivers
from .realkafka import SINGLE_BROKER_SETTINGS
from .scenarios import SCENARIOS
from .suite import run_suite

# Apache Kafka 3.9 in the image testcontainers' KafkaContainer knows how to start (Confluent
# Platform 7.9 is Apache Kafka 3.9), in KRaft mode
KAFKA_IMAGE = "confluentinc/cp-kafka:7.9.1"
# Kafka's own development server.properties, as kafka.sh gives the Kafka it is compared with
PYKBROKER_OVERRIDES = SINGLE_BROKER_SETTINGS


@contextlib.contextmanager
def pykbroker():
    from pykbroker.testkit.process import BrokerProcess

    directory = tempfile.mkdtemp(prefix="compat-pykbroker-")
    try:
        with BrokerProcess(directory, PYKBROKER_OVERRIDES) as broker:
            yield broker.bootstrap, "pykbroker, started for this run,"
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def docker_unavailable() -> str | None:
    """Why Docker cannot run a container here, or None."""
    try:
        import docker
    except ImportError:
        return "the docker package is not installed (pip install testcontainers)"
    try:
        client = docker.from_env(timeout=5)
        client.ping()
        client.close()
    except Exception as failure:  # noqa: BLE001 - any failure means: no Docker here
        return f"Docker is not available: {type(failure).__name__}: {failure}"
    return None


@contextlib.contextmanager
def apache_kafka(image: str):
    from testcontainers.community.kafka import KafkaContainer

    with KafkaContainer(image).with_kraft() as kafka:
        yield kafka.get_bootstrap_server(), f"Apache Kafka ({image} through testcontainers)"


@contextlib.contextmanager
def external(bootstrap: str):
    yield bootstrap, "the broker"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compat", description=__doc__.split("\n")[0])
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--bootstrap", default=os.environ.get("KAFKA_BOOTSTRAP"),
                        help="host:port of a running broker (default: $KAFKA_BOOTSTRAP; "
                             "without either, a pykbroker is started)")
    target.add_argument("--testcontainers", action="store_true",
                        help="start Apache Kafka in Docker through testcontainers")
    target.add_argument("--against-kafka", action="store_true",
                        help="run against pykbroker and Apache Kafka 3.9.0 from "
                             "../shared/realkafka, side by side, and compare their answers")
    parser.add_argument("--cluster", action="store_true",
                        help="with --against-kafka: also the cluster scenarios on three brokers")
    parser.add_argument("--security", action="store_true",
                        help="with --against-kafka: also the security scenarios (SASL, mTLS, ACLs) "
                             "on a secured broker of each")
    parser.add_argument("--image", default=KAFKA_IMAGE, help="the Kafka image for --testcontainers")
    parser.add_argument("--clients", help="comma-separated clients (default: all)")
    parser.add_argument("--scenarios", help="comma-separated scenarios (default: all)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--jobs", type=int, help="clients run side by side (default: all)")
    args = parser.parse_args(argv)

    drivers = all_drivers()
    if args.clients:
        wanted = args.clients.split(",")
        unknown = set(wanted) - {d.name for d in drivers}
        if unknown:
            parser.error(f"unknown clients {sorted(unknown)}; known: {[d.name for d in drivers]}")
        drivers = [d for d in drivers if d.name in wanted]
    scenarios = list(SCENARIOS)
    if args.scenarios:
        scenarios = args.scenarios.split(",")
        unknown = set(scenarios) - set(SCENARIOS)
        if unknown:
            parser.error(f"unknown scenarios {sorted(unknown)}; known: {list(SCENARIOS)}")

    if args.against_kafka:
        return against_kafka(drivers, scenarios, cluster=args.cluster, security=args.security)
    if args.testcontainers:
        reason = docker_unavailable()
        if reason:
            print(f"skipped: Apache Kafka through testcontainers needs Docker. {reason}")
            return 0
        broker = apache_kafka(args.image)
    elif args.bootstrap:
        broker = external(args.bootstrap)
    else:
        broker = pykbroker()

    with broker as (bootstrap, description):
        print(f"compat suite against {description} at {bootstrap}", flush=True)
        table = run_suite(bootstrap, drivers, scenarios, args.jobs)
    print(table.markdown() if args.markdown else table.text())
    details = table.details()
    if details:
        print()
        print(details)
    return 1 if table.failures else 0


def against_kafka(drivers: list[Driver], scenarios: list[str], *, cluster: bool,
                  security: bool = False) -> int:
    from . import differences, realkafka, side_by_side, wire_probes
    from .pykbroker_targets import PykBroker, PykCluster

    reason = realkafka.unavailable()
    if reason:
        print(f"cannot run against Kafka: {reason}")
        return 1
    with tempfile.TemporaryDirectory(prefix="compat-") as directory:
        root = Path(directory)
        with realkafka.KafkaBroker(root / "kafka") as kafka, PykBroker(root / "pyk") as ours:
            print(f"compat suite against pykbroker at {ours.bootstrap} and "
                  f"{realkafka.LABEL} at {kafka.bootstrap}", flush=True)
            rows = side_by_side.client_rows(ours.bootstrap, kafka.bootstrap, drivers, scenarios)
            found = differences.differences(wire_probes.answers(ours.bootstrap),
                                            wire_probes.answers(kafka.bootstrap))
        if cluster:
            with PykCluster(root / "pyk-cluster") as ours, \
                    realkafka.KafkaCluster(root / "kafka-cluster") as theirs:
                rows.results.update(side_by_side.cluster_rows(ours, theirs).results)
        if security:
            from .security_scenarios import security_rows
            from .security_setup import SecureKafkaBroker, SecurePykBroker

            with SecurePykBroker(root / "pyk-secure") as ours, SecureKafkaBroker(root / "kafka-secure") as theirs:
                secured = security_rows(ours, theirs, [d.name for d in drivers])
                rows.results.update(secured.results)
    print(rows.text())
    print()
    print(rows.details())
    print()
    print(f"wire differences ({len(found)}):")
    print(differences.report(found))
    unaccepted = [d for d in found if differences.accepted_reason(d) is None]
    return 1 if rows.regressions() or unaccepted else 0


if __name__ == "__main__":
    sys.exit(main())
