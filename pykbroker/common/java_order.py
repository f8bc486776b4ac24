"""Java's hash codes and the order in which its HashMap and HashSet iterate, wherever pykbroker
must answer in Kafka's order: the rows of Kafka's own tools (collected into HashMaps keyed by
TopicPartition or group id), the SASL mechanisms of a SaslHandshake response (a HashSet), the
partition of `__consumer_offsets` that coordinates a group (String.hashCode), and the order of the
Scala `mutable.HashMap`s some of Kafka's answers are built from (`scala_hash_map_order`).

A HashMap iterates bucket by bucket, and within a bucket in insertion order; a key's bucket is its
hashCode, spread (`h ^ h >>> 16`), modulo the table's capacity: 16 (or, for `new HashMap<>(n)`, the
power of two at or above n), doubled whenever the entries pass three quarters of it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TypeVar

Key = TypeVar("Key")
MASK = 0xFFFFFFFF


def string_hash(text: str, start: int = 0) -> int:
    """java.lang.String.hashCode, over UTF-16 code units (as an unsigned 32-bit number). With
    `start`, the hash code of a longer string whose prefix hashes to `start`: the hash of
    `prefix + text` is `string_hash(text, string_hash(prefix))`."""
    value = start
    data = text.encode("utf-16-be")
    for index in range(0, len(data), 2):
        value = (31 * value + (data[index] << 8 | data[index + 1])) & MASK
    return value


def signed_string_hash(text: str) -> int:
    """java.lang.String.hashCode as Java's signed 32-bit int."""
    value = string_hash(text)
    return value - (1 << 32) if value & 0x80000000 else value


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
    return _in_bucket_order(inserted, hash_code, capacity)


def _in_bucket_order(inserted: list[Key], hash_code: Callable[[Key], int], capacity: int) -> list[Key]:
    """`inserted` as a Java hash table of `capacity` buckets iterates them: bucket by bucket (the
    hash spread as `h ^ h >>> 16`), in insertion order within a bucket."""

    def bucket(key: Key) -> int:
        code = hash_code(key)
        return (code ^ (code >> 16)) & (capacity - 1)

    return [key for _, _, key in sorted((bucket(key), position, key) for position, key in enumerate(inserted))]


def partitions_in_java_order(partitions: Iterable[tuple[str, int]]) -> list[tuple[str, int]]:
    """Partitions sorted by number, then in a Java HashMap's order, as Kafka's describe rows come."""
    by_number = sorted(partitions, key=lambda partition: partition[1])
    return hash_map_order(by_number, topic_partition_hash)


def hash_set_order(items: Iterable[str]) -> list[str]:
    """The order Java's `new ArrayList<>(new HashSet<>(items))` gives: a HashSet made from a
    collection starts with the capacity that holds it (`max(size / 0.75 + 1, 16)`, rounded up to a
    power of two) and never grows while it is filled."""
    unique = list(dict.fromkeys(items))
    target = max(int(len(unique) / 0.75) + 1, 16)
    capacity = 1
    while capacity < target:
        capacity *= 2
    return _in_bucket_order(unique, string_hash, capacity)


def scala_hash_map_order(keys: Iterable[str]) -> list[str]:
    """`keys` (strings, in insertion order) as Scala 2.13's `mutable.HashMap` iterates them: bucket
    by bucket (the hash code spread as Java's), and within a bucket by the spread hash as a signed
    int (Scala keeps each bucket sorted by it). The table starts at 16 buckets and doubles as soon
    as the entries reach three quarters of it. (Remembered for the last key lists asked about: a
    broker's config names come in the same list on every DescribeConfigs.)"""
    return list(_scala_hash_map_order(tuple(dict.fromkeys(keys))))


@functools.lru_cache(maxsize=64)
def _scala_hash_map_order(inserted: tuple[str, ...]) -> tuple[str, ...]:
    capacity = 16
    while len(inserted) >= capacity * 3 // 4:
        capacity *= 2

    def spread(key: str) -> int:
        code = string_hash(key)
        code ^= code >> 16
        return code - (1 << 32) if code & 0x80000000 else code

    return tuple(sorted(inserted, key=lambda key: (spread(key) & (capacity - 1), spread(key))))
