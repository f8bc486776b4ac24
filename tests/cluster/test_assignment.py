"""Placing replicas on brokers: Kafka's ZooKeeper-mode assignment, with and without racks."""
import random
from collections import Counter

import pytest

from pykbroker.cluster.assignment import (
    assign_replicas,
    place_new_topic,
    place_replicas,
    rack_alternated,
    start_index_of,
)
from pykbroker.protocol.errors import ErrorCode, KafkaError

NO_RACKS = [(1, None), (2, None), (3, None)]


def test_leaders_spread_evenly_over_the_brokers():
    placed = assign_replicas(NO_RACKS, 6, 3, start_index=0)
    assert Counter(replicas[0] for replicas in placed.values()) == {1: 2, 2: 2, 3: 2}


def test_each_partition_has_distinct_replicas():
    placed = assign_replicas(NO_RACKS, 12, 3, rng=random.Random(7))
    assert all(len(set(replicas)) == 3 for replicas in placed.values())


def test_followers_shift_every_round_of_brokers():
    placed = assign_replicas([(b, None) for b in range(1, 5)], 8, 2, start_index=0)
    assert placed[0] == [1, 2]
    assert placed[4] == [1, 3]  # the second round shifts the follower


def test_more_replicas_than_brokers_is_an_invalid_replication_factor():
    with pytest.raises(KafkaError) as raised:
        assign_replicas(NO_RACKS, 1, 4)
    assert raised.value.code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert raised.value.message == "Replication factor: 4 larger than available brokers: 3."


def test_racks_alternate_in_the_broker_order():
    assert rack_alternated({1: "a", 2: "a", 3: "b", 4: "c"}) == [1, 3, 4, 2]


def test_rack_aware_replicas_use_every_rack_before_reusing_one():
    brokers = [(1, "a"), (2, "a"), (3, "b"), (4, "b"), (5, "c"), (6, "c")]
    racks = dict(brokers)
    placed = assign_replicas(brokers, 12, 3, rng=random.Random(3))
    assert all(len({racks[b] for b in replicas}) == 3 for replicas in placed.values())


def test_two_racks_hold_replicas_of_every_partition():
    brokers = [(1, "a"), (2, "a"), (3, "b"), (4, "b")]
    racks = dict(brokers)
    placed = assign_replicas(brokers, 8, 2, rng=random.Random(5))
    assert all({racks[b] for b in replicas} == {"a", "b"} for replicas in placed.values())


def test_some_brokers_without_a_rack_is_an_error():
    with pytest.raises(KafkaError):
        assign_replicas([(1, "a"), (2, None)], 1, 1)


def test_added_partitions_continue_the_pattern_of_partition_0():
    first = assign_replicas(NO_RACKS, 3, 2, start_index=1)
    start = start_index_of(NO_RACKS, first[0][0])
    added = assign_replicas(NO_RACKS, 3, 2, first_partition=3, start_index=start)
    assert [added[p][0] for p in (3, 4, 5)] == [first[0][0], first[1][0], first[2][0]]


def test_the_controller_places_leaders_round_robin_from_the_first_broker():
    assert place_replicas(NO_RACKS, 3, 2) == [[1, 2], [2, 3], [3, 1]]
    assert [replicas[0] for replicas in place_replicas(NO_RACKS, 3, 2, first_partition=3)] == [1, 2, 3]


def test_a_new_topic_reports_too_few_brokers_in_kafkas_words():
    assert place_new_topic([(7, None)], 2, 1) == {0: [7], 1: [7]}
    with pytest.raises(KafkaError) as raised:
        place_new_topic([(7, None)], 1, 3)
    assert raised.value.code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert raised.value.message == "Replication factor: 3 larger than available brokers: 1."
