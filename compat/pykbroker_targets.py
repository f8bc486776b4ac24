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

from pykbroker.testkit.cluster import BrokerCluster
from pykbroker.testkit.process import BrokerProcess

from .realkafka import CLUSTER_IDS, CLUSTER_SETTINGS, SINGLE_BROKER_SETTINGS

LABEL = "pykbroker"


class PykBroker(BrokerProcess):
    """One pykbroker with the single Kafka broker's settings."""

    label = LABEL

    def __init__(self, directory: str | os.PathLike) -> None:
        super().__init__(directory, SINGLE_BROKER_SETTINGS)


class PykCluster(BrokerCluster):
    """A ZooKeeper and pykbrokers 1, 2, 3 with the Kafka cluster's settings; a killed broker
    restarts on its port and its data (`BrokerCluster.kill`, `BrokerCluster.restart`)."""

    label = LABEL
    ids = CLUSTER_IDS

    def __init__(self, directory: str | os.PathLike) -> None:
        super().__init__(directory, size=len(CLUSTER_IDS), overrides=CLUSTER_SETTINGS)

    @property
    def bootstrap(self) -> str:
        """Every broker, a killed one included (as a client's configured bootstrap list)."""
        return ",".join(b.bootstrap for b in self.brokers.values())
