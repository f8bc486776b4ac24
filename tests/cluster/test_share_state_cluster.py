"""The share coordinator in a three-broker cluster (KIP-932): the Persister of one broker reaches
the share coordinator of a key on another broker (the leader of the key's `__share_group_state`
partition) over the inter-broker listener, and the state it wrote survives the death of that
broker, once another replica leads the partition and has loaded it.

Brokers 1 and 2 are processes of the shared harness; broker 3 is embedded in the test process, so
that the test calls its Persister (`Broker.share_persister`) as the broker's share-partitions do.
`__share_group_state` has three replicas and min.insync.replicas 2, as Kafka's defaults.
"""
from __future__ import annotations

import pytest

from pykbroker.coordinator.share import PersisterStateBatch
from pykbroker.coordinator.share.shard import SharePartitionKey
from pykbroker.coordinator.share.state_topic import SHARE_GROUP_STATE_TOPIC, partition_for
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.embedded import EmbeddedBroker

from .harness import FAST_CLUSTER, Cluster

STATE_PARTITIONS = 3
SHARE_SETTINGS = {
    "share.coordinator.state.topic.num.partitions": str(STATE_PARTITIONS),
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
    "min.insync.replicas": "2",
}
TOPIC = "share-state-cluster"
ACKNOWLEDGED = 2
EMBEDDED_ID = 3


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    """Brokers 1 and 2 as processes, broker 3 embedded here; all on one ZooKeeper chroot."""
    running = Cluster(tmp_path_factory.mktemp("share-state"), zookeeper, chroot="/share-state", size=2,
                      overrides=SHARE_SETTINGS).start()
    embedded = EmbeddedBroker({**FAST_CLUSTER, **SHARE_SETTINGS, "zookeeper.connect": running.connect},
                              broker_id=EMBEDDED_ID)
    try:
        embedded.start()
        running.wait_until(lambda: running.live_broker_ids() == [1, 2, EMBEDDED_ID], what="three brokers")
        # Registered in ZooKeeper is not yet known to every broker: a topic of replication factor
        # 3 needs the answering broker to see all three.
        running.wait_until(lambda: all(len(running.metadata(broker, []).brokers) == 3 for broker in (1, 2)),
                           what="three brokers in every broker's metadata")
        running.embedded = embedded
        yield running
    finally:
        embedded.stop()
        running.stop()


def wait_for_state_topic_leaders(cluster, exclude=frozenset(), timeout=40.0) -> dict[int, int]:
    """Every `__share_group_state` partition led by a broker outside `exclude`, in ZooKeeper and
    as the embedded broker sees it."""
    def led():
        leaders = {p: cluster.leader(SHARE_GROUP_STATE_TOPIC, p) for p in range(STATE_PARTITIONS)}
        if any(leader < 0 or leader in exclude for leader in leaders.values()):
            return None
        info = cluster.embedded.broker.metadata.topic(SHARE_GROUP_STATE_TOPIC)
        seen = {} if info is None else {p: state.leader for p, state in info.partitions.items()}
        return leaders if seen == leaders else None
    return cluster.wait_until(led, what="leaders of __share_group_state", timeout=timeout)


def persister_call(cluster, method: str, *args):
    embedded = cluster.embedded
    return embedded.call_async(getattr(embedded.broker.share_persister, method), *args)


def group_coordinated_by_another_broker(cluster, topic_id) -> tuple[str, int]:
    """A group whose key (partition 0 of the topic) is coordinated by broker 1 or 2."""
    for index in range(1000):
        group = f"share-group-{index}"
        key = SharePartitionKey(group, topic_id, 0).coordinator_key()
        leader = cluster.leader(SHARE_GROUP_STATE_TOPIC, partition_for(key, STATE_PARTITIONS))
        if leader in (1, 2):
            return group, leader
    raise AssertionError("no key led by a broker process")


def test_the_persister_writes_to_the_share_coordinator_of_another_broker_and_failover_keeps_it(cluster):
    cluster.create_topic(TOPIC, partitions=1, replication_factor=3)
    topic_id = cluster.embedded.broker.metadata.topic(TOPIC).topic_id
    # the first call finds no __share_group_state: FindCoordinator (key type SHARE) creates it
    assert persister_call(cluster, "initialize_state", "share-group-0", topic_id, 0, 0, -1) in (
        ErrorCode.NONE, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    wait_for_state_topic_leaders(cluster)
    group, coordinator = group_coordinated_by_another_broker(cluster, topic_id)

    assert persister_call(cluster, "initialize_state", group, topic_id, 0, 1, -1) == ErrorCode.NONE
    batches = [PersisterStateBatch(0, 4, ACKNOWLEDGED, 1)]
    assert persister_call(cluster, "write_state", group, topic_id, 0, 1, 5, 0, batches) == ErrorCode.NONE
    more = [PersisterStateBatch(5, 9, ACKNOWLEDGED, 1)]
    assert persister_call(cluster, "write_state", group, topic_id, 0, 1, 5, -1, more) == ErrorCode.NONE
    state = persister_call(cluster, "read_state", group, topic_id, 0, 5)
    assert (state.error, state.state_epoch, state.start_offset, state.batches) == (
        ErrorCode.NONE, 1, 0, (PersisterStateBatch(0, 9, ACKNOWLEDGED, 1),))
    assert persister_call(cluster, "write_state", group, topic_id, 0, 1, 4, -1, []) == ErrorCode.FENCED_LEADER_EPOCH

    cluster.kill(coordinator)
    try:
        wait_for_state_topic_leaders(cluster, exclude={coordinator}, timeout=60)
        after = persister_call(cluster, "read_state", group, topic_id, 0, 6)
        assert (after.error, after.state_epoch, after.start_offset, after.batches) == (
            ErrorCode.NONE, 1, 0, (PersisterStateBatch(0, 9, ACKNOWLEDGED, 1),))
        summary = persister_call(cluster, "read_summary", group, topic_id, 0, -1)
        assert (summary.error, summary.state_epoch, summary.start_offset) == (ErrorCode.NONE, 1, 0)
    finally:
        cluster.restart(coordinator)
