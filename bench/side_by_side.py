"""What the benchmarks beside Kafka 3.9.0 share: both brokers started once and kept running for
alternating rounds, the CPU time of broker processes across a phase, medians, and a `Section`
written out as markdown.

    with Running(workdir, "cluster", say) as running:     # pykbroker's and Kafka's clusters
        for name, broker in running.in_round(round_index):  # alternating order, round by round
            ... broker.bootstrap, broker.pids ...

A broker that does not start leaves its figures "n/a (reason)" and never stops the other.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from bench import report, throughput
from bench.figure import Figure, measured, not_available
from bench.scale_brokers import make_cluster, make_single
from bench.sections import Section

BROKERS = ("pykbroker", "kafka")
TITLES = {"pykbroker": "pykbroker", "kafka": "Kafka 3.9.0"}
NOFILE = 20_000
GIB = 2**30

Say = Callable[[str], None]


def say_with_time(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class SingleBroker:
    """One broker (pykbroker standalone, Kafka through kafka.sh) seen as a set of broker pids."""

    def __init__(self, broker) -> None:
        self.broker, self.name = broker, broker.name

    def start(self) -> None:
        self.broker.start()

    @property
    def bootstrap(self) -> str:
        return self.broker.bootstrap

    @property
    def pids(self) -> dict[int, int]:
        return {0: self.broker.pid}

    def close(self) -> None:
        self.broker.close()


def make_setup(kind: str, name: str, workdir: Path):
    if kind == "single":
        return SingleBroker(make_single(name, workdir, NOFILE))
    return make_cluster(name, workdir, NOFILE)


class Running:
    """pykbroker and Kafka of one kind ("single" or "cluster"), started one after the other and
    stopped together when the block ends."""

    def __init__(self, workdir: Path, kind: str, say: Say, names: tuple[str, ...] = BROKERS) -> None:
        self.workdir, self.kind, self.say, self.names = workdir, kind, say, names
        self.brokers: dict[str, object] = {}
        self.failures: dict[str, str] = {}

    def __enter__(self) -> Running:
        for name in self.names:
            self.start(name)
        return self

    def start(self, name: str) -> None:
        self.say(f"{TITLES[name]}: starting ({self.kind})")
        setup = make_setup(self.kind, name, self.workdir / f"{self.kind}-{name}")
        self.brokers[name] = setup
        try:
            setup.start()
        except Exception as error:
            self.failures[name] = f"did not start: {type(error).__name__}: {error}"
            self.say(f"{TITLES[name]}: {self.failures[name]}")

    def in_round(self, index: int) -> Iterator[tuple[str, object]]:
        """The started brokers, pykbroker first in even rounds and Kafka first in odd ones."""
        order = self.names if index % 2 == 0 else tuple(reversed(self.names))
        for name in order:
            if name not in self.failures:
                yield name, self.brokers[name]

    def __exit__(self, *exc_info: object) -> None:
        for name, setup in self.brokers.items():
            try:
                setup.close()
            except Exception as error:
                self.say(f"{TITLES[name]}: stopping failed: {error}")


def cpu_snapshot(pids: dict[int, int]) -> dict[int, float | None]:
    return {key: throughput.broker_cpu(pid) for key, pid in pids.items()}


def cpu_spent(before: dict[int, float | None], after: dict[int, float | None]) -> dict[int, float] | None:
    """CPU seconds of each broker between two snapshots; None when a broker process is gone."""
    spent = {}
    for key, first in before.items():
        last = after.get(key)
        if first is None or last is None:
            return None
        spent[key] = last - first
    return spent


@dataclass
class Phase:
    """One client run against one broker set-up, for the phase table."""
    broker: str
    phase: str
    result: dict
    cpu: dict[int, float] | None      # broker id -> CPU seconds during the phase
    load: str = ""
    wall: float = 0.0                 # seconds the client process ran, over which `cpu` was taken

    @property
    def seconds(self) -> float:
        return float(self.result.get("seconds", 0.0))

    @property
    def data_bytes(self) -> int:
        return int(self.result.get("bytes", 0))

    def usable(self) -> bool:
        return throughput.usable(self.result)

    def megabytes_per_second(self) -> float | None:
        return self.data_bytes / 2**20 / self.seconds if self.usable() and self.data_bytes else None

    def cpu_per_gigabyte(self) -> float | None:
        if self.cpu is None or not self.usable() or not self.data_bytes:
            return None
        return sum(self.cpu.values()) / (self.data_bytes / GIB)

    def cpu_percents(self) -> str:
        """Each broker's CPU over the client process's whole run (start-up included)."""
        if self.cpu is None or not self.wall:
            return "—"
        return " / ".join(f"{100 * cpu / self.wall:.0f}" for _, cpu in sorted(self.cpu.items()))


def measure_phase(broker_name: str, phase: str, pids: dict[int, int], run: Callable[[], dict]) -> Phase:
    before, begin = cpu_snapshot(pids), time.monotonic()
    result = run()
    return Phase(broker_name, phase, result, cpu_spent(before, cpu_snapshot(pids)),
                 report.load_average(), time.monotonic() - begin)


def median_figure(values: list[float | None], reasons: list[str]) -> Figure:
    """The median of the measured values (noting how many), else n/a with the first reason."""
    good = [value for value in values if value is not None]
    if not good:
        return not_available(next((reason for reason in reasons if reason), "failed"))
    return measured(statistics.median(good), f"median of {len(good)}" if len(good) > 1 else "")


def phase_table(phases: list[Phase], extra: Callable[[Phase], str] | None = None,
                extra_title: str = "") -> str:
    """Every phase: broker, records, MB, seconds, MB/s, each broker's CPU (% of a core over the
    client process's run), the brokers' CPU seconds per GB, the client's CPU seconds, the 1-minute
    load and a note."""
    title = f" {extra_title} |" if extra else ""
    lines = ["| broker | phase | records | MB | s | MB/s | broker CPU, % of a core (each) "
             f"| brokers' CPU s/GB | client CPU s | load |{title} note |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if extra else "") + "---|"]
    for phase in phases:
        rate, per_gb = phase.megabytes_per_second(), phase.cpu_per_gigabyte()
        client = phase.result.get("client_cpu_seconds")
        cells = [TITLES.get(phase.broker, phase.broker), phase.phase,
                 f"{phase.result.get('records', 0):,}", f"{phase.data_bytes / 2**20:,.1f}",
                 f"{phase.seconds:.2f}", f"{rate:,.1f}" if rate is not None else "—",
                 phase.cpu_percents(), f"{per_gb:.1f}" if per_gb is not None else "—",
                 f"{client:.2f}" if client is not None else "—", phase.load]
        if extra:
            cells.append(extra(phase))
        cells.append(report.cell(phase.result.get("reason", "")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def comparison_table(section: Section) -> str:
    lines = ["| metric | pykbroker | Kafka 3.9.0 | pykbroker/Kafka | better | at least Kafka's |",
             "|---|---:|---:|---:|---|---|"]
    for comparison in section.comparisons:
        ours = comparison.figures.get("pykbroker", not_available("not run"))
        theirs = comparison.figures.get("kafka", not_available("not run"))
        verdict = {True: "yes", False: "**no**", None: "—"}[comparison.against()]
        ratio = "—"
        if ours.measured and theirs.measured and theirs.value:
            ratio = f"{ours.value / theirs.value:.2f}×"
        lines.append(f"| {comparison.metric} | {report.cell(ours.text(comparison.digits))} | "
                     f"{report.cell(theirs.text(comparison.digits))} | {ratio} | "
                     f"{comparison.better} | {verdict} |")
    return "\n".join(lines)


def section_markdown(section: Section, plan_name: str, seconds: float) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"# {section.title} ({plan_name} run, {stamp}, {seconds:.0f} s)", "",
             comparison_table(section), "", "## Phases", "", section.phases_markdown]
    if section.notes:
        parts += ["", "## Notes", ""] + [f"- {note}" for note in section.notes]
    return "\n".join(parts) + "\n"


def write_section(section: Section, path: Path, plan_name: str, seconds: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(section_markdown(section, plan_name, seconds))
    return path


@dataclass
class Notes:
    lines: list[str] = field(default_factory=list)

    def add(self, text: str, say: Say) -> None:
        say(f"note: {text}")
        self.lines.append(text)
