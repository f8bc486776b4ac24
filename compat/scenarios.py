"""The scenarios of the compatibility suite: what each client does and what it must get back.

Every client runs every scenario it has an interface for, on topics of its own; a scenario passes
when the client got back exactly what the description says. The topics a scenario works on are
created beforehand through a neutral client (librdkafka's admin API), except in the admin
scenarios, where creating them is the point.
"""
from __future__ import annotations

from dataclasses import dataclass

from pykbroker.testkit.waiting import wait_until

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
    "transactions": ("a transactional producer commits 6 records to 2 partitions, aborts 6 "
                     "more, commits 4 more: a read_committed consumer reads the 10 committed "
                     "ones once, in order, and none of the aborted; a read_uncommitted one "
                     "reads all 16", 2),
    "transactional-offsets": ("consume-transform-produce: a group member reads 10 records; 5 "
                              "are transformed and their offsets sent to the transaction, "
                              "which commits; the other 5 likewise, but aborted: the group's "
                              "committed offset is 5, and a new member resumes there and "
                              "commits the rest: the output holds each transformed record "
                              "once for read_committed, the committed offset is 10", 1),
    "transaction-fencing": ("a second producer with the same transactional id fences the first "
                            "while the first's transaction is open: that transaction is "
                            "aborted and the first producer's commit fails as fenced; "
                            "read_committed sees only the second producer's record", 1),
}
TRANSACTIONAL = ("transactions", "transactional-offsets", "transaction-fencing")


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


# -- transactions -----------------------------------------------------------------------------

def transactional_id(topic: str) -> str:
    return f"{topic}-txn"


def output_topic(topic: str) -> str:
    """The output topic of the consume-transform-produce scenario, created by the scenario."""
    return f"{topic}-out"


def transaction_records(tag: str, count: int) -> list[tuple]:
    """(key, value, headers, partition, timestamp) records alternating over partitions 0, 1."""
    return [(f"key-{i}".encode(), f"{tag}-{i}".encode(), (), i % 2, None) for i in range(count)]


# what the "transactions" scenario writes, transaction by transaction
COMMITTED_FIRST = transaction_records("committed", 6)
ABORTED = transaction_records("aborted", 6)
COMMITTED_AFTER = transaction_records("after", 4)


def values_by_partition(records: list[Got]) -> dict[int, list[bytes]]:
    grouped: dict[int, list[bytes]] = {}
    for r in sorted(records, key=lambda r: (r.partition, r.offset)):
        grouped.setdefault(r.partition, []).append(r.value)
    return grouped


def check_transactions_read(read_committed: list[Got], read_uncommitted: list[Got]) -> None:
    """read_committed: the committed records once each, in order per partition, none aborted;
    read_uncommitted: every record written, aborted ones included."""
    def expected(*transactions):
        grouped: dict[int, list[bytes]] = {}
        for records in transactions:
            for _, value, _, partition, _ in records:
                grouped.setdefault(partition, []).append(value)
        return grouped

    expect_equal(expected(COMMITTED_FIRST, COMMITTED_AFTER), values_by_partition(read_committed),
                 "records read with read_committed")
    expect_equal(expected(COMMITTED_FIRST, ABORTED, COMMITTED_AFTER),
                 values_by_partition(read_uncommitted), "records read with read_uncommitted")


# the "transactional-offsets" scenario: 10 input records, each transformed into one output record
INPUT = [(f"key-{i}".encode(), f"in-{i}".encode()) for i in range(10)]


def transformed(value: bytes) -> bytes:
    return b"out-" + value


def check_output(read_committed: list[Got], read_uncommitted: list[Got]) -> None:
    """The output holds each input record transformed once, in input order, for read_committed;
    read_uncommitted also sees the 5 records of the aborted transaction."""
    expect_equal([transformed(v) for _, v in INPUT], [r.value for r in read_committed],
                 "output read with read_committed")
    expect_equal([transformed(v) for _, v in INPUT[:5] + INPUT[5:] + INPUT[5:]],
                 [r.value for r in read_uncommitted], "output read with read_uncommitted")


# the "transaction-fencing" scenario
FENCED_VALUE, WINNER_VALUE = b"fenced-0", b"winner-0"
