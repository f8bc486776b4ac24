"""How much each benchmark does: the full plan, and a quick one for smoke tests (a few minutes).

The full plan is the reference measurement's: 1,000,000 records of 1 KB and of 100 B, 3 partitions,
three rounds per size (the median of three: one round disturbed by the machine does not decide
a figure), three brokers taking turns."""
from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True)
class Plan:
    name: str
    record_counts: dict[int, int]   # record size in bytes -> records to write, then read
    phase_time_limit: float         # seconds; every produce or consume phase stops by then
    bulk_bytes: int                 # extra 1 KB records written to pykbroker to watch its memory
    bulk_time_limit: float
    startup_trials: int             # starts per broker; the median is reported
    repetitions: int                # rounds per record size (fresh topic each); the median is reported
    throughput_budget: float        # seconds per broker; rounds after the first only while it lasts
    idle_seconds: float = 2.0       # wait after start before reading idle resident memory
    probe_time_limit: float = 10.0  # one record written and read back before the real phases


FULL = Plan(name="full", record_counts={1024: 1_000_000, 100: 1_000_000}, phase_time_limit=60.0,
            bulk_bytes=1024 * MIB, bulk_time_limit=90.0, startup_trials=3, repetitions=3,
            throughput_budget=600.0)

QUICK = Plan(name="quick", record_counts={1024: 20_000, 100: 100_000}, phase_time_limit=45.0,
             bulk_bytes=64 * MIB, bulk_time_limit=30.0, startup_trials=1, repetitions=2,
             throughput_budget=240.0)

BULK_RECORD_SIZE = 1024
BULK_BROKERS = ("pykbroker", "kafka")  # tansu's memory storage holds every record in RAM by design


def size_label(size: int) -> str:
    return "1 KB" if size == 1024 else f"{size} B"
