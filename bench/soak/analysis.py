"""Whether a soak's memory and descriptors stayed flat: warm-up excluded, the first quarter of
what is left compared with the last quarter, and the least-squares slope over all of it.

A series is flat when the last quarter's mean exceeds the first quarter's by no more than its
allowance: for resident memory 5 % of the first quarter's mean or 5 MiB, whichever is larger;
for descriptors 10 % or 5 descriptors, whichever is larger (connections come and go with the
load, so a few descriptors more or less at any moment mean nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.soak.sampling import Sample

WARMUP_SHARE = 0.2  # of the run, ...
WARMUP_MAX_S = 300.0  # ... at most five minutes


@dataclass(frozen=True)
class Allowance:
    share: float
    floor: float
    unit: str

    def of(self, first: float) -> float:
        return max(self.share * first, self.floor)

    def text(self) -> str:
        return f"{self.share:.0%} of the first quarter's mean or {self.floor:g} {self.unit}, whichever is larger"


RSS_ALLOWANCE = Allowance(0.05, 5.0, "MiB")
DESCRIPTOR_ALLOWANCE = Allowance(0.10, 5.0, "descriptors")


@dataclass(frozen=True)
class Trend:
    """A series after warm-up: first and last quarter means, slope per hour, flat or not."""

    first: float
    last: float
    slope_per_hour: float
    allowance: float
    samples: int

    @property
    def growth(self) -> float:
        return self.last - self.first

    @property
    def flat(self) -> bool:
        return self.growth <= self.allowance


def warmup_s(duration_s: float) -> float:
    return min(WARMUP_MAX_S, WARMUP_SHARE * duration_s)


def after_warmup(samples: list[Sample], duration_s: float) -> list[Sample]:
    return [sample for sample in samples if sample.at_s >= warmup_s(duration_s)]


def mean(values: list[float]) -> float:
    return sum(values) / len(values)


def slope_per_hour(times_s: list[float], values: list[float]) -> float:
    """Least-squares slope of values over time, per hour (0 for fewer than two points)."""
    if len(values) < 2:
        return 0.0
    t_mean, v_mean = mean(times_s), mean(values)
    spread = sum((t - t_mean) ** 2 for t in times_s)
    if spread == 0:
        return 0.0
    return 3600 * sum((t - t_mean) * (v - v_mean) for t, v in zip(times_s, values)) / spread


def trend(times_s: list[float], values: list[float], allowance: Allowance) -> Trend | None:
    """The trend of a series (None when it has fewer than four points)."""
    if len(values) < 4:
        return None
    quarter = len(values) // 4
    first, last = mean(values[:quarter]), mean(values[-quarter:])
    return Trend(first, last, slope_per_hour(times_s, values), allowance.of(first), len(values))


def broker_series(samples: list[Sample], label: str, metric: str) -> tuple[list[float], list[float]]:
    """(times, values) of one broker's metric, skipping samples where its process was gone."""
    points = [(s.at_s, getattr(s.brokers[label], metric)) for s in samples if s.brokers.get(label) is not None]
    return [t for t, _ in points], [float(v) for _, v in points]


@dataclass(frozen=True)
class BrokerVerdict:
    label: str
    rss: Trend | None
    descriptors: Trend | None
    missing_samples: int  # samples where the process was gone

    @property
    def flat(self) -> bool:
        trends = (self.rss, self.descriptors)
        return self.missing_samples == 0 and all(t is not None and t.flat for t in trends)


def broker_verdict(samples: list[Sample], label: str, duration_s: float) -> BrokerVerdict:
    kept = after_warmup(samples, duration_s)
    missing = sum(1 for sample in samples if sample.brokers.get(label) is None)
    return BrokerVerdict(
        label,
        trend(*broker_series(kept, label, "rss_mib"), RSS_ALLOWANCE),
        trend(*broker_series(kept, label, "descriptors"), DESCRIPTOR_ALLOWANCE),
        missing,
    )
