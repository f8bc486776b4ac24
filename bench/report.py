"""Markdown for the results: every section's comparisons (pykbroker | Kafka 3.9.0 | tansu, the
ratios pykbroker/Kafka and pykbroker/tansu, and whether pykbroker is at least as good), an overall
verdict, the per-phase details, the machine, and the update of docs/benchmarks.md between its
markers."""
from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from pathlib import Path

from bench.figure import Figure, not_available, ratio_text
from bench.plan import Plan, size_label
from bench.sections import HIGHER, LOWER, Comparison, Section

BROKER_ORDER = ("pykbroker", "kafka", "tansu")
BROKER_TITLES = {"pykbroker": "pykbroker", "kafka": "Kafka 3.9.0", "tansu": "tansu"}
DOCS_START = "<!-- bench:results:start -->"
DOCS_END = "<!-- bench:results:end -->"
CELL_LIMIT = 90
GIB = 2**30
KINDS = (("produce", "produce {size} records"),
         ("consume", "consume {size} records, 1 tuned consumer"),
         ("consume_default", "consume {size} records, 1 default consumer"),
         ("consume_parallel", "consume {size} records, 1 tuned consumer per partition"))
TARGETS = {"startup": (0.3, "under 0.3 s"), "idle_rss": (40.0, "under 40 MB")}


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    digits: int
    better: str = HIGHER


def throughput_metrics(plan: Plan) -> list[Metric]:
    rows = []
    for size in sorted(plan.record_counts, reverse=True):
        for kind, label in KINDS:
            what = label.format(size=size_label(size))
            rows.append(Metric(f"{kind}_mbps_{size}", f"{what}, MB/s", 1))
            rows.append(Metric(f"{kind}_rps_{size}", f"{what}, records/s", 0))
            rows.append(Metric(f"cpu_per_gb_{kind}_{size}",
                               f"{what}: broker CPU per GB, s", 2, LOWER))
    return rows


def footprint_metrics() -> tuple[list[Metric], list[Metric]]:
    before = [Metric("startup", "start until Metadata is answered, s", 3, LOWER),
              Metric("idle_rss", "idle resident memory, MB", 1, LOWER)]
    after = [Metric("rss_after_throughput", "resident memory after the throughput data, MB", 1,
                    LOWER),
             Metric("rss_after_bulk", "resident memory after a further bulk write, MB", 1, LOWER)]
    return before, after


def all_metrics(plan: Plan, only_throughput: bool = False) -> list[Metric]:
    if only_throughput:
        return throughput_metrics(plan)
    before, after = footprint_metrics()
    return before + throughput_metrics(plan) + after


def comparisons(figures: dict[str, dict[str, Figure]], plan: Plan,
                only_throughput: bool = False) -> list[Comparison]:
    """One comparison per metric, with the figure of every broker measured."""
    return [Comparison(metric.label, metric.better,
                       {name: figures[name].get(metric.key, not_available("not run"))
                        for name in BROKER_ORDER if name in figures}, metric.digits)
            for metric in all_metrics(plan, only_throughput)]


def cell(text: str, limit: int = CELL_LIMIT) -> str:
    text = text.replace("|", "/").replace("\n", " ")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def verdict(comparison: Comparison, reference: str) -> str:
    answer = comparison.against(reference)
    return "—" if answer is None else ("yes" if answer else "**no**")


def comparison_table(rows: list[Comparison]) -> str:
    lines = ["| metric | pykbroker | Kafka 3.9.0 | tansu | pykbroker/Kafka | pykbroker/tansu "
             "| at least Kafka's | at least tansu's |",
             "|---|---:|---:|---:|---:|---:|:---:|:---:|"]
    for row in rows:
        ours, kafka, tansu = (row.figures.get(name, not_available("not run"))
                              for name in BROKER_ORDER)
        lines.append(f"| {row.metric} | {cell(ours.text(row.digits))} | "
                     f"{cell(kafka.text(row.digits))} | {cell(tansu.text(row.digits))} | "
                     f"{ratio_text(ours, kafka)} | {ratio_text(ours, tansu)} | "
                     f"{verdict(row, 'kafka')} | {verdict(row, 'tansu')} |")
    return "\n".join(lines)


def long_reasons(rows: list[Comparison]) -> list[str]:
    """Reasons cut short in a comparison table, each once, in full, for the notes."""
    seen: dict[str, None] = {}
    for row in rows:
        for name, figure in row.figures.items():
            for text in (figure.reason, figure.note):
                if len(text) > CELL_LIMIT - len("n/a ()") - 12:  # room for the number
                    seen.setdefault(f"{name}: {text}", None)
    return list(seen)


def verdict_lines(sections: list[Section], reference: str = "kafka") -> list[str]:
    """How many comparisons pykbroker wins against `reference`, and which it does not."""
    title = BROKER_TITLES[reference]
    lines = []
    for section in sections:
        answers = [(row.metric, row.against(reference)) for row in section.comparisons]
        judged = [(metric, answer) for metric, answer in answers if answer is not None]
        if not judged:
            continue
        behind = [metric for metric, answer in judged if not answer]
        line = (f"- {section.title}: pykbroker at least {title}'s on {len(judged) - len(behind)} "
                f"of {len(judged)} compared figures")
        lines.append(line + (f"; behind on: {'; '.join(behind)}" if behind else ""))
    return lines


def target_notes(figures: dict[str, Figure]) -> list[str]:
    """The project's absolute targets for pykbroker alone."""
    labels = {"startup": "start until Metadata is answered", "idle_rss": "idle resident memory"}
    notes = []
    for key, (limit, wording) in TARGETS.items():
        figure = figures.get(key, not_available("not run"))
        met = "—" if not figure.measured else ("yes" if (figure.value or 0) < limit else "**no**")
        notes.append(f"target: pykbroker's {labels[key]} {wording}: {met} ({figure.text(3)})")
    return notes


def percent_of_core(cpu_seconds: float | None, seconds: float) -> str:
    return "—" if cpu_seconds is None or not seconds else f"{100 * cpu_seconds / seconds:.0f}%"


def optional(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def per_second(amount: float, seconds: float, digits: int) -> str:
    return f"{amount / seconds:,.{digits}f}" if seconds else "—"


def cpu_per_gigabyte(cpu_seconds: float | None, data_bytes: int) -> str:
    return "—" if cpu_seconds is None or not data_bytes else f"{cpu_seconds * GIB / data_bytes:,.2f}"


def phase_table(phases) -> str:
    lines = ["| broker | phase | records | MB | seconds | records/s | MB/s | broker CPU "
             "| broker CPU per GB, s | client CPU | broker RSS after, MB | load | note |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for phase in phases:
        seconds = phase.seconds or 0.0
        megabytes = phase.data_bytes / 2**20
        lines.append(f"| {phase.broker} | {phase.phase} | {phase.records:,} | {megabytes:,.1f} | "
                     f"{seconds:.2f} | {per_second(phase.records, seconds, 0)} | "
                     f"{per_second(megabytes, seconds, 1)} | "
                     f"{percent_of_core(phase.broker_cpu_seconds, seconds)} | "
                     f"{cpu_per_gigabyte(phase.broker_cpu_seconds, phase.data_bytes)} | "
                     f"{percent_of_core(phase.client_cpu_seconds, seconds)} | "
                     f"{optional(phase.broker_rss_mib)} | {phase.load or '—'} | "
                     f"{cell('; '.join(filter(None, (getattr(phase, 'detail', ''), phase.reason))))} |")
    return "\n".join(lines)


def core_section(figures: dict[str, dict[str, Figure]], phases, notes: list[str],
                 plan: Plan) -> Section:
    """The single-broker plaintext bench as a section of the report."""
    intro = "CPU is a percentage of one core over the phase; load is the 1-minute load average at its start."
    return Section("One broker, plaintext", comparisons(figures, plan),
                   f"{intro}\n\n{phase_table(phases)}",
                   target_notes(figures.get("pykbroker", {})) + notes)


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


def machine_lines(versions: dict[str, str], load_before: str) -> list[str]:
    return [f"- CPU: {cpu_model()}, {os.cpu_count()} cores; RAM {memory_gib()}; load average "
            f"(1 min) {load_before} before the run, {load_average()} after",
            f"- OS: {platform.system()} {platform.release()}; Python {platform.python_version()}",
            f"- client: {client_versions()}",
            f"- pykbroker: {versions['pykbroker']} (logs on local disk); Kafka: "
            f"{versions['kafka']} (ZooKeeper mode, `../shared/realkafka/kafka.sh`, heap 1 GiB, "
            f"logs on local disk); tansu: {versions['tansu']} (`memory://` storage)"]


def plan_lines(plan: Plan) -> list[str]:
    sizes = ", ".join(f"{count:,} × {size_label(size)}" for size, count in
                      sorted(plan.record_counts.items(), reverse=True))
    return [f"- plan `{plan.name}`: {sizes} records per broker and round, 3 partitions; each phase "
            f"limited to {plan.phase_time_limit:.0f} s; {plan.repetitions} round(s) per size, "
            f"brokers taking turns (order rotated each round), median; bulk write "
            f"{plan.bulk_bytes // 2**20:,} MB (pykbroker and Kafka, limit "
            f"{plan.bulk_time_limit:.0f} s); {plan.startup_trials} start(s) per broker; broker CPU "
            "is utime + stime of the broker process (Kafka: its JVM; ZooKeeper not counted)"]


def section_markdown(section: Section, level: int) -> list[str]:
    heading = "#" * level
    parts = [f"{heading} {section.title}", ""]
    if section.comparisons:
        parts += [comparison_table(section.comparisons), ""]
    notes = section.notes + long_reasons(section.comparisons)
    if notes:
        parts += ["Notes:", "", *[f"- {cell(note, 1000)}" for note in notes], ""]
    if section.phases_markdown:
        parts += [f"{heading}# Phases: {section.title}", "", section.phases_markdown.rstrip(), ""]
    return parts


def render(*, title: str, level: int, sections: list[Section], plan: Plan, machine: list[str],
           codec_output: str | None, plot: str = "") -> str:
    heading = "#" * level
    parts = [f"{heading} {title}", "", *machine, *plan_lines(plan), "",
             "Ratios are pykbroker's figure over the other broker's: above 1 is better for "
             "throughput, below 1 for time, memory and CPU per GB.", ""]
    verdicts = verdict_lines(sections) + verdict_lines(sections, "tansu")
    if verdicts:
        parts += ["Verdict:", "", *verdicts, ""]
    if plot:
        parts += [plot, ""]
    for section in sections:
        parts += section_markdown(section, level + 1)
    if codec_output is not None:
        parts += [f"{heading}# Codec (`bench/codec_bench.py`)", "", "```text",
                  codec_output.rstrip(), "```", ""]
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
