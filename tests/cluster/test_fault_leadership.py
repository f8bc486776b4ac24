"""Moving a partition's leadership on request (for client tests): the active controller elects the
chosen in-sync replica, and a producer and a consumer group follow the new leader with nothing
lost and nothing duplicated. Asked through `pykbroker faults --move-leader` (the config key
`pykbroker.partition.leader.move` on the controller's broker resource).
"""

import json

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from pykbroker.tools import faults as faults_tool

from .test_failover import ContinuousProducer, GroupConsumer, create_topic, read_everything

LEADER_MOVE = "pykbroker.partition.leader.move"


def move_leader(cluster, topic: str, partition: int, leader: int) -> int:
    """`pykbroker faults --move-leader`; its exit status."""
    argv = ["--bootstrap-server", cluster.bootstrap, "--move-leader", "--topic", topic]
    return faults_tool.main([*argv, "--partition", str(partition), "--leader", str(leader)])


def ask_broker_to_move(cluster, broker_id: int, topic: str, leader: int) -> None:
    move = json.dumps({"topic": topic, "partition": 0, "leader": leader})
    entry = ConfigEntry(LEADER_MOVE, move, incremental_operation=AlterConfigOpType.SET)
    resource = ConfigResource(ResourceType.BROKER, str(broker_id), incremental_configs=[entry])
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.incremental_alter_configs([resource])[resource].result(timeout=30)


def test_clients_follow_a_leadership_move_with_nothing_lost_or_duplicated(all_running, capsys):
    cluster = all_running
    create_topic(cluster, "moving", 1)
    cluster.wait_until(lambda: cluster.isr("moving", 0) == [1, 2, 3], what="a full ISR")
    producer = ContinuousProducer(cluster.bootstrap, "moving").start()
    consumer = GroupConsumer(cluster.bootstrap, "moving", "movers").start()
    cluster.wait_until(lambda: len(producer.acknowledged) > 200, what="records acknowledged")
    old_leader = cluster.leader("moving", 0)
    new_leader = next(b for b in cluster.replicas("moving")[0] if b != old_leader)

    assert move_leader(cluster, "moving", 0, new_leader) == 0
    assert f"Moved the leadership of moving-0 to broker {new_leader}." in capsys.readouterr().out

    assert cluster.leader("moving", 0) == new_leader
    acknowledged_before = len(producer.acknowledged)
    cluster.wait_until(lambda: len(producer.acknowledged) > acknowledged_before + 200, what="writes to the new leader")
    producer.stop()
    cluster.wait_until(
        lambda: {v for _, v in consumer.received} >= producer.acknowledged, timeout=60, what="the group to read it all"
    )
    consumer.stop()

    values = read_everything(cluster.bootstrap, "moving", 1)
    assert len(values) == len(set(values)), "no record is duplicated"
    assert producer.acknowledged <= set(values), "no acknowledged record is missing"
    assert not producer.failed


def test_only_the_active_controller_moves_leadership(all_running):
    cluster = all_running
    create_topic(cluster, "elsewhere", 1)
    other = next(b for b in cluster.running() if b != cluster.controller_id())
    with pytest.raises(KafkaException, match="NOT_CONTROLLER"):
        ask_broker_to_move(cluster, other, "elsewhere", other)


def test_leadership_moves_only_to_a_replica(all_running):
    cluster = all_running
    create_topic(cluster, "nowhere", 1)
    with pytest.raises(KafkaException, match="not a replica"):
        ask_broker_to_move(cluster, cluster.controller_id(), "nowhere", 42)


def test_the_faults_tool_adds_to_every_broker_unless_one_is_named(all_running, capsys):
    cluster = all_running
    common = ["--bootstrap-server", cluster.bootstrap]
    rule = '{"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "count": 1}'
    try:
        assert faults_tool.main([*common, "--add", rule]) == 0
        assert faults_tool.main([*common, "--add", rule, "--broker", "2"]) == 0
        capsys.readouterr()
        assert faults_tool.main([*common, "--list", "--output", "json"]) == 0
        listed = json.loads(capsys.readouterr().out)
        assert sorted((fault["broker"], fault["id"]) for fault in listed) == [(1, 1), (2, 1), (2, 2), (3, 1)]
    finally:
        assert faults_tool.main([*common, "--clear"]) == 0
    capsys.readouterr()
    assert faults_tool.main([*common, "--list"]) == 0
    assert capsys.readouterr().out == "No faults.\n"
