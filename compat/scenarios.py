"""The scenarios of the compatibility suite: what each client does and what it must get back.

Every client runs every scenario it has an interface for, on topics of its own; a scenario passes
when the client got back exactly what the description says. The topics a scenario works on are
created beforehand through a neutral client (librdkafka's admin API), except in the admin
scenarios, where creating them is the point.
"""
from __future__ import annotations

from dataclasses import dataclass

from pykbroker.testing import wait_until

WAIT_SECONDS = 30  # the longest one step of a scenario waits for the broker
T0 = 1_700_000_000_000  # record timestamps of the offsets-by-timestamp scenario
CODECS = ("gzip", "snappy", "lz4", "zstd")

# name: (what the client does and must get back, partitions of the topic created beforehand)
SCENARIOS: dict[str, tuple[str, int | None]] = {
    "metadata": ("lists a new 3-partition topic with a leader for every partition, and the "
                 "broker it talks to", 3),
    "produce-consume": ("30 keyed records to 3 partitions with acks=all, read back from the "
                        "beginning: each once, at consecutive offsets, in order per key", 3),
    **{f"compression-{codec}": (f"50 records compressed with {codec}, read back whole", 1)
       for codec in CODECS},
    "headers-nulls": ("records with headers (repeated keys, empty value), a null key, a null "
                      "value (tombstone): read back as written", 1),
    "offsets-by-timestamp": ("the offset of the first record at or after a time between two "
                             "records, and none after the last record", 1),
    "consumer-group": ("a group member reads 10 records, commits and leaves; after 5 more "
                       "records a new member of the group reads exactly those 5", 2),
    "admin-topics": ("creates a 2-partition topic, lists and describes it, grows it to 4 "
                     "partitions, deletes it", None),
    "admin-configs": ("creates a topic with retention.ms set, describes its configs, alters "
                      "retention.ms and sees the new value", None),
}


@dataclass(frozen=True)
class Got:
    """A record as a client read it."""
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple = ()
    timestamp: int | None = None


class NotApplicable(Exception):
    """The client has no interface for what the scenario does."""


def unpack(record: tuple) -> tuple:
    """(key, value[, headers[, partition[, timestamp]]]) as all five, with the defaults."""
    return (*record, *((), None, None)[len(record) - 2:])


def topic_name(client: str, scenario: str, run_id: str) -> str:
    return f"compat-{client}-{scenario}-{run_id}"


def keyed(count: int, tag: str = "value") -> list[tuple[bytes, bytes]]:
    """`count` (key, value) pairs over five keys, values unique."""
    return [(f"key-{i % 5}".encode(), f"{tag}-{i}".encode()) for i in range(count)]


def expect(condition, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def expect_equal(expected, actual, what: str) -> None:
    if expected != actual:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def check_round_trip(sent: list[tuple], received: list[Got]) -> None:
    """`received` holds each sent (key, value) once; each partition's records at consecutive
    offsets; the records of one key in one partition, in the order they were sent."""
    expect_equal(sorted(sent), sorted((r.key, r.value) for r in received), "records read back")
    by_partition: dict[int, list[Got]] = {}
    for r in sorted(received, key=lambda r: (r.partition, r.offset)):
        by_partition.setdefault(r.partition, []).append(r)
    for partition, records in by_partition.items():
        first = records[0].offset
        expect_equal(list(range(first, first + len(records))), [r.offset for r in records],
                     f"offsets of partition {partition}")
    partitions_of_key: dict[bytes, set[int]] = {}
    for r in received:
        partitions_of_key.setdefault(r.key, set()).add(r.partition)
    expect(all(len(p) == 1 for p in partitions_of_key.values()),
           f"one partition per key: {partitions_of_key}")
    order = {kv: i for i, kv in enumerate(sent)}
    for partition, records in by_partition.items():
        positions = [order[(r.key, r.value)] for r in records]
        expect(positions == sorted(positions), f"partition {partition} keeps the sending order")



# -- the neutral setup ------------------------------------------------------------------------

def create_topic(bootstrap: str, name: str, partitions: int, replication_factor: int = 1) -> None:
    """Creates a topic through librdkafka's admin API and waits until every partition has a
    leader in the metadata."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})  # warnings and worse
    for future in admin.create_topics([NewTopic(name, partitions, replication_factor)],
                                      operation_timeout=WAIT_SECONDS).values():
        future.result(WAIT_SECONDS)

    def ready():
        topic = admin.list_topics(name, timeout=WAIT_SECONDS).topics.get(name)
        return (topic is not None and topic.error is None and len(topic.partitions) == partitions
                and all(p.leader >= 0 for p in topic.partitions.values()))

    wait_until(ready, f"topic {name} to be ready")
