"""The broker's `SharePersister` (Kafka's DefaultStatePersister and PersisterStateManager): each
operation goes to the share coordinator of its key, on this broker or another.

    persister = DefaultStatePersister(broker_id, metadata, coordinator, listener_name="PLAINTEXT")
    state = await persister.read_state("g", topic_id, 0, leader_epoch=3)

The coordinator of a key is the leader of its `__share_group_state` partition: taken from the
metadata when the topic exists and the leader is live, else asked with FindCoordinator v6 (key
type SHARE) of a random live broker, which creates the topic on first use. When that coordinator
is this broker the share coordinator is called directly; otherwise the share-group state RPC (v0)
goes to it over the inter-broker listener, through connections opened by `connect` (the
inter-broker listener's security), one request at a time per broker.

Retries are Kafka's: COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR
(and a coordinator that cannot be reached) look the coordinator up again after an exponential
backoff (1 s doubling to 30 s, with 20% jitter), at most 5 times for the lookup and 5 for the
RPC; then the last error is the answer. Nothing here blocks the event loop.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ...protocol import messages
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ...replication.broker_client import BrokerConnection, BrokerConnectionError, BrokerConnectionPool, Connect
from .combiner import PersisterStateBatch
from .persister import ShareState
from .shard import SharePartitionKey
from .state_topic import SHARE_GROUP_STATE_TOPIC

if TYPE_CHECKING:
    from ...cluster.store import MetadataStore
    from .coordinator import ShareCoordinator

log = logging.getLogger(__name__)

REQUEST_BACKOFF_MS = 1000
REQUEST_BACKOFF_MAX_MS = 30000
MAX_ATTEMPTS = 5
BACKOFF_JITTER = 0.2
SHARE_KEY_TYPE = 2
FIND_COORDINATOR_VERSION = 6
STATE_RPC_VERSION = 0
RETRIABLE = frozenset(
    {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR}
)

LocalCall = Callable[["ShareCoordinator"], Awaitable[ShareState]]


class _Backoff:
    """Kafka's BackoffManager over an ExponentialBackoff."""

    def __init__(self, initial_ms: int, max_ms: int, max_attempts: int) -> None:
        self.initial_ms = initial_ms
        self.max_ms = max_ms
        self.max_attempts = max_attempts
        self.attempts = 0

    def can_attempt(self) -> bool:
        return self.attempts < self.max_attempts

    def backoff_s(self) -> float:
        term = min(self.initial_ms * 2**self.attempts, self.max_ms)
        return term * random.uniform(1 - BACKOFF_JITTER, 1 + BACKOFF_JITTER) / 1000


class _RemoteCall:
    """One share-group state RPC: its API key, its request, and how to read its answer."""

    def __init__(self, api_key: ApiKey, body: object, answer: Callable[[Any], ShareState]) -> None:
        self.api_key = api_key
        self.body = body
        self.answer = answer


class DefaultStatePersister:
    def __init__(
        self,
        broker_id: int,
        metadata: MetadataStore,
        coordinator: ShareCoordinator,
        *,
        listener_name: str,
        request_timeout_ms: int = 30000,
        connect: Connect = BrokerConnection.open,
        backoff_ms: int = REQUEST_BACKOFF_MS,
        backoff_max_ms: int = REQUEST_BACKOFF_MAX_MS,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.broker_id = broker_id
        self.metadata = metadata
        self.coordinator = coordinator
        self.listener_name = listener_name
        self.backoff_ms = backoff_ms
        self.backoff_max_ms = backoff_max_ms
        self.max_attempts = max_attempts
        self.connections = BrokerConnectionPool(
            metadata,
            listener_name,
            client_id=f"broker-{broker_id}-share-persister",
            timeout_s=request_timeout_ms / 1000,
            connect=connect,
        )
        self._node_locks: dict[int, anyio.Lock] = {}

    # -- SharePersister --------------------------------------------------------------------
    async def initialize_state(
        self, group_id: str, topic_id: uuid.UUID, partition: int, state_epoch: int, start_offset: int
    ) -> ErrorCode:
        key = SharePartitionKey(group_id, topic_id, partition)
        cls = messages.request(ApiKey.INITIALIZE_SHARE_GROUP_STATE).cls
        body = cls(
            group_id=group_id,
            topics=[
                cls.InitializeStateData(
                    topic_id=topic_id,
                    partitions=[
                        cls.PartitionData(partition=partition, state_epoch=state_epoch, start_offset=start_offset)
                    ],
                )
            ],
        )
        remote = _RemoteCall(ApiKey.INITIALIZE_SHARE_GROUP_STATE, body, lambda r: _partition_state(r, key))
        state = await self._call(key, lambda c: c.initialize_state(key, state_epoch, start_offset), remote)
        return state.error

    async def read_state(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState:
        key = SharePartitionKey(group_id, topic_id, partition)
        cls = messages.request(ApiKey.READ_SHARE_GROUP_STATE).cls
        body = cls(
            group_id=group_id,
            topics=[
                cls.ReadStateData(
                    topic_id=topic_id, partitions=[cls.PartitionData(partition=partition, leader_epoch=leader_epoch)]
                )
            ],
        )
        remote = _RemoteCall(ApiKey.READ_SHARE_GROUP_STATE, body, lambda r: _partition_state(r, key, leader_epoch))
        return await self._call(key, lambda c: c.read_state(key, leader_epoch), remote)

    async def write_state(
        self,
        group_id: str,
        topic_id: uuid.UUID,
        partition: int,
        state_epoch: int,
        leader_epoch: int,
        start_offset: int,
        batches: Sequence[PersisterStateBatch],
    ) -> ErrorCode:
        key = SharePartitionKey(group_id, topic_id, partition)
        cls = messages.request(ApiKey.WRITE_SHARE_GROUP_STATE).cls
        body = cls(
            group_id=group_id,
            topics=[
                cls.WriteStateData(
                    topic_id=topic_id,
                    partitions=[
                        cls.PartitionData(
                            partition=partition,
                            state_epoch=state_epoch,
                            leader_epoch=leader_epoch,
                            start_offset=start_offset,
                            state_batches=[
                                cls.StateBatch(
                                    first_offset=b.first_offset,
                                    last_offset=b.last_offset,
                                    delivery_state=b.delivery_state,
                                    delivery_count=b.delivery_count,
                                )
                                for b in batches
                            ],
                        )
                    ],
                )
            ],
        )
        remote = _RemoteCall(ApiKey.WRITE_SHARE_GROUP_STATE, body, lambda r: _partition_state(r, key))
        batch_list = list(batches)
        state = await self._call(
            key, lambda c: c.write_state(key, state_epoch, leader_epoch, start_offset, batch_list), remote
        )
        return state.error

    async def read_summary(self, group_id: str, topic_id: uuid.UUID, partition: int, leader_epoch: int) -> ShareState:
        key = SharePartitionKey(group_id, topic_id, partition)
        cls = messages.request(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY).cls
        body = cls(
            group_id=group_id,
            topics=[
                cls.ReadStateSummaryData(
                    topic_id=topic_id, partitions=[cls.PartitionData(partition=partition, leader_epoch=leader_epoch)]
                )
            ],
        )
        remote = _RemoteCall(
            ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, body, lambda r: _partition_state(r, key, leader_epoch)
        )
        return await self._call(key, lambda c: c.read_summary(key, leader_epoch), remote)

    async def delete_state(self, group_id: str, topic_id: uuid.UUID, partition: int) -> ErrorCode:
        key = SharePartitionKey(group_id, topic_id, partition)
        cls = messages.request(ApiKey.DELETE_SHARE_GROUP_STATE).cls
        body = cls(
            group_id=group_id,
            topics=[cls.DeleteStateData(topic_id=topic_id, partitions=[cls.PartitionData(partition=partition)])],
        )
        remote = _RemoteCall(ApiKey.DELETE_SHARE_GROUP_STATE, body, lambda r: _partition_state(r, key))
        state = await self._call(key, lambda c: c.delete_state(key), remote)
        return state.error

    def shutdown(self) -> None:
        """Close the connections to other brokers (in the background, on the coordinator's runtime)."""
        for connection in self.connections.pop_all():
            self.coordinator.runtime.spawn(connection.aclose)

    # -- finding the coordinator and calling it --------------------------------------------
    def _backoff(self) -> _Backoff:
        return _Backoff(self.backoff_ms, self.backoff_max_ms, self.max_attempts)

    async def _call(self, key: SharePartitionKey, local: LocalCall, remote: _RemoteCall) -> ShareState:
        find_backoff, rpc_backoff = self._backoff(), self._backoff()
        while True:
            node, error = await self._find_coordinator(key, find_backoff)
            if node is None:
                return ShareState(error)
            if node == self.broker_id:
                state = await local(self.coordinator)
            else:
                state = await self._send(node, remote)
            rpc_backoff.attempts += 1
            if state.error not in RETRIABLE:
                return state
            if not rpc_backoff.can_attempt():
                log.error("Exhausted the retries of %s for %s: %s", remote.api_key.name, key, state.error.name)
                return state
            log.debug("Retrying %s for %s after %s", remote.api_key.name, key, state.error.name)
            await anyio.sleep(rpc_backoff.backoff_s())

    async def _find_coordinator(self, key: SharePartitionKey, backoff: _Backoff) -> tuple[int | None, ErrorCode]:
        """The coordinator's broker id (None, with the error, once the lookup gives up)."""
        while True:
            node = self._coordinator_in_metadata(key)
            if node is not None:
                return node, ErrorCode.NONE
            error, node = await self._ask_find_coordinator(key)
            backoff.attempts += 1
            if error == ErrorCode.NONE and node is not None:
                return node, error
            if error not in RETRIABLE or not backoff.can_attempt():
                log.error("Could not find the share coordinator of %s: %s", key, error.name)
                return None, error
            await anyio.sleep(backoff.backoff_s())

    def _coordinator_in_metadata(self, key: SharePartitionKey) -> int | None:
        info = self.metadata.topic(SHARE_GROUP_STATE_TOPIC)
        if info is None:
            return None
        state = info.partitions.get(self.coordinator.partition_for(key))
        if state is None or state.leader < 0:
            return None
        if state.leader != self.broker_id and self.metadata.broker_endpoint(state.leader, self.listener_name) is None:
            return None
        return state.leader

    async def _ask_find_coordinator(self, key: SharePartitionKey) -> tuple[ErrorCode, int | None]:
        brokers = self.metadata.live_brokers(self.listener_name)
        if not brokers:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        node = random.choice(brokers).broker_id
        cls = messages.request(ApiKey.FIND_COORDINATOR).cls
        body = cls(key_type=SHARE_KEY_TYPE, coordinator_keys=[key.coordinator_key()])
        try:
            response = await self._request(node, ApiKey.FIND_COORDINATOR, FIND_COORDINATOR_VERSION, body)
        except (BrokerConnectionError, OSError) as exc:
            log.warning("FindCoordinator for %s with broker %d failed: %s", key, node, exc)
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, None
        if len(response.coordinators) != 1:
            return ErrorCode.UNKNOWN_SERVER_ERROR, None
        coordinator = response.coordinators[0]
        return _error(coordinator.error_code), coordinator.node_id

    async def _send(self, node: int, remote: _RemoteCall) -> ShareState:
        try:
            response = await self._request(node, remote.api_key, STATE_RPC_VERSION, remote.body)
        except (BrokerConnectionError, OSError) as exc:
            log.warning("%s with broker %d failed: %s", remote.api_key.name, node, exc)
            return ShareState(ErrorCode.NOT_COORDINATOR)
        return remote.answer(response)

    async def _request(self, node: int, api_key: int, version: int, body: object) -> Any:
        lock = self._node_locks.setdefault(node, anyio.Lock())
        async with lock:
            return await self.connections.request(node, api_key, version, body)


# The responses are instances of the classes generated from their schemas at run time.
def _partition_state(response: Any, key: SharePartitionKey, leader_epoch: int = -1) -> ShareState:
    """The answer of `key`'s partition in a share-group state response."""
    for result in response.results:
        if result.topic_id != key.topic_id:
            continue
        for p in result.partitions:
            if p.partition != key.partition:
                continue
            error = _error(p.error_code)
            batches = tuple(
                PersisterStateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
                for b in getattr(p, "state_batches", ())
            )
            return ShareState(
                error,
                state_epoch=getattr(p, "state_epoch", 0),
                start_offset=getattr(p, "start_offset", -1),
                leader_epoch=leader_epoch,
                batches=batches,
                error_message=p.error_message,
            )
    return ShareState(ErrorCode.UNKNOWN_SERVER_ERROR, error_message=f"No answer for {key} in the response")


def _error(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR
