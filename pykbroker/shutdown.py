"""Controlled shutdown: before a cluster broker stops, it asks the controller to move the
leadership of its partitions to other replicas, so that clients switch leaders without waiting
for its ZooKeeper session to expire.

Kafka's procedure: send ControlledShutdown (with this broker's id and epoch) to the controller;
when the answer lists partitions it still leads, wait `controlled.shutdown.retry.backoff.ms` and
ask again, at most `controlled.shutdown.max.retries` times. The broker stops either way. (The
controller lists only partitions another live replica could still take over, so a broker no one
can relieve, the last of a cluster, is answered with none and stops at once.) From the
start it fetches from no leader any more (Kafka's controller stops such a broker's replicas and
keeps it out of the ISRs).
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from .protocol import messages
from .protocol.api_keys import ApiKey
from .protocol.errors import ErrorCode
from .replication.broker_client import BrokerConnectionError

if TYPE_CHECKING:
    from .cluster.store import MetadataStore
    from .config import BrokerConfig
    from .replication.broker_client import Connect
    from .replication.replica_manager import ReplicaManager

log = logging.getLogger(__name__)


class Broker(Protocol):
    """What a controlled shutdown uses of the broker that stops."""

    broker_id: int
    config: BrokerConfig
    metadata: MetadataStore | None
    replica_manager: ReplicaManager | None

    @property
    def inter_broker_listener(self) -> str: ...

    def inter_broker_connect(self) -> Connect: ...


VERSION = 3
REQUEST_TIMEOUT_S = 10.0


@functools.cache
def controlled_shutdown_request() -> Any:
    """The CONTROLLED_SHUTDOWN request class, generated on first use."""
    return messages.request(ApiKey.CONTROLLED_SHUTDOWN).cls


async def controlled_shutdown(broker: Broker) -> bool:
    """True once the controller moved every leadership that could move."""
    config = broker.config
    attempts = max(1, int(config["controlled.shutdown.max.retries"]))
    backoff_s = int(config["controlled.shutdown.retry.backoff.ms"]) / 1000
    log.info("Starting controlled shutdown")
    # As the replicas Kafka's controller stops: no fetching from leaders, which would take this
    # broker back into the ISRs the controller takes it out of.
    assert broker.replica_manager is not None, "a broker shuts down in a controlled way only once it serves"
    broker.replica_manager.stop_replication()
    for attempt in range(1, attempts + 1):
        try:
            error, remaining = await _ask_controller(broker)
        except BrokerConnectionError as exc:
            error, remaining = None, []
            log.warning("Controlled shutdown request failed: %s", exc)
        if error == ErrorCode.NONE and not remaining:
            log.info("Controlled shutdown succeeded")
            return True
        if error is not None:
            log.info("Controlled shutdown attempt %d: %s, still leading %s", attempt, error.name, remaining)
        if attempt < attempts:
            await anyio.sleep(backoff_s)
    log.warning("Proceeding to do an unclean shutdown as all the controlled shutdown attempts failed")
    return False


async def _ask_controller(broker: Broker) -> tuple[ErrorCode | None, list]:
    store = broker.metadata
    assert store is not None
    endpoint = store.broker_endpoint(store.controller_id, broker.inter_broker_listener)
    if endpoint is None:
        return None, []
    connection = await broker.inter_broker_connect()(
        endpoint.host, endpoint.port, client_id=f"broker-{broker.broker_id}-shutdown", timeout_s=REQUEST_TIMEOUT_S
    )
    try:
        response = await connection.request(
            ApiKey.CONTROLLED_SHUTDOWN,
            VERSION,
            controlled_shutdown_request()(broker_id=broker.broker_id, broker_epoch=store.broker_epoch),
        )
    finally:
        await connection.aclose()
    remaining = [(p.topic_name, p.partition_index) for p in response.remaining_partitions]
    return ErrorCode(response.error_code), remaining
