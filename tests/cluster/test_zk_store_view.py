"""The broker's view of the cluster built from what the ZooKeeper watches read: which broker
leads each partition as this broker sees it (no ZooKeeper needed: the view is fed by hand)."""
import uuid

import pytest

from pykbroker.cluster.loop_bridge import LoopBridge
from pykbroker.cluster.zk_data import BrokerRegistration, Endpoint, LeaderAndIsr, OfflineReplicas, TopicAssignment
from pykbroker.cluster.zk_store import ZkMetadataStore

TOPIC_ID = uuid.UUID(int=42)


def registration(broker_id, epoch=-1):
    return BrokerRegistration(broker_id, (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + broker_id),),
                              epoch=epoch)


@pytest.fixture
def store(tmp_path):
    store = ZkMetadataStore(zk_client=None, bridge=LoopBridge(), registration=registration(1),
                            log_dirs=[str(tmp_path)])
    store.apply_brokers({1: registration(1, 10), 2: registration(2, 20), 3: registration(3, 30)})
    store.apply_topic("t", TopicAssignment(TOPIC_ID, {0: [1, 2, 3]}), {})
    store.apply_broker_epoch(10)
    return store


def leader(store):
    return store.topic("t").partitions[0].leader


def test_a_partition_without_a_state_has_no_leader_yet(store):
    state = store.topic("t").partitions[0]
    assert (state.leader, state.replicas, state.isr) == (-1, [1, 2, 3], [])


def test_the_state_znode_names_leader_epoch_and_isr(store):
    store.apply_partition_state("t", 0, LeaderAndIsr(2, 4, [2, 3], 1, zk_version=7, mzxid=100))
    state = store.topic("t").partitions[0]
    assert (state.leader, state.leader_epoch, state.isr, state.partition_epoch) == (2, 4, [2, 3], 7)


def test_a_leader_that_registered_again_since_its_election_is_not_shown(store):
    store.apply_partition_state("t", 0, LeaderAndIsr(2, 4, [1, 2, 3], 1, 7, mzxid=100))
    store.apply_brokers({1: registration(1, 10), 2: registration(2, 150), 3: registration(3, 30)})
    assert leader(store) == -1


def test_a_leader_that_is_not_registered_is_not_shown(store):
    store.apply_partition_state("t", 0, LeaderAndIsr(3, 4, [1, 3], 1, 7, mzxid=100))
    store.apply_brokers({1: registration(1, 10), 2: registration(2, 20)})
    assert leader(store) == -1
    assert store.topic("t").partitions[0].offline_replicas == [3]


def test_this_broker_leads_only_on_a_state_written_after_it_registered(store):
    store.apply_partition_state("t", 0, LeaderAndIsr(1, 4, [1, 2, 3], 1, 7, mzxid=100))
    assert leader(store) == 1
    store.apply_broker_epoch(200)  # its session expired; it registered again
    assert leader(store) == -1
    store.apply_partition_state("t", 0, LeaderAndIsr(1, 5, [1, 2, 3], 1, 8, mzxid=300))
    assert leader(store) == 1


def test_listeners_hear_of_each_change_once(store):
    heard = []
    store.add_topic_listener(lambda name, info: heard.append(info.partitions[0].leader))
    state = LeaderAndIsr(2, 4, [2, 3], 1, 7, mzxid=100)
    store.apply_partition_state("t", 0, state)
    store.apply_partition_state("t", 0, state)
    assert heard == [2]


def test_an_older_reading_never_replaces_a_newer_one(store):
    store.apply_partition_state("t", 0, LeaderAndIsr(2, 5, [2], 1, 8, mzxid=200))
    store.apply_partition_state("t", 0, LeaderAndIsr(3, 4, [3], 1, 7, mzxid=100))
    assert leader(store) == 2


def test_a_topic_created_again_under_its_name_is_a_new_topic(store):
    heard = []
    store.add_topic_listener(lambda name, info: heard.append(None if info is None else info.topic_id))
    store.apply_topic("t", TopicAssignment(uuid.UUID(int=43), {0: [1]}), {})
    assert heard == [None, uuid.UUID(int=43)]


def offline_replicas(store):
    return store.topic("t").partitions[0].offline_replicas


def test_replicas_on_another_brokers_failed_log_dir_are_shown_offline(store):
    store.apply_offline_replicas({3: OfflineReplicas(3, ("/data/a",), frozenset({("t", 0)}))})
    assert offline_replicas(store) == [3]
    store.apply_offline_replicas({})  # broker 3 registered again without it
    assert offline_replicas(store) == []


def test_this_brokers_failed_log_dir_shows_at_once_and_stays(store):
    store.log_dir_failed(1, "/data/a", [("t", 0)])
    assert offline_replicas(store) == [1]
    store.apply_offline_replicas({2: OfflineReplicas(2, ("/data/b",), frozenset({("t", 0)}))})
    assert offline_replicas(store) == [1, 2]
