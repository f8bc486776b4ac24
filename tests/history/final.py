"""The final read: every partition of the topics from the start to the end offset, the truth a
history is checked against.

    committed = final_read(bootstrap, "events", READ_COMMITTED)
    uncommitted = final_read(bootstrap, "events", READ_UNCOMMITTED)
    check(history, committed, uncommitted)
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, TopicPartition

from .events import READ_COMMITTED

TopicPartitionKey = tuple[str, int]


@dataclass
class FinalLog:
    """What one isolation level reads at the end: per (topic, partition) the records
    (offset -> value) from the log start to `end_offsets` (the high watermark at read time)."""

    isolation: str = READ_COMMITTED
    records: dict[TopicPartitionKey, dict[int, str]] = field(default_factory=dict)
    end_offsets: dict[TopicPartitionKey, int] = field(default_factory=dict)

    def add(self, topic: str, partition: int, offset: int, value: str) -> None:
        """Record `value` at (topic, partition, offset) (hand-made logs in tests use this too)."""
        self.records.setdefault((topic, partition), {})[offset] = value
        key = (topic, partition)
        self.end_offsets[key] = max(self.end_offsets.get(key, 0), offset + 1)

    def value_at(self, topic: str, partition: int, offset: int) -> str | None:
        return self.records.get((topic, partition), {}).get(offset)

    def positions(self) -> dict[str, list[tuple[str, int, int]]]:
        """Every value with each (topic, partition, offset) it is found at."""
        found: dict[str, list[tuple[str, int, int]]] = {}
        for (topic, partition), by_offset in self.records.items():
            for offset, value in by_offset.items():
                found.setdefault(value, []).append((topic, partition, offset))
        return found

    def values(self) -> set[str]:
        return {value for by_offset in self.records.values() for value in by_offset.values()}

    def items(self) -> Iterator[tuple[str, int, int, str]]:
        """(topic, partition, offset, value) in partition and offset order."""
        for (topic, partition), by_offset in sorted(self.records.items()):
            for offset in sorted(by_offset):
                yield topic, partition, offset, by_offset[offset]

    def __len__(self) -> int:
        return sum(len(by_offset) for by_offset in self.records.values())


def final_read(
    bootstrap: str,
    topic: str | Sequence[str],
    isolation: str = READ_COMMITTED,
    *,
    timeout: float = 60.0,
    config: dict[str, object] | None = None,
) -> FinalLog:
    """Read every partition of `topic` (one name or several) from the start to its end offset at
    `isolation` (read_committed or read_uncommitted), retrying through retriable errors until
    `timeout`. With read_committed it waits for the last stable offset to reach the high
    watermark (no open transaction left), so call it after every workload stopped."""
    topics = [topic] if isinstance(topic, str) else list(topic)
    deadline = time.monotonic() + timeout
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"final-read-{uuid.uuid4().hex[:8]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            **(config or {}),
        }
    )
    try:
        partitions = _partitions(consumer, topics, deadline)
        log = FinalLog(isolation)
        _read_to_end(consumer, partitions, log, deadline)
        for partition in partitions:
            log.end_offsets[(partition.topic, partition.partition)] = _high_watermark(consumer, partition, deadline)
        return log
    finally:
        consumer.close()


def _partitions(consumer: Consumer, topics: list[str], deadline: float) -> list[TopicPartition]:
    """Every partition of `topics`, once the metadata names them all with a leader."""
    while True:
        try:
            metadata = consumer.list_topics(timeout=5)
            found = [
                TopicPartition(name, number, OFFSET_BEGINNING)
                for name in topics
                for number, partition in sorted(metadata.topics[name].partitions.items())
                if partition.leader >= 0
            ]
            if all(name in metadata.topics and not metadata.topics[name].error for name in topics) and len(
                found
            ) == sum(len(metadata.topics[name].partitions) for name in topics):
                return found
        except (KafkaException, KeyError):
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"final read: no leader for every partition of {topics}")
        time.sleep(0.2)


def _read_to_end(consumer: Consumer, partitions: list[TopicPartition], log: FinalLog, deadline: float) -> None:
    """Consume from the start until every partition reported its end (partition EOF)."""
    consumer.assign(partitions)
    at_end: set[TopicPartitionKey] = set()
    wanted = {(p.topic, p.partition) for p in partitions}
    while at_end != wanted:
        if time.monotonic() > deadline:
            missing = sorted(wanted - at_end)
            raise AssertionError(f"final read ({log.isolation}): no end reached for {missing}; read {len(log)}")
        for message in consumer.consume(num_messages=500, timeout=0.1):
            key = (message.topic(), message.partition())
            error = message.error()
            if error is None:
                log.add(key[0], key[1], message.offset(), _decoded(message.value()))
                at_end.discard(key)
            elif error.code() == KafkaError._PARTITION_EOF:
                at_end.add(key)


def _high_watermark(consumer: Consumer, partition: TopicPartition, deadline: float) -> int:
    """The high watermark the last fetch saw (the reading just reached it), else asked for."""
    _, seen = consumer.get_watermark_offsets(partition, cached=True)
    if seen >= 0:
        return int(seen)
    while True:
        try:
            _, high = consumer.get_watermark_offsets(partition, timeout=5, cached=False)
            return int(high)
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _decoded(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
