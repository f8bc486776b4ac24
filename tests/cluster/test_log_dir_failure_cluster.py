"""Acceptance: a full disk on one broker of three. Broker 3 keeps its log in two directories
(JBOD): one on a small tmpfs of its own (mounted in a private mount namespace that the broker
runs in), one on the ordinary disk. An acks=all producer (idempotent) writes 10 KB records to a
topic with three replicas and `min.insync.replicas=2` that broker 3 leads, until the tmpfs is
full:

- the tmpfs directory goes offline on broker 3, which says so in ZooKeeper (Kafka's
  `/log_dir_event_notification`); the partitions that were on it are led by another in-sync
  replica within seconds, broker 3 leaves their ISRs, and every broker's Metadata lists broker 3
  among their `offline_replicas`; broker 3 keeps leading the partitions in its healthy directory;
- the producer keeps delivering, and every acknowledged record can be read back;
- once the operator gives the tmpfs more room and restarts broker 3, it recovers its directory
  and rejoins every ISR, and every acknowledged record is still there, once.

What is asserted is what clients see (Metadata from every broker, the records), and it holds on
Kafka 3.9.0 too: `LOG_DIR_TARGETS=pykbroker,kafka` runs the same test on three Kafka brokers
(cluster.sh; broker 3 started again inside the mount namespace with the tmpfs as a second log
dir), which takes two more minutes. Needs root (mount namespaces), as CI has.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from compat import realkafka
from pykbroker.testkit.wire import metadata
from tests.ci import skip_or_fail_in_ci
from tests.disk.namespace import MountNamespace, skip_without_namespaces

from .harness import Cluster

TOPIC = "orders"
PARTITIONS = 4
RECORD_BYTES = 10_000
BROKERS = (1, 2, 3)
SMALL = "3m"  # the tmpfs: full after a few hundred records
ROOMY = "64m"  # after the operator gave it room
ROUND = 40  # records sent between looks at Metadata
MAX_RECORDS = 4000  # the tmpfs must be full long before


class SmallDisk:
    """A tmpfs of `size` at `path` in a mount namespace of its own (tests/disk's): `command(argv)`
    runs argv inside it (the broker's data stays there across its restarts), `grow(size)` gives it
    more room, as an operator would."""

    def __init__(self, path, size: str) -> None:
        self.path = str(path)
        self.namespace = MountNamespace()
        self.namespace.mount_tmpfs(self.path, size)

    def command(self, argv: list[str]) -> list[str]:
        return self.namespace.command(argv)

    def grow(self, size: str) -> None:
        self.namespace.run("mount", "-o", f"remount,size={size}", self.path)

    def entries(self) -> list[str]:
        """What the tmpfs holds, seen from outside the namespace."""
        return os.listdir(self.namespace.host_path(self.path))

    def close(self) -> None:
        self.namespace.close()


class ClusterWithSmallDisk(Cluster):
    """Three pykbrokers; broker 3 runs inside the small disk's mount namespace, its log dirs the
    tmpfs first and an ordinary directory second."""

    def __init__(self, directory, zookeeper, disk: SmallDisk) -> None:
        super().__init__(directory, zookeeper, chroot="/log_dir_failure_cluster")
        self.one_at_a_time = False  # which broker becomes the controller does not matter here
        self.disk = disk
        self.broker_overrides[3] = {"log.dirs": f"{disk.path},{directory}/broker-3/kafka-logs"}

    def _broker(self, broker_id: int):
        broker = super()._broker(broker_id)
        if broker_id == 3:
            broker.command = self.disk.command([sys.executable, "-m", "pykbroker"])
        return broker

    def address(self, broker_id: int) -> str:
        return self.brokers[broker_id].bootstrap

    def restart_broker_3_with_room(self) -> None:
        assert self.shut_down(3) == 0
        self.disk.grow(ROOMY)
        self.restart(3)


class KafkaClusterWithSmallDisk(realkafka.KafkaCluster):
    """Three Kafka 3.9.0 brokers (cluster.sh); broker 3 is started again inside the small disk's
    mount namespace with the tmpfs as its first log dir."""

    def __init__(self, directory, disk: SmallDisk) -> None:
        super().__init__(directory)
        self.disk = disk

    def start(self) -> KafkaClusterWithSmallDisk:
        super().start()
        try:
            self.script("stop-broker", "3")
            properties = self.server_properties(3)
            own = properties.parent / "kafka-logs"
            properties.write_text(properties.read_text() + f"log.dirs={self.disk.path},{own}\n")
            self._start_broker_3()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_broker_3(self) -> None:
        assert self.script is not None
        argv = self.disk.command(["bash", str(self.script.path), "start-broker", "3"])
        with open(self.script.log_path, "a") as log:
            subprocess.run(argv, env=self.script.env, check=True, timeout=240, stdout=log, stderr=subprocess.STDOUT)

    def address(self, broker_id: int) -> str:
        return f"127.0.0.1:{self.base + broker_id}"

    def restart_broker_3_with_room(self) -> None:
        assert self.script is not None
        self.script("stop-broker", "3")
        self.disk.grow(ROOMY)
        self._start_broker_3()


def target_names() -> list[str]:
    return os.environ.get("LOG_DIR_TARGETS", "pykbroker").split(",")


@pytest.fixture(scope="module", params=target_names())
def cluster(request, tmp_path_factory):
    """Three brokers, the third with a log dir on its own small tmpfs: pykbroker's or Kafka's."""
    skip_without_namespaces()
    disk = SmallDisk(tmp_path_factory.mktemp("small-disk") / "logs", SMALL)
    try:
        if request.param == "kafka":
            reason = realkafka.unavailable()
            if reason:
                skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
            with KafkaClusterWithSmallDisk(tmp_path_factory.mktemp("kafka-cluster"), disk) as running:
                yield running
        else:
            zookeeper = request.getfixturevalue("zookeeper")
            running = ClusterWithSmallDisk(tmp_path_factory.mktemp("log_dir_failure_cluster"), zookeeper, disk).start()
            try:
                yield running
            finally:
                running.stop()
    finally:
        disk.close()


class NumberedProducer:
    """acks=all, idempotent: record n is `n` in eight digits, padded to RECORD_BYTES."""

    def __init__(self, bootstrap: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all",
                                  "linger.ms": 5, "message.timeout.ms": 90000,
                                  "topic.metadata.refresh.interval.ms": 1000})
        self.sent = 0
        self.acknowledged: set[int] = set()
        self.failed: list[str] = []

    def _on_delivery(self, error, message) -> None:
        if error is None:
            self.acknowledged.add(int(message.value()[:8]))
        else:
            self.failed.append(str(error))

    def send(self, count: int) -> None:
        for _ in range(count):
            value = f"{self.sent:08d}".encode().ljust(RECORD_BYTES, b".")
            self.producer.produce(TOPIC, value, partition=self.sent % PARTITIONS, on_delivery=self._on_delivery)
            self.sent += 1
            self.producer.poll(0)

    def flush(self) -> None:
        assert self.producer.flush(120) == 0, "every record answered"


def record_numbers(cluster) -> list[int]:
    """The number of every record in the topic, read from the start of each partition to its end."""
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "reader", "enable.auto.commit": False})
    numbers = []
    for partition in range(PARTITIONS):
        _, end = consumer.get_watermark_offsets(TopicPartition(TOPIC, partition), timeout=30)
        consumer.assign([TopicPartition(TOPIC, partition, 0)])
        position, deadline = 0, time.monotonic() + 60
        while position < end and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                numbers.append(int(message.value()[:8]))
                position = message.offset() + 1
        assert position >= end, f"could not read {TOPIC}-{partition} to its end {end}"
    consumer.close()
    return numbers


def partitions_seen(cluster, broker_id: int) -> dict[int, tuple[int, list[int], list[int]]]:
    """{partition: (leader, ISR, offline replicas)} in broker `broker_id`'s Metadata."""
    try:
        topic = metadata(cluster.address(broker_id), [TOPIC], timeout=5).topics[0]
    except (OSError, EOFError):
        return {}
    return {p.partition_index: (p.leader_id, sorted(p.isr_nodes), sorted(p.offline_replicas))
            for p in topic.partitions}


def seen_by_all(cluster, check) -> bool:
    """`check(partition, leader, isr, offline)` holds for every partition in every broker's Metadata."""
    for broker_id in BROKERS:
        seen = partitions_seen(cluster, broker_id)
        if len(seen) != PARTITIONS or not all(check(p, *state) for p, state in seen.items()):
            return False
    return True


def wait_until(condition, what: str, timeout: float = 60.0) -> None:
    Cluster.wait_until(condition, what=what, timeout=timeout, interval=0.25)


def test_a_full_log_dir_moves_its_partitions_elsewhere_and_the_broker_catches_up_after_a_restart(cluster):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = NewTopic(TOPIC, PARTITIONS, replica_assignment=[[3, 1, 2]] * PARTITIONS,
                     config={"min.insync.replicas": "2"})
    admin.create_topics([topic])[TOPIC].result(timeout=30)
    wait_until(lambda: seen_by_all(cluster, lambda p, leader, isr, offline: leader == 3 and isr == [1, 2, 3]),
               what="every partition led by broker 3 with a full ISR")
    on_tmpfs = sorted(int(e.rsplit("-", 1)[1]) for e in cluster.disk.entries() if e.startswith(f"{TOPIC}-"))
    assert on_tmpfs and len(on_tmpfs) < PARTITIONS, "broker 3 spreads the partitions over both of its directories"

    def failed_over(p, leader, isr, offline):
        if p not in on_tmpfs:  # broker 3 keeps leading from its healthy directory
            return leader == 3 and offline == []
        return leader in (1, 2) and 3 not in isr and offline == [3]

    producer = NumberedProducer(cluster.bootstrap)
    while not any(3 in offline for _, _, offline in partitions_seen(cluster, 1).values()):
        assert producer.sent < MAX_RECORDS, "the tmpfs filled up"
        producer.send(ROUND)
        producer.flush()
    wait_until(lambda: seen_by_all(cluster, failed_over),
               what="the tmpfs partitions led elsewhere, broker 3 out of their ISRs and listed offline")
    producer.send(200)  # and more, now that the directory is offline
    producer.flush()
    assert producer.failed == []
    assert len(producer.acknowledged) == producer.sent
    assert producer.acknowledged <= set(record_numbers(cluster))

    cluster.restart_broker_3_with_room()  # as an operator would
    wait_until(lambda: seen_by_all(cluster, lambda p, leader, isr, offline: isr == [1, 2, 3] and offline == []),
               timeout=120, what="broker 3 back in every ISR")
    numbers = record_numbers(cluster)
    assert producer.acknowledged <= set(numbers), "no acknowledged record is missing"
    assert len(numbers) == len(set(numbers)), "no record is duplicated"
