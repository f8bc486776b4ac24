"""Produce-path verification (KIP-890 part 1; Kafka's AddPartitionsToTxnManager): before a
partition leader appends a transactional batch of a producer with no ongoing transaction on the
partition, it asks the producer's transaction coordinator whether the partition is part of the
producer's ongoing transaction.

    verifier = TransactionVerifier(broker_id, metadata, coordinator, listener_name="PLAINTEXT")
    errors = await verifier.verify("tx-1", producer_id, epoch, [("orders", 0)])   # NONE: verified

The coordinator is the leader of the id's `__transaction_state` partition. When that is this
broker, `TransactionCoordinator.verify_partitions` answers at once; otherwise AddPartitionsToTxn
v4 with `verify_only` goes to the coordinator's inter-broker endpoint. The answers are Kafka's:
COORDINATOR_NOT_AVAILABLE without a live coordinator (also before `__transaction_state` exists),
NETWORK_EXCEPTION when the coordinator cannot be reached, the response's top-level error for
every partition (CLUSTER_AUTHORIZATION_FAILED becomes INVALID_TXN_STATE), nothing to complain
about when the coordinator does not know verify-only requests (UNSUPPORTED_VERSION), and per
partition PRODUCER_FENCED as INVALID_PRODUCER_EPOCH (what producers expect here) and
TRANSACTION_ABORTABLE as INVALID_TXN_STATE for producers too old to know it (Produce v10 and
below: `abortable_error_supported=False`). The produce path maps the rest as ReplicaManager does.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any, Protocol

from ...common.topic_partition import TopicPartition
from ...protocol import messages
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ...replication.broker_client import BrokerConnection, BrokerConnectionError, BrokerConnectionPool, Connect
from .txn_topic import TRANSACTION_STATE_TOPIC

if TYPE_CHECKING:
    from ...cluster.store import MetadataStore

log = logging.getLogger(__name__)

VERIFY_VERSION = 4


@functools.cache
def add_partitions_to_txn_request() -> Any:
    """The ADD_PARTITIONS_TO_TXN request class, generated on first use."""
    return messages.request(ApiKey.ADD_PARTITIONS_TO_TXN).cls


class LocalTransactions(Protocol):
    """What the verifier asks of this broker's transaction coordinator (`coordinator.py`)."""

    def partition_for(self, transactional_id: str) -> int: ...

    async def verify_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]: ...


class TransactionVerifier:
    def __init__(
        self,
        broker_id: int,
        metadata: MetadataStore,
        coordinator: LocalTransactions,
        *,
        listener_name: str,
        request_timeout_ms: int = 30000,
        connect: Connect = BrokerConnection.open,
    ) -> None:
        self.broker_id = broker_id
        self.metadata = metadata
        self.coordinator = coordinator
        self.listener_name = listener_name
        self.connections = BrokerConnectionPool(
            metadata,
            listener_name,
            client_id=f"broker-{broker_id}-verification",
            timeout_s=request_timeout_ms / 1000,
            connect=connect,
        )

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: list[TopicPartition],
        *,
        abortable_error_supported: bool = True,
    ) -> dict[TopicPartition, ErrorCode]:
        """NONE for the partitions in the producer's ongoing transaction, else why not."""
        node = self._coordinator_node(transactional_id)
        if node is None:
            return dict.fromkeys(partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if node == self.broker_id:
            errors = await self.coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
        else:
            errors = await self._verify_remotely(node, transactional_id, producer_id, producer_epoch, partitions)
        return {tp: _producer_error(errors.get(tp, ErrorCode.NONE), abortable_error_supported) for tp in partitions}

    def _coordinator_node(self, transactional_id: str) -> int | None:
        info = self.metadata.topic(TRANSACTION_STATE_TOPIC)
        if info is None:  # no transaction was ever started
            return None
        state = info.partitions.get(self.coordinator.partition_for(transactional_id))
        if state is None or state.leader < 0:
            return None
        if state.leader != self.broker_id and self.metadata.broker_endpoint(state.leader, self.listener_name) is None:
            return None
        return state.leader

    async def _verify_remotely(
        self, node: int, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        try:
            response = await self.connections.request(
                node,
                ApiKey.ADD_PARTITIONS_TO_TXN,
                VERIFY_VERSION,
                _request(transactional_id, producer_id, producer_epoch, partitions),
            )
        except (BrokerConnectionError, OSError) as exc:
            log.warning("AddPartitionsToTxn verification with broker %d failed: %s", node, exc)
            return dict.fromkeys(partitions, ErrorCode.NETWORK_EXCEPTION)
        if response.error_code == ErrorCode.UNSUPPORTED_VERSION:
            return {}  # a coordinator that cannot verify: skip the verification
        if response.error_code != ErrorCode.NONE:
            error = (
                ErrorCode.INVALID_TXN_STATE
                if response.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                else _error(response.error_code)
            )
            return dict.fromkeys(partitions, error)
        errors: dict[TopicPartition, ErrorCode] = {}
        for result in response.results_by_transaction:
            if result.transactional_id != transactional_id:
                continue
            for topic in result.topic_results:
                for partition in topic.results_by_partition:
                    errors[(topic.name, partition.partition_index)] = _error(partition.partition_error_code)
        return errors


# The request is an instance of the class generated from its schema at run time.
def _request(transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]) -> Any:
    cls = add_partitions_to_txn_request()
    by_topic: dict[str, list[int]] = {}
    for topic, index in partitions:
        by_topic.setdefault(topic, []).append(index)
    return cls(
        transactions=[
            cls.AddPartitionsToTxnTransaction(
                transactional_id=transactional_id,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                verify_only=True,
                topics=[cls.AddPartitionsToTxnTopic(name=t, partitions=ids) for t, ids in by_topic.items()],
            )
        ]
    )


def _producer_error(error: ErrorCode, abortable_error_supported: bool) -> ErrorCode:
    if error == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if error == ErrorCode.TRANSACTION_ABORTABLE and not abortable_error_supported:
        return ErrorCode.INVALID_TXN_STATE
    return error


def _error(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR
