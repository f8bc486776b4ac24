"""The throughput plot of a bench run: MB/s by record size and broker, grouped bars, one panel for
produce and one for consume (the default consumer and the tuned one side by side), as a PNG."""
from __future__ import annotations

from pathlib import Path

from bench.figure import Figure
from bench.plan import Plan, size_label

COLOURS = {"pykbroker": "#3572A5", "kafka": "#D24939", "tansu": "#7F7F7F"}
TITLES = {"pykbroker": "pykbroker", "kafka": "Kafka 3.9.0", "tansu": "tansu"}
PANELS = (("produce", (("produce", ""),)),
          ("consume", (("consume_default", "default consumer"), ("consume", "tuned consumer"))))


def groups(plan: Plan, kinds) -> list[tuple[str, str]]:
    """(figure key, x label) of each group of bars in a panel."""
    rows = []
    for size in sorted(plan.record_counts, reverse=True):
        for kind, wording in kinds:
            label = size_label(size) + (f"\n{wording}" if wording else "")
            rows.append((f"{kind}_mbps_{size}", label))
    return rows


def value(figures: dict[str, dict[str, Figure]], broker: str, key: str) -> float:
    figure = figures.get(broker, {}).get(key)
    return figure.value if figure is not None and figure.value is not None else 0.0


def draw_panel(axes, figures: dict[str, dict[str, Figure]], plan: Plan, title: str, kinds) -> None:
    rows = groups(plan, kinds)
    brokers = [name for name in TITLES if name in figures]
    width = 0.8 / max(1, len(brokers))
    for index, broker in enumerate(brokers):
        positions = [group + (index - (len(brokers) - 1) / 2) * width for group in range(len(rows))]
        heights = [value(figures, broker, key) for key, _ in rows]
        bars = axes.bar(positions, heights, width, label=TITLES[broker], color=COLOURS[broker])
        axes.bar_label(bars, labels=[f"{h:.0f}" if h else "n/a" for h in heights], fontsize=7)
    axes.set_xticks(range(len(rows)), [label for _, label in rows], fontsize=8)
    axes.set_title(title)
    axes.set_ylabel("MB/s (record values, MB = 2^20 bytes)")
    axes.legend(fontsize=8)


def throughput_plot(figures: dict[str, dict[str, Figure]], plan: Plan, path: Path,
                    subtitle: str = "") -> str:
    """Write the PNG; '' when written, else why not (matplotlib missing)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        return "matplotlib not installed"
    figure, panels = pyplot.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [1, 2]})
    for axes, (title, kinds) in zip(panels, PANELS):
        draw_panel(axes, figures, plan, title, kinds)
    figure.suptitle("Throughput, one broker, 3 partitions" + (f" ({subtitle})" if subtitle else ""))
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return ""
