"""The order in which Java's HashMap iterates its keys, so that tables come out in the row order of
Kafka's own tools (which collect rows into HashMaps keyed by TopicPartition or group id).

A HashMap iterates bucket by bucket, and within a bucket in insertion order; a key's bucket is its
hashCode, spread (`h ^ h >>> 16`), modulo the table's capacity: 16 (or, for `new HashMap<>(n)`, the
power of two at or above n), doubled whenever the entries pass three quarters of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

Key = TypeVar("Key")
MASK = 0xFFFFFFFF


def string_hash(text: str) -> int:
    """java.lang.String.hashCode, over UTF-16 code units (as an unsigned 32-bit number)."""
    value = 0
    data = text.encode("utf-16-be")
    for index in range(0, len(data), 2):
        value = (31 * value + (data[index] << 8 | data[index + 1])) & MASK
    return value


def topic_partition_hash(key: tuple[str, int]) -> int:
    """org.apache.kafka.common.TopicPartition.hashCode."""
    topic, partition = key
    return (31 * ((31 + partition) & MASK) + string_hash(topic)) & MASK


def hash_map_order(
    keys: Iterable[Key], hash_code: Callable[[Key], int], *, sized: bool = False, growing: bool = True
) -> list[Key]:
    """`keys` (in insertion order) as a Java HashMap holding them iterates them: `new HashMap<>()`,
    or with `sized` `new HashMap<>(len(keys))`; without `growing`, in the buckets of the first
    table (16), whatever the number of keys."""
    inserted = list(dict.fromkeys(keys))
    capacity = 16
    if sized:
        capacity = 1
        while capacity < len(inserted):
            capacity *= 2
    while growing and len(inserted) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: Key) -> int:
        code = hash_code(key)
        return (code ^ (code >> 16)) & (capacity - 1)

    return [key for _, _, key in sorted((bucket(key), position, key) for position, key in enumerate(inserted))]


def partitions_in_java_order(partitions: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Partitions sorted by number, then in a Java HashMap's order, as Kafka's describe rows come."""
    by_number = sorted(partitions, key=lambda partition: partition[1])
    return hash_map_order(by_number, topic_partition_hash)
