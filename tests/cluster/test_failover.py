"""When brokers die, acknowledged records survive, leadership moves to the in-sync replicas, and
the dead broker catches up when it returns.

Topics here have three replicas and `min.insync.replicas=2`.
"""
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch

ProduceRequest = messages.request(ApiKey.PRODUCE).cls


def create_topic(cluster, name: str, partitions: int, **configs) -> None:
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = NewTopic(name, partitions, 3, config={"min.insync.replicas": "2", **configs})
    admin.create_topics([topic])[name].result(timeout=30)
    cluster.wait_for_leaders(name, partitions)


class ContinuousProducer:
    """An idempotent producer with acks=all writing numbered records until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                                  "acks": "all", "linger.ms": 5, "message.timeout.ms": 120000,
                                  "topic.metadata.refresh.interval.ms": 1000})
        self.topic = topic
        self.acknowledged: set[int] = set()
        self.failed: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _on_delivery(self, error, message) -> None:
        if error is None:
            self.acknowledged.add(int(message.value()))
        else:
            self.failed.append(str(error))

    def _run(self) -> None:
        number = 0
        while not self._stop.is_set():
            try:
                self.producer.produce(self.topic, str(number).encode(),
                                      on_delivery=self._on_delivery)
                number += 1
            except BufferError:
                pass
            self.producer.poll(0.002)

    def start(self) -> "ContinuousProducer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self.producer.flush(60)


class GroupConsumer:
    """A consumer group member polling until stopped, noting when each record arrived."""

    def __init__(self, bootstrap: str, topic: str, group: str) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                  "auto.offset.reset": "earliest", "enable.auto.commit": True,
                                  "auto.commit.interval.ms": 500, "session.timeout.ms": 10000,
                                  "topic.metadata.refresh.interval.ms": 1000})
        self.consumer.subscribe([topic])
        self.received: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            message = self.consumer.poll(0.2)
            if message is not None and message.error() is None:
                self.received.append((time.monotonic(), int(message.value())))

    def start(self) -> "GroupConsumer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        self.consumer.close()


def read_everything(bootstrap: str, topic: str, partitions: int) -> list[int]:
    """Every record of the topic, read from the start of each partition to its end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader",
                         "enable.auto.commit": False})
    values = []
    for partition in range(partitions):
        _, end = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=30)
        consumer.assign([TopicPartition(topic, partition, 0)])
        position = 0
        deadline = time.monotonic() + 60
        while position < end and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(int(message.value()))
                position = message.offset() + 1
        assert position >= end, f"could not read {topic}-{partition} to its end {end}"
    consumer.close()
    return values


def produce_once(cluster, broker_id: int, topic: str, acks: int = -1) -> ErrorCode:
    """One batch to partition 0 through the wire; the partition's error code."""
    batch = bytes(build_batch([(None, b"probe", [], int(time.time() * 1000))]))
    request = ProduceRequest(transactional_id=None, acks=acks, timeout_ms=5000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.PartitionProduceData(index=0, records=batch)])])
    with cluster.wire(broker_id) as client:
        response = client.request(ApiKey.PRODUCE, 9, request)
    return ErrorCode(response.responses[0].partition_responses[0].error_code)


def test_acknowledged_records_survive_the_leaders_death(all_running):
    cluster = all_running
    create_topic(cluster, "orders", 3)
    producer = ContinuousProducer(cluster.bootstrap, "orders").start()
    consumer = GroupConsumer(cluster.bootstrap, "orders", "order-readers").start()
    cluster.wait_until(lambda: len(producer.acknowledged) > 300, what="records acknowledged")
    victim = cluster.leader("orders", 0)
    cluster.kill(victim)
    killed_at = time.monotonic()
    cluster.wait_for_leaders("orders", 3, exclude={victim})
    acknowledged_before = len(producer.acknowledged)
    cluster.wait_until(lambda: len(producer.acknowledged) > acknowledged_before + 300,
                       what="records acknowledged by the new leaders")
    producer.stop()
    cluster.wait_until(lambda: any(at > killed_at for at, _ in consumer.received) and
                       len({v for _, v in consumer.received}) >= len(producer.acknowledged),
                       timeout=60, what="the group to consume everything")
    consumer.stop()

    values = read_everything(cluster.bootstrap, "orders", 3)
    assert len(values) == len(set(values)), "no record is duplicated"
    assert producer.acknowledged <= set(values), "no acknowledged record is missing"
    assert not producer.failed

    cluster.restart(victim)  # it catches up and is in sync again everywhere
    cluster.wait_until(lambda: all(cluster.isr("orders", p) == [1, 2, 3] for p in range(3)),
                       what="the restarted broker back in every ISR")


def test_a_killed_broker_returns_truncates_its_divergent_tail_and_rejoins_the_isr(all_running):
    cluster = all_running
    create_topic(cluster, "ledger", 1, **{"min.insync.replicas": "1"})
    leader = cluster.leader("ledger", 0)
    followers = [b for b in cluster.running() if b != leader]
    assert produce_once(cluster, leader, "ledger") == ErrorCode.NONE
    # The followers stop fetching for a moment (their parked fetches answered empty), the
    # leader takes records only it has, and dies.
    for follower in followers:
        cluster.brokers[follower].pause()
    time.sleep(0.5)
    try:
        for _ in range(5):
            assert produce_once(cluster, leader, "ledger", acks=1) == ErrorCode.NONE
    finally:
        cluster.kill(leader)
        for follower in followers:
            cluster.brokers[follower].resume()
    new_leader = cluster.wait_for_leaders("ledger", 1, exclude={leader})[0]
    assert produce_once(cluster, new_leader, "ledger") == ErrorCode.NONE

    cluster.restart(leader)
    cluster.wait_until(lambda: cluster.isr("ledger", 0) == [1, 2, 3], what="the full ISR")
    assert "Truncating ledger-0" in cluster.brokers[leader].log_text()
    # The records only the dead leader had are gone: every log ends where the new leader's does.
    assert {b: end_offset(cluster, b, "ledger") for b in (1, 2, 3)} == {1: 2, 2: 2, 3: 2}


def end_offset(cluster, broker_id: int, topic: str) -> int:
    """The log end offset of partition 0 on `broker_id` (ListOffsets as the debugging replica)."""
    request_type = messages.request(ApiKey.LIST_OFFSETS).cls
    request = request_type(replica_id=-2, isolation_level=0, topics=[
        request_type.ListOffsetsTopic(name=topic, partitions=[
            request_type.ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    with cluster.wire(broker_id) as client:
        response = client.request(ApiKey.LIST_OFFSETS, 4, request)
    return response.topics[0].partitions[0].offset


def test_with_two_of_three_brokers_down_acks_all_is_refused_until_one_returns(all_running):
    cluster = all_running
    create_topic(cluster, "payments", 1)
    survivor = cluster.leader("payments", 0)
    others = [b for b in cluster.running() if b != survivor]
    for broker_id in others:
        cluster.shut_down(broker_id)
    cluster.wait_until(lambda: cluster.isr("payments", 0) == [survivor], what="ISR of one")
    cluster.wait_until(lambda: produce_once(cluster, survivor, "payments")
                       == ErrorCode.NOT_ENOUGH_REPLICAS, what="NOT_ENOUGH_REPLICAS")

    cluster.restart(others[0])
    cluster.wait_until(lambda: len(cluster.isr("payments", 0)) == 2, what="an ISR of two")
    cluster.wait_until(lambda: produce_once(cluster, survivor, "payments") == ErrorCode.NONE,
                       what="acks=all to succeed again")


def test_a_new_controller_takes_over_when_the_controller_dies(all_running):
    cluster = all_running
    create_topic(cluster, "control", 3)
    controller = cluster.controller_id()
    epoch = int(cluster.zk.get("/controller_epoch")[0])
    led = [p for p in range(3) if cluster.leader("control", p) == controller]
    cluster.kill(controller)
    cluster.wait_until(lambda: cluster.controller_id() not in (-1, controller),
                       what="another controller")
    assert int(cluster.zk.get("/controller_epoch")[0]) > epoch
    leaders = cluster.wait_for_leaders("control", 3, exclude={controller})
    assert all(leaders[p] != controller for p in led)
    assert all(cluster.state("control", p)["controller_epoch"] > epoch for p in led)
