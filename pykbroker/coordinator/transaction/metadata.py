"""One transactional id's state, and the transitions Kafka's TransactionMetadata allows.

    Empty ──AddPartitions/AddOffsets──▶ Ongoing ──EndTxn(commit)──▶ PrepareCommit ──markers──▶ CompleteCommit
                                          │    ──EndTxn(abort)──▶ PrepareAbort  ──markers──▶ CompleteAbort
                                          └──InitProducerId / timeout──▶ PrepareEpochFence ──▶ PrepareAbort
    Empty, CompleteCommit, CompleteAbort ──InitProducerId──▶ Empty;  ──expiration──▶ Dead

A change is made in two steps, as in Kafka: a `prepare_*` method checks that the target state may
follow the current one, sets `pending_state` and returns a `TxnTransitMetadata` (the new values),
which is appended to `__transaction_state`; once the append succeeded, `complete_transition`
applies it (checking again that it is consistent), or on failure the pending state is dropped.
While a transition is pending, other requests get CONCURRENT_TRANSACTIONS.

Producer ids and epochs (KIP-360): InitProducerId bumps the epoch; `last_producer_epoch` lets a
producer that retries a bump it never got the answer of get the same epoch back. An epoch at
Short.MaxValue - 1 is exhausted: the next InitProducerId moves to a new producer id (epoch 0),
keeping the old one as `last_producer_id`. Short.MaxValue itself is kept for fencing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...common.topic_partition import TopicPartition
from ...protocol.errors import ErrorCode

log = logging.getLogger(__name__)

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
SHORT_MAX = 32767


@dataclass(frozen=True)
class TransactionState:
    id: int
    name: str  # shown by DescribeTransactions and ListTransactions

    def __repr__(self) -> str:
        return self.name


EMPTY = TransactionState(0, "Empty")
ONGOING = TransactionState(1, "Ongoing")
PREPARE_COMMIT = TransactionState(2, "PrepareCommit")
PREPARE_ABORT = TransactionState(3, "PrepareAbort")
COMPLETE_COMMIT = TransactionState(4, "CompleteCommit")
COMPLETE_ABORT = TransactionState(5, "CompleteAbort")
DEAD = TransactionState(6, "Dead")
PREPARE_EPOCH_FENCE = TransactionState(7, "PrepareEpochFence")

ALL_STATES = (EMPTY, ONGOING, PREPARE_COMMIT, PREPARE_ABORT, COMPLETE_COMMIT, COMPLETE_ABORT, DEAD, PREPARE_EPOCH_FENCE)
STATES_BY_ID = {state.id: state for state in ALL_STATES}
STATES_BY_NAME = {state.name: state for state in ALL_STATES}

VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    EMPTY: frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
    ONGOING: frozenset({ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
    PREPARE_COMMIT: frozenset({ONGOING}),
    PREPARE_ABORT: frozenset({ONGOING, PREPARE_EPOCH_FENCE}),
    COMPLETE_COMMIT: frozenset({PREPARE_COMMIT}),
    COMPLETE_ABORT: frozenset({PREPARE_ABORT}),
    DEAD: frozenset({EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT}),
    PREPARE_EPOCH_FENCE: frozenset({ONGOING}),
}

EXPIRATION_ALLOWED = frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT})


def is_epoch_exhausted(producer_epoch: int) -> bool:
    return producer_epoch >= SHORT_MAX - 1


class IllegalTransition(Exception):
    """A transition Kafka treats as a bug (IllegalStateException)."""


@dataclass(frozen=True)
class TxnTransitMetadata:
    """The values a transition writes to the log and then applies."""

    producer_id: int
    last_producer_id: int
    producer_epoch: int
    last_producer_epoch: int
    txn_timeout_ms: int
    txn_state: TransactionState
    topic_partitions: frozenset[TopicPartition]
    txn_start_timestamp: int
    txn_last_update_timestamp: int


class TransactionMetadata:
    def __init__(
        self,
        transactional_id: str,
        producer_id: int,
        last_producer_id: int,
        producer_epoch: int,
        last_producer_epoch: int,
        txn_timeout_ms: int,
        state: TransactionState,
        topic_partitions: set[TopicPartition] | None = None,
        txn_start_timestamp: int = -1,
        txn_last_update_timestamp: int = -1,
    ) -> None:
        self.transactional_id = transactional_id
        self.producer_id = producer_id
        self.last_producer_id = last_producer_id
        self.producer_epoch = producer_epoch
        self.last_producer_epoch = last_producer_epoch
        self.txn_timeout_ms = txn_timeout_ms
        self.state = state
        self.topic_partitions: set[TopicPartition] = set(topic_partitions or ())
        self.txn_start_timestamp = txn_start_timestamp
        self.txn_last_update_timestamp = txn_last_update_timestamp
        self.pending_state: TransactionState | None = None
        # a previous fence's bumped epoch may not have reached the log: do not bump it again
        self.has_failed_epoch_fence = False

    def __repr__(self) -> str:
        return (
            f"TransactionMetadata(transactionalId={self.transactional_id}, producerId={self.producer_id}, "
            f"producerEpoch={self.producer_epoch}, txnTimeoutMs={self.txn_timeout_ms}, state={self.state}, "
            f"pendingState={self.pending_state}, topicPartitions={sorted(self.topic_partitions)})"
        )

    @property
    def pending_transition_in_progress(self) -> bool:
        return self.pending_state is not None

    @property
    def is_producer_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    def add_partitions(self, partitions: Iterable[TopicPartition]) -> None:
        self.topic_partitions |= set(partitions)

    def remove_partition(self, tp: TopicPartition) -> None:
        """A partition whose marker is written (only while preparing to commit or abort)."""
        if self.state not in (PREPARE_COMMIT, PREPARE_ABORT):
            raise IllegalTransition(
                f"Transaction metadata's current state is {self.state}, and its pending state is "
                f"{self.pending_state} while trying to remove partitions whose txn marker has been sent"
            )
        self.topic_partitions.discard(tp)

    # -- preparing transitions ----------------------------------------------------------------
    def prepare_no_transit(self) -> TxnTransitMetadata:
        return TxnTransitMetadata(
            self.producer_id,
            self.last_producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.txn_timeout_ms,
            self.state,
            frozenset(self.topic_partitions),
            self.txn_start_timestamp,
            self.txn_last_update_timestamp,
        )

    def prepare_fence_producer_epoch(self) -> TxnTransitMetadata:
        if self.producer_epoch == SHORT_MAX:
            raise IllegalTransition(
                "Cannot fence producer with epoch equal to Short.MaxValue since this would overflow"
            )
        bumped = self.producer_epoch if self.has_failed_epoch_fence else self.producer_epoch + 1
        return self._prepare_transition_to(
            PREPARE_EPOCH_FENCE,
            self.producer_id,
            bumped,
            NO_PRODUCER_EPOCH,
            self.txn_timeout_ms,
            frozenset(self.topic_partitions),
            self.txn_start_timestamp,
            self.txn_last_update_timestamp,
        )

    def prepare_increment_producer_epoch(
        self, new_txn_timeout_ms: int, expected_producer_epoch: int | None, update_timestamp: int
    ) -> TxnTransitMetadata | ErrorCode:
        """The Empty state with the next epoch, or PRODUCER_FENCED (KIP-360: the expected epoch
        is the current one, or the last one for a retried bump, which gets the same answer)."""
        if self.is_producer_epoch_exhausted:
            raise IllegalTransition(f"Cannot allocate any more producer epochs for producerId {self.producer_id}")
        bumped = self.producer_epoch + 1
        if expected_producer_epoch is None:
            next_epoch, last_epoch = bumped, NO_PRODUCER_EPOCH
        elif self.producer_epoch == NO_PRODUCER_EPOCH or expected_producer_epoch == self.producer_epoch:
            next_epoch, last_epoch = bumped, self.producer_epoch
        elif expected_producer_epoch == self.last_producer_epoch:
            next_epoch, last_epoch = self.producer_epoch, self.last_producer_epoch
        else:
            log.info(
                "Expected producer epoch %d does not match current producer epoch %d or previous producer epoch %d",
                expected_producer_epoch,
                self.producer_epoch,
                self.last_producer_epoch,
            )
            return ErrorCode.PRODUCER_FENCED
        return self._prepare_transition_to(
            EMPTY, self.producer_id, next_epoch, last_epoch, new_txn_timeout_ms, frozenset(), -1, update_timestamp
        )

    def prepare_producer_id_rotation(
        self, new_producer_id: int, new_txn_timeout_ms: int, update_timestamp: int, record_last_epoch: bool
    ) -> TxnTransitMetadata:
        if self.state in (ONGOING, PREPARE_ABORT, PREPARE_COMMIT):
            raise IllegalTransition("Cannot rotate producer ids while a transaction is still pending")
        return self._prepare_transition_to(
            EMPTY,
            new_producer_id,
            0,
            self.producer_epoch if record_last_epoch else NO_PRODUCER_EPOCH,
            new_txn_timeout_ms,
            frozenset(),
            -1,
            update_timestamp,
        )

    def prepare_add_partitions(self, added: frozenset[TopicPartition], update_timestamp: int) -> TxnTransitMetadata:
        start = update_timestamp if self.state in (EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT) else self.txn_start_timestamp
        return self._prepare_same_producer(ONGOING, frozenset(self.topic_partitions | added), start, update_timestamp)

    def prepare_abort_or_commit(self, new_state: TransactionState, update_timestamp: int) -> TxnTransitMetadata:
        return self._prepare_same_producer(
            new_state, frozenset(self.topic_partitions), self.txn_start_timestamp, update_timestamp
        )

    def prepare_complete(self, update_timestamp: int) -> TxnTransitMetadata:
        new_state = COMPLETE_COMMIT if self.state == PREPARE_COMMIT else COMPLETE_ABORT
        self.has_failed_epoch_fence = False  # the state change reached the log
        return self._prepare_same_producer(new_state, frozenset(), self.txn_start_timestamp, update_timestamp)

    def prepare_dead(self) -> TxnTransitMetadata:
        return self._prepare_same_producer(DEAD, frozenset(), self.txn_start_timestamp, self.txn_last_update_timestamp)

    def _prepare_same_producer(
        self,
        new_state: TransactionState,
        new_topic_partitions: frozenset[TopicPartition],
        new_txn_start_timestamp: int,
        update_timestamp: int,
    ) -> TxnTransitMetadata:
        """A transition that keeps the producer id, epochs and transaction timeout."""
        return self._prepare_transition_to(
            new_state,
            self.producer_id,
            self.producer_epoch,
            self.last_producer_epoch,
            self.txn_timeout_ms,
            new_topic_partitions,
            new_txn_start_timestamp,
            update_timestamp,
        )

    def _prepare_transition_to(
        self,
        new_state: TransactionState,
        new_producer_id: int,
        new_epoch: int,
        new_last_epoch: int,
        new_txn_timeout_ms: int,
        new_topic_partitions: frozenset[TopicPartition],
        new_txn_start_timestamp: int,
        update_timestamp: int,
    ) -> TxnTransitMetadata:
        if self.pending_state is not None:
            raise IllegalTransition(
                f"Preparing transaction state transition to {new_state} while it already a pending state "
                f"{self.pending_state}"
            )
        if new_producer_id < 0:
            raise IllegalTransition(f"Illegal new producer id {new_producer_id}")
        if new_state != DEAD and new_epoch < 0:
            raise IllegalTransition(f"Illegal new producer epoch {new_epoch}")
        if self.state not in VALID_PREVIOUS_STATES[new_state]:
            raise IllegalTransition(
                f"Preparing transaction state transition to {new_state} failed since the target state "
                f"{new_state} is not a valid previous state of the current state {self.state}"
            )
        transit = TxnTransitMetadata(
            new_producer_id,
            self.producer_id,
            new_epoch,
            new_last_epoch,
            new_txn_timeout_ms,
            new_state,
            new_topic_partitions,
            new_txn_start_timestamp,
            update_timestamp,
        )
        log.debug("TransactionalId %s prepare transition from %s to %s", self.transactional_id, self.state, transit)
        self.pending_state = new_state
        return transit

    # -- completing a transition once it is in the log ----------------------------------------
    def complete_transition(self, transit: TxnTransitMetadata) -> None:
        to_state = self.pending_state
        if to_state is None:
            raise IllegalTransition(
                f"TransactionalId {self.transactional_id} completing transaction state transition while it "
                "does not have a pending state"
            )
        if to_state != transit.txn_state:
            self._fail(transit)
        if to_state == EMPTY:  # from InitProducerId
            if (
                (self.producer_epoch != transit.producer_epoch and not self._valid_epoch_bump(transit))
                or transit.topic_partitions
                or transit.txn_start_timestamp != -1
            ):
                self._fail(transit)
            self.txn_timeout_ms = transit.txn_timeout_ms
            self.producer_epoch = transit.producer_epoch
            self.last_producer_epoch = transit.last_producer_epoch
            self.producer_id = transit.producer_id
            self.last_producer_id = transit.last_producer_id
        elif to_state == ONGOING:  # from AddPartitions
            if (
                not self._valid_epoch(transit)
                or not self.topic_partitions <= transit.topic_partitions
                or self.txn_timeout_ms != transit.txn_timeout_ms
            ):
                self._fail(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.add_partitions(transit.topic_partitions)
        elif to_state in (PREPARE_ABORT, PREPARE_COMMIT):  # from EndTxn
            if (
                not self._valid_epoch(transit)
                or self.topic_partitions != transit.topic_partitions
                or self.txn_timeout_ms != transit.txn_timeout_ms
                or self.txn_start_timestamp != transit.txn_start_timestamp
            ):
                self._fail(transit)
        elif to_state in (COMPLETE_ABORT, COMPLETE_COMMIT):  # once the markers are written
            if (
                not self._valid_epoch(transit)
                or self.txn_timeout_ms != transit.txn_timeout_ms
                or transit.txn_start_timestamp == -1
            ):
                self._fail(transit)
            self.txn_start_timestamp = transit.txn_start_timestamp
            self.topic_partitions.clear()
        elif to_state == PREPARE_EPOCH_FENCE:
            self._fail(transit)  # a fence becomes PrepareAbort before anything is written
        else:  # DEAD: an expired id is removed from the cache, never completed
            raise IllegalTransition(
                f"TransactionalId {self.transactional_id} is trying to complete a transition to {to_state}"
            )
        log.debug("TransactionalId %s complete transition from %s to %s", self.transactional_id, self.state, transit)
        self.txn_last_update_timestamp = transit.txn_last_update_timestamp
        self.pending_state = None
        self.state = to_state

    def _valid_epoch(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch and transit.producer_id == self.producer_id

    def _valid_epoch_bump(self, transit: TxnTransitMetadata) -> bool:
        return transit.producer_epoch == self.producer_epoch + 1 or (
            transit.producer_epoch == 0 and transit.producer_id != self.producer_id
        )

    def _fail(self, transit: TxnTransitMetadata) -> None:
        log.error("%r's transition to %s failed: this should not happen", self, transit)
        raise IllegalTransition(
            f"TransactionalId {self.transactional_id} failed transition to state {transit} due to unexpected metadata"
        )


@dataclass
class TxnMetadataCacheEntry:
    """The transactional ids of one loaded partition of `__transaction_state`."""

    coordinator_epoch: int
    metadata_per_transactional_id: dict[str, TransactionMetadata]


# (transactional id, coordinator epoch, committed, metadata, the CompleteCommit/CompleteAbort transit)
SendMarkers = Callable[[str, int, bool, TransactionMetadata, TxnTransitMetadata], None]
