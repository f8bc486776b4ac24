"""What a benchmark section hands to the report: figures of each broker side by side.

Every benchmark beside Kafka (one broker, TLS and SASL, a three-broker cluster, latency) returns a
`Section`: its comparisons (one metric, one figure per broker, which direction is better) and its
phase table as markdown. `bench/run_all.py` puts the sections into bench/results and
docs/benchmarks.md, and checks every comparison against Kafka's figure of the same run.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bench.figure import Figure

HIGHER = "higher"  # throughput: more is better
LOWER = "lower"    # time, memory, CPU per GB, latency: less is better


@dataclass(frozen=True)
class Comparison:
    metric: str                  # "produce 1 KB records over TLS, MB/s"
    better: str                  # HIGHER or LOWER
    figures: dict[str, Figure]   # broker name ("pykbroker", "kafka", "tansu") -> its figure
    digits: int = 1

    def against(self, reference: str = "kafka") -> bool | None:
        """Whether pykbroker is at least as good as `reference`; None when either is missing."""
        ours, theirs = self.figures.get("pykbroker"), self.figures.get(reference)
        if ours is None or theirs is None or not (ours.measured and theirs.measured):
            return None
        assert ours.value is not None and theirs.value is not None
        return ours.value >= theirs.value if self.better == HIGHER else ours.value <= theirs.value


@dataclass
class Section:
    title: str                                   # "TLS and SASL_SSL, one broker"
    comparisons: list[Comparison] = field(default_factory=list)
    phases_markdown: str = ""                    # the section's phase table, already markdown
    notes: list[str] = field(default_factory=list)
