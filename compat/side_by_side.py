"""The compatibility suite against pykbroker and Kafka 3.9.0 side by side: the client scenarios
on one broker of each, the cluster scenarios on three of each, the wire comparison, and the
report with a pykbroker column and a Kafka column.

    with Targets(tmp_dir) as targets:          # starts Kafka (../shared/realkafka) and pykbroker
        rows = client_rows(targets.pykbroker.bootstrap, targets.kafka.bootstrap)
    print(rows.text())

A row is (client, scenario) with the result on each broker; `regressions()` are the rows that
pass on Kafka and fail on pykbroker, which fail the run.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from .cluster_scenarios import CLIENT, run_cluster_suite
from .drivers import FAIL, PASS, Result
from .realkafka import LABEL as KAFKA
from .suite import Table, run_suite

PYKBROKER = "pykbroker"


class Rows:
    """Results by (client, scenario): (on pykbroker, on Kafka)."""

    def __init__(self) -> None:
        self.results: dict[tuple[str, str], tuple[Result, Result]] = {}
        self.versions: dict[str, str] = {}

    def add_tables(self, ours: Table, theirs: Table) -> "Rows":
        for scenario in ours.scenarios:
            for client in ours.clients:
                self.results[(client, scenario)] = (ours.results[(client, scenario)],
                                                    theirs.results[(client, scenario)])
        self.versions.update({c: v for c, v in ours.versions.items() if v})
        return self

    def add_results(self, client: str, ours: dict[str, Result], theirs: dict[str, Result]):
        for scenario, result in ours.items():
            self.results[(client, scenario)] = (result, theirs[scenario])
        return self

    def regressions(self) -> dict[tuple[str, str], tuple[Result, Result]]:
        """Rows that pass on Kafka and do not on pykbroker."""
        return {row: (ours, theirs) for row, (ours, theirs) in self.results.items()
                if theirs.status == PASS and ours.status != PASS}

    def statuses(self, side: int) -> dict[tuple[str, str], str]:
        """{row: status} on pykbroker (side 0) or Kafka (side 1)."""
        return {row: results[side].status for row, results in self.results.items()}

    def text(self) -> str:
        header = ("client", "scenario", PYKBROKER, KAFKA)
        lines = [header] + [(client, scenario, ours.status, theirs.status)
                            for (client, scenario), (ours, theirs) in self.results.items()]
        widths = [max(len(line[i]) for line in lines) for i in range(4)]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                         for line in lines)

    def markdown(self) -> str:
        lines = [f"| client | scenario | {PYKBROKER} | {KAFKA} |", "|---|---|---|---|"]
        lines += [f"| {client} | {scenario} | {ours.status} | {theirs.status} |"
                  for (client, scenario), (ours, theirs) in self.results.items()]
        return "\n".join(lines)

    def details(self) -> str:
        lines = [f"{client}: {version}" for client, version in self.versions.items()]
        for (client, scenario), pair in self.results.items():
            for label, result in zip((PYKBROKER, KAFKA), pair):
                if result.status == FAIL:
                    lines.append(f"FAIL on {label}: {client} {scenario}: {result.detail}")
        return "\n".join(lines)


def client_rows(pykbroker: str, kafka: str, drivers=None, scenarios=None) -> Rows:
    """The client scenarios against both brokers at once (they share no topics or state)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        ours, theirs = pool.map(lambda bootstrap: run_suite(bootstrap, drivers, scenarios),
                                (pykbroker, kafka))
    return Rows().add_tables(ours, theirs)


def cluster_rows(pykbroker_cluster, kafka_cluster) -> Rows:
    """The cluster scenarios on both clusters at once (each kills and restarts brokers of its own
    only; they share no ZooKeeper, ports or topics). pykbroker gets one try; Kafka, the
    reference, two."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        ours = pool.submit(run_cluster_suite, pykbroker_cluster)
        theirs = pool.submit(run_cluster_suite, kafka_cluster, tries=2)
        return Rows().add_results(CLIENT, ours.result(), theirs.result())
