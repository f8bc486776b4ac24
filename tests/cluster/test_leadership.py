"""Leadership moves on purpose: controlled shutdown, preferred leader election, the group
coordinator following `__consumer_offsets`, and a broker whose ZooKeeper session expired."""
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode

ElectLeadersRequest = messages.request(ApiKey.ELECT_LEADERS).cls
ControlledShutdownRequest = messages.request(ApiKey.CONTROLLED_SHUTDOWN).cls
OffsetForLeaderEpochRequest = messages.request(ApiKey.OFFSET_FOR_LEADER_EPOCH).cls
PREFERRED = 0


def create_topic(cluster, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    admin.create_topics([NewTopic(name, partitions, 3)])[name].result(timeout=30)
    cluster.wait_for_leaders(name, partitions)


def produce(cluster, topic: str, count: int, start: int = 0) -> None:
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all",
                         "enable.idempotence": True})
    for number in range(start, start + count):
        producer.produce(topic, str(number).encode())
    assert producer.flush(60) == 0


def led_by(cluster, broker_id: int) -> list[tuple[str, int]]:
    return [(topic, p) for topic in cluster.zk.get_children("/brokers/topics")
            for p in cluster.replicas(topic) if cluster.leader(topic, p) == broker_id]


def test_controlled_shutdown_moves_leadership_before_the_broker_exits(all_running):
    cluster = all_running
    create_topic(cluster, "moving", 6)
    victim = next(b for b in cluster.running() if b != cluster.controller_id())
    moved = [tp for tp in led_by(cluster, victim) if tp[0] == "moving"]
    epochs = {tp: cluster.state(*tp)["leader_epoch"] for tp in moved}
    assert moved

    assert cluster.shut_down(victim) == 0
    log = cluster.brokers[victim].log_text()
    assert "Controlled shutdown succeeded" in log
    assert log.index("Controlled shutdown succeeded") < log.index(f"Broker {victim} stopped")
    for tp in moved:  # new leaders, elected by the controller, not after a session timeout
        state = cluster.state(*tp)
        assert state["leader"] != victim and victim not in state["isr"]
        assert state["leader_epoch"] == epochs[tp] + 1


def test_controlled_shutdown_is_refused_by_a_broker_that_is_not_the_controller(all_running):
    cluster = all_running
    other = next(b for b in cluster.running() if b != cluster.controller_id())
    with cluster.wire(other) as client:
        response = client.request(ApiKey.CONTROLLED_SHUTDOWN, 3,
                                  ControlledShutdownRequest(broker_id=other, broker_epoch=-1))
    assert response.error_code == ErrorCode.NOT_CONTROLLER


def test_preferred_leader_election_gives_leadership_back_to_the_first_replicas(all_running):
    cluster = all_running
    create_topic(cluster, "preferred", 3)
    cluster.restart(cluster.leader("preferred", 0))  # its leaderships move away
    cluster.wait_until(lambda: any(cluster.leader("preferred", p) != r[0]
                                   for p, r in cluster.replicas("preferred").items()),
                       what="a partition led by a replica that is not the preferred one")
    cluster.wait_until(lambda: all(len(cluster.isr("preferred", p)) == 3 for p in range(3)),
                       what="full ISRs")

    request = ElectLeadersRequest(election_type=PREFERRED, timeout_ms=30000, topic_partitions=[
        ElectLeadersRequest.TopicPartitions(topic="preferred", partitions=[0, 1, 2])])
    with cluster.wire(cluster.controller_id()) as client:
        response = client.request(ApiKey.ELECT_LEADERS, 2, request)
    codes = {r.partition_id: r.error_code for r in response.replica_election_results[0]
             .partition_result}
    assert set(codes.values()) <= {ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED}
    assert ErrorCode.NONE in codes.values()
    assert all(cluster.leader("preferred", p) == r[0]
               for p, r in cluster.replicas("preferred").items())


def test_offset_for_leader_epoch_answers_where_each_epoch_ended(all_running):
    cluster = all_running
    create_topic(cluster, "epochs", 1)
    produce(cluster, "epochs", 3)
    first_leader = cluster.leader("epochs", 0)
    cluster.shut_down(first_leader)
    leader = cluster.wait_for_leaders("epochs", 1, exclude={first_leader})[0]
    produce(cluster, "epochs", 2, start=3)
    request = OffsetForLeaderEpochRequest(replica_id=-1, topics=[
        OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic="epochs", partitions=[
            OffsetForLeaderEpochRequest.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=-1, leader_epoch=0)])])
    with cluster.wire(leader) as client:
        answer = client.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, request).topics[0].partitions[0]
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (0, 0, 3)


def test_committed_offsets_survive_the_death_of_the_group_coordinator(all_running):
    cluster = all_running
    create_topic(cluster, "tasks", 1)
    produce(cluster, "tasks", 10)
    settings = {"bootstrap.servers": cluster.bootstrap, "group.id": "workers",
                "auto.offset.reset": "earliest", "enable.auto.commit": False}
    consumer = Consumer(settings)
    consumer.assign([TopicPartition("tasks", 0, 0)])
    seen = []
    deadline = time.monotonic() + 30
    while len(seen) < 6 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            seen.append(message.offset())
    consumer.commit(offsets=[TopicPartition("tasks", 0, 6)], asynchronous=False)
    consumer.close()

    coordinator = _coordinator_of(cluster, "workers")
    cluster.kill(coordinator)
    resumed = Consumer({**settings, "bootstrap.servers": cluster.bootstrap})
    committed = cluster.wait_until(lambda: _committed(resumed, "tasks"), timeout=60,
                                   what="the committed offset from the new coordinator")
    resumed.close()
    assert committed == 6


def _coordinator_of(cluster, group: str) -> int:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    described = admin.describe_consumer_groups([group])[group].result(timeout=30)
    return described.coordinator.id


def _committed(consumer, topic: str):
    try:
        offsets = consumer.committed([TopicPartition(topic, 0)], timeout=5)
    except Exception:
        return None
    return offsets[0].offset if offsets[0].offset >= 0 else None


def test_a_broker_whose_session_expired_registers_again_and_catches_up(all_running):
    cluster = all_running
    create_topic(cluster, "pauses", 1)
    victim = next(b for b in cluster.running() if b != cluster.controller_id())
    first_epoch = cluster.zk.exists(f"/brokers/ids/{victim}").czxid
    cluster.brokers[victim].pause()
    try:
        cluster.wait_until(lambda: victim not in cluster.live_broker_ids(), timeout=30,
                           what="ZooKeeper to expire the paused broker's session")
        produce(cluster, "pauses", 5)
    finally:
        cluster.brokers[victim].resume()
    cluster.wait_until(lambda: victim in cluster.live_broker_ids(), what="registration again")
    assert cluster.zk.exists(f"/brokers/ids/{victim}").czxid > first_epoch
    cluster.wait_until(lambda: cluster.isr("pauses", 0) == [1, 2, 3], what="back in the ISR")
