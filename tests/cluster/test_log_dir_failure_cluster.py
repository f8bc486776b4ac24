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

Needs root (mount namespaces), as CI has.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from .harness import Cluster

TOPIC = "orders"
PARTITIONS = 4
RECORD_BYTES = 10_000
SMALL = "3m"  # the tmpfs: full after a few hundred records
ROOMY = "64m"  # after the operator gave it room
ROUND = 40  # records sent between looks at ZooKeeper
MAX_RECORDS = 4000  # the tmpfs must be full long before

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"),
    reason="needs root, unshare and nsenter (a tmpfs in a private mount namespace)")


class SmallDisk:
    """A tmpfs of `size` at `path`, mounted in a mount namespace of its own that a waiting process
    holds open; `command(argv)` runs argv inside it (the broker's data stays there across its
    restarts), `grow(size)` gives it more room, as an operator would."""

    def __init__(self, path, size: str) -> None:
        self.path = str(path)
        os.makedirs(self.path, exist_ok=True)
        script = 'mount -t tmpfs -o size="$1" tmpfs "$0" && echo mounted && exec sleep 3600'
        self.holder = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, self.path, size],
            stdout=subprocess.PIPE)
        if self.holder.stdout.readline().strip() != b"mounted":
            self.close()
            raise RuntimeError(f"could not mount a tmpfs at {self.path}")

    def command(self, argv: list[str]) -> list[str]:
        return ["nsenter", "--target", str(self.holder.pid), "--mount", "--", *argv]

    def grow(self, size: str) -> None:
        subprocess.run(self.command(["mount", "-o", f"remount,size={size}", self.path]), check=True)

    def entries(self) -> list[str]:
        """What the tmpfs holds, seen through the holder's root."""
        return os.listdir(f"/proc/{self.holder.pid}/root{self.path}")

    def close(self) -> None:
        self.holder.kill()
        self.holder.wait(10)


class ClusterWithSmallDisk(Cluster):
    """Three brokers; broker 3 runs inside the small disk's mount namespace, its log dirs the
    tmpfs first and an ordinary directory second."""

    def __init__(self, directory, zookeeper, disk: SmallDisk) -> None:
        super().__init__(directory, zookeeper, chroot="/log_dir_failure_cluster")
        self.disk = disk
        self.broker_overrides[3] = {"log.dirs": f"{disk.path},{directory}/broker-3/kafka-logs"}

    def _broker(self, broker_id: int):
        broker = super()._broker(broker_id)
        if broker_id == 3:
            broker.command = self.disk.command([sys.executable, "-m", "pykbroker"])
        return broker


@pytest.fixture(scope="module")
def disk(tmp_path_factory):
    small = SmallDisk(tmp_path_factory.mktemp("small-disk") / "logs", SMALL)
    yield small
    small.close()


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory, disk):
    running = ClusterWithSmallDisk(tmp_path_factory.mktemp("log_dir_failure_cluster"), zookeeper, disk).start()
    try:
        yield running
    finally:
        running.stop()


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


def offline_replicas_seen(cluster, broker_id: int) -> dict[int, list[int]]:
    partitions = cluster.metadata(broker_id, [TOPIC]).topics[0].partitions
    return {p.partition_index: sorted(p.offline_replicas) for p in partitions}


def test_a_full_log_dir_moves_its_partitions_elsewhere_and_the_broker_catches_up_after_a_restart(cluster, disk):
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    topic = NewTopic(TOPIC, PARTITIONS, replica_assignment=[[3, 1, 2]] * PARTITIONS,
                     config={"min.insync.replicas": "2"})
    admin.create_topics([topic])[TOPIC].result(timeout=30)
    cluster.wait_until(lambda: all(cluster.isr(TOPIC, p) == [1, 2, 3] for p in range(PARTITIONS)), what="full ISRs")
    on_tmpfs = sorted(int(entry.rsplit("-", 1)[1]) for entry in disk.entries() if entry.startswith(f"{TOPIC}-"))
    on_disk = sorted(set(range(PARTITIONS)) - set(on_tmpfs))
    assert on_tmpfs and on_disk, "broker 3 spreads the partitions over both of its directories"

    producer = NumberedProducer(cluster.bootstrap)
    while cluster.json_at("/brokers/offline_replicas/3") is None:
        assert producer.sent < MAX_RECORDS, "the tmpfs filled up"
        producer.send(ROUND)
        producer.flush()
    producer.send(200)  # and more, after the directory went offline
    producer.flush()
    assert producer.failed == []
    assert len(producer.acknowledged) == producer.sent

    def moved():
        return all(cluster.leader(TOPIC, p) in (1, 2) and 3 not in cluster.isr(TOPIC, p) for p in on_tmpfs)

    cluster.wait_until(moved, what="the tmpfs partitions led elsewhere, without broker 3 in their ISRs")
    assert all(cluster.leader(TOPIC, p) == 3 for p in on_disk), "broker 3 still leads from its healthy dir"
    expected = {p: [3] if p in on_tmpfs else [] for p in range(PARTITIONS)}
    cluster.wait_until(lambda: all(offline_replicas_seen(cluster, b) == expected for b in (1, 2, 3)),
                       what="every broker reporting broker 3's offline replicas")
    assert "No space left on device" in cluster.brokers[3].log_text() or "ENOSPC" in cluster.brokers[3].log_text()
    assert producer.acknowledged <= set(record_numbers(cluster))

    # the operator gives the directory room and restarts the broker
    assert cluster.shut_down(3) == 0
    disk.grow(ROOMY)
    cluster.restart(3)
    cluster.wait_until(lambda: all(cluster.isr(TOPIC, p) == [1, 2, 3] for p in range(PARTITIONS)),
                       timeout=90, what="broker 3 back in every ISR")
    cluster.wait_until(lambda: all(offline_replicas_seen(cluster, b) == {p: [] for p in range(PARTITIONS)}
                                   for b in (1, 2, 3)), what="no offline replicas left")
    numbers = record_numbers(cluster)
    assert producer.acknowledged <= set(numbers), "no acknowledged record is missing"
    assert len(numbers) == len(set(numbers)), "no record is duplicated"
