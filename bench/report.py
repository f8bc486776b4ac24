"""Markdown for the results: the summary table (pykbroker | tansu | ratio | Kafka 3.9 | target),
the per-phase details, the machine, and the update of docs/benchmarks.md between its markers."""
from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

from bench.figure import Figure, not_available, ratio_text
from bench.plan import Plan, size_label

BROKER_ORDER = ("pykbroker", "tansu")
DOCS_START = "<!-- bench:results:start -->"
DOCS_END = "<!-- bench:results:end -->"
KAFKA_THROUGHPUT = {("produce", 1024): "≈ 205", ("consume", 1024): "≈ 545"}
CELL_LIMIT = 90
KINDS = (("produce", "produce", "produce {size} records"),
         ("consume", "consume", "consume {size} records, 1 consumer"),
         ("consume_parallel", "consume", "consume {size} records, 1 consumer per partition"))


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    digits: int
    kafka: str = "—"
    target: str = "—"


def throughput_metrics(plan: Plan) -> list[Metric]:
    rows = []
    for size in sorted(plan.record_counts, reverse=True):
        for kind, direction, label in KINDS:
            kafka = KAFKA_THROUGHPUT.get((direction, size), "—")
            target = f"≥ Kafka ({kafka.removeprefix('≈ ')})" if kafka != "—" else "—"
            what = label.format(size=size_label(size))
            rows.append(Metric(f"{kind}_mbps_{size}", f"{what}, MB/s", 1, kafka, target))
            rows.append(Metric(f"{kind}_rps_{size}", f"{what}, records/s", 0))
    return rows


def footprint_metrics() -> tuple[list[Metric], list[Metric]]:
    before = [Metric("startup", "start until Metadata is answered, s", 3, "≈ 3", "< 0.5"),
              Metric("idle_rss", "idle resident memory, MB", 1, "≈ 360", "< 60")]
    after = [Metric("rss_after_throughput", "resident memory after the throughput data, MB", 1,
                    target="flat (≈ idle)"),
             Metric("rss_after_bulk", "resident memory after a further bulk write, MB", 1,
                    target="flat (≈ idle)")]
    return before, after


def all_metrics(plan: Plan, only_throughput: bool = False) -> list[Metric]:
    if only_throughput:
        return throughput_metrics(plan)
    before, after = footprint_metrics()
    return before + throughput_metrics(plan) + after


def cell(text: str, limit: int = CELL_LIMIT) -> str:
    text = text.replace("|", "/").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def long_reasons(figures: dict[str, dict[str, Figure]]) -> list[str]:
    """Reasons cut short in the summary table, each once, in full, for the notes."""
    seen = {}
    for name in BROKER_ORDER:
        for figure in figures.get(name, {}).values():
            for text in (figure.reason, figure.note):
                if len(text) > CELL_LIMIT - len("n/a ()") - 12:  # room for the number
                    seen.setdefault(f"{name}: {text}", None)
    return list(seen)


def summary_table(figures: dict[str, dict[str, Figure]], plan: Plan,
                  only_throughput: bool = False) -> str:
    lines = ["| metric | pykbroker | tansu | ratio pykbroker/tansu | Kafka 3.9 reference | pykbroker target |",
             "|---|---:|---:|---:|---:|---|"]
    for metric in all_metrics(plan, only_throughput):
        ours, theirs = (figures.get(name, {}).get(metric.key, not_available("not run"))
                        for name in BROKER_ORDER)
        lines.append(f"| {metric.label} | {cell(ours.text(metric.digits))} | "
                     f"{cell(theirs.text(metric.digits))} | {ratio_text(ours, theirs)} | "
                     f"{metric.kafka} | {metric.target} |")
    return "\n".join(lines)


def percent_of_core(cpu_seconds: float | None, seconds: float) -> str:
    return "—" if cpu_seconds is None or not seconds else f"{100 * cpu_seconds / seconds:.0f}%"


def optional(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def per_second(amount: float, seconds: float, digits: int) -> str:
    return f"{amount / seconds:,.{digits}f}" if seconds else "—"


def phase_table(phases) -> str:
    lines = ["| broker | phase | records | MB | seconds | records/s | MB/s | broker CPU | client CPU "
             "| broker RSS after, MB | note |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for phase in phases:
        seconds = phase.seconds or 0.0
        megabytes = phase.data_bytes / 2**20
        lines.append(f"| {phase.broker} | {phase.phase} | {phase.records:,} | {megabytes:,.1f} | "
                     f"{seconds:.2f} | {per_second(phase.records, seconds, 0)} | "
                     f"{per_second(megabytes, seconds, 1)} | "
                     f"{percent_of_core(phase.broker_cpu_seconds, seconds)} | "
                     f"{percent_of_core(phase.client_cpu_seconds, seconds)} | "
                     f"{optional(phase.broker_rss_mib)} | {cell(phase.reason)} |")
    return "\n".join(lines)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except OSError:
        pass
    return "unknown"


def client_versions() -> str:
    try:
        import confluent_kafka
    except ImportError:
        return "confluent-kafka not installed"
    return f"confluent-kafka {confluent_kafka.__version__}, librdkafka {confluent_kafka.libversion()[0]}"


def load_average() -> str:
    """The 1-minute load average: other work on the machine makes the figures noisier."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "unknown"


def machine_lines(tansu: str, pykbroker: str, load_before: str) -> list[str]:
    return [f"- CPU: {cpu_model()}, {os.cpu_count()} cores; RAM {memory_gib()}; load average "
            f"{load_before} before the run, {load_average()} after",
            f"- OS: {platform.system()} {platform.release()}; Python {platform.python_version()}",
            f"- client: {client_versions()}",
            f"- pykbroker: {pykbroker} (logs on local disk); tansu: {tansu} (`memory://` storage)"]


def plan_lines(plan: Plan) -> list[str]:
    sizes = ", ".join(f"{count:,} × {size_label(size)}" for size, count in
                      sorted(plan.record_counts.items(), reverse=True))
    return [f"- plan `{plan.name}`: {sizes} records per broker; each phase limited to "
            f"{plan.phase_time_limit:.0f} s; {plan.repetitions} round(s) per size, median; bulk write {plan.bulk_bytes // 2**20:,} MB "
            f"(pykbroker only, limit {plan.bulk_time_limit:.0f} s); {plan.startup_trials} start(s) "
            "per broker"]


def render(*, title: str, level: int, figures, phases, notes: list[str], plan: Plan,
           machine: list[str], codec_output: str) -> str:
    heading = "#" * level
    parts = [f"{heading} {title}", "", *machine, *plan_lines(plan), "",
             "Ratio above 1 is better for throughput, below 1 for time and memory.", "",
             summary_table(figures, plan), ""]
    notes = notes + long_reasons(figures)
    if notes:
        parts += ["Notes:", "", *[f"- {cell(note, 1000)}" for note in notes], ""]
    parts += [f"{heading}# Phases", "", "CPU is a percentage of one core over the phase.", "",
              phase_table(phases), "", f"{heading}# Codec (`bench/codec_bench.py`)", "",
              "```text", codec_output.rstrip(), "```", ""]
    return "\n".join(parts)


def update_docs(path: Path, results_markdown: str, start: str = DOCS_START, end: str = DOCS_END) -> None:
    """Replace what lies between the results markers of docs/benchmarks.md (append if absent)."""
    block = f"{start}\n{results_markdown.rstrip()}\n{end}"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)
