"""The controller when a broker's log directory fails (no broker processes: controllers and broker
registrations made in this process on the tests' ZooKeeper).

A broker whose log dir failed lists its replicas there in `/brokers/offline_replicas/<id>` and
writes Kafka's `/log_dir_event_notification/log_dir_event_<seq>` (`{"version":1,"broker":N,
"event":1}`). The controller then treats those replicas as Kafka's treats replicas on offline dirs:
their leadership moves to another in-sync replica, they leave the ISRs, and they are not elected
until their broker registers again; a new controller keeps it so.
"""
from __future__ import annotations

import json

import pytest

from pykbroker.cluster import zk_data
from pykbroker.cluster.controller.controller import Controller
from pykbroker.cluster.loop_bridge import LoopBridge
from pykbroker.cluster.zk_client import KafkaZkClient
from pykbroker.cluster.zk_data import BrokerRegistration, Endpoint, OfflineReplicas, TopicAssignment
from pykbroker.config.broker import BrokerConfig
from pykbroker.testkit.waiting import wait_until

SESSION_MS = 6000


def zk_client(connect: str) -> KafkaZkClient:
    client = KafkaZkClient(connect, session_timeout_ms=SESSION_MS)
    client.start()
    client.create_top_level_paths()
    return client


def registered(connect: str, broker_id: int) -> KafkaZkClient:
    """A broker's session with its registration (what a broker's metadata store holds)."""
    client = zk_client(connect)
    client.register_broker(BrokerRegistration(broker_id, (Endpoint("PLAINTEXT", "127.0.0.1", 9000 + broker_id),)))
    return client


def started_controller(connect: str, broker_id: int) -> tuple[Controller, KafkaZkClient]:
    client = zk_client(connect)
    config = BrokerConfig({"broker.id": str(broker_id), "log.dirs": "/nonexistent", "zookeeper.connect": connect})
    controller = Controller(client, broker_id, config, LoopBridge())
    controller.startup()
    return controller, client


def stop(controller: Controller, client: KafkaZkClient) -> None:
    controller.shutdown()
    client.close()


@pytest.fixture
def zk_cluster(zookeeper, request):
    """Brokers 1-3 registered, broker 1's controller active, topic `t` created: partition 0 on
    [3, 1, 2] and partition 1 on broker 3 alone, both first led by broker 3."""
    connect = zookeeper.connect_string(f"/{request.node.name}")
    sessions = {broker_id: registered(connect, broker_id) for broker_id in (1, 2, 3)}
    controller = started_controller(connect, 1)
    sessions[1].create_topic_assignment("t", TopicAssignment(None, {0: [3, 1, 2], 1: [3]}))
    view = ZkView(sessions[1])
    view.wait_for("t", 0, leader=3, isr=[3, 1, 2])
    view.wait_for("t", 1, leader=3, isr=[3])
    controllers = [controller]
    yield connect, sessions, controllers, view
    for running in controllers:
        stop(*running)
    for session in sessions.values():
        session.close()


class ZkView:
    def __init__(self, client: KafkaZkClient) -> None:
        self.client = client

    def state(self, topic: str, partition: int):
        return self.client.get_topic_partition_state(topic, partition)

    def wait_for(self, topic: str, partition: int, *, leader: int, isr: list[int]) -> None:
        def reached():
            state = self.state(topic, partition)
            return state is not None and state.leader == leader and state.isr == isr

        wait_until(reached, f"{topic}-{partition} led by {leader} with ISR {isr} (now {self.state(topic, partition)})",
                   timeout=30)


def fail_log_dir(session: KafkaZkClient, broker_id: int, partitions: set[tuple[str, int]]) -> None:
    """What a broker's metadata store writes when its log dir fails."""
    session.set_offline_replicas(OfflineReplicas(broker_id, ("/data/a",), frozenset(partitions)))
    session.propagate_log_dir_event(broker_id)


def test_the_notification_is_kafkas_znode_and_json(zk_cluster):
    _, sessions, _, _ = zk_cluster
    assert zk_data.encode_log_dir_event(3) == b'{"version":1,"broker":3,"event":1}'
    fail_log_dir(sessions[3], 3, set())
    zk = sessions[3]._zk
    wait_until(lambda: zk.get_children(zk_data.LOG_DIR_EVENTS) == [], "the controller consumed the notification",
               timeout=30)
    data, stat = zk.get(zk_data.offline_replicas_path(3))
    assert stat.ephemeralOwner == zk.client_id[0]
    assert json.loads(data) == {"version": 1, "broker": 3, "log_dirs": ["/data/a"], "partitions": []}


def test_offline_replicas_lose_leadership_and_leave_the_isr(zk_cluster):
    _, sessions, _, view = zk_cluster
    fail_log_dir(sessions[3], 3, {("t", 0), ("t", 1)})
    view.wait_for("t", 0, leader=1, isr=[1, 2])
    # the only replica is offline: no leader, the ISR keeps its last member (as for a dead broker)
    view.wait_for("t", 1, leader=-1, isr=[3])


def test_a_replica_on_a_healthy_dir_of_the_same_broker_keeps_its_place(zk_cluster):
    _, sessions, _, view = zk_cluster
    fail_log_dir(sessions[3], 3, {("t", 1)})
    view.wait_for("t", 1, leader=-1, isr=[3])
    assert (view.state("t", 0).leader, view.state("t", 0).isr) == (3, [3, 1, 2])


def test_a_new_controller_keeps_offline_replicas_out_until_their_broker_registers_again(zk_cluster):
    connect, sessions, controllers, view = zk_cluster
    fail_log_dir(sessions[3], 3, {("t", 0), ("t", 1)})
    view.wait_for("t", 0, leader=1, isr=[1, 2])
    view.wait_for("t", 1, leader=-1, isr=[3])

    stop(*controllers.pop())
    controllers.append(started_controller(connect, 2))
    wait_until(lambda: sessions[1].get_controller_id() == 2, "broker 2 is the controller", timeout=30)
    # a topic created now is elected after the new controller looked at every partition
    sessions[1].create_topic_assignment("after_failover", TopicAssignment(None, {0: [1, 2]}))
    view.wait_for("after_failover", 0, leader=1, isr=[1, 2])
    assert (view.state("t", 1).leader, view.state("t", 1).isr) == (-1, [3])

    sessions[3].close()  # broker 3 restarts: a new registration, with its log dir healthy again
    sessions[3] = registered(connect, 3)
    view.wait_for("t", 1, leader=3, isr=[3])
    assert view.state("t", 0).leader == 1


def test_a_restarted_brokers_list_replaces_the_one_its_old_session_left(zookeeper):
    connect = zookeeper.connect_string("/offline_replicas_sessions")
    old, new = zk_client(connect), zk_client(connect)
    try:
        old.set_offline_replicas(OfflineReplicas(3, ("/data/a",), frozenset({("t", 0)})))
        new.set_offline_replicas(OfflineReplicas(3, ("/data/b",), frozenset({("t", 1)})))
        old.close()  # the old session ends: the list written by the new one stays
        assert new.get_offline_replicas() == {3: OfflineReplicas(3, ("/data/b",), frozenset({("t", 1)}))}
        _, stat = new._zk.get(zk_data.offline_replicas_path(3))
        assert stat.ephemeralOwner == new._zk.client_id[0]
    finally:
        old.close()
        new.close()
