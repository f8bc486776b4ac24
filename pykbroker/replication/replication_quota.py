"""Replication throttles, as Kafka's ReplicationQuotaManager: one for the leader side, one for
the follower side of this broker.

Which replicas are throttled is a topic's config: `leader.replication.throttled.replicas` and
`follower.replication.throttled.replicas`, each a list of `partition:broker` pairs (or `*` for
every replica of the topic); the pairs naming this broker mark those partitions throttled here
(Kafka's TopicConfigHandler.parseThrottledPartitions). How fast is a broker's dynamic config:
`leader.replication.throttled.rate` and `follower.replication.throttled.rate` in bytes per
second (unset: Long.MAX_VALUE, no limit).

The rate is Kafka's sampled rate, quota/sensor.py's `SampledRate` as for client quotas: bytes
recorded into `replication.quota.window.num` windows of `replication.quota.window.size.seconds`,
divided by the time they span (at least the span of all windows but the current one, so a quiet
broker is not judged by its first bytes). The quota is exceeded while that rate is above the
limit. Then:

- the leader answers a throttled partition's fetch from a follower that is not in the ISR with no
  records (and records the bytes it does send of throttled partitions);
- the follower leaves a throttled partition it is not in sync on out of its fetches for a moment
  (and records the bytes it appends of throttled partitions).

Replicas in sync are never throttled, so a throttle slows down only the replicas catching up (a
reassignment's new replicas), never acks=all produce.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..common.topic_partition import TopicPartition
from ..quota.sensor import SampledRate, WindowConfig

LONG_MAX = 2**63 - 1
ALL_REPLICAS = "*"


class ReplicationQuota:
    """One side's throttle (Kafka's ReplicationQuotaManager): the throttled partitions of this
    broker, the byte rate limit and the measured rate."""

    def __init__(self, broker_id: int, samples: int = 11, window_s: int = 1) -> None:
        self.broker_id = broker_id
        self.limit = LONG_MAX
        self.rate = SampledRate(WindowConfig(samples, window_s * 1000))
        self._throttled: dict[str, frozenset[int] | None] = {}  # topic -> partitions, None: all
        self._config_seen: dict[str, str] = {}
        self.throttle_time_total_ms = 0.0  # what Kafka's throttle-time metric would add up

    @property
    def active(self) -> bool:
        """Whether any partition may be throttled at all (a limit set, and replicas named)."""
        return self.limit != LONG_MAX and bool(self._throttled)

    def configure(self, limit: int, samples: int, window_s: int) -> None:
        self.limit = limit
        window = WindowConfig(samples, window_s * 1000)
        if window != self.rate.config:
            self.rate = SampledRate(window)

    def update_topic(self, topic: str, config_value: str | None) -> None:
        """The topic's throttled replica list changed (None or empty: no throttle)."""
        text = (config_value or "").strip()
        if self._config_seen.get(topic, "") == text:
            return
        self._config_seen[topic] = text
        partitions = parse_throttled_partitions(text, self.broker_id)
        if partitions is not None and not partitions:
            self._throttled.pop(topic, None)
        else:
            self._throttled[topic] = partitions

    def remove_topic(self, topic: str) -> None:
        self._throttled.pop(topic, None)
        self._config_seen.pop(topic, None)

    def is_throttled(self, tp: TopicPartition) -> bool:
        if tp[0] not in self._throttled:
            return False
        partitions = self._throttled[tp[0]]
        return partitions is None or tp[1] in partitions

    def is_quota_exceeded(self, now_ms: int) -> bool:
        return self.limit != LONG_MAX and self.rate.measure(now_ms) > self.limit

    def record(self, size: int, now_ms: int) -> None:
        self.rate.record(size, now_ms)

    def throttle_time_ms(self, now_ms: int) -> float:
        """How long until the rate falls back to the limit (Kafka's QuotaUtils formula)."""
        rate = self.rate.measure(now_ms)
        if self.limit <= 0 or rate <= self.limit:
            return 0.0
        span_ms = self.rate.config.samples * self.rate.config.window_ms
        return (rate - self.limit) / self.limit * span_ms

    def throttled_topics(self) -> Iterable[str]:
        return self._throttled.keys()


def parse_throttled_partitions(value: str, broker_id: int) -> frozenset[int] | None:
    """The partitions a `*.replication.throttled.replicas` value throttles on `broker_id`: None
    for `*` (every partition), else the partition ids of the pairs naming the broker."""
    text = value.strip()
    if text == ALL_REPLICAS:
        return None
    partitions = set()
    for pair in text.split(","):
        partition, _, broker = pair.strip().partition(":")
        if broker.strip() and int(broker) == broker_id:
            partitions.add(int(partition))
    return frozenset(partitions)
