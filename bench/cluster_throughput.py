"""Throughput of a three-broker cluster, pykbroker beside Apache Kafka 3.9.0, in the same run.

    python -m bench.cluster_throughput [--quick]     # writes bench/results/cluster.md

Both clusters run side by side for the whole benchmark: three pykbrokers with a ZooKeeper of
pykbroker.testkit.zookeeper, and Kafka's three brokers of ../shared/realkafka/cluster.sh, both with
cluster.sh's settings (min.insync.replicas=2). Rounds alternate between them (pykbroker first in
even rounds, Kafka first in odd ones). In each round and for each record size (1 KB, then 100 B)
a fresh topic with 3 partitions and replication factor 3 is created and waited for until every
ISR is full; one producer writes N records with acks=all (linger.ms=5, batch.size=1048576, no
compression); then they are read back from the beginning by the tuned consumer of
bench/clients.py (assigned all partitions, 64 MiB fetches, large local queue) and by a consumer
with librdkafka's default settings (a member of a fresh group, subscribe, consume()).

Figures: MB/s of record values (MB = 2^20 bytes), the median over the rounds; each broker's CPU
during each phase (% of a core, from /proc/<pid>/stat, ZooKeeper not counted) and the three
brokers' CPU seconds per GB moved.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import throughput, wire  # noqa: E402
from bench.plan import FULL, QUICK, Plan, size_label  # noqa: E402
from bench.sections import HIGHER, LOWER, Comparison, Section  # noqa: E402
from bench.side_by_side import (  # noqa: E402
    BROKERS,
    TITLES,
    Notes,
    Phase,
    Running,
    Say,
    measure_phase,
    median_figure,
    phase_table,
    say_with_time,
    write_section,
)

RESULTS = Path(__file__).resolve().parent / "results" / "cluster.md"
PARTITIONS = 3
REPLICATION = 3
ISR_LIMIT = 60.0


@dataclass(frozen=True)
class ClusterPlan:
    records: int                  # records per topic, of each size
    sizes: tuple[int, ...]
    rounds: int                   # rounds per cluster (alternating); the median is reported
    phase_time_limit: float


CLUSTER_FULL = ClusterPlan(records=300_000, sizes=(1024, 100), rounds=3, phase_time_limit=180.0)
CLUSTER_QUICK = ClusterPlan(records=30_000, sizes=(1024, 100), rounds=1, phase_time_limit=60.0)

# (key, phase label, metric label)
KINDS = (("produce", "produce acks=all", "produce {size} records, acks=all"),
         ("consume", "consume, tuned consumer", "consume {size} records, tuned consumer"),
         ("consume_default", "consume, default consumer", "consume {size} records, default consumer"))


def cluster_plan(plan: Plan) -> ClusterPlan:
    return CLUSTER_FULL if plan.name == FULL.name else CLUSTER_QUICK


def wait_full_isr(bootstrap: str, topic: str, limit: float) -> str:
    """'' once Metadata shows every partition of `topic` led with all replicas in sync."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        view = wire.cluster_view(bootstrap, timeout=10.0)
        parts = view.topics.get(topic, {}) if view is not None else {}
        if len(parts) == PARTITIONS and all(
                state.leader >= 0 and state.isr == REPLICATION for state in parts.values()):
            return ""
        time.sleep(0.2)
    return f"partitions not led with a full ISR within {limit:.0f} s"


class ClusterRounds:
    """Every phase of every round, and the notes, as the rounds go."""

    def __init__(self, cplan: ClusterPlan, say: Say) -> None:
        self.cplan, self.say = cplan, say
        self.phases: list[tuple[int, str, Phase]] = []   # (size, kind, phase)
        self.notes = Notes()

    def record(self, size: int, kind: str, phase: Phase) -> Phase:
        self.phases.append((size, kind, phase))
        result = phase.result
        rate = phase.megabytes_per_second()
        self.say(f"{TITLES[phase.broker]}: {phase.phase}: "
                 + (f"{rate:,.1f} MB/s" if rate is not None else "n/a")
                 + (f" ({result['reason']})" if result.get("reason") else ""))
        return phase

    def failed(self, name: str, size: int, reason: str) -> None:
        for kind, label, _ in KINDS:
            self.record(size, kind, Phase(name, f"{label} {size_label(size)}",
                                          {"ok": False, "reason": reason}, None))

    def one_size(self, name: str, cluster, size: int, tag: str) -> None:
        limit, pids = self.cplan.phase_time_limit, cluster.pids
        topic = throughput.fresh_topic(f"rf3-{size}b")
        created = throughput.run_client("create-topic", cluster.bootstrap, topic, limit,
                                        partitions=PARTITIONS, replication=REPLICATION)
        reason = created.get("reason", "topic creation failed") if not created.get("ok") else ""
        reason = reason or wait_full_isr(cluster.bootstrap, topic, ISR_LIMIT)
        if reason:
            self.failed(name, size, reason)
            return
        label = f"{size_label(size)}{tag}"
        written = self.record(size, "produce", measure_phase(
            name, f"produce acks=all {label}", pids, lambda: throughput.run_client(
                "produce", cluster.bootstrap, topic, limit, count=self.cplan.records, size=size,
                acks="all")))
        count = written.result.get("records", 0)
        if not written.usable() or not count:
            self.failed_reads(name, size, label, "nothing was written")
            return
        self.record(size, "consume", measure_phase(
            name, f"consume, tuned consumer {label}", pids, lambda: throughput.run_client(
                "consume", cluster.bootstrap, topic, limit, count=count, partitions=PARTITIONS)))
        self.record(size, "consume_default", measure_phase(
            name, f"consume, default consumer {label}", pids, lambda: throughput.run_client(
                "consume", cluster.bootstrap, topic, limit, count=count, default=True)))

    def failed_reads(self, name: str, size: int, label: str, reason: str) -> None:
        for kind, phase_label, _ in KINDS[1:]:
            self.record(size, kind, Phase(name, f"{phase_label} {label}",
                                          {"ok": False, "reason": reason}, None))

    def run(self, running: Running) -> None:
        for index in range(self.cplan.rounds):
            tag = f" #{index + 1}" if self.cplan.rounds > 1 else ""
            for name, cluster in running.in_round(index):
                for size in self.cplan.sizes:
                    self.say(f"{TITLES[name]} cluster: round {index + 1}, {size_label(size)} records")
                    try:
                        self.one_size(name, cluster, size, tag)
                    except Exception as error:  # a harness failure costs one size, not the run
                        self.notes.add(f"{TITLES[name]}, {size_label(size)}{tag}: "
                                       f"{type(error).__name__}: {error}", self.say)

    def of(self, name: str, size: int, kind: str) -> list[Phase]:
        return [phase for s, k, phase in self.phases if s == size and k == kind and phase.broker == name]


def comparisons(rounds: ClusterRounds, failures: dict[str, str]) -> list[Comparison]:
    result = []
    for size in rounds.cplan.sizes:
        for kind, _, metric in KINDS:
            what = metric.format(size=size_label(size))
            rates, costs = {}, {}
            for name in BROKERS:
                phases = rounds.of(name, size, kind)
                reasons = [failures.get(name, "")] + [p.result.get("reason", "") for p in phases]
                rates[name] = median_figure([p.megabytes_per_second() for p in phases], reasons)
                costs[name] = median_figure([p.cpu_per_gigabyte() for p in phases], reasons)
            result.append(Comparison(f"three brokers: {what}, MB/s", HIGHER, rates))
            result.append(Comparison(f"three brokers: {what}, brokers' CPU s per GB", LOWER, costs, 1))
    return result


def join_seconds(phase: Phase) -> str:
    value = phase.result.get("join_seconds")
    return f"{value:.2f}" if value is not None else ""


def run(workdir: Path, plan: Plan, say: Say = say_with_time,
        cplan: ClusterPlan | None = None) -> Section:
    """Both clusters started, measured in alternating rounds, stopped; the section of figures.
    `cplan` replaces what `plan` (full or quick) chooses."""
    cplan = cplan or cluster_plan(plan)
    rounds = ClusterRounds(cplan, say)
    with Running(workdir, "cluster", say) as running:
        rounds.run(running)
        failures = dict(running.failures)
    notes = [f"{TITLES[name]}: {reason}" for name, reason in failures.items()] + rounds.notes.lines
    notes.append(f"{cplan.records:,} records of each size per round, {cplan.rounds} round(s) per "
                 "cluster; topic of 3 partitions, replication factor 3, min.insync.replicas=2.")
    notes.append("Default consumer: its time runs from the assignment to the last record; the "
                 "join column is subscribe() until the assignment, not counted.")
    return Section("Three brokers, replication factor 3", comparisons(rounds, failures),
                   phase_table([phase for _, _, phase in rounds.phases], join_seconds, "join s"),
                   notes)


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer records, one round")
    parser.add_argument("--records", type=int, default=0, help="records per topic (overrides the plan)")
    parser.add_argument("--size", type=int, action="append", help="record size (repeatable)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    cplan = cluster_plan(plan)
    if args.records:
        cplan = replace(cplan, records=args.records)
    if args.size:
        cplan = replace(cplan, sizes=tuple(args.size))
    begin = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as workdir:
        section = run(Path(workdir), plan, cplan=cplan)
    path = write_section(section, args.output, plan.name, time.monotonic() - begin)
    print(path.read_text())


if __name__ == "__main__":
    main()
