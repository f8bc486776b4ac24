"""Kafka's RackAwareReplicaSelector and the leader's choice of candidates (KIP-392), without a
cluster: which replica a consumer is sent to."""

from pykbroker.replication.replica_selector import (
    RACK_AWARE_REPLICA_SELECTOR,
    ClientMetadata,
    ReplicaView,
    replica_selector,
    select_rack_aware,
)

LEADER = ReplicaView(1, "a", log_end_offset=100, time_since_caught_up_ms=0)


def client(rack):
    return ClientMetadata(rack, "PLAINTEXT")


def test_a_consumer_without_a_rack_or_without_candidates_in_its_rack_reads_from_the_leader():
    followers = [ReplicaView(2, "b", 100, 0)]
    assert select_rack_aware(client(None), followers, LEADER) is LEADER
    assert select_rack_aware(client(""), followers, LEADER) is LEADER
    assert select_rack_aware(client("z"), followers, LEADER) is LEADER


def test_the_leader_in_the_consumers_rack_is_preferred_to_followers_there():
    assert select_rack_aware(client("a"), [ReplicaView(2, "a", 100, 0)], LEADER) is LEADER


def test_among_followers_in_the_rack_the_most_caught_up_is_chosen_then_the_latest_caught_up():
    behind = ReplicaView(2, "b", 90, 0)
    ahead_but_stale = ReplicaView(3, "b", 100, 500)
    ahead_and_fresh = ReplicaView(4, "b", 100, 10)
    chosen = select_rack_aware(client("b"), [behind, ahead_but_stale, ahead_and_fresh], LEADER)
    assert chosen is ahead_and_fresh


def test_only_the_rack_aware_selector_selects():
    assert replica_selector(RACK_AWARE_REPLICA_SELECTOR) is select_rack_aware
    assert replica_selector("org.apache.kafka.common.replica.LeaderSelector") is None
    assert replica_selector(None) is None


class LeaderPartition:
    """What the leader's choice reads of a partition: its followers' states, ISR and log end."""

    def __init__(self, followers, isr):
        self.local_broker_id = 1
        self.log_end_offset = 100
        self.followers = followers
        self.isr = isr


def follower(log_start, log_end, caught_up_ms=1000):
    from pykbroker.replication.partition import FollowerState

    return FollowerState(log_end_offset=log_end, log_start_offset=log_start, last_caught_up_ms=caught_up_ms)


RACKS = {1: "a", 2: "b", 3: "b"}


def choose(partition, fetch_offset, racks=RACKS, rack="b"):
    from pykbroker.replication.replica_selector import preferred_read_replica

    return preferred_read_replica(select_rack_aware, partition, client(rack), fetch_offset, 2000, racks)


def test_the_leader_offers_in_sync_followers_that_hold_the_fetch_offset():
    partition = LeaderPartition({2: follower(0, 100), 3: follower(0, 100)}, isr=[1, 2, 3])
    assert choose(partition, 50) in (2, 3)
    assert choose(partition, 50, rack="a") is None  # the leader's own rack


def test_followers_out_of_the_isr_or_without_the_offset_or_not_alive_are_no_candidates():
    out_of_isr = LeaderPartition({2: follower(0, 100)}, isr=[1])
    assert choose(out_of_isr, 50) is None
    behind = LeaderPartition({2: follower(0, 40)}, isr=[1, 2])
    assert choose(behind, 50) is None
    assert choose(behind, 40) == 2
    truncated = LeaderPartition({2: follower(60, 100)}, isr=[1, 2])
    assert choose(truncated, 50) is None
    dead = LeaderPartition({2: follower(0, 100)}, isr=[1, 2])
    assert choose(dead, 50, racks={1: "a"}) is None
