"""The transaction coordinator (Kafka's TransactionCoordinator): serves the transactional ids of
the `__transaction_state` partitions this broker leads, and follows leadership changes of them.

    coordinator = TransactionCoordinator.for_broker(broker_id, config, writer, loader, metadata,
                                                    timer, producer_ids, listener_name=...,
                                                    group_partition_for=groups.partition_for)
    coordinator.startup()            # load the partitions led now; follow the metadata store
    await coordinator.run()          # background appends and marker sends, until cancelled
    error, producer_id, epoch = await coordinator.init_producer_id("tx-1", 60000, -1, -1)

The APIs, as Kafka 3.9 answers them (with transaction version 0, the only one of a ZooKeeper-mode
cluster):

- InitProducerId: a new id gets a producer id and epoch 0; an existing one gets its epoch bumped
  (KIP-360: with an expected producer id and epoch, a retried bump gets the same answer, a stale
  producer PRODUCER_FENCED); an exhausted epoch moves to a new producer id. An Ongoing transaction
  is first aborted with a bumped epoch (the fence) and the producer gets CONCURRENT_TRANSACTIONS
  until the abort is complete. INVALID_TRANSACTION_TIMEOUT above `transaction.max.timeout.ms`.
- AddPartitionsToTxn / AddOffsetsToTxn (the group's `__consumer_offsets` partition): the
  transaction becomes Ongoing with the partitions; INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
  CONCURRENT_TRANSACTIONS while a transition is pending or the previous transaction completes.
- `verify_partitions` (AddPartitionsToTxn v4+ with verify_only): NONE for partitions in the
  ongoing transaction, TRANSACTION_ABORTABLE for the others; changes nothing.
- EndTxn: PrepareCommit/PrepareAbort is written, the client answered, the markers sent
  (`markers.py`), then CompleteCommit/CompleteAbort written. A retried EndTxn of a completed
  transaction is answered NONE, of one still completing CONCURRENT_TRANSACTIONS; the other
  result INVALID_TXN_STATE.
- Transactions open longer than their timeout are aborted every
  `transaction.abort.timed.out.transaction.cleanup.interval.ms`, with a bumped epoch (which
  fences the producer); ids idle for `transactional.id.expiration.ms` are removed every
  `transaction.remove.expired.transaction.cleanup.interval.ms`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ...common.timer import Timer
from ...common.topic_partition import TopicPartition
from ...protocol.errors import ErrorCode, KafkaError
from ..group.offsets_topic import OFFSETS_TOPIC
from ..internal_topic import follow_leadership, follow_topic, led_partitions
from ..partition_io import CoordinatorLoader, PartitionWriter
from ..runtime import LoopRuntime, Reply
from .markers import Connect, TransactionMarkerChannelManager, TxnMarkerService
from .metadata import (
    COMPLETE_ABORT,
    COMPLETE_COMMIT,
    DEAD,
    EMPTY,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    ONGOING,
    PREPARE_ABORT,
    PREPARE_COMMIT,
    PREPARE_EPOCH_FENCE,
    TransactionMetadata,
    TxnTransitMetadata,
    is_epoch_exhausted,
)
from .state_manager import (
    CoordinatorEpochAndTxnMetadata,
    StateLookup,
    TransactionConfig,
    TransactionListing,
    TransactionStateManager,
)
from .txn_topic import TRANSACTION_STATE_TOPIC, partition_count

if TYPE_CHECKING:
    from ...cluster.model import TopicInfo
    from ...cluster.store import MetadataStore
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

InitResult = tuple[ErrorCode, int, int]  # (error, producer id, producer epoch)
EndTxnCallback = Callable[[ErrorCode], None]


class ProducerIds(Protocol):
    """Where new producer ids come from (`coordinator/producer_ids.py`)."""

    async def generate_producer_id_async(self) -> int: ...


@dataclass(frozen=True)
class DescribedTransaction:
    """DescribeTransactions' answer for one transactional id."""

    transactional_id: str
    error: ErrorCode
    state: str = ""
    producer_id: int = 0
    producer_epoch: int = 0
    timeout_ms: int = 0
    start_time_ms: int = 0
    topics: dict[str, list[int]] = field(default_factory=dict)


class TransactionCoordinator:
    def __init__(
        self,
        broker_id: int,
        config: TransactionConfig,
        state_manager: TransactionStateManager,
        markers: TransactionMarkerChannelManager,
        producer_ids: ProducerIds,
        runtime: LoopRuntime,
        *,
        metadata: MetadataStore | None = None,
        group_partition_for: Callable[[str], int] | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.config = config
        self.state = state_manager
        self.markers = markers
        self.producer_ids = producer_ids
        self.runtime = runtime
        self.metadata = metadata
        self.group_partition_for = group_partition_for
        self.is_active = False

    @classmethod
    def for_broker(
        cls,
        broker_id: int,
        config: BrokerConfig,
        writer: PartitionWriter,
        loader: CoordinatorLoader,
        metadata: MetadataStore,
        timer: Timer,
        producer_ids: ProducerIds,
        *,
        listener_name: str,
        group_partition_for: Callable[[str], int],
        marker_writer: TxnMarkerService | None = None,
        connect: Connect | None = None,
    ) -> TransactionCoordinator:
        """The broker's coordinator: `__transaction_state` written through `writer` and loaded
        through `loader`, markers written locally through `marker_writer` (None: over the
        network, as to other leaders) and sent to other leaders on `listener_name`, through
        connections opened by `connect` (the inter-broker listener's security)."""
        runtime = LoopRuntime(timer, "Transaction coordinator")
        txn_config = TransactionConfig.from_broker_config(config)
        count = partition_count(metadata, config)  # fixed for the broker's lifetime, as in Kafka
        state = TransactionStateManager(writer, loader, runtime, txn_config, lambda: count)
        markers = TransactionMarkerChannelManager(
            broker_id,
            state,
            metadata,
            runtime,
            listener_name=listener_name,
            request_timeout_ms=txn_config.request_timeout_ms,
            local_writer=marker_writer,
            connect=connect,
        )
        return cls(
            broker_id,
            txn_config,
            state,
            markers,
            producer_ids,
            runtime,
            metadata=metadata,
            group_partition_for=group_partition_for,
        )

    # -- lifecycle -------------------------------------------------------------------------
    def startup(self) -> None:
        follow_topic(self.metadata, TRANSACTION_STATE_TOPIC, self._on_topic_changed)
        self._schedule(self.config.abort_timed_out_transactions_interval_ms, self.abort_timed_out_transactions)
        self._schedule(
            self.config.remove_expired_transactional_ids_interval_ms, self.state.remove_expired_transactional_ids
        )
        self.is_active = True
        log.info("Transaction coordinator %d started", self.broker_id)

    async def run(self) -> None:
        await self.runtime.run()

    def shutdown(self) -> None:
        self.is_active = False
        for partition in sorted(self.state.owned_partitions | set(self.state.loading_partitions)):
            self.on_resignation(partition)
        self.markers.shutdown()
        log.info("Transaction coordinator %d stopped", self.broker_id)

    def partition_for(self, transactional_id: str) -> int:
        return self.state.partition_for(transactional_id)

    def _schedule(self, interval_ms: int, job: Callable[[], None]) -> None:
        def run_and_reschedule() -> None:
            if not self.is_active:
                return
            try:
                job()
            finally:
                self._schedule(interval_ms, job)

        self.runtime.call_later(interval_ms, run_and_reschedule)

    # -- following leadership of __transaction_state ---------------------------------------
    def on_election(self, partition: int, coordinator_epoch: int) -> None:
        log.info("Elected as the txn coordinator for partition %d at epoch %d", partition, coordinator_epoch)
        self.markers.remove_markers_for_txn_topic_partition(partition)
        self.state.load_transactions_for_partition(partition, coordinator_epoch, self._send_markers_after_load)

    def on_resignation(self, partition: int) -> None:
        log.info("Resigned as the txn coordinator for partition %d", partition)
        self.state.remove_transactions_for_partition(partition)
        self.markers.remove_markers_for_txn_topic_partition(partition)

    def _send_markers_after_load(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        committed: bool,
        metadata: TransactionMetadata,
        transit: TxnTransitMetadata,
    ) -> None:
        self.markers.add_txn_markers_to_send(coordinator_epoch, committed, metadata, transit)

    def _served_epochs(self) -> dict[int, int]:
        served = {p: entry.coordinator_epoch for p, entry in self.state.transaction_metadata_cache.items()}
        served.update({p: epoch for p, (epoch, _token) in self.state.loading_partitions.items()})
        return served

    def _on_topic_changed(self, name: str, info: TopicInfo | None) -> None:
        if name != TRANSACTION_STATE_TOPIC:
            return
        served = self._served_epochs()
        led = led_partitions(
            info, self.broker_id, lambda index: self.state.writer.is_leader(TRANSACTION_STATE_TOPIC, index)
        )
        follow_leadership(served, led, self.on_election, self.on_resignation)

    # -- InitProducerId --------------------------------------------------------------------
    async def init_producer_id(
        self,
        transactional_id: str,
        transaction_timeout_ms: int,
        expected_producer_id: int,
        expected_producer_epoch: int,
    ) -> InitResult:
        """(error, producer id, epoch) for a transactional id; an expected producer id and epoch
        of -1 mean none (a new producer)."""
        if transactional_id == "":
            return ErrorCode.INVALID_REQUEST, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if not self.state.validate_transaction_timeout_ms(transaction_timeout_ms):
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        expected = None if expected_producer_id == NO_PRODUCER_ID else (expected_producer_id, expected_producer_epoch)
        try:
            error, found = await self._get_or_create(transactional_id, transaction_timeout_ms)
            new_producer_id = None
            if error == ErrorCode.NONE and found is not None and self._needs_new_producer_id(found, expected):
                new_producer_id = await self.producer_ids.generate_producer_id_async()
                error, found = self.state.get_transaction_state(transactional_id)
        except KafkaError as exc:  # no producer id block could be reserved
            return exc.code, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        if error != ErrorCode.NONE or found is None:
            return error if error != ErrorCode.NONE else ErrorCode.NOT_COORDINATOR, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        transit = self._prepare_init_producer_id_transit(
            transactional_id, transaction_timeout_ms, found.transaction_metadata, expected, new_producer_id
        )
        if isinstance(transit, ErrorCode):
            return transit, NO_PRODUCER_ID, NO_PRODUCER_EPOCH
        reply: Reply[InitResult] = Reply()
        if transit.txn_state == PREPARE_EPOCH_FENCE:
            # abort the ongoing transaction first; the producer retries until it is aborted
            self._abort_fenced_transaction(
                transactional_id,
                transit,
                lambda e: reply.set((ErrorCode.CONCURRENT_TRANSACTIONS if e == ErrorCode.NONE else e, -1, -1)),
            )
        else:

            def appended(e: ErrorCode) -> None:
                if e == ErrorCode.NONE:
                    log.info(
                        "Initialized transactionalId %s with producerId %d and producer epoch %d on partition %s-%d",
                        transactional_id,
                        transit.producer_id,
                        transit.producer_epoch,
                        TRANSACTION_STATE_TOPIC,
                        self.partition_for(transactional_id),
                    )
                    reply.set((ErrorCode.NONE, transit.producer_id, transit.producer_epoch))
                else:
                    log.info(
                        "Returning %s error code to client for %s's InitProducerId request", e.name, transactional_id
                    )
                    reply.set((e, NO_PRODUCER_ID, NO_PRODUCER_EPOCH))

            self.state.append_transaction_to_log(transactional_id, found.coordinator_epoch, transit, appended)
        return await reply.wait()

    async def _get_or_create(self, transactional_id: str, timeout_ms: int) -> StateLookup:
        error, found = self.state.get_transaction_state(transactional_id)
        if error != ErrorCode.NONE or found is not None:
            return error, found
        producer_id = await self.producer_ids.generate_producer_id_async()
        created = TransactionMetadata(
            transactional_id,
            producer_id,
            NO_PRODUCER_ID,
            NO_PRODUCER_EPOCH,
            NO_PRODUCER_EPOCH,
            timeout_ms,
            EMPTY,
            set(),
            -1,
            self.runtime.now_ms(),
        )
        return self.state.put_transaction_state_if_not_exists(created)

    @staticmethod
    def _needs_new_producer_id(found: CoordinatorEpochAndTxnMetadata, expected: tuple[int, int] | None) -> bool:
        metadata = found.transaction_metadata
        return (
            not metadata.pending_transition_in_progress
            and metadata.state in (EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT)
            and metadata.is_producer_epoch_exhausted
            and (expected is None or expected[1] == metadata.producer_epoch)
        )

    def _prepare_init_producer_id_transit(
        self,
        transactional_id: str,
        timeout_ms: int,
        metadata: TransactionMetadata,
        expected: tuple[int, int] | None,
        new_producer_id: int | None,
    ) -> TxnTransitMetadata | ErrorCode:
        def is_valid_producer_id(producer_id: int, epoch: int) -> bool:
            # a new id (epoch -1), the current producer id, or a retry after a bump to a new
            # producer id whose answer the producer never got
            return (
                metadata.producer_epoch == NO_PRODUCER_EPOCH
                or producer_id == metadata.producer_id
                or (producer_id == metadata.last_producer_id and is_epoch_exhausted(epoch))
            )

        if metadata.pending_transition_in_progress:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if expected is not None and not is_valid_producer_id(*expected):
            return ErrorCode.PRODUCER_FENCED
        state = metadata.state
        now = self.runtime.now_ms()
        if state in (PREPARE_ABORT, PREPARE_COMMIT):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if state in (COMPLETE_ABORT, COMPLETE_COMMIT, EMPTY):
            if metadata.is_producer_epoch_exhausted and (expected is None or expected[1] == metadata.producer_epoch):
                if new_producer_id is None:  # the epoch was exhausted meanwhile: let the producer retry
                    return ErrorCode.CONCURRENT_TRANSACTIONS
                return metadata.prepare_producer_id_rotation(new_producer_id, timeout_ms, now, expected is not None)
            return metadata.prepare_increment_producer_epoch(timeout_ms, None if expected is None else expected[1], now)
        if state == ONGOING:
            # never returned to the producer: the ongoing transaction is aborted with this epoch
            # and the producer's retry bumps it again (or moves to a new producer id)
            return metadata.prepare_fence_producer_epoch()
        log.error("Found transactionalId %s with state %s. This is illegal", transactional_id, state)
        return ErrorCode.UNKNOWN_SERVER_ERROR

    # -- AddPartitionsToTxn / AddOffsetsToTxn -------------------------------------------------
    async def add_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        reply: Reply[ErrorCode] = Reply()
        self.handle_add_partitions(transactional_id, producer_id, producer_epoch, frozenset(partitions), reply.set)
        error = await reply.wait()
        return dict.fromkeys(partitions, error)

    async def add_offsets(
        self, transactional_id: str, producer_id: int, producer_epoch: int, group_id: str
    ) -> ErrorCode:
        if self.group_partition_for is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        offsets_partition = (OFFSETS_TOPIC, self.group_partition_for(group_id))
        reply: Reply[ErrorCode] = Reply()
        self.handle_add_partitions(
            transactional_id, producer_id, producer_epoch, frozenset([offsets_partition]), reply.set
        )
        return await reply.wait()

    def handle_add_partitions(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: frozenset[TopicPartition],
        callback: Callable[[ErrorCode], None],
    ) -> None:
        if not transactional_id:
            callback(ErrorCode.INVALID_REQUEST)
            return
        error, found = self.state.get_transaction_state(transactional_id)
        if error != ErrorCode.NONE:
            callback(error)
            return
        if found is None:
            callback(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
            return
        metadata = found.transaction_metadata
        if metadata.producer_id != producer_id:
            callback(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        elif metadata.producer_epoch != producer_epoch:
            callback(ErrorCode.PRODUCER_FENCED)
        elif metadata.pending_transition_in_progress or metadata.state in (PREPARE_COMMIT, PREPARE_ABORT):
            callback(ErrorCode.CONCURRENT_TRANSACTIONS)
        elif metadata.state == ONGOING and partitions <= metadata.topic_partitions:
            callback(ErrorCode.NONE)  # already added: nothing to write
        else:
            transit = metadata.prepare_add_partitions(partitions, self.runtime.now_ms())
            self.state.append_transaction_to_log(transactional_id, found.coordinator_epoch, transit, callback)

    async def verify_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        """Whether the partitions are in the producer's ongoing transaction (KIP-890 part 1);
        nothing is written. The pending state is not checked: the append is checked again."""
        if not transactional_id:
            return dict.fromkeys(partitions, ErrorCode.INVALID_REQUEST)
        error, found = self.state.get_transaction_state(transactional_id)
        if error == ErrorCode.NONE and found is None:
            error = ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if found is not None:
            metadata = found.transaction_metadata
            if metadata.producer_id != producer_id:
                error = ErrorCode.INVALID_PRODUCER_ID_MAPPING
            elif metadata.producer_epoch != producer_epoch:
                error = ErrorCode.PRODUCER_FENCED
            elif metadata.state in (PREPARE_COMMIT, PREPARE_ABORT):
                error = ErrorCode.CONCURRENT_TRANSACTIONS
            else:
                return {
                    tp: ErrorCode.NONE if tp in metadata.topic_partitions else ErrorCode.TRANSACTION_ABORTABLE
                    for tp in partitions
                }
        return dict.fromkeys(partitions, error)

    # -- EndTxn ------------------------------------------------------------------------------
    async def end_txn(
        self, transactional_id: str, producer_id: int, producer_epoch: int, committed: bool
    ) -> InitResult:
        """(error, -1, -1): with transaction version 0 no new producer id or epoch is returned."""
        reply: Reply[ErrorCode] = Reply()
        self._end_transaction(transactional_id, producer_id, producer_epoch, committed, True, reply.set)
        return await reply.wait(), NO_PRODUCER_ID, NO_PRODUCER_EPOCH

    def _end_transaction(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        committed: bool,
        is_from_client: bool,
        callback: EndTxnCallback,
    ) -> None:
        if not transactional_id:
            callback(ErrorCode.INVALID_REQUEST)
            return
        error, found = self.state.get_transaction_state(transactional_id)
        if error == ErrorCode.NONE and found is None:
            error = ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if found is None or error != ErrorCode.NONE:
            callback(error)
            return
        result = self._prepare_end_transaction(
            found.transaction_metadata, producer_id, producer_epoch, committed, is_from_client
        )
        if isinstance(result, ErrorCode):
            callback(result)
            return
        transit, is_epoch_fence = result
        coordinator_epoch = found.coordinator_epoch

        def appended(append_error: ErrorCode) -> None:
            if append_error == ErrorCode.NONE:
                self._send_markers(
                    transactional_id, coordinator_epoch, producer_id, producer_epoch, committed, callback
                )
                return
            log.info(
                "Aborting sending of transaction markers and returning %s error to client for %s's EndTransaction",
                append_error.name,
                transactional_id,
            )
            if is_epoch_fence:
                _, current = self.state.get_transaction_state(transactional_id)
                if current is not None and current.coordinator_epoch == coordinator_epoch:
                    current.transaction_metadata.has_failed_epoch_fence = True
                    log.warning(
                        "The coordinator failed to write an epoch fence transition for producer %s to the transaction "
                        "log with error %s. The epoch was increased to %d but not returned to the client",
                        transactional_id,
                        append_error.name,
                        transit.producer_epoch,
                    )
            callback(append_error)

        self.state.append_transaction_to_log(transactional_id, coordinator_epoch, transit, appended)

    def _abort_fenced_transaction(
        self, transactional_id: str, fenced: TxnTransitMetadata, callback: EndTxnCallback
    ) -> None:
        """Abort the ongoing transaction at the epoch its fencing bumped to (not a client's EndTxn)."""
        self._end_transaction(transactional_id, fenced.producer_id, fenced.producer_epoch, False, False, callback)

    def _prepare_end_transaction(
        self,
        metadata: TransactionMetadata,
        producer_id: int,
        producer_epoch: int,
        committed: bool,
        is_from_client: bool,
    ) -> tuple[TxnTransitMetadata, bool] | ErrorCode:
        state = metadata.state
        if metadata.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        # clients must send the current epoch; the coordinator's own aborts may carry a bumped one
        if (is_from_client and producer_epoch != metadata.producer_epoch) or producer_epoch < metadata.producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        if metadata.pending_transition_in_progress and metadata.pending_state != PREPARE_EPOCH_FENCE:
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if state == ONGOING:
            next_state = PREPARE_COMMIT if committed else PREPARE_ABORT
            is_epoch_fence = False
            if next_state == PREPARE_ABORT and metadata.pending_state == PREPARE_EPOCH_FENCE:
                # make way for PrepareAbort, written with the bumped epoch
                is_epoch_fence = True
                metadata.pending_state = None
                metadata.producer_epoch = producer_epoch
                metadata.last_producer_epoch = NO_PRODUCER_EPOCH
            return metadata.prepare_abort_or_commit(next_state, self.runtime.now_ms()), is_epoch_fence
        if (state, committed) in ((COMPLETE_COMMIT, True), (COMPLETE_ABORT, False)):
            return ErrorCode.NONE  # a retry of a completed EndTxn
        if (state, committed) in ((PREPARE_COMMIT, True), (PREPARE_ABORT, False)):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if state in (DEAD, PREPARE_EPOCH_FENCE):
            log.error("Found transactionalId %s with state %s. This is illegal", metadata.transactional_id, state)
            return ErrorCode.UNKNOWN_SERVER_ERROR
        log.warning(
            "TransactionalId: %s's state is %s, but received transaction marker result to send: %s",
            metadata.transactional_id,
            state,
            "COMMIT" if committed else "ABORT",
        )
        return ErrorCode.INVALID_TXN_STATE

    def _send_markers(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        producer_id: int,
        producer_epoch: int,
        committed: bool,
        callback: EndTxnCallback,
    ) -> None:
        """After PrepareCommit/PrepareAbort is in the log: answer, then send the markers."""
        error, found = self.state.get_transaction_state(transactional_id)
        if error == ErrorCode.NONE and (found is None or found.coordinator_epoch != coordinator_epoch):
            error = ErrorCode.NOT_COORDINATOR
        if found is None or error != ErrorCode.NONE:
            callback(error)
            return
        metadata = found.transaction_metadata
        expected_state = PREPARE_COMMIT if committed else PREPARE_ABORT
        if metadata.producer_id != producer_id:
            callback(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        elif metadata.producer_epoch != producer_epoch:
            callback(ErrorCode.PRODUCER_FENCED)
        elif metadata.pending_transition_in_progress:
            callback(ErrorCode.CONCURRENT_TRANSACTIONS)
        elif metadata.state != expected_state:
            callback(ErrorCode.INVALID_TXN_STATE)
        else:
            transit = metadata.prepare_complete(self.runtime.now_ms())
            callback(ErrorCode.NONE)
            self.markers.add_txn_markers_to_send(coordinator_epoch, committed, metadata, transit)

    # -- timed-out transactions ------------------------------------------------------------
    def abort_timed_out_transactions(self) -> None:
        for transactional_id, producer_id, _epoch in self.state.timed_out_transactions():
            error, found = self.state.get_transaction_state(transactional_id)
            if error != ErrorCode.NONE or found is None:
                continue
            metadata = found.transaction_metadata
            if metadata.producer_id != producer_id:
                log.error("Found incorrect producerId when expiring transactionalId: %s", transactional_id)
                continue
            if metadata.pending_transition_in_progress:
                continue
            transit = metadata.prepare_fence_producer_epoch()
            log.info(
                "Aborting transaction of %s (producer id %d) which is open longer than its timeout of %d ms",
                transactional_id,
                producer_id,
                metadata.txn_timeout_ms,
            )
            self._abort_fenced_transaction(
                transactional_id, transit, functools.partial(_log_timeout_abort, transactional_id)
            )

    # -- DescribeTransactions / ListTransactions -------------------------------------------
    def describe_transaction(self, transactional_id: str) -> DescribedTransaction:
        if not self.is_active:
            return DescribedTransaction(transactional_id, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        if transactional_id == "":
            return DescribedTransaction(transactional_id, ErrorCode.INVALID_REQUEST)
        error, found = self.state.get_transaction_state(transactional_id)
        if error != ErrorCode.NONE:
            return DescribedTransaction(transactional_id, error)
        if found is None or found.transaction_metadata.state == DEAD:
            return DescribedTransaction(transactional_id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND)
        metadata = found.transaction_metadata
        topics: dict[str, list[int]] = {}
        for topic, index in sorted(metadata.topic_partitions):
            topics.setdefault(topic, []).append(index)
        return DescribedTransaction(
            transactional_id,
            ErrorCode.NONE,
            metadata.state.name,
            metadata.producer_id,
            metadata.producer_epoch,
            metadata.txn_timeout_ms,
            metadata.txn_start_timestamp,
            topics,
        )

    def list_transactions(
        self, producer_ids: list[int], states: list[str], duration_ms: int = -1
    ) -> TransactionListing:
        if not self.is_active:
            return TransactionListing(ErrorCode.COORDINATOR_NOT_AVAILABLE, [], [])
        return self.state.list_transaction_states(producer_ids, states, duration_ms)


def _log_timeout_abort(transactional_id: str, error: ErrorCode) -> None:
    if error == ErrorCode.NONE:
        log.info("Completed rollback of ongoing transaction for transactionalId %s due to timeout", transactional_id)
    elif error in (
        ErrorCode.INVALID_PRODUCER_ID_MAPPING,
        ErrorCode.PRODUCER_FENCED,
        ErrorCode.CONCURRENT_TRANSACTIONS,
    ):
        log.debug(
            "Rollback of ongoing transaction for %s has been cancelled due to error %s", transactional_id, error.name
        )
    else:
        log.warning("Rollback of ongoing transaction for %s failed due to error %s", transactional_id, error.name)
