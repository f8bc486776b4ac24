"""A cluster for tests: `BrokerCluster`'s brokers on the tests' shared ZooKeeper, and ways to
look inside.

    cluster = Cluster(tmp_dir, zookeeper, chroot="/failover").start()
    cluster.kill(2); cluster.restart(2)
    cluster.wait_until(lambda: cluster.isr("t", 0) == [1, 2, 3], what="full ISR")

Starting, stopping and restarting brokers is `BrokerCluster`'s (a restarted broker keeps its port
and data). `state()` reads a partition's state znode directly; `metadata()` asks a broker, as a
client would.
"""
from __future__ import annotations

import json
from pathlib import Path

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.cluster import BROKER_STOP_TIMEOUT_S, BrokerCluster
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


class Cluster(BrokerCluster):
    """`BrokerCluster` on the tests' shared ZooKeeper, under `chroot`, with short timeouts
    (`FAST_CLUSTER`) and `racks` ({broker id: rack}); the brokers start one at a time (broker 1
    is the first controller) and the cluster is ready once every broker is registered in
    ZooKeeper and (over PLAINTEXT) sees all the others. Adds the ways to look inside: ZooKeeper's
    znodes, Metadata over the wire, waits."""

    def __init__(self, directory: Path, zookeeper, *, chroot: str, size: int = 3,
                 overrides: dict[str, str] | None = None,
                 racks: dict[int, str] | None = None) -> None:
        self.chroot = chroot
        self.connect = zookeeper.connect_string(chroot)
        super().__init__(directory, size=size, overrides={**FAST_CLUSTER, **(overrides or {})},
                         broker_overrides={broker_id: {"broker.rack": rack}
                                           for broker_id, rack in (racks or {}).items()},
                         replication_settings=False, one_at_a_time=True,
                         zookeeper_connect=self.connect)
        self._zk: KazooClient | None = None

    def all_ready(self) -> bool:
        """Every broker registered in ZooKeeper and, where their first listener is PLAINTEXT, each
        answering Metadata that lists them all: a broker learns of the others through a watch, so
        ZooKeeper alone does not say that the broker a test asks first has seen them."""
        if len(self.live_broker_ids()) != len(self.brokers):
            return False
        return not self.overrides.get("listeners", "PLAINTEXT").startswith("PLAINTEXT") or super().all_ready()

    def current_controller(self, running) -> int:
        """The controller as ZooKeeper names it (whatever the brokers' listeners speak)."""
        return self.controller_id()

    def stop(self, timeout: float = BROKER_STOP_TIMEOUT_S) -> None:
        super().stop(timeout)
        if self._zk is not None:
            self._zk.stop()
            self._zk.close()
            self._zk = None

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
