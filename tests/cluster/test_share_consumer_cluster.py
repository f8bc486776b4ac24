"""Share groups across a leader failover, with `confluent_kafka.ShareConsumer` on a three-broker
cluster (KIP-932): a share consumer accepts some records and releases others (explicit
acknowledgement), takes the released ones again and holds them; then the broker leading the
topic partition (the share-partition leader) is killed with kill -9. The group is chosen so that
the same broker leads the `__share_group_state` partition of the share-partition's key: the
share coordinator fails over too. The new leader loads the state from the new share coordinator:
what was accepted is never delivered again, what was in flight is delivered again, and records
produced afterwards are delivered as well.

The topic and `__share_group_state` have three replicas and min.insync.replicas 2.
"""
from __future__ import annotations

import time

from confluent_kafka import AcknowledgeType, ShareConsumer
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

from pykbroker.coordinator.share.shard import SharePartitionKey
from pykbroker.coordinator.share.state_topic import SHARE_GROUP_STATE_TOPIC, partition_for
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey

from ..client_helpers import produce_all

STATE_PARTITIONS = 3
CLUSTER_OPTIONS = {"overrides": {
    "group.coordinator.rebalance.protocols": "classic,consumer,share",
    "share.coordinator.state.topic.num.partitions": str(STATE_PARTITIONS),
    "share.coordinator.state.topic.replication.factor": "3",
    "share.coordinator.state.topic.min.isr": "2",
    "min.insync.replicas": "2",
    "group.share.record.lock.duration.ms": "2000",
}}
TOPIC = "share-failover"
LOCK_MS = 2000
ACCEPTED = range(0, 6)
RELEASED = range(6, 10)
LATER = range(10, 14)

FindCoordinator = messages.request(ApiKey.FIND_COORDINATOR).cls
SHARE_KEY_TYPE = 2


def create_share_state_topic(cluster, key: str) -> None:
    """FindCoordinator of key type SHARE creates `__share_group_state` (COORDINATOR_NOT_AVAILABLE
    until it is led)."""
    def found() -> bool:
        with cluster.wire(1) as client:
            response = client.request(ApiKey.FIND_COORDINATOR, 6, FindCoordinator(
                key_type=SHARE_KEY_TYPE, coordinator_keys=[key]))
        return response.coordinators[0].error_code == 0

    cluster.wait_until(found, what="__share_group_state")
    cluster.wait_for_leaders(SHARE_GROUP_STATE_TOPIC, STATE_PARTITIONS)


def group_coordinated_by(cluster, broker_id: int, topic_id) -> str:
    """A share group whose key (partition 0 of the topic) lives on `broker_id`'s share coordinator."""
    for index in range(1000):
        group = f"share-failover-group-{index}"
        key = SharePartitionKey(group, topic_id, 0).coordinator_key()
        if cluster.leader(SHARE_GROUP_STATE_TOPIC, partition_for(key, STATE_PARTITIONS)) == broker_id:
            return group
    raise AssertionError(f"no share-partition key led by broker {broker_id}")


def configure_group(bootstrap: str, group: str) -> None:
    """The group reads from the earliest offset (its record lock is the brokers' short one)."""
    configs = {"share.auto.offset.reset": "earliest"}
    resource = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[
        ConfigEntry(key, value, incremental_operation=AlterConfigOpType.SET) for key, value in configs.items()])
    admin = AdminClient({"bootstrap.servers": bootstrap})
    next(iter(admin.incremental_alter_configs([resource]).values())).result(timeout=30)


def poll_until(share: ShareConsumer, condition, what: str, *, seen: list[int], acknowledge=None,
               timeout: float = 90.0) -> list:
    """Poll until `condition(collected)` holds; every offset delivered goes to `seen` too. With
    `acknowledge` (message -> AcknowledgeType) what a poll gives is acknowledged before the next
    poll (explicit mode requires it); without, a second poll is refused while records are held."""
    collected: list = []
    deadline = time.monotonic() + timeout
    while not condition(collected):
        assert time.monotonic() < deadline, f"timed out waiting for {what}; got {sorted(seen)}"
        got = [m for m in share.poll(1.0) if m.error() is None]
        seen += [m.offset() for m in got]
        collected += got
        for message in got if acknowledge is not None else ():
            share.acknowledge(message, acknowledge(message))
    return collected


def offsets(messages_) -> set[int]:
    return {m.offset() for m in messages_}


def test_after_the_share_partition_leader_is_killed_accepted_records_stay_accepted_and_the_rest_come_again(
        cluster, all_running):
    cluster.create_topic(TOPIC, partitions=1, replication_factor=3)
    leader = cluster.wait_for_leaders(TOPIC, 1)[0]
    topic_id = cluster.metadata(leader, [TOPIC]).topics[0].topic_id
    create_share_state_topic(cluster, SharePartitionKey("any", topic_id, 0).coordinator_key())
    group = group_coordinated_by(cluster, leader, topic_id)
    configure_group(cluster.bootstrap, group)
    produce_all(cluster.bootstrap, TOPIC, [(0, None, f"v{i}".encode()) for i in range(10)], linger_ms=0)

    holder, reader = share_consumer(cluster.bootstrap, group), share_consumer(cluster.bootstrap, group)
    delivered: list[int] = []
    try:
        holder.subscribe([TOPIC])
        poll_until(holder, lambda got: offsets(got) >= set(range(10)), "the first delivery", seen=delivered,
                   acknowledge=accept_or_release)
        holder.commit_sync()  # written to the share coordinator before it is answered
        acknowledged_at = len(delivered)
        again = poll_until(holder, lambda got: offsets(got) >= set(RELEASED), "the released records",
                           seen=delivered)
        assert offsets(again) == set(RELEASED)  # in flight: the holder polls no more, acknowledges nothing

        cluster.kill(leader)
        cluster.wait_for_leaders(TOPIC, 1, exclude={leader}, timeout=60)
        cluster.wait_for_leaders(SHARE_GROUP_STATE_TOPIC, STATE_PARTITIONS, exclude={leader}, timeout=60)
        produce_all(cluster.bootstrap, TOPIC, [(0, None, f"v{i}".encode()) for i in LATER], linger_ms=0)

        reader.subscribe([TOPIC])
        after = poll_until(reader, lambda got: offsets(got) >= set(RELEASED) | set(LATER),
                           "the records not acknowledged, from the new leader", seen=delivered, acknowledge=accept)
        assert all(m.delivery_count() >= 2 for m in after if m.offset() in RELEASED)
        reader.commit_sync()
        deadline = time.monotonic() + 2 * LOCK_MS / 1000
        poll_until(reader, lambda got: time.monotonic() > deadline, "the lock duration", seen=delivered,
                   acknowledge=accept)
        redelivered = delivered[acknowledged_at:]
        assert not set(ACCEPTED) & set(redelivered), f"accepted records delivered again: {redelivered}"
    finally:
        reader.close()
        holder.close()


def accept_or_release(message) -> AcknowledgeType:
    return AcknowledgeType.ACCEPT if message.offset() in ACCEPTED else AcknowledgeType.RELEASE


def accept(message) -> AcknowledgeType:
    return AcknowledgeType.ACCEPT


def share_consumer(bootstrap: str, group: str) -> ShareConsumer:
    return ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                          "share.acknowledgement.mode": "explicit"})
