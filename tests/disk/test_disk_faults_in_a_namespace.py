"""Disk faults the kernel makes for real, in a private mount namespace: a log directory on a small
tmpfs that fills up, and one remounted read-only.

- Disk full, one log directory: the produce that hits the full disk is answered
  KAFKA_STORAGE_ERROR (the producer has no retries, so the broker's answer is what it reports),
  the broker logs one ERROR naming the directory, the file and ENOSPC and halts (exit code 1, as
  Kafka's "Shutdown broker because all log dirs in ... have failed"). Once the operator frees
  space and restarts it, every acknowledged record is served. Kafka 3.9.0 in the same kind of
  tmpfs does the same (its test below).
- Read-only, two log directories (JBOD): the read-only one goes offline (EROFS), its partition
  answers KAFKA_STORAGE_ERROR and DescribeLogDirs reports it, while the other directory keeps
  serving and takes the new partitions; restarted with the directory writable again, the broker
  serves every acknowledged record of both.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, Producer

from compat import realkafka
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient, create_topic

from ..ci import skip_or_fail_in_ci
from ..client_helpers import read_partition
from .namespace import MountNamespace, skip_without_namespaces

DescribeLogDirs = messages.request(ApiKey.DESCRIBE_LOG_DIRS).cls
TOPIC = "disk"
TMPFS_SIZE = "4m"
BALLAST_BYTES = 1 << 20  # taken before the broker starts; removing it is the operator freeing space
FILLER = b"." * 10_000  # 10 KB records, as the producer that once timed out instead
ENOSPC_LINE = re.compile(r"ERROR Log directory (\S+) failed and goes offline: .*: file (\S+): ENOSPC")


@pytest.fixture
def namespace():
    skip_without_namespaces()
    with MountNamespace() as made:
        yield made


def tmpfs_log_dir(namespace: MountNamespace, path: Path) -> Path:
    """`path`, a tmpfs of TMPFS_SIZE in the namespace, with BALLAST_BYTES of it already taken."""
    namespace.mount_tmpfs(path, TMPFS_SIZE)
    namespace.run("dd", "if=/dev/zero", f"of={path}/ballast", "bs=1M", f"count={BALLAST_BYTES >> 20}")
    return path


def free_space(namespace: MountNamespace, log_dir: Path) -> None:
    namespace.run("rm", f"{log_dir}/ballast")


class Deliveries:
    """What an acks=all producer without retries was told: the acknowledged record numbers and
    the errors."""

    def __init__(self) -> None:
        self.acknowledged: list[int] = []
        self.errors: list[int] = []

    def __call__(self, error, message) -> None:
        if error is None:
            self.acknowledged.append(int(message.value()[:8]))
        else:
            self.errors.append(error.code())


def produce_until_the_disk_is_full(bootstrap: str, broker_stopped) -> Deliveries:
    """10 KB records in small rounds until a delivery fails or the broker stops."""
    deliveries = Deliveries()
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "retries": 0,
                         "enable.idempotence": False, "linger.ms": 5, "message.timeout.ms": 10_000,
                         "reconnect.backoff.max.ms": 500, "log_level": 3})
    deadline = time.monotonic() + 120
    number = 0
    while not deliveries.errors and not broker_stopped() and time.monotonic() < deadline:
        for _ in range(20):
            producer.produce(TOPIC, value=b"%08d" % number + FILLER, on_delivery=deliveries)
            number += 1
        producer.flush(30)
    producer.flush(30)
    return deliveries


def assert_every_acknowledged_record_is_served(bootstrap: str, acknowledged: list[int], topic: str = TOPIC,
                                               partition: int = 0) -> None:
    served = [int(message.value()[:8]) for message in read_partition(bootstrap, topic, partition)]
    assert len(served) == len(set(served)), "a record is served twice"
    missing = set(acknowledged) - set(served)
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {sorted(missing)[:5]}"


# -- pykbroker ---------------------------------------------------------------------------------

def pykbroker_in(namespace: MountNamespace, directory: Path, overrides: dict | None = None) -> BrokerProcess:
    return BrokerProcess(directory, overrides, keep_port_on_restart=True,
                         command=namespace.command([sys.executable, "-m", "pykbroker"]))


def test_a_full_disk_answers_kafka_storage_error_halts_and_a_restart_serves_every_acknowledged_record(
        tmp_path, namespace):
    log_dir = tmpfs_log_dir(namespace, tmp_path / "kafka-logs")  # BrokerProcess's log.dirs
    broker = pykbroker_in(namespace, tmp_path)
    try:
        broker.start()
        create_topic(broker.bootstrap, TOPIC, 1, 1)

        deliveries = produce_until_the_disk_is_full(broker.bootstrap, lambda: not broker.is_running())

        assert deliveries.errors[0] == KafkaError.KAFKA_STORAGE_ERROR  # the broker's answer, not a time-out
        assert deliveries.acknowledged
        assert broker.wait_for_exit(30) == 1
        errors = [line for line in broker.log_text().splitlines() if " ERROR " in line]
        assert len(errors) == 2, errors
        [(failed_dir, file)] = ENOSPC_LINE.findall(errors[0])
        assert failed_dir == str(log_dir) and file.startswith(f"{log_dir}/{TOPIC}-0/")
        assert f"ERROR Shutdown broker because all log dirs in {log_dir} have failed" in errors[1]

        free_space(namespace, log_dir)
        broker.start()
        assert_every_acknowledged_record_is_served(broker.bootstrap, deliveries.acknowledged)
    finally:
        broker.stop()


def test_a_read_only_log_dir_goes_offline_while_the_other_keeps_serving(tmp_path, namespace):
    healthy, read_only = tmp_path / "healthy", tmp_path / "read-only"
    healthy.mkdir()
    namespace.mount_tmpfs(read_only, TMPFS_SIZE)
    broker = pykbroker_in(namespace, tmp_path, {"log.dirs": f"{healthy},{read_only}"})
    try:
        broker.start()
        create_topic(broker.bootstrap, TOPIC, 2, 1, {"segment.bytes": "100000"})
        assert partitions_by_dir(broker.bootstrap) == {str(healthy): [(TOPIC, 0)], str(read_only): [(TOPIC, 1)]}
        before = produce_to(broker.bootstrap, 1, range(0, 5))
        assert not before.errors

        namespace.remount_read_only(read_only)
        after = produce_to(broker.bootstrap, 1, range(5, 35))  # the first roll needs a new segment file

        assert after.errors and set(after.errors) == {KafkaError.KAFKA_STORAGE_ERROR}
        assert dir_errors(broker.bootstrap) == {str(healthy): ErrorCode.NONE, str(read_only): ErrorCode.KAFKA_STORAGE_ERROR}
        assert not produce_to(broker.bootstrap, 0, range(5)).errors
        create_topic(broker.bootstrap, "after", 2, 1)
        assert partitions_by_dir(broker.bootstrap)[str(healthy)] == [("after", 0), ("after", 1), (TOPIC, 0)]
        assert broker.is_running()
        [line] = [line for line in broker.log_text().splitlines() if " ERROR " in line]
        assert f"Log directory {read_only} failed" in line and "EROFS" in line

        assert broker.stop() == 0
        namespace.run("umount", str(read_only))  # the operator repairs the file system
        broker.start()
        assert_every_acknowledged_record_is_served(broker.bootstrap, before.acknowledged + after.acknowledged,
                                                   partition=1)
    finally:
        broker.stop()


def produce_to(bootstrap: str, partition: int, numbers: range) -> Deliveries:
    """Records numbered `numbers`, one at a time, to `partition`."""
    deliveries = Deliveries()
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "retries": 0, "linger.ms": 0,
                         "enable.idempotence": False, "message.timeout.ms": 10_000, "log_level": 3})
    for number in numbers:
        producer.produce(TOPIC, value=b"%08d" % number + FILLER, partition=partition,
                         on_delivery=deliveries)
        producer.flush(15)
    return deliveries


def describe_log_dirs(bootstrap: str):
    with WireClient(bootstrap) as client:
        return client.request(ApiKey.DESCRIBE_LOG_DIRS, 4, DescribeLogDirs(topics=None)).results


def dir_errors(bootstrap: str) -> dict[str, ErrorCode]:
    return {result.log_dir: ErrorCode(result.error_code) for result in describe_log_dirs(bootstrap)}


def partitions_by_dir(bootstrap: str) -> dict[str, list[tuple[str, int]]]:
    """The user partitions in each online log directory, as DescribeLogDirs reports them."""
    return {result.log_dir: sorted((topic.name, partition.partition_index) for topic in result.topics
                                   for partition in topic.partitions if not topic.name.startswith("__"))
            for result in describe_log_dirs(bootstrap) if result.error_code == 0}


# -- Kafka 3.9.0 ------------------------------------------------------------------------------

class KafkaInNamespace(realkafka.KafkaBroker):
    """kafka.sh's broker and ZooKeeper run in the namespace, the broker's log.dirs on `log_dir`."""

    def __init__(self, directory: Path, namespace: MountNamespace, log_dir: Path) -> None:
        super().__init__(directory)
        self.namespace, self.log_dir = namespace, log_dir
        script = self.script
        self.script = lambda *args, timeout=240: self._run(script, args, timeout)

    def _run(self, script, args, timeout: float) -> None:
        with open(script.log_path, "a") as log:
            result = subprocess.run(self.namespace.command(["bash", str(script.path), *args]), env=script.env,
                                    timeout=timeout, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise RuntimeError(f"kafka.sh {' '.join(args)} failed:\n{script.log_text()[-3000:]}")

    def extra_settings(self, port: int) -> dict[str, str]:
        return {"log.dirs": str(self.log_dir), "zookeeper.session.timeout.ms": "6000"}

    def broker_running(self) -> bool:
        state = (self.runs / str(self.port) / "state").read_text()
        pid = re.search(r"KAFKA_PID=(\d+)", state)
        return pid is not None and Path(f"/proc/{pid.group(1)}").exists()

    def server_log(self) -> str:
        return (self.runs / str(self.port) / "logs" / "server.log").read_text(errors="replace")

    def restart(self) -> None:
        self.script("broker", str(self.port))


def created(bootstrap: str, topic: str) -> bool:
    try:
        create_topic(bootstrap, topic, 1, 1)
    except RuntimeError as refused:  # INVALID_REPLICATION_FACTOR until the broker registered
        assert "INVALID_REPLICATION_FACTOR" in str(refused)
        return False
    return True


def test_kafka_on_a_full_disk_answers_kafka_storage_error_halts_and_a_restart_serves_every_acknowledged_record(
        tmp_path, namespace):
    reason = realkafka.unavailable()
    if reason:
        skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
    log_dir = tmpfs_log_dir(namespace, tmp_path / "kafka-logs")
    kafka = KafkaInNamespace(tmp_path / "runs", namespace, log_dir)
    kafka.start()
    try:
        wait_until(lambda: created(kafka.bootstrap, TOPIC), "the topic created (once the broker registered)",
                   timeout=60)

        deliveries = produce_until_the_disk_is_full(kafka.bootstrap, lambda: not kafka.broker_running())

        assert deliveries.errors[0] == KafkaError.KAFKA_STORAGE_ERROR
        assert deliveries.acknowledged
        wait_until(lambda: not kafka.broker_running(), "Kafka halted", timeout=30)
        server_log = kafka.server_log()
        assert f"ERROR Error while appending records to {TOPIC}-0 in dir {log_dir}" in server_log
        assert f"ERROR Shutdown broker because all log dirs in {log_dir} have failed" in server_log

        free_space(namespace, log_dir)
        kafka.restart()
        assert_every_acknowledged_record_is_served(kafka.bootstrap, deliveries.acknowledged)
    finally:
        kafka.stop()
