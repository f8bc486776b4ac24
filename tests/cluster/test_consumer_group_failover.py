"""A consumer group (KIP-848) outlives its coordinator: the broker leading the group's
`__consumer_offsets` partition is killed; the broker that takes the partition over loads the
group's records and answers the member's next heartbeat with the same epoch and assignment."""
from __future__ import annotations

import time
import uuid

from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode

CLUSTER_OPTIONS = {"overrides": {
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "3",
    "min.insync.replicas": "2",
    "group.consumer.min.session.timeout.ms": "2000",
    "group.consumer.session.timeout.ms": "60000",
    "group.consumer.max.session.timeout.ms": "60000",
}}
GROUP = "failover-group"
RETRY = {ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
Heartbeat = messages.request(ApiKey.CONSUMER_GROUP_HEARTBEAT).cls
FindCoordinator = messages.request(ApiKey.FIND_COORDINATOR).cls


def coordinator_of(cluster, group):
    deadline = time.time() + 120
    while time.time() < deadline:
        for broker_id in cluster.running():
            try:
                with cluster.wire(broker_id) as client:
                    answer = client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(key=group, key_type=0))
            except OSError:
                continue
            if answer.error_code == 0 and answer.node_id in cluster.running():
                return answer.node_id
        time.sleep(0.2)
    raise AssertionError("no coordinator")


def heartbeat_until_served(cluster, body):
    deadline = time.time() + 120
    while True:
        broker_id = coordinator_of(cluster, GROUP)
        try:
            with cluster.wire(broker_id) as client:
                answer = client.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, body)
        except OSError:
            answer = None
        if answer is not None and answer.error_code not in RETRY or time.time() > deadline:
            return broker_id, answer
        time.sleep(0.2)


def test_the_group_resumes_on_the_next_coordinator_with_its_epoch_and_assignment(all_running):
    cluster = all_running
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic("failover-cg", 3, 3)])["failover-cg"].result()
    member_id = str(uuid.uuid4())
    coordinator, joined = heartbeat_until_served(cluster, Heartbeat(
        group_id=GROUP, member_id=member_id, member_epoch=0, rebalance_timeout_ms=30000,
        subscribed_topic_names=["failover-cg"], topic_partitions=[]))
    assert joined.error_code == 0 and joined.member_epoch == 1
    owned = [Heartbeat.TopicPartitions(topic_id=tp.topic_id, partitions=tp.partitions)
             for tp in joined.assignment.topic_partitions]
    assert sorted(p for tp in owned for p in tp.partitions) == [0, 1, 2]
    cluster.kill(coordinator)
    successor, again = heartbeat_until_served(cluster, Heartbeat(
        group_id=GROUP, member_id=member_id, member_epoch=1, rebalance_timeout_ms=30000,
        subscribed_topic_names=["failover-cg"], topic_partitions=owned))
    assert successor != coordinator
    assert again.error_code == 0 and again.member_epoch == 1
    assert sorted(p for tp in again.assignment.topic_partitions for p in tp.partitions) == [0, 1, 2]
