"""pykbroker as the compatibility suite runs it: one broker, or three brokers with a ZooKeeper,
given the same settings as the Kafka set-ups they are compared with (`compat/realkafka.py`), in
a directory of the caller's and always stopped when the block ends.

    with PykBroker(tmp_dir) as broker:      # broker 0, embedded metadata
        run_suite(broker.bootstrap)
    with PykCluster(tmp_dir) as cluster:    # ZooKeeper and brokers 1, 2, 3
        cluster.kill(2); cluster.restart(2)
"""
from __future__ import annotations

import os
from pathlib import Path

from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.zookeeper import ZooKeeperProcess

from .realkafka import CLUSTER_IDS, CLUSTER_SETTINGS, SINGLE_BROKER_SETTINGS

LABEL = "pykbroker"


class PykBroker(BrokerProcess):
    """One pykbroker with the single Kafka broker's settings."""

    label = LABEL

    def __init__(self, directory: str | os.PathLike) -> None:
        super().__init__(directory, SINGLE_BROKER_SETTINGS)


class PykCluster:
    """A ZooKeeper and pykbrokers 1, 2, 3 with the Kafka cluster's settings; a killed broker
    restarts on its port and its data."""

    label = LABEL
    ids = CLUSTER_IDS

    def __init__(self, directory: str | os.PathLike) -> None:
        self.directory = Path(directory)
        self.zookeeper = ZooKeeperProcess(self.directory / "zookeeper")
        self.brokers: dict[int, BrokerProcess] = {}

    @property
    def bootstrap(self) -> str:
        return ",".join(b.bootstrap for b in self.brokers.values())

    def start(self) -> "PykCluster":
        try:
            self.zookeeper.start()
            settings = {**CLUSTER_SETTINGS, "zookeeper.connect": self.zookeeper.connect}
            for broker_id in self.ids:
                self.brokers[broker_id] = BrokerProcess(
                    self.directory / f"broker-{broker_id}", settings, broker_id=broker_id,
                    keep_port_on_restart=True).start()
        except BaseException:
            self.stop()
            raise
        return self

    def kill(self, broker_id: int) -> None:
        """kill -9 the broker."""
        self.brokers[broker_id].kill()

    def restart(self, broker_id: int) -> None:
        """Start a killed broker again on its port and data; returns when it listens."""
        self.brokers[broker_id].start()

    def stop(self) -> None:
        for broker in self.brokers.values():
            broker.stop()
        self.zookeeper.stop()

    def __enter__(self) -> "PykCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
