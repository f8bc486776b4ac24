"""Kafka's RequestMetrics: how many requests of each API were answered, and how long they took.

The dispatcher calls `record()` once per answered request; that costs a dictionary lookup, a few
integer and float additions and one append to a bounded deque. Quantiles are computed only when
the metrics endpoint reads them (`latency_quantiles`).

Names are Kafka's: an API's name ("Produce", "ApiVersions"), and for Fetch also "FetchConsumer" or
"FetchFollower" (a fetch counts under both names, as in Kafka). The request time is measured from
the moment the whole request was read to the moment its response is ready to be written.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..protocol.api_keys import MESSAGE_NAMES, ApiKey

# Kafka's histograms keep an exponentially decaying sample of 1028 values; this keeps the last 1028
RESERVOIR_SIZE = 1028
# The percentiles Kafka's histograms report (50thPercentile ... 999thPercentile)
QUANTILES = (0.50, 0.75, 0.95, 0.98, 0.99, 0.999)

FETCH_CONSUMER = "FetchConsumer"
FETCH_FOLLOWER = "FetchFollower"


@dataclass(slots=True, eq=False)  # counts, never compared
class RequestStats:
    """One request name's counts: by version (RequestsPerSec) and its total time (TotalTimeMs)."""

    requests_by_version: dict[int, int] = field(default_factory=dict)
    count: int = 0
    total_time_ms: float = 0.0
    recent_ms: deque[float] = field(default_factory=lambda: deque(maxlen=RESERVOIR_SIZE))

    def add(self, version: int, elapsed_ms: float) -> None:
        by_version = self.requests_by_version
        by_version[version] = by_version.get(version, 0) + 1
        self.count += 1
        self.total_time_ms += elapsed_ms
        self.recent_ms.append(elapsed_ms)

    def latency_quantiles(self) -> list[tuple[float, float]]:
        """(quantile, milliseconds) over the recent sample; empty before any request."""
        ordered = sorted(self.recent_ms)
        if not ordered:
            return []
        last = len(ordered) - 1
        return [(q, ordered[min(last, int(q * len(ordered)))]) for q in QUANTILES]


class RequestMetrics:
    def __init__(self) -> None:
        self.by_name: dict[str, RequestStats] = {}

    def record(self, api_key: int, version: int, elapsed_ms: float, *, fetch_from_follower: bool = False) -> None:
        self._stats(MESSAGE_NAMES.get(api_key, str(api_key))).add(version, elapsed_ms)
        if api_key == ApiKey.FETCH:
            self._stats(FETCH_FOLLOWER if fetch_from_follower else FETCH_CONSUMER).add(version, elapsed_ms)

    def _stats(self, name: str) -> RequestStats:
        stats = self.by_name.get(name)
        if stats is None:
            stats = self.by_name[name] = RequestStats()
        return stats
