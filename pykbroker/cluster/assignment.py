"""Placing a topic's partition replicas on brokers, and the errors placement answers with: the
one home of replica placement (the controller's rules, the embedded store and the ZooKeeper
store all call it).

    assign_replicas([(1, None), (2, None), (3, None)], num_partitions=6, replication_factor=3)
    place_replicas([(1, None), (2, None)], num_partitions=2, replication_factor=2)  # [[1, 2], [2, 1]]

Without racks, partition p's first replica (its preferred leader) is broker
`(p + start) % n` of the sorted broker list, so leaders spread evenly; the other replicas
follow at a shift that changes every n partitions, so followers spread too. When every broker
has a `broker.rack`, the broker list alternates racks first and each partition's replicas go to
as many different racks as possible (Kafka's rack-aware assignment). Some brokers with a rack
and others without is an error, as in Kafka.

At most `MAX_PARTITIONS_PLACED` partitions are placed at once (`TooManyPartitionsError`,
INVALID_PARTITIONS): a CreateTopics or CreatePartitions asking for two billion would otherwise
build their replica lists until the broker runs out of memory, its event loop blocked meanwhile.

`start_index` and `replica_shift` are random unless given (Kafka's fixedStartIndex); adding
partitions continues from the first replica of partition 0, as Kafka does. `place_replicas`, the
controller's placement for CreateTopics and CreatePartitions, starts at index 0, so partition p
is led by the p-th broker (round-robin).

Too few brokers is INVALID_REPLICATION_FACTOR in the words of Kafka 3.9.0 in ZooKeeper mode
(its AdminUtils), for new topics and new partitions alike: "Replication factor: 3 larger than
available brokers: 1." (`NotEnoughBrokersError`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from ..protocol.errors import ErrorCode, KafkaError

Broker = tuple[int, "str | None"]  # (broker id, rack)


class NotEnoughBrokersError(KafkaError):
    """More replicas asked for than there are brokers (INVALID_REPLICATION_FACTOR)."""

    def __init__(self, replication_factor: int, registered: int) -> None:
        super().__init__(
            ErrorCode.INVALID_REPLICATION_FACTOR,
            f"Replication factor: {replication_factor} larger than available brokers: {registered}.",
        )


MAX_PARTITIONS_PLACED = 100_000


class TooManyPartitionsError(KafkaError):
    """More partitions asked for at once than `MAX_PARTITIONS_PLACED` (INVALID_PARTITIONS)."""

    def __init__(self, num_partitions: int) -> None:
        super().__init__(
            ErrorCode.INVALID_PARTITIONS,
            f"Number of partitions ({num_partitions}) exceeds the limit of {MAX_PARTITIONS_PLACED} partitions "
            "created at once.",
        )


def place_new_topic(brokers: Iterable[Broker], num_partitions: int, replication_factor: int) -> dict[int, list[int]]:
    """{partition: replicas} of a new topic (NotEnoughBrokersError with too few brokers)."""
    return dict(enumerate(place_replicas(brokers, num_partitions, replication_factor)))


def place_replicas(
    brokers: Iterable[Broker], num_partitions: int, replication_factor: int, first_partition: int = 0
) -> list[list[int]]:
    """The controller's replica lists for new partitions numbered from `first_partition`:
    leaders round-robin over the brokers from the first one, rack-aware when they have racks."""
    placed = assign_replicas(
        brokers, num_partitions, replication_factor, first_partition=first_partition, start_index=0
    )
    return [placed[p] for p in sorted(placed)]


def assign_replicas(
    brokers: Iterable[Broker],
    num_partitions: int,
    replication_factor: int,
    *,
    first_partition: int = 0,
    start_index: int = -1,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """{partition: replicas} for `num_partitions` partitions numbered from `first_partition`."""
    brokers = sorted(brokers)
    if num_partitions <= 0:
        raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
    if num_partitions > MAX_PARTITIONS_PLACED:
        raise TooManyPartitionsError(num_partitions)
    if replication_factor <= 0:
        raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
    if replication_factor > len(brokers):
        raise NotEnoughBrokersError(replication_factor, len(brokers))
    racks = {broker_id: rack for broker_id, rack in brokers}
    known_racks = {broker_id: rack for broker_id, rack in racks.items() if rack is not None}
    rack_of: dict[int, str] | None
    if not known_racks:
        ordered, rack_of = [broker_id for broker_id, _ in brokers], None
    elif len(known_racks) < len(racks):
        raise KafkaError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "Not all brokers have rack information for replica rack aware assignment.",
        )
    else:
        ordered, rack_of = rack_alternated(known_racks), known_racks
    rng = rng or random.Random()
    start = start_index if start_index >= 0 else rng.randrange(len(ordered))
    shift = start_index if start_index >= 0 else rng.randrange(len(ordered))
    return _assign(ordered, rack_of, num_partitions, replication_factor, first_partition, start, shift)


def _assign(
    ordered: list[int],
    rack_of: dict[int, str] | None,
    num_partitions: int,
    replication_factor: int,
    first_partition: int,
    start: int,
    shift: int,
) -> dict[int, list[int]]:
    n = len(ordered)
    result: dict[int, list[int]] = {}
    for partition in range(first_partition, first_partition + num_partitions):
        if partition > 0 and partition % n == 0:
            shift += 1
        first = (partition + start) % n
        if rack_of is None:
            result[partition] = [ordered[first]] + [
                ordered[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)
            ]
        else:
            result[partition] = _rack_aware_replicas(ordered, rack_of, first, shift, replication_factor)
    return result


def _rack_aware_replicas(
    ordered: list[int], rack_of: dict[int, str], first: int, shift: int, replication_factor: int
) -> list[int]:
    n, num_racks = len(ordered), len(set(rack_of.values()))
    leader = ordered[first]
    replicas, racks_used, brokers_used = [leader], {rack_of[leader]}, {leader}
    k = 0
    while len(replicas) < replication_factor:
        broker = ordered[_replica_index(first, shift * num_racks, k, n)]
        rack = rack_of[broker]
        k += 1
        if rack in racks_used and len(racks_used) < num_racks:
            continue  # another rack has no replica yet
        if broker in brokers_used and len(brokers_used) < n:
            continue
        replicas.append(broker)
        racks_used.add(rack)
        brokers_used.add(broker)
    return replicas


def _replica_index(first: int, shift: int, replica: int, n: int) -> int:
    return (first + 1 + (shift + replica) % (n - 1)) % n


def rack_alternated(racks: dict[int, str]) -> list[int]:
    """Broker ids taking one broker from each rack in turn (racks sorted, brokers sorted)."""
    by_rack: dict[str, list[int]] = {}
    for broker_id, rack in sorted(racks.items()):
        by_rack.setdefault(rack, []).append(broker_id)
    queues = [by_rack[rack] for rack in sorted(by_rack)]
    result: list[int] = []
    depth = 0
    while len(result) < len(racks):
        for queue in queues:
            if depth < len(queue):
                result.append(queue[depth])
        depth += 1
    return result


def start_index_of(ordered_brokers: Iterable[Broker], first_replica: int) -> int:
    """Where an existing topic's partition 0 leader sits in the (rack-alternated) broker list,
    so that added partitions continue its pattern."""
    brokers = sorted(ordered_brokers)
    racks = {broker_id: rack for broker_id, rack in brokers}
    known_racks = {broker_id: rack for broker_id, rack in racks.items() if rack is not None}
    if known_racks and len(known_racks) == len(racks):
        ordered = rack_alternated(known_racks)
    else:
        ordered = [broker_id for broker_id, _ in brokers]
    return ordered.index(first_replica) if first_replica in ordered else -1
