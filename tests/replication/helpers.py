"""A ReplicaManager on the broker's real log and embedded metadata, with its purgatories on a
`MockTimer`, for tests of waits: acks=all and fetch long polling."""
from __future__ import annotations

import anyio

from pykbroker.cluster.embedded import EmbeddedMetadataStore
from pykbroker.cluster.model import BrokerInfo
from pykbroker.common.timer import MockTimer
from pykbroker.config import BrokerConfig, topic_config_values
from pykbroker.log.manager import LogManager
from pykbroker.replication.fetch_types import PartitionFetchRequest
from pykbroker.replication.replica_manager import ReplicaManager

BROKER = 0
FOLLOWER = 1  # in the ISR, never fetches unless a test makes it
TP = ("orders", 0)


def replica_manager(directory, *, replicas=(BROKER, FOLLOWER),
                    fsync_before_ack: bool = False) -> ReplicaManager:
    """This broker leads `orders-0` on `replicas`, all in the ISR; `manager.timer` drives
    the time."""
    timer = MockTimer()
    config = BrokerConfig({"log.dirs": str(directory), "broker.id": BROKER})
    store = EmbeddedMetadataStore([str(directory)], BrokerInfo(BROKER, "127.0.0.1", 9092))
    logs = LogManager([str(directory)], topic_config_values({}, config),
                      fsync_before_ack=fsync_before_ack, time_ms=timer.clock.now_ms)
    manager = ReplicaManager(BROKER, config, logs, store, timer=timer)
    manager.startup()
    store.create_topic(TP[0], 1, len(replicas), assignments={TP[1]: list(replicas)})
    return manager


def fetch_from(offset: int) -> list:
    return [(TP, PartitionFetchRequest(fetch_offset=offset, max_bytes=1 << 20))]


async def let_waiters_run() -> None:
    """Give every ready task its turn (each reaches its next wait)."""
    for _ in range(10):
        await anyio.sleep(0)
