"""Produce latency at a fixed rate, pykbroker beside Apache Kafka 3.9.0, in the same run.

    python -m bench.latency [--quick]     # writes bench/results/latency.md

One producer process (bench/clients.py `latency`) writes 1 KB records at a fixed rate (5,000 a
second) to a fresh topic of 3 partitions; each record carries the time of its produce() call, and
its latency is the time its delivery report is served minus that, both read in the producer
process. Before the clock starts one record is written and acknowledged (connections are up);
then the first seconds (2, 1 with --quick) are a warm-up and are not counted. The producer has the
bench's settings (linger.ms=5, batch.size=1048576, no compression), so every figure includes up to
5 ms of linger.

Two set-ups, each with both brokers running side by side and rounds alternating between them:
acks=1 on one broker (pykbroker standalone, Kafka through kafka.sh), then acks=all on three brokers
(replication factor 3, min.insync.replicas=2; pykbroker with a ZooKeeper of
pykbroker.testkit.zookeeper, Kafka through cluster.sh). Figures: p50, p99 and max in ms, the
median over the rounds.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import throughput  # noqa: E402
from bench.cluster_throughput import wait_full_isr  # noqa: E402
from bench.plan import FULL, QUICK, Plan  # noqa: E402
from bench.sections import LOWER, Comparison, Section  # noqa: E402
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

RESULTS = Path(__file__).resolve().parent / "results" / "latency.md"
PARTITIONS = 3
RECORD_SIZE = 1024
ISR_LIMIT = 60.0
PERCENTILES = (("p50_ms", "p50"), ("p99_ms", "p99"), ("max_ms", "max"))


@dataclass(frozen=True)
class LatencyPlan:
    rate: float            # records per second
    seconds: float         # measured seconds, after the warm-up
    warmup: float
    rounds: int            # rounds per broker and set-up (alternating); the median is reported


LATENCY_FULL = LatencyPlan(rate=5000, seconds=15.0, warmup=2.0, rounds=3)
LATENCY_QUICK = LatencyPlan(rate=5000, seconds=4.0, warmup=1.0, rounds=1)


@dataclass(frozen=True)
class Setup:
    kind: str              # "single" or "cluster" (see bench.side_by_side.Running)
    label: str
    acks: str
    replication: int


SETUPS = (Setup("single", "one broker, acks=1", "1", 1),
          Setup("cluster", "three brokers, acks=all", "all", 3))


def latency_plan(plan: Plan) -> LatencyPlan:
    return LATENCY_FULL if plan.name == FULL.name else LATENCY_QUICK


def time_limit(lplan: LatencyPlan) -> float:
    return lplan.warmup + lplan.seconds + 30.0


def one_round(name: str, broker, setup: Setup, lplan: LatencyPlan, tag: str) -> Phase:
    limit = time_limit(lplan)
    topic = throughput.fresh_topic("latency")
    created = throughput.run_client("create-topic", broker.bootstrap, topic, limit,
                                    partitions=PARTITIONS, replication=setup.replication)
    reason = created.get("reason", "topic creation failed") if not created.get("ok") else ""
    if not reason and setup.replication > 1:
        reason = wait_full_isr(broker.bootstrap, topic, ISR_LIMIT)
    label = f"{setup.label}, {lplan.rate:,.0f}/s{tag}"
    if reason:
        return Phase(name, label, {"ok": False, "reason": reason}, None)
    return measure_phase(name, label, broker.pids, lambda: throughput.run_client(
        "latency", broker.bootstrap, topic, limit, rate=lplan.rate, seconds=lplan.seconds,
        warmup=lplan.warmup, size=RECORD_SIZE, acks=setup.acks))


def measure_setup(workdir: Path, setup: Setup, lplan: LatencyPlan, say: Say,
                  phases: list[tuple[Setup, Phase]], notes: Notes) -> dict[str, str]:
    """Both brokers of one set-up started, measured in alternating rounds, stopped; the brokers
    that did not start, with why."""
    with Running(workdir, setup.kind, say) as running:
        for index in range(lplan.rounds):
            tag = f" #{index + 1}" if lplan.rounds > 1 else ""
            for name, broker in running.in_round(index):
                try:
                    phase = one_round(name, broker, setup, lplan, tag)
                except Exception as error:  # a harness failure costs one round, not the run
                    notes.add(f"{TITLES[name]}, {setup.label}{tag}: {type(error).__name__}: {error}", say)
                    continue
                phases.append((setup, phase))
                say(f"{TITLES[name]}: {phase.phase}: {summary(phase)}")
        return dict(running.failures)


def summary(phase: Phase) -> str:
    result = phase.result
    if "p50_ms" not in result:
        return f"n/a ({result.get('reason', 'failed')})"
    text = " ".join(f"{label} {result[key]:.1f} ms" for key, label in PERCENTILES)
    return text + (f" ({result['reason']})" if result.get("reason") else "")


def comparisons(phases: list[tuple[Setup, Phase]], failures: dict[str, dict[str, str]]) -> list[Comparison]:
    result = []
    for setup in SETUPS:
        for key, label in PERCENTILES:
            figures = {}
            for name in BROKERS:
                runs = [phase for s, phase in phases if s == setup and phase.broker == name]
                reasons = [failures.get(setup.kind, {}).get(name, "")]
                reasons += [phase.result.get("reason", "") for phase in runs]
                figures[name] = median_figure([phase.result.get(key) for phase in runs], reasons)
            result.append(Comparison(f"produce latency {label}, 1 KB records, {setup.label}, ms",
                                     LOWER, figures, 1))
    return result


def latency_cells(phase: Phase) -> str:
    result = phase.result
    if "p50_ms" not in result:
        return "—"
    return " / ".join(f"{result[key]:.1f}" for key, _ in PERCENTILES) + f" ({result['rate']:,.0f}/s)"


def run(workdir: Path, plan: Plan, say: Say = say_with_time,
        lplan: LatencyPlan | None = None) -> Section:
    """Both set-ups measured one after the other; the section of figures. `lplan` replaces what
    `plan` (full or quick) chooses."""
    lplan = lplan or latency_plan(plan)
    phases: list[tuple[Setup, Phase]] = []
    notes, failures = Notes(), {}
    for setup in SETUPS:
        failures[setup.kind] = measure_setup(workdir, setup, lplan, say, phases, notes)
    lines = [f"{TITLES[name]}, {kind}: {reason}" for kind, by_name in failures.items()
             for name, reason in by_name.items()] + notes.lines
    lines.append(f"{lplan.rate:,.0f} records of 1 KB a second for {lplan.seconds:.0f} s after a "
                 f"{lplan.warmup:.0f} s warm-up, {lplan.rounds} round(s) per broker and set-up; "
                 "latency is delivery report minus produce(), in the producer process; linger.ms=5.")
    return Section("Produce latency at a fixed rate", comparisons(phases, failures),
                   phase_table([phase for _, phase in phases], latency_cells,
                               "p50 / p99 / max ms (rate)"),
                   lines)


def main() -> None:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds, one round")
    parser.add_argument("--seconds", type=float, default=0.0, help="measured seconds (overrides the plan)")
    parser.add_argument("--rate", type=float, default=0.0, help="records per second (overrides the plan)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    plan = QUICK if args.quick else FULL
    lplan = latency_plan(plan)
    if args.seconds:
        lplan = replace(lplan, seconds=args.seconds)
    if args.rate:
        lplan = replace(lplan, rate=args.rate)
    begin = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as workdir:
        section = run(Path(workdir), plan, lplan=lplan)
    path = write_section(section, args.output, plan.name, time.monotonic() - begin)
    print(path.read_text())


if __name__ == "__main__":
    main()
