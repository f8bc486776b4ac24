"""The soak's plots (PNG, matplotlib without a display): one per measure over time, one line per
broker (latency: p50 and p99 of each producer), the warm-up shaded; and an overview of them all,
client throughput included, in one image."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

from bench.soak.analysis import broker_series  # noqa: E402
from bench.soak.sampling import Sample  # noqa: E402

BROKER_MEASURES = {
    "rss": ("rss_mib", "resident memory, MiB"),
    "descriptors": ("descriptors", "open descriptors"),
    "threads": ("threads", "threads"),
    "cpu": ("cpu_percent", "CPU, % of one core"),
}


def minutes(times_s: list[float]) -> list[float]:
    return [t / 60 for t in times_s]


def draw_broker_measure(axes: Axes, samples: list[Sample], labels: list[str], measure: str, warmup_s: float) -> None:
    metric, title = BROKER_MEASURES[measure]
    for label in labels:
        times, values = broker_series(samples, label, metric)
        axes.plot(minutes(times), values, label=label, linewidth=1)
    finish(axes, title, warmup_s, bottom_zero=measure != "rss")


def latency_series(samples: list[Sample], target: str, acks: str, field: str) -> tuple[list[float], list[float]]:
    """(times, values) of one producer's latency percentile, skipping windows without deliveries."""
    points = [(s.at_s, getattr(s.targets[target].latency[acks], field)) for s in samples if target in s.targets]
    kept = [(t, v) for t, v in points if v is not None]
    return [t for t, _ in kept], [v for _, v in kept]


def draw_latency(axes: Axes, samples: list[Sample], warmup_s: float) -> None:
    """p50 (solid) and p99 (dashed) of each producer, a colour per target and acks, log scale."""
    targets = sorted({name for sample in samples for name in sample.targets})
    series = [(t, acks) for t in targets for acks in samples[0].targets[t].latency] if samples else []
    for index, (target, acks) in enumerate(series):
        for field, style in (("p50_ms", "-"), ("p99_ms", "--")):
            times, values = latency_series(samples, target, acks, field)
            axes.plot(
                minutes(times), values, style, color=f"C{index}", linewidth=1, label=f"{target} {acks} {field[:3]}"
            )
    axes.set_yscale("log")
    finish(axes, "produce latency, ms (p50 solid, p99 dashed, log scale)", warmup_s, bottom_zero=False)
    draw_machine_load(axes.twinx(), samples)


def draw_machine_load(axes: Axes, samples: list[Sample]) -> None:
    """The machine's load average on the right-hand axis, in grey: latency follows it."""
    axes.plot(minutes([s.at_s for s in samples]), [s.load_average for s in samples], ":", color="0.5", linewidth=1)
    axes.set_ylabel("machine load average (dotted)", fontsize=8, color="0.4")
    axes.set_ylim(bottom=0)
    axes.tick_params(labelsize=7, colors="0.4")


def draw_throughput(axes: Axes, samples: list[Sample], warmup_s: float) -> None:
    targets = sorted({name for sample in samples for name in sample.targets})
    for index, target in enumerate(targets):
        for field, style in (("produced_per_s", "-"), ("consumed_per_s", "--")):
            points = [(s.at_s, getattr(s.targets[target], field)) for s in samples if target in s.targets]
            axes.plot(
                minutes([t for t, _ in points]),
                [v for _, v in points],
                style,
                color=f"C{index}",
                linewidth=1,
                label=f"{target} {field.split('_')[0]}",
            )
    finish(axes, "client throughput, records/s (produced solid, consumed dashed)", warmup_s, bottom_zero=True)


def finish(axes: Axes, title: str, warmup_s: float, bottom_zero: bool) -> None:
    axes.axvspan(0, warmup_s / 60, color="0.9", label="warm-up")
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("minutes")
    axes.grid(True, linewidth=0.3)
    if bottom_zero:
        axes.set_ylim(bottom=0)
    axes.legend(fontsize=7, loc="best")


def save(figure: plt.Figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def write_plots(samples: list[Sample], labels: list[str], warmup_s: float, stem: Path) -> list[Path]:
    """`<stem>-<measure>.png` for each measure and latency, and `<stem>-overview.png`."""
    written = []
    for measure in BROKER_MEASURES:
        figure, axes = plt.subplots(figsize=(8, 4))
        draw_broker_measure(axes, samples, labels, measure, warmup_s)
        written.append(save(figure, stem.with_name(f"{stem.name}-{measure}.png")))
    figure, axes = plt.subplots(figsize=(8, 4))
    draw_latency(axes, samples, warmup_s)
    written.append(save(figure, stem.with_name(f"{stem.name}-latency.png")))
    figure, grid = plt.subplots(3, 2, figsize=(12, 10))
    draw_broker_measure(grid[0][0], samples, labels, "rss", warmup_s)
    draw_broker_measure(grid[0][1], samples, labels, "descriptors", warmup_s)
    draw_broker_measure(grid[1][0], samples, labels, "threads", warmup_s)
    draw_broker_measure(grid[1][1], samples, labels, "cpu", warmup_s)
    draw_latency(grid[2][0], samples, warmup_s)
    draw_throughput(grid[2][1], samples, warmup_s)
    written.append(save(figure, stem.with_name(f"{stem.name}-overview.png")))
    return written
