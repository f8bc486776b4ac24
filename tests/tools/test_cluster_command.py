"""`pykbroker cluster`: ZooKeeper and three brokers in one command, a replicated topic that works
through them, and Ctrl-C stopping every process it started; a clear message without ZooKeeper."""

import selectors
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.testkit import zookeeper as zookeeper_process
from pykbroker.testkit.zookeeper import zookeeper_available

HANG_GUARD_S = 90  # only so that a broken launcher fails the test instead of hanging it


def pykbroker(*args: str, **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pykbroker", *args], **options)


def children_of(pid: int) -> set[int]:
    """Processes whose parent is `pid`, from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def is_alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def first_line(process: subprocess.Popen, timeout: float) -> str:
    with selectors.DefaultSelector() as selector:  # not select(): a test worker's descriptors may pass 1024
        selector.register(process.stdout, selectors.EVENT_READ)
        assert selector.select(timeout), "no bootstrap list on stdout in time"
    return process.stdout.readline().decode().strip()


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    """`pykbroker cluster --brokers 3`, its bootstrap list, and its output directory."""
    if not zookeeper_available():
        pytest.skip("needs java and ZooKeeper (Debian's zookeeper package; make system-deps)")
    directory = tmp_path_factory.mktemp("cluster")
    stderr = open(directory / "launcher.err", "wb")
    process = pykbroker(
        "cluster",
        "--brokers",
        "3",
        "--base-port",
        "0",
        "--dir",
        str(directory / "data"),
        "--override",
        "offsets.topic.num.partitions=3",
        stdout=subprocess.PIPE,
        stderr=stderr,
    )
    try:
        bootstrap = first_line(process, HANG_GUARD_S)
        yield process, bootstrap, directory
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(HANG_GUARD_S)
            except subprocess.TimeoutExpired:
                process.kill()  # its children get SIGTERM when it dies
                process.wait()
        stderr.close()


def test_the_bootstrap_list_names_three_brokers_on_loopback(launched):
    _, bootstrap, _ = launched
    addresses = bootstrap.split(",")
    assert len(addresses) == 3
    assert all(address.startswith("127.0.0.1:") for address in addresses)


def test_a_replicated_topic_round_trips_records(launched):
    _, bootstrap, _ = launched
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic("replicated", 3)])["replicated"].result(timeout=30)  # the cluster's default RF
    replicas = admin.list_topics("replicated", timeout=10).topics["replicated"].partitions[0].replicas
    assert sorted(replicas) == [1, 2, 3]

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    sent = [f"record-{n}".encode() for n in range(20)]
    for value in sent:
        producer.produce("replicated", value, key=value)
    assert producer.flush(30) == 0

    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{uuid.uuid4()}", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe(["replicated"])
    received, deadline = [], time.monotonic() + HANG_GUARD_S
    while len(received) < len(sent) and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            received.append(message.value())
    consumer.close()
    assert sorted(received) == sorted(sent)


def test_ctrl_c_stops_every_process_and_exits_0(launched):
    process, _, directory = launched
    started = children_of(process.pid)
    assert len(started) == 4  # ZooKeeper and three brokers

    process.send_signal(signal.SIGINT)
    assert process.wait(HANG_GUARD_S) == 0
    assert not [pid for pid in started if is_alive(pid)]
    for broker_id in (1, 2, 3):
        log = (directory / "data" / f"broker-{broker_id}" / "broker.log").read_text()
        assert "Controlled shutdown succeeded" in log
        assert "Proceeding to do an unclean shutdown" not in log
    assert "Stopping ZooKeeper" in (directory / "launcher.err").read_text()


def run_cluster_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pykbroker", "cluster", *args], capture_output=True, text=True, timeout=HANG_GUARD_S
    )


def test_a_named_zookeeper_that_is_not_there_is_one_line_and_status_1(tmp_path):
    result = run_cluster_command("--zookeeper-home", str(tmp_path / "nowhere"), "--dir", str(tmp_path / "c"))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        f"pykbroker cluster: error: no ZooKeeper installation at {tmp_path / 'nowhere'} "
        f"(no zookeeper jar in {tmp_path / 'nowhere'}/lib or {tmp_path / 'nowhere'}/libs)"
    ]
    assert result.stdout == ""
    assert not (tmp_path / "c").exists()


def test_a_zookeeper_classpath_that_is_not_there_is_one_line_and_status_1(tmp_path):
    jar = tmp_path / "zookeeper.jar"
    result = run_cluster_command("--zookeeper-classpath", str(jar), "--dir", str(tmp_path / "c"))
    assert result.returncode == 1
    assert result.stderr.splitlines() == [f"pykbroker cluster: error: ZooKeeper classpath {jar}: {jar} does not exist"]


def test_settings_the_launcher_owns_cannot_be_overridden(tmp_path):
    result = run_cluster_command("--override", "broker.id=7", "--dir", str(tmp_path / "c"))
    assert result.returncode == 2
    assert "--override broker.id: set by pykbroker cluster for each broker" in result.stderr


class TestFindingZooKeeper:
    def test_a_release_directory_runs_from_its_lib_jars(self, tmp_path):
        (tmp_path / "lib").mkdir()
        (tmp_path / "lib" / "zookeeper-3.8.4.jar").touch()
        assert zookeeper_process.find_zookeeper(home=tmp_path) == f"{tmp_path / 'lib'}/*"

    def test_a_kafka_distribution_runs_from_its_libs_jars(self, tmp_path):
        (tmp_path / "libs").mkdir()
        (tmp_path / "libs" / "zookeeper-3.8.4.jar").touch()
        assert zookeeper_process.find_zookeeper(home=tmp_path) == f"{tmp_path / 'libs'}/*"

    def test_with_nothing_installed_the_message_says_what_to_install_or_name(self, monkeypatch, tmp_path):
        monkeypatch.delenv("ZOOKEEPER_CLASSPATH", raising=False)
        monkeypatch.delenv("ZOOKEEPER_HOME", raising=False)
        monkeypatch.setattr(zookeeper_process, "DEBIAN_JAR", str(tmp_path / "absent.jar"))
        monkeypatch.setattr(zookeeper_process, "USUAL_HOMES", ())
        with pytest.raises(zookeeper_process.ZooKeeperNotFound) as raised:
            zookeeper_process.find_zookeeper()
        assert "apt-get install zookeeper" in str(raised.value)
        assert "--zookeeper-home" in str(raised.value)
