"""Kafka's BrokerTopicStats: what flows through this broker's partitions, per topic and in all.

The replica manager adds to these counters on the produce and fetch paths, so they are plain
integer additions on numbers those paths already hold (a batch's size and its offsets); nothing
is decoded for them. Readers (the metrics endpoint) take `snapshot()`s.

    stats = BrokerTopicStats()
    stats.record_append("t", size_in_bytes=120, messages=3)
    stats.all_topics.bytes_in                 # 120
    stats.topics["t"].messages_in             # 3
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(slots=True)
class TopicCounters:
    """Counts since the broker started (Kafka's meters' `Count`)."""

    bytes_in: int = 0  # BytesInPerSec: record batches appended as leader, as received
    bytes_out: int = 0  # BytesOutPerSec: record bytes sent to consumers (not to followers)
    messages_in: int = 0  # MessagesInPerSec: offsets the appended batches took
    total_produce_requests: int = 0  # TotalProduceRequestsPerSec: partition appends asked
    total_fetch_requests: int = 0  # TotalFetchRequestsPerSec: partition reads asked
    replication_bytes_out: int = 0  # ReplicationBytesOutPerSec: record bytes sent to followers

    def copy(self) -> TopicCounters:
        return TopicCounters(*(getattr(self, f.name) for f in fields(self)))


class BrokerTopicStats:
    def __init__(self) -> None:
        self.all_topics = TopicCounters()
        self.topics: dict[str, TopicCounters] = {}

    def _topic(self, topic: str) -> TopicCounters:
        counters = self.topics.get(topic)
        if counters is None:
            counters = self.topics[topic] = TopicCounters()
        return counters

    def record_produce_request(self, topic: str) -> None:
        self._topic(topic).total_produce_requests += 1
        self.all_topics.total_produce_requests += 1

    def record_append(self, topic: str, size_in_bytes: int, messages: int) -> None:
        """A batch of `size_in_bytes` taking `messages` offsets was appended as leader."""
        counters = self._topic(topic)
        counters.bytes_in += size_in_bytes
        counters.messages_in += messages
        self.all_topics.bytes_in += size_in_bytes
        self.all_topics.messages_in += messages

    def record_fetch_request(self, topic: str) -> None:
        self._topic(topic).total_fetch_requests += 1
        self.all_topics.total_fetch_requests += 1

    def record_bytes_out(self, topic: str, size_in_bytes: int, *, to_follower: bool) -> None:
        """Record bytes read for a fetch: a consumer's count as BytesOut, a follower's as
        ReplicationBytesOut (only in all topics, as Kafka counts it)."""
        if to_follower:
            self.all_topics.replication_bytes_out += size_in_bytes
            return
        self._topic(topic).bytes_out += size_in_bytes
        self.all_topics.bytes_out += size_in_bytes

    def remove_topic(self, topic: str) -> None:
        """A deleted topic's counters go (Kafka removes its metrics); the all-topics ones stay."""
        self.topics.pop(topic, None)

    def snapshot(self) -> tuple[TopicCounters, dict[str, TopicCounters]]:
        """(all topics, per topic) copies, safe to read while the broker goes on counting."""
        return self.all_topics.copy(), {topic: counters.copy() for topic, counters in self.topics.items()}
