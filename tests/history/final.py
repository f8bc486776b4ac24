"""The final read: every partition of the topics from the start to the end offset, the truth a
history is checked against.

    committed = final_read(bootstrap, "events", READ_COMMITTED)
    uncommitted = final_read(bootstrap, "events", READ_UNCOMMITTED)
    check(history, committed, uncommitted)
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

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
    raise NotImplementedError
