"""Sending transaction markers to partition leaders (Kafka's TransactionMarkerChannelManager and
TransactionMarkerRequestCompletionHandler).

Once a PrepareCommit or PrepareAbort is in the log, the coordinator hands the transaction here
(`add_txn_markers_to_send`). Its partitions are grouped by leader, and one COMMIT or ABORT marker
per leader is queued for that broker. Each broker's queue is drained by one sender at a time:

- partitions this broker leads are written by calling the partition side directly
  (`TxnMarkerService.write_txn_markers`, `replication/txn_markers.py`);
- other leaders get WriteTxnMarkers v1 over a `BrokerConnection` to their inter-broker listener
  endpoint (as Kafka, which sends them over its inter-broker channel).

Per partition: NONE removes the partition from the transaction; retriable errors
(NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS[_AFTER_APPEND],
REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR) and lost connections queue the partition again after
`retry_backoff_ms`, looking its leader up anew (leaders move); INVALID_PRODUCER_EPOCH and
TRANSACTION_COORDINATOR_FENCED end the sending (a newer producer or coordinator took over);
UNSUPPORTED_VERSION and UNSUPPORTED_FOR_MESSAGE_FORMAT drop the partition. A partition whose
topic was deleted is skipped; one whose leader is unknown waits in the unknown-broker queue.

When no partition is left, CompleteCommit or CompleteAbort is appended to `__transaction_state`
(again after a backoff while the coordinator is not available). Markers of a
`__transaction_state` partition this broker stops leading are dropped: its next coordinator
sends them again after loading.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ...common.topic_partition import TopicPartition
from ...common.txn_marker import TxnMarker
from ...protocol import messages
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ...replication.broker_client import BrokerConnection, BrokerConnectionError, BrokerConnectionPool, Connect
from ..runtime import LoopRuntime
from .metadata import TransactionMetadata, TxnTransitMetadata
from .state_manager import TransactionStateManager

if TYPE_CHECKING:
    from ...cluster.store import MetadataStore

log = logging.getLogger(__name__)

WRITE_TXN_MARKERS_VERSION = 1
UNKNOWN_BROKER = -1

_RETRIABLE = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.KAFKA_STORAGE_ERROR,
    }
)
_FENCED = frozenset({ErrorCode.INVALID_PRODUCER_EPOCH, ErrorCode.TRANSACTION_COORDINATOR_FENCED})
_UNSUPPORTED = frozenset({ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT, ErrorCode.UNSUPPORTED_VERSION})


@functools.cache
def write_txn_markers_request() -> Any:
    """The WRITE_TXN_MARKERS request class, generated on first use."""
    return messages.request(ApiKey.WRITE_TXN_MARKERS).cls


class TxnMarkerService(Protocol):
    """The partition side: appends markers as the partitions' leader (WriteTxnMarkers)."""

    async def write_txn_markers(self, markers: list[TxnMarker]) -> list[dict[TopicPartition, ErrorCode]]: ...


@dataclass(eq=False)
class PendingCompleteTxn:
    """A transaction waiting for its markers, and the transition to write once they are."""

    transactional_id: str
    coordinator_epoch: int
    txn_metadata: TransactionMetadata
    new_metadata: TxnTransitMetadata


@dataclass(eq=False)
class PendingMarker:
    pending: PendingCompleteTxn
    marker: TxnMarker
    txn_topic_partition: int


class TransactionMarkerChannelManager:
    def __init__(
        self,
        broker_id: int,
        state_manager: TransactionStateManager,
        metadata: MetadataStore,
        runtime: LoopRuntime,
        *,
        listener_name: str,
        request_timeout_ms: int = 30000,
        retry_backoff_ms: int = 100,
        local_writer: TxnMarkerService | None = None,
        connect: Connect | None = None,  # None: BrokerConnection.open (no inter-broker security)
    ) -> None:
        self.broker_id = broker_id
        self.state = state_manager
        self.metadata = metadata
        self.runtime = runtime
        self.listener_name = listener_name
        self.retry_backoff_ms = retry_backoff_ms
        self.local_writer = local_writer  # None: write to this broker over the network too
        self.connections = BrokerConnectionPool(
            metadata,
            listener_name,
            client_id=f"broker-{broker_id}-txn-marker-sender",
            timeout_s=request_timeout_ms / 1000,
            connect=connect or BrokerConnection.open,
        )
        self.transactions_with_pending_markers: dict[str, PendingCompleteTxn] = {}
        self.queues: dict[int, list[PendingMarker]] = {}  # by destination broker id
        self.unknown_broker_queue: list[PendingMarker] = []
        self._sending: set[int] = set()
        self._unknown_retry_scheduled = False

    # -- what the coordinator asks -----------------------------------------------------------
    def add_txn_markers_to_send(
        self,
        coordinator_epoch: int,
        committed: bool,
        txn_metadata: TransactionMetadata,
        new_metadata: TxnTransitMetadata,
    ) -> None:
        transactional_id = txn_metadata.transactional_id
        pending = PendingCompleteTxn(transactional_id, coordinator_epoch, txn_metadata, new_metadata)
        if transactional_id in self.transactions_with_pending_markers:
            log.info("Replaced an existing pending complete txn of %s while adding markers to send", transactional_id)
        self.transactions_with_pending_markers[transactional_id] = pending
        self.add_txn_markers_to_broker_queue(
            txn_metadata.producer_id,
            txn_metadata.producer_epoch,
            committed,
            pending,
            set(txn_metadata.topic_partitions),
        )
        self.maybe_write_txn_completion(transactional_id)

    def remove_markers_for_txn_topic_partition(self, txn_topic_partition: int) -> None:
        """Drop the queued markers of a `__transaction_state` partition (resigned or reloading)."""
        for destination, queue in [(UNKNOWN_BROKER, self.unknown_broker_queue), *self.queues.items()]:
            removed = [entry for entry in queue if entry.txn_topic_partition == txn_topic_partition]
            queue[:] = [entry for entry in queue if entry.txn_topic_partition != txn_topic_partition]
            for entry in removed:
                log.info(
                    "Removing %s for txn partition %d to destination broker %d",
                    entry.marker,
                    txn_topic_partition,
                    destination,
                )
                self._remove_markers_for_txn(entry.pending)

    def shutdown(self) -> None:
        self.queues.clear()
        self.unknown_broker_queue.clear()
        self.transactions_with_pending_markers.clear()
        for connection in self.connections.pop_all():
            self.runtime.spawn(connection.aclose)

    # -- queueing by leader ------------------------------------------------------------------
    def add_txn_markers_to_broker_queue(
        self,
        producer_id: int,
        producer_epoch: int,
        committed: bool,
        pending: PendingCompleteTxn,
        partitions: set[TopicPartition],
    ) -> None:
        txn_topic_partition = self.state.partition_for(pending.transactional_id)
        by_destination: dict[int | None, list[TopicPartition]] = {}
        for tp in sorted(partitions):
            by_destination.setdefault(self._leader_of(tp), []).append(tp)
        for destination, tps in by_destination.items():
            if destination is None:
                self._skip_deleted_partitions(pending, tps)
                continue
            marker = TxnMarker(producer_id, producer_epoch, committed, pending.coordinator_epoch, tuple(tps))
            entry = PendingMarker(pending, marker, txn_topic_partition)
            if destination == UNKNOWN_BROKER:
                self.unknown_broker_queue.append(entry)
                self._schedule_unknown_retry()
            else:
                self.queues.setdefault(destination, []).append(entry)
                self._wake(destination)

    def _leader_of(self, tp: TopicPartition) -> int | None:
        """The leader's broker id; UNKNOWN_BROKER without a live leader; None when the
        partition does not exist (its topic was deleted)."""
        topic, index = tp
        info = self.metadata.topic(topic)
        state = None if info is None else info.partitions.get(index)
        if state is None:
            return None
        if state.leader < 0:
            return UNKNOWN_BROKER
        if state.leader == self.broker_id and self.local_writer is not None:
            return state.leader
        if self.metadata.broker_endpoint(state.leader, self.listener_name) is None:
            return UNKNOWN_BROKER
        return state.leader

    def _skip_deleted_partitions(self, pending: PendingCompleteTxn, tps: list[TopicPartition]) -> None:
        transactional_id = pending.transactional_id
        error, found = self.state.get_transaction_state(transactional_id)
        if error != ErrorCode.NONE or found is None or found.coordinator_epoch != pending.coordinator_epoch:
            log.info("Cancel sending markers of %s to its partition leaders (%s)", transactional_id, error.name)
            self._remove_markers_for_txn(pending)
            return
        log.info(
            "Couldn't find leader endpoint for partitions %s while trying to send transaction markers for %s, "
            "these partitions are likely deleted already and hence can be skipped",
            tps,
            transactional_id,
        )
        for tp in tps:
            found.transaction_metadata.remove_partition(tp)
        self.maybe_write_txn_completion(transactional_id)

    def _schedule_unknown_retry(self) -> None:
        if not self._unknown_retry_scheduled:
            self._unknown_retry_scheduled = True
            self.runtime.call_later(self.retry_backoff_ms, self._retry_unknown_brokers)

    def _retry_unknown_brokers(self) -> None:
        self._unknown_retry_scheduled = False
        entries, self.unknown_broker_queue = self.unknown_broker_queue, []
        for entry in entries:
            self._requeue(entry, set(entry.marker.partitions))

    def _requeue(self, entry: PendingMarker, partitions: set[TopicPartition]) -> None:
        marker = entry.marker
        self.add_txn_markers_to_broker_queue(
            marker.producer_id, marker.producer_epoch, marker.committed, entry.pending, partitions
        )

    def _requeue_later(self, entry: PendingMarker, partitions: set[TopicPartition]) -> None:
        self.runtime.call_later(self.retry_backoff_ms, lambda: self._requeue_if_current(entry, partitions))

    def _requeue_if_current(self, entry: PendingMarker, partitions: set[TopicPartition]) -> None:
        if self.transactions_with_pending_markers.get(entry.pending.transactional_id) is entry.pending:
            self._requeue(entry, partitions)

    # -- sending -----------------------------------------------------------------------------
    def _wake(self, destination: int) -> None:
        if destination not in self._sending:
            self._sending.add(destination)
            self.runtime.spawn(self._drain, destination)

    async def _drain(self, destination: int) -> None:
        try:
            while self.queues.get(destination):
                entries, self.queues[destination] = self.queues[destination], []
                results = await self._write(destination, [entry.marker for entry in entries])
                for index, entry in enumerate(entries):
                    if results is None:
                        self._on_disconnected(entry)
                    else:
                        self._on_marker_result(entry, results[index])
        finally:
            self._sending.discard(destination)

    async def _write(self, destination: int, markers: list[TxnMarker]) -> list[dict[TopicPartition, ErrorCode]] | None:
        """Each marker's errors by partition, in order; None when the broker could not be reached."""
        if destination == self.broker_id and self.local_writer is not None:
            return await self.local_writer.write_txn_markers(markers)
        try:
            response = await self.connections.request(
                destination, ApiKey.WRITE_TXN_MARKERS, WRITE_TXN_MARKERS_VERSION, _request(markers)
            )
        except (BrokerConnectionError, OSError) as exc:
            log.info("Sending transaction markers to broker %d failed: %s", destination, exc)
            return None
        return _results(markers, response)

    # -- answers -----------------------------------------------------------------------------
    def _current_metadata(self, entry: PendingMarker) -> TransactionMetadata | None:
        """The transaction's metadata if this coordinator still sends its markers, else None
        (and the sending is cancelled)."""
        transactional_id = entry.pending.transactional_id
        error, found = self.state.get_transaction_state(transactional_id)
        if error != ErrorCode.NONE or found is None:
            log.info("Cancel sending transaction markers %s of %s (%s)", entry.marker, transactional_id, error.name)
        elif found.coordinator_epoch != entry.marker.coordinator_epoch:
            log.info(
                "Transaction coordinator epoch for %s has changed from %d to %d; cancel sending transaction markers",
                transactional_id,
                entry.marker.coordinator_epoch,
                found.coordinator_epoch,
            )
        else:
            return found.transaction_metadata
        self._remove_markers_for_txn(entry.pending)
        return None

    def _on_disconnected(self, entry: PendingMarker) -> None:
        if self._current_metadata(entry) is not None:
            self._requeue_later(entry, set(entry.marker.partitions))

    def _on_marker_result(self, entry: PendingMarker, errors: dict[TopicPartition, ErrorCode]) -> None:
        metadata = self._current_metadata(entry)
        if metadata is None:
            return
        transactional_id = entry.pending.transactional_id
        retry: set[TopicPartition] = set()
        for tp, error in errors.items():
            if error == ErrorCode.NONE or error in _UNSUPPORTED:
                if error != ErrorCode.NONE:
                    log.info("Marker of %s for %s failed with %s: partition dropped", transactional_id, tp, error.name)
                metadata.remove_partition(tp)
            elif error in _RETRIABLE:
                log.info(
                    "Sending %s's transaction marker for %s failed with %s, retrying", transactional_id, tp, error.name
                )
                retry.add(tp)
            else:
                level = logging.INFO if error in _FENCED else logging.ERROR
                log.log(
                    level,
                    "Sending %s's transaction marker for %s failed with %s: cancel sending",
                    transactional_id,
                    tp,
                    error.name,
                )
                self._remove_markers_for_txn(entry.pending)
                return
        if retry:
            self._requeue_later(entry, retry)
        else:
            self.maybe_write_txn_completion(transactional_id)

    # -- completing the transaction ----------------------------------------------------------
    def maybe_write_txn_completion(self, transactional_id: str) -> None:
        pending = self.transactions_with_pending_markers.get(transactional_id)
        if pending is not None and not pending.txn_metadata.topic_partitions:
            del self.transactions_with_pending_markers[transactional_id]
            self._write_txn_completion(pending)

    def _write_txn_completion(self, pending: PendingCompleteTxn) -> None:
        error, found = self.state.get_transaction_state(pending.transactional_id)
        if error != ErrorCode.NONE or found is None:
            log.info(
                "Not appending %s for %s: %s", pending.new_metadata.txn_state, pending.transactional_id, error.name
            )
        elif found.coordinator_epoch != pending.coordinator_epoch:
            log.info("The coordinator epoch of %s changed; not appending its completion", pending.transactional_id)
        else:
            self._try_append_to_log(pending)

    def _try_append_to_log(self, pending: PendingCompleteTxn) -> None:
        def appended(error: ErrorCode) -> None:
            if error == ErrorCode.COORDINATOR_NOT_AVAILABLE:
                log.info("Not available to append the completion of %s; retrying", pending.transactional_id)
                self.runtime.call_later(self.retry_backoff_ms, lambda: self._try_append_to_log(pending))
            elif error not in (ErrorCode.NONE, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
                log.error(
                    "Unexpected error %s while appending to transaction log for %s",
                    error.name,
                    pending.transactional_id,
                )
            else:
                log.debug("Completion of %s: %s", pending.transactional_id, error.name)

        self.state.append_transaction_to_log(
            pending.transactional_id,
            pending.coordinator_epoch,
            pending.new_metadata,
            appended,
            retry_on_error=lambda error: error == ErrorCode.COORDINATOR_NOT_AVAILABLE,
        )

    def _remove_markers_for_txn(self, pending: PendingCompleteTxn) -> None:
        if self.transactions_with_pending_markers.get(pending.transactional_id) is pending:
            del self.transactions_with_pending_markers[pending.transactional_id]


# The request and response are instances of the classes generated from their schemas at run time.
def _request(markers: list[TxnMarker]) -> Any:
    cls = write_txn_markers_request()
    entries = []
    for marker in markers:
        by_topic: dict[str, list[int]] = {}
        for topic, index in marker.partitions:
            by_topic.setdefault(topic, []).append(index)
        entries.append(
            cls.WritableTxnMarker(
                producer_id=marker.producer_id,
                producer_epoch=marker.producer_epoch,
                transaction_result=marker.committed,
                topics=[cls.WritableTxnMarkerTopic(name=t, partition_indexes=ids) for t, ids in by_topic.items()],
                coordinator_epoch=marker.coordinator_epoch,
            )
        )
    return cls(markers=entries)


def _results(markers: list[TxnMarker], response: Any) -> list[dict[TopicPartition, ErrorCode]]:
    """The errors of each marker (matched by producer id, as Kafka does)."""
    by_producer: dict[int, dict[TopicPartition, ErrorCode]] = {}
    for result in response.markers:
        errors = by_producer.setdefault(result.producer_id, {})
        for topic in result.topics:
            for partition in topic.partitions:
                errors[(topic.name, partition.partition_index)] = _error(partition.error_code)
    return [
        {tp: by_producer.get(m.producer_id, {}).get(tp, ErrorCode.UNKNOWN_SERVER_ERROR) for tp in m.partitions}
        for m in markers
    ]


def _error(code: int) -> ErrorCode:
    try:
        return ErrorCode(code)
    except ValueError:
        return ErrorCode.UNKNOWN_SERVER_ERROR
