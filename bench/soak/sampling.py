"""The soak's samples: every few seconds, each broker process's resident memory, open descriptors,
threads and CPU (from /proc), and each target's produce latency (p50, p99 of the window) and
client-side throughput (records produced and consumed per second)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from bench import proc
from bench.soak.load import ACKS, Load


@dataclass(frozen=True)
class BrokerSample:
    rss_mib: float
    descriptors: int
    threads: int
    cpu_percent: float  # of one core, since the previous sample


@dataclass(frozen=True)
class Latency:
    """Produce latency in a window, ms (None: nothing delivered in it)."""

    p50_ms: float | None
    p99_ms: float | None


@dataclass(frozen=True)
class TargetSample:
    produced_per_s: float
    consumed_per_s: float
    latency: dict[str, Latency]  # by acks: "acks=1", "acks=all"


@dataclass(frozen=True)
class Sample:
    at_s: float  # since the load started
    load_average: float  # the machine's, over the last minute (other work shares the machine)
    brokers: dict[str, BrokerSample | None]  # None: the process was gone
    targets: dict[str, TargetSample]


def thread_count(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise OSError(f"no Threads line for process {pid}")


def percentile(values: list[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` in 0..1) of `values`; None for none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
    return ordered[rank]


class Sampler:
    """Takes a `Sample` of the given broker processes (label -> pid) and loads on each `take()`."""

    def __init__(self, pids: dict[str, int], loads: list[Load]) -> None:
        self.pids, self.loads = pids, loads
        self.started = self.previous_at = time.monotonic()
        self.previous_cpu = {label: self._cpu(pid) for label, pid in pids.items()}
        self.previous_counts: dict[str, dict[str, int]] = {load.target.name: {} for load in loads}

    @staticmethod
    def _cpu(pid: int) -> float | None:
        try:
            return proc.cpu_seconds(pid)
        except OSError:
            return None

    def take(self) -> Sample:
        now = time.monotonic()
        elapsed = max(1e-6, now - self.previous_at)
        brokers = {label: self._broker(label, pid, elapsed) for label, pid in self.pids.items()}
        targets = {load.target.name: self._target(load, elapsed) for load in self.loads}
        self.previous_at = now
        return Sample(now - self.started, os.getloadavg()[0], brokers, targets)

    def _broker(self, label: str, pid: int, elapsed: float) -> BrokerSample | None:
        try:
            cpu = proc.cpu_seconds(pid)
            sample = BrokerSample(
                rss_mib=proc.resident_mib(pid),
                descriptors=proc.open_descriptors(pid),
                threads=thread_count(pid),
                cpu_percent=100 * (cpu - (self.previous_cpu[label] or cpu)) / elapsed,
            )
        except (OSError, ValueError):
            return None
        self.previous_cpu[label] = cpu
        return sample

    def _target(self, load: Load, elapsed: float) -> TargetSample:
        counts, latencies = load.stats.drain()
        before = self.previous_counts[load.target.name]
        self.previous_counts[load.target.name] = counts

        def rate(name: str) -> float:
            return (counts.get(name, 0) - before.get(name, 0)) / elapsed

        return TargetSample(
            produced_per_s=rate("produced"),
            consumed_per_s=rate("consumed"),
            latency={
                f"acks={acks}": Latency(
                    percentile(latencies.get(acks, []), 0.50), percentile(latencies.get(acks, []), 0.99)
                )
                for acks in ACKS
            },
        )
