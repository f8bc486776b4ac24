"""A cluster for tests: ZooKeeper's brokers as separate processes, and ways to look inside.

    cluster = Cluster(tmp_dir, zookeeper, chroot="/failover").start()
    cluster.kill(2); cluster.restart(2)
    cluster.wait_until(lambda: cluster.isr("t", 0) == [1, 2, 3], what="full ISR")

Every broker listens on 127.0.0.1; a restarted broker keeps its port. `state()` reads a
partition's state znode directly; `metadata()` asks a broker, as a client would.
"""
from __future__ import annotations

import json
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

# Short timeouts so that failures are noticed within seconds (Kafka's defaults are 18-30 s).
FAST_CLUSTER = {
    "zookeeper.session.timeout.ms": "6000",
    "replica.lag.time.max.ms": "3000",
    "replica.fetch.backoff.ms": "200",
    "replica.fetch.wait.max.ms": "200",
    "controlled.shutdown.max.retries": "2",
    "controlled.shutdown.retry.backoff.ms": "200",
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "3",
    "group.initial.rebalance.delay.ms": "0",
}

MetadataRequest = messages.request(ApiKey.METADATA).cls


class Cluster:
    def __init__(self, directory: Path, zookeeper, *, chroot: str, size: int = 3,
                 overrides: dict[str, str] | None = None,
                 racks: dict[int, str] | None = None) -> None:
        self.directory = Path(directory)
        self.zookeeper = zookeeper
        self.chroot = chroot
        self.connect = zookeeper.connect_string(chroot)
        overrides = {**FAST_CLUSTER, **(overrides or {}), "zookeeper.connect": self.connect}
        self.brokers = {}
        for broker_id in range(1, size + 1):
            own = dict(overrides)
            if racks and broker_id in racks:
                own["broker.rack"] = racks[broker_id]
            self.brokers[broker_id] = BrokerProcess(self.directory / f"broker-{broker_id}", own,
                                                    broker_id=broker_id, keep_port_on_restart=True)
        self._zk: KazooClient | None = None

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> "Cluster":
        try:
            for broker in self.brokers.values():
                broker.start()
            self.wait_until(lambda: len(self.live_broker_ids()) == len(self.brokers),
                            what="every broker registered")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for broker in self.brokers.values():
            broker.kill() if not broker.is_running() else broker.stop()
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
            self._zk = None

    def kill(self, broker_id: int) -> None:
        self.brokers[broker_id].kill()

    def shut_down(self, broker_id: int) -> int | None:
        """SIGTERM: controlled shutdown, then stop."""
        return self.brokers[broker_id].stop()

    def restart(self, broker_id: int) -> None:
        broker = self.brokers[broker_id]
        if broker.is_running():
            broker.stop()
        broker.start()

    def ensure_all_running(self) -> None:
        for broker_id, broker in self.brokers.items():
            if not broker.is_running():
                broker.start()
        self.wait_until(lambda: len(self.live_broker_ids()) == len(self.brokers),
                        what="every broker registered")

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values() if b.is_running())

    def running(self) -> list[int]:
        return [broker_id for broker_id, b in self.brokers.items() if b.is_running()]

    # -- looking at ZooKeeper ----------------------------------------------------------
    @property
    def zk(self) -> KazooClient:
        if self._zk is None:
            self._zk = KazooClient(hosts=self.connect, timeout=10)
            self._zk.start(timeout=30)
        return self._zk

    def json_at(self, path: str):
        """The znode's JSON; None when it has no data or does not exist (any more)."""
        try:
            data, _ = self.zk.get(path)
        except NoNodeError:
            return None
        return json.loads(data) if data else None

    def live_broker_ids(self) -> list[int]:
        try:
            return sorted(int(child) for child in self.zk.get_children("/brokers/ids"))
        except NoNodeError:
            return []

    def controller_id(self) -> int:
        controller = self.json_at("/controller")
        return -1 if controller is None else controller["brokerid"]

    def state(self, topic: str, partition: int) -> dict | None:
        return self.json_at(f"/brokers/topics/{topic}/partitions/{partition}/state")

    def leader(self, topic: str, partition: int) -> int:
        state = self.state(topic, partition)
        return -1 if state is None else state["leader"]

    def isr(self, topic: str, partition: int) -> list[int]:
        state = self.state(topic, partition)
        return [] if state is None else sorted(state["isr"])

    def replicas(self, topic: str) -> dict[int, list[int]]:
        value = self.json_at(f"/brokers/topics/{topic}")
        return {int(p): r for p, r in value["partitions"].items()}

    # -- asking a broker ---------------------------------------------------------------
    def metadata(self, broker_id: int, topics: list[str] | None, version: int = 12):
        with WireClient(self.brokers[broker_id].bootstrap) as client:
            request = MetadataRequest(
                topics=None if topics is None else [
                    MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
                allow_auto_topic_creation=False)
            return client.request(ApiKey.METADATA, version, request)

    def wire(self, broker_id: int) -> WireClient:
        return WireClient(self.brokers[broker_id].bootstrap)

    # -- waiting -----------------------------------------------------------------------
    @staticmethod
    def wait_until(condition, what: str = "condition", *, timeout: float = 40.0,
                   interval: float = 0.1):
        return wait_until(condition, what, timeout=timeout, interval=interval)

    def wait_for_leaders(self, topic: str, partitions: int, *, exclude: set[int] = frozenset(),
                         timeout: float = 40.0) -> dict[int, int]:
        """Every partition led by a running broker outside `exclude`, as every broker sees it."""
        def led():
            leaders = {p: self.leader(topic, p) for p in range(partitions)}
            if any(l < 0 or l in exclude or not self.brokers[l].is_running()
                   for l in leaders.values()):
                return None
            for broker_id in self.running():
                seen = self.metadata(broker_id, [topic]).topics[0].partitions
                if {p.partition_index: p.leader_id for p in seen} != leaders:
                    return None
            return leaders
        return self.wait_until(led, timeout=timeout, what=f"leaders of {topic}")
