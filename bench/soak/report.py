"""The soak's written results: `soak-<date>.md` (the summary and the verdict), `soak-<date>.csv`
(every sample, one row per sample), beside the plots of bench/soak/plots.py."""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from pathlib import Path

from bench.soak.analysis import (
    DESCRIPTOR_ALLOWANCE,
    RSS_ALLOWANCE,
    BrokerVerdict,
    Trend,
    after_warmup,
    broker_series,
    broker_verdict,
    mean,
    warmup_s,
)
from bench.soak.load import ACKS
from bench.soak.sampling import Sample, percentile


@dataclass
class SoakRun:
    """What a run was and what it saw."""

    started: str  # UTC, as written in the report
    duration_s: float
    interval_s: float
    version: str
    labels: list[str]  # the brokers sampled
    load: str  # a description of the load, one paragraph
    samples: list[Sample] = field(default_factory=list)
    totals: dict[str, dict[str, int]] = field(default_factory=dict)  # per target
    errors: dict[str, list[str]] = field(default_factory=dict)  # per target, the last few
    notes: list[str] = field(default_factory=list)


def verdicts(run: SoakRun) -> list[BrokerVerdict]:
    return [broker_verdict(run.samples, label, run.duration_s) for label in run.labels]


def trend_cells(trend: Trend | None, digits: int) -> list[str]:
    if trend is None:
        return ["n/a"] * 4
    return [
        f"{trend.first:.{digits}f}",
        f"{trend.last:.{digits}f}",
        f"{trend.growth:+.{digits}f} ({'flat' if trend.flat else 'GROWS'})",
        f"{trend.slope_per_hour:+.{digits}f}",
    ]


def broker_table(run: SoakRun, results: list[BrokerVerdict]) -> list[str]:
    lines = [
        "| broker | RSS first ¼, MiB | RSS last ¼, MiB | RSS growth, MiB | RSS slope, MiB/h "
        "| fds first ¼ | fds last ¼ | fds growth | fds slope, /h | threads min–max | CPU mean, % |",
        "|---|" + "---:|" * 10,
    ]
    kept = after_warmup(run.samples, run.duration_s)
    for verdict in results:
        _, threads = broker_series(kept, verdict.label, "threads")
        _, cpu = broker_series(kept, verdict.label, "cpu_percent")
        cells = [
            verdict.label,
            *trend_cells(verdict.rss, 1),
            *trend_cells(verdict.descriptors, 1),
            f"{min(threads):.0f}–{max(threads):.0f}" if threads else "n/a",
            f"{mean(cpu):.1f}" if cpu else "n/a",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def median_latency(samples: list[Sample], target: str, acks: str, field_name: str) -> str:
    """The median over the windows of one producer's p50 or p99."""
    windows = [getattr(s.targets[target].latency[acks], field_name) for s in samples if target in s.targets]
    found = percentile([v for v in windows if v is not None], 0.5)
    return "n/a" if found is None else f"{found:.1f}"


def latency_table(run: SoakRun) -> list[str]:
    lines = [
        "| target | producer | p50 first ¼, ms | p50 last ¼, ms | p99 first ¼, ms | p99 last ¼, ms |",
        "|---|---|" + "---:|" * 4,
    ]
    kept = after_warmup(run.samples, run.duration_s)
    quarter = max(1, len(kept) // 4)
    first, last = kept[:quarter], kept[-quarter:]
    for target in run.totals:
        for acks in ACKS:
            cells = [target, f"acks={acks}"]
            for field_name in ("p50_ms", "p99_ms"):
                cells += [median_latency(part, target, f"acks={acks}", field_name) for part in (first, last)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def target_table(run: SoakRun) -> list[str]:
    lines = [
        "| target | produced/s | consumed/s | produced | consumed | transactions committed / aborted "
        "| members joined / left | topics created / deleted | errors |",
        "|---|" + "---:|" * 8,
    ]
    kept = after_warmup(run.samples, run.duration_s)
    for target, totals in run.totals.items():
        produced = [s.targets[target].produced_per_s for s in kept if target in s.targets]
        consumed = [s.targets[target].consumed_per_s for s in kept if target in s.targets]
        cells = [
            target,
            f"{mean(produced):.0f}" if produced else "n/a",
            f"{mean(consumed):.0f}" if consumed else "n/a",
            f"{totals.get('produced', 0):,}",
            f"{totals.get('consumed', 0):,}",
            f"{totals.get('transactions_committed', 0):,} / {totals.get('transactions_aborted', 0):,}",
            f"{totals.get('members_joined', 0):,} / {totals.get('members_left', 0):,}",
            f"{totals.get('topics_created', 0):,} / {totals.get('topics_deleted', 0):,}",
            f"{totals.get('errors', 0):,}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def machine_line(run: SoakRun) -> str:
    loads = [sample.load_average for sample in run.samples]
    spread = f"{min(loads):.1f}–{max(loads):.1f}, mean {mean(loads):.1f}" if loads else "n/a"
    return (
        f"Machine: {os.cpu_count()} cores shared with other work; load average (1 min) during the run "
        f"{spread}. Latency on a busy machine says more about the machine than about the broker; "
        "the point of the soak is how memory and descriptors move over time."
    )


def verdict_line(results: list[BrokerVerdict]) -> str:
    grown = [v.label for v in results if not v.flat]
    if not grown:
        return "**Verdict: flat.** Resident memory and open descriptors of every broker stayed flat after warm-up."
    return f"**Verdict: NOT flat** for {', '.join(grown)} (see the tables and the plots)."


def markdown(run: SoakRun, plots: list[Path]) -> str:
    results = verdicts(run)
    warmup = warmup_s(run.duration_s)
    lines = [
        f"# Soak, {run.started}",
        "",
        f"pykbroker {run.version}; {run.duration_s / 60:g} minutes of load, a sample every "
        f"{run.interval_s:g} s ({len(run.samples)} samples); the first {warmup / 60:.1f} minutes are warm-up "
        "and left out of every figure below.",
        "",
        run.load,
        "",
        machine_line(run),
        "",
        verdict_line(results),
        "",
        f"Flat means: the mean of the last quarter of the samples after warm-up exceeds the mean of the first "
        f"quarter by no more than {RSS_ALLOWANCE.text()} (resident memory), or {DESCRIPTOR_ALLOWANCE.text()} "
        "(open descriptors); and the broker process never went away. The slope is the least-squares "
        "slope over all the samples after warm-up, per hour.",
        "",
        "## Brokers",
        "",
        *broker_table(run, results),
        "",
        "## Load (client side)",
        "",
        *target_table(run),
        "",
        "Produce latency, from produce() to the delivery report (librdkafka's own measure), the median "
        "over the sampling windows of each window's p50 and p99, in the first and the last quarter after "
        "warm-up:",
        "",
        *latency_table(run),
        "",
    ]
    for target, errors in run.errors.items():
        if errors:
            lines += [f"Last errors seen on {target}: " + "; ".join(f"`{e}`" for e in errors), ""]
    lines += [*(f"- {note}" for note in run.notes), ""] if run.notes else []
    lines += ["## Plots", "", *(f"![{path.stem}]({path.name})" for path in plots), ""]
    return "\n".join(lines)


def write_samples_csv(run: SoakRun, path: Path) -> Path:
    targets = sorted(run.totals)
    header = ["at_s", "load_average"]
    header += [f"{label}_{m}" for label in run.labels for m in ("rss_mib", "descriptors", "threads", "cpu_percent")]
    header += [f"{t}_{m}" for t in targets for m in ("produced_per_s", "consumed_per_s")]
    header += [f"{t}_acks{a}_{m}" for t in targets for a in ACKS for m in ("p50_ms", "p99_ms")]
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        for sample in run.samples:
            row: list[object] = [f"{sample.at_s:.1f}", f"{sample.load_average:.2f}"]
            for label in run.labels:
                broker = sample.brokers.get(label)
                row += (
                    ["", "", "", ""]
                    if broker is None
                    else [f"{broker.rss_mib:.1f}", broker.descriptors, broker.threads, f"{broker.cpu_percent:.1f}"]
                )
            for name in targets:
                target = sample.targets.get(name)
                row += ["", ""] if target is None else [f"{target.produced_per_s:.1f}", f"{target.consumed_per_s:.1f}"]
            for name in targets:
                for acks in ACKS:
                    target = sample.targets.get(name)
                    latency = None if target is None else target.latency[f"acks={acks}"]
                    row += [optional(latency and latency.p50_ms), optional(latency and latency.p99_ms)]
            writer.writerow(row)
    return path


def optional(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"
