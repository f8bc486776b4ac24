"""ZooKeeper and three brokers, each in its own network namespace of a `Network`: pykbroker's or
Apache Kafka 3.9.0's, with the same settings, started once and looked into from the test process.

    with NamespacedCluster.of("kafka", directory) as cluster:   # or "pykbroker"
        cluster.network.cut("b1", "zk")
        cluster.wait_until_healed(["orders"])

ZooKeeper (Debian's package, as everywhere in the tests) listens on 10.23.N.10:2181, broker I on
10.23.N.(10 + I):9092; nodes are named "zk", "b1", "b2", "b3". Both systems get `SETTINGS`
(the tests' short cluster timeouts: a ZooKeeper session of 6 s, a replica lag of 3 s) plus what
each needs to find its own listener and data. Kafka's brokers run the java command line of
`../shared/realkafka/cluster.sh`. Every process runs through `ip netns exec` in its node's
namespace and is stopped (SIGKILL: the data is thrown away, unless `NETPART_KEEP_DATA=1`) before
the namespaces are removed; a process also dies with the test process, however that ends.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError

from compat.realkafka import REALKAFKA
from pykbroker.testkit.settings import cluster_settings
from pykbroker.testkit.zookeeper import find_java, find_zookeeper

from .network import Network

BROKER_IDS = (1, 2, 3)
NODES = ["zk", "b1", "b2", "b3"]
ZK_PORT = 2181
BROKER_PORT = 9092
SESSION_TIMEOUT_MS = 6000
REPLICA_LAG_MS = 3000

# What both systems' brokers get (Kafka's names; the short timeouts of tests/cluster's FAST_CLUSTER)
SETTINGS = {
    "num.partitions": "1",
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "unclean.leader.election.enable": "false",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "0",
    "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS),
    "zookeeper.connection.timeout.ms": "30000",
    "replica.lag.time.max.ms": str(REPLICA_LAG_MS),
    "replica.fetch.backoff.ms": "200",
    "replica.fetch.wait.max.ms": "200",
    "replica.socket.timeout.ms": "5000",
    "controller.socket.timeout.ms": "5000",
    "controlled.shutdown.max.retries": "2",
    "controlled.shutdown.retry.backoff.ms": "200",
}
KAFKA_HEAP = ["-Xmx384m", "-Xms128m"]
# C1 only: the brokers start in about half the CPU time; what Kafka does does not depend on the JIT
KAFKA_JIT = ["-XX:TieredStopAtLevel=1"]
START_TIMEOUT_S = 120.0

PR_SET_PDEATHSIG = 1
T = TypeVar("T")


def die_with_parent() -> None:
    """In the child before exec: SIGKILL when the test process dies, however it dies."""
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


class NodeProcess:
    """One server process inside a node's namespace, its output in `log_path`."""

    def __init__(self, network: Network, node: str, command: list[str], log_path: Path,
                 env: dict[str, str] | None = None) -> None:
        self.node = node
        self.command = network.in_namespace(node, command)
        self.log_path = log_path
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env, start_new_session=True,
                                            preexec_fn=die_with_parent)

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(30)

    def tail(self, lines: int = 15) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


class NamespacedCluster:
    """ZooKeeper and brokers 1-3 of one system in the namespaces of `network`."""

    system = ""

    @staticmethod
    def of(system: str, directory: Path) -> NamespacedCluster:
        kinds: dict[str, type[NamespacedCluster]] = {"pykbroker": PykbrokerCluster, "kafka": KafkaCluster}
        return kinds[system](directory)

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.network = Network(NODES)
        self.zookeeper: NodeProcess | None = None
        self.brokers: dict[int, NodeProcess] = {}
        self._zk: KazooClient | None = None

    # -- addresses ---------------------------------------------------------------------------
    @staticmethod
    def node(broker_id: int) -> str:
        return f"b{broker_id}"

    def broker_address(self, broker_id: int) -> str:
        return f"{self.network.address(self.node(broker_id))}:{BROKER_PORT}"

    @property
    def bootstrap(self) -> str:
        return ",".join(self.broker_address(broker_id) for broker_id in BROKER_IDS)

    @property
    def zookeeper_connect(self) -> str:
        return f"{self.network.address('zk')}:{ZK_PORT}"

    # -- start and stop ----------------------------------------------------------------------
    def start(self) -> NamespacedCluster:
        try:
            self.network.create()
            self._start_zookeeper()
            for broker_id in BROKER_IDS:
                self.brokers[broker_id] = self.broker_process(broker_id)
                self.brokers[broker_id].start()
            self._wait_for(lambda: self.registered() == list(BROKER_IDS) or None, "all brokers registered")
            self._wait_for(self._all_answer_metadata, "every broker answering Metadata with all three")
        except BaseException:
            self.stop()
            raise
        return self

    def _start_zookeeper(self) -> None:
        directory = self.directory / "zookeeper"
        (directory / "data").mkdir(parents=True, exist_ok=True)
        config = directory / "zoo.cfg"
        config.write_text("\n".join([
            "tickTime=500", f"dataDir={directory / 'data'}", f"clientPort={ZK_PORT}",
            f"clientPortAddress={self.network.address('zk')}", "maxClientCnxns=0",
            "admin.enableServer=false", "4lw.commands.whitelist=*", "maxSessionTimeout=30000", ""]))
        command = [find_java(), "-Xmx128m", "-cp", find_zookeeper(),
                   "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(config)]
        self.zookeeper = NodeProcess(self.network, "zk", command, directory / "zookeeper.log")
        self.zookeeper.start()
        self._wait_for(self._zookeeper_serving, "ZooKeeper serving")

    def _zookeeper_serving(self) -> bool | None:
        try:
            with socket.create_connection((self.network.address("zk"), ZK_PORT), timeout=1) as sock:
                sock.sendall(b"srvr")
                return sock.recv(64).startswith(b"Zookeeper version") or None
        except OSError:
            return None

    def _all_answer_metadata(self) -> bool | None:
        from pykbroker.testkit.wire import metadata

        for broker_id in BROKER_IDS:
            try:
                if len(metadata(self.broker_address(broker_id), timeout=2).brokers) < len(BROKER_IDS):
                    return None
            except (OSError, EOFError):
                return None
        return True

    def _wait_for(self, condition: Callable[[], T | None], what: str, timeout: float = START_TIMEOUT_S) -> T:
        deadline = time.monotonic() + timeout
        while True:
            for process in [self.zookeeper, *self.brokers.values()]:
                if process is not None and not process.is_running():
                    raise RuntimeError(f"{self.system} {process.node} exited while waiting for {what}:\n"
                                       f"{process.tail()}")
            value = condition()
            if value is not None:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.system}: no {what} within {timeout:g} s")
            time.sleep(0.2)

    def broker_process(self, broker_id: int) -> NodeProcess:
        raise NotImplementedError

    def broker_settings(self, broker_id: int) -> dict[str, str]:
        directory = self.directory / f"broker-{broker_id}"
        listener = f"PLAINTEXT://{self.broker_address(broker_id)}"
        return {**SETTINGS, "broker.id": str(broker_id), "listeners": listener,
                "advertised.listeners": listener, "log.dirs": str(directory / "kafka-logs"),
                "zookeeper.connect": self.zookeeper_connect}

    def stop(self) -> None:
        """Everything killed, the namespaces and the data removed."""
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
            self._zk = None
        for process in [*self.brokers.values(), self.zookeeper]:
            if process is not None:
                process.kill()
        self.network.destroy()
        if os.environ.get("NETPART_KEEP_DATA") == "1":
            print(f"netpart: kept {self.directory}")
        else:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> NamespacedCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- looking at ZooKeeper ----------------------------------------------------------------
    @property
    def zk(self) -> KazooClient:
        if self._zk is None:
            self._zk = KazooClient(hosts=self.zookeeper_connect, timeout=10)
            self._zk.start(timeout=30)
        return self._zk

    def json_at(self, path: str) -> dict | None:
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            return None
        return json.loads(data) if data else None

    def registered(self) -> list[int]:
        try:
            return sorted(int(child) for child in self.zk.get_children("/brokers/ids"))
        except (NoNodeError, KazooException):
            return []

    def controller(self) -> int:
        controller = self.json_at("/controller")
        return -1 if controller is None else int(controller["brokerid"])

    def partition_state(self, topic: str, partition: int) -> dict | None:
        return self.json_at(f"/brokers/topics/{topic}/partitions/{partition}/state")

    def leader(self, topic: str, partition: int = 0) -> int:
        state = self.partition_state(topic, partition)
        return -1 if state is None else int(state["leader"])

    def assignment(self, topic: str) -> dict[int, list[int]]:
        value = self.json_at(f"/brokers/topics/{topic}")
        return {} if value is None else {int(p): list(r) for p, r in value["partitions"].items()}

    def unhealed(self, topics: list[str]) -> list[str]:
        """What is not yet whole: brokers not registered, no controller, partitions of `topics`
        (and the internal topics) whose ISR is not all their replicas; empty once healed."""
        problems = []
        if self.registered() != list(BROKER_IDS):
            problems.append(f"registered brokers {self.registered()}")
        if self.controller() < 0:
            problems.append("no controller")
        for topic in [*topics, "__consumer_offsets", "__transaction_state"]:
            for partition, replicas in self.assignment(topic).items():
                state = self.partition_state(topic, partition) or {"leader": -1, "isr": []}
                if state["leader"] < 0 or sorted(state["isr"]) != sorted(replicas):
                    problems.append(f"{topic}[{partition}] leader {state['leader']} isr {state['isr']}")
        return problems


class PykbrokerCluster(NamespacedCluster):
    """pykbroker's brokers, `python -m pykbroker` with every setting an `--override` (as the
    testkit's `BrokerProcess` starts them)."""

    system = "pykbroker"

    def broker_process(self, broker_id: int) -> NodeProcess:
        directory = self.directory / f"broker-{broker_id}"
        directory.mkdir(parents=True, exist_ok=True)
        settings = {**cluster_settings(len(BROKER_IDS)), **self.broker_settings(broker_id)}
        command = [sys.executable, "-m", "pykbroker"]
        for key, value in settings.items():
            command += ["--override", f"{key}={value}"]
        return NodeProcess(self.network, self.node(broker_id), command, directory / "broker.log")


class KafkaCluster(NamespacedCluster):
    """Apache Kafka 3.9.0's brokers: the java command line of realkafka's cluster.sh."""

    system = "kafka"

    def broker_process(self, broker_id: int) -> NodeProcess:
        directory = self.directory / f"broker-{broker_id}"
        (directory / "logs").mkdir(parents=True, exist_ok=True)
        properties = directory / "server.properties"
        properties.write_text("".join(f"{key}={value}\n" for key, value in self.broker_settings(broker_id).items()))
        command = [find_java(), *KAFKA_HEAP, *KAFKA_JIT, "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
                   "-Djava.awt.headless=true", f"-Dkafka.logs.dir={directory / 'logs'}",
                   f"-Dlog4j.configuration=file:{REALKAFKA / 'log4j.properties'}",
                   "-cp", f"{REALKAFKA / 'libs'}/*", "kafka.Kafka", str(properties)]
        return NodeProcess(self.network, self.node(broker_id), command, directory / "logs" / "kafka.out")
