"""Idempotent and transactional producer state of one partition (Kafka's ProducerStateManager).

Per producer id the state holds its epoch, the metadata of its last 5 batches (for duplicate
detection), its last timestamp (for expiration), the coordinator epoch of its last
transaction marker, and the first offset of its ongoing transaction, if any.

An append is checked in two steps, as in Kafka: `prepare()` gives a `ProducerAppend` that
validates the producer's batches against a copy of its state, and `update()` commits it once
the batches are in the log. Sequence rules (Kafka 2.x+):

* a batch whose sequence range equals one of the last 5 batches (same epoch) is a duplicate;
* an older epoch is INVALID_PRODUCER_EPOCH;
* a new epoch must start at sequence 0, unless nothing is known of the producer;
* within an epoch the first sequence must follow the last one (wrapping at 2^31-1), except
  when nothing is known of the producer (its state was removed by retention or expiry),
  in which case any sequence is accepted.

Replicated batches only update the state; they are never rejected.

Transactions: a transactional data batch starts a transaction (its first offset is remembered
until a COMMIT/ABORT marker ends it). A completed transaction stays unstable until the high
watermark passes its marker (`on_high_watermark_updated`), as Kafka's unreplicated
transactions: a marker a new leader may truncate away must not release the LSO.

Verification (KIP-890 part 1): before a producer's first transactional batch on a partition
is appended, the leader asks the transaction coordinator whether the partition is part of the
transaction. A `VerificationStateEntry` holds a unique `VerificationGuard` while it asks; any
transactional batch or marker of the producer removes it, so that an answer that arrives after
the transaction was aborted (and the guard removed) cannot start a transaction that would hang
the last stable offset.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from pykbroker.records.batch import BatchHeader

from .append_origin import CLIENT as CLIENT
from .append_origin import COORDINATOR as COORDINATOR
from .append_origin import NO_SEQUENCE as NO_SEQUENCE
from .append_origin import REPLICATION as REPLICATION
from .append_origin import SENTINEL as SENTINEL
from .append_origin import VerificationGuard as VerificationGuard
from .errors import ErrorCode, KafkaError

NUM_BATCHES_TO_RETAIN = 5
NO_PRODUCER_EPOCH = -1
INT32_MAX = 0x7FFFFFFF


def decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


class BatchMetadata(NamedTuple):
    """What is remembered of one of a producer's recent batches."""

    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


class EndTxnMarker(NamedTuple):
    """The parts of a COMMIT/ABORT marker the producer state needs."""

    commit: bool
    coordinator_epoch: int
    timestamp: int


@dataclass
class VerificationStateEntry:
    """A producer's verification in progress on one partition (Kafka's VerificationStateEntry)."""

    timestamp: int
    lowest_sequence: int
    epoch: int
    verification_guard: VerificationGuard = field(default_factory=VerificationGuard)

    def maybe_update_lowest_sequence_and_epoch(self, sequence: int, epoch: int) -> None:
        if epoch > self.epoch:
            self.epoch = epoch
            self.lowest_sequence = sequence
        elif epoch == self.epoch:
            self.lowest_sequence = min(sequence, self.lowest_sequence)


class CompletedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


@dataclass
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int = -1  # -1: no ongoing transaction

    @property
    def is_empty(self) -> bool:
        return not self.batches

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batches[-1].last_offset if self.batches else -1

    @property
    def has_ongoing_txn(self) -> bool:
        return self.current_txn_first_offset >= 0

    def maybe_update_epoch(self, epoch: int) -> bool:
        if self.producer_epoch == epoch:
            return False
        self.batches.clear()
        self.producer_epoch = epoch
        return True

    def add_batch(self, epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int) -> None:
        self.maybe_update_epoch(epoch)
        self.batches.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        """The remembered batch with exactly `header`'s sequence range, in the same epoch."""
        if header.producer_epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == header.base_sequence and batch.last_seq == header.last_sequence:
                return batch
        return None

    def without_batches(self) -> ProducerStateEntry:
        return ProducerStateEntry(
            self.producer_id,
            self.producer_epoch,
            deque(maxlen=NUM_BATCHES_TO_RETAIN),
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
        )

    def merge(self, update: ProducerStateEntry) -> None:
        """Take over what an append changed (Kafka's ProducerStateEntry.update)."""
        self.maybe_update_epoch(update.producer_epoch)
        self.batches.extend(update.batches)
        self.coordinator_epoch = update.coordinator_epoch
        self.current_txn_first_offset = update.current_txn_first_offset
        self.last_timestamp = update.last_timestamp


class ProducerAppend:
    """One producer's batches within one append, checked against its state before writing."""

    def __init__(
        self,
        producer_id: int,
        current: ProducerStateEntry,
        origin: str,
        verification: VerificationStateEntry | None = None,
    ) -> None:
        self.producer_id = producer_id
        self.current = current
        self.origin = origin
        self.verification = verification
        self.updated = current.without_batches()
        self.started_transactions: list[int] = []

    def append(self, header: BatchHeader, marker: EndTxnMarker | None = None) -> CompletedTxn | None:
        """Check and record one batch; a control batch needs its `marker` (None: empty batch)."""
        if header.is_control:
            if marker is None:
                return None
            return self.append_end_txn_marker(header, marker)
        self.append_data_batch(header)
        return None

    def append_data_batch(self, header: BatchHeader) -> None:
        first_offset = header.base_offset
        self._check_epoch(header.producer_epoch, first_offset)
        if self.origin == CLIENT:
            self._check_sequence(header.producer_epoch, header.base_sequence, first_offset)
        self.updated.add_batch(
            header.producer_epoch,
            header.last_sequence,
            header.last_offset,
            header.last_offset_delta,
            header.max_timestamp,
        )
        ongoing = self.updated.has_ongoing_txn
        if ongoing and not header.is_transactional:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"Expected transactional write from producer {self.producer_id} at offset {first_offset}",
            )
        if not ongoing and header.is_transactional:
            self.updated.current_txn_first_offset = first_offset
            self.started_transactions.append(first_offset)

    def append_end_txn_marker(self, header: BatchHeader, marker: EndTxnMarker) -> CompletedTxn | None:
        offset = header.base_offset
        self._check_epoch(header.producer_epoch, offset)
        if self.updated.coordinator_epoch > marker.coordinator_epoch and self.origin != REPLICATION:
            raise KafkaError(
                ErrorCode.TRANSACTION_COORDINATOR_FENCED,
                f"Invalid coordinator epoch for producer {self.producer_id} at offset "
                f"{offset}: {marker.coordinator_epoch} (zombie), "
                f"{self.updated.coordinator_epoch} (current)",
            )
        completed = None
        if self.updated.has_ongoing_txn:
            completed = CompletedTxn(self.producer_id, self.updated.current_txn_first_offset, offset, not marker.commit)
        self.updated.maybe_update_epoch(header.producer_epoch)
        self.updated.current_txn_first_offset = -1
        self.updated.coordinator_epoch = marker.coordinator_epoch
        self.updated.last_timestamp = marker.timestamp
        return completed

    def _check_epoch(self, epoch: int, offset: int) -> None:
        if epoch < self.updated.producer_epoch and self.origin != REPLICATION:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {self.producer_id} at offset {offset} is {epoch}, "
                f"which is smaller than the last seen epoch {self.updated.producer_epoch}",
            )

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        verification = self.verification
        if verification is not None and first_seq > verification.lowest_sequence:
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {self.producer_id} at offset "
                f"{offset}: {first_seq} (incoming seq. number), {verification.lowest_sequence} "
                f"(earliest seen sequence)",
            )
        if epoch != self.updated.producer_epoch:
            if first_seq != 0 and self.updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise KafkaError(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence number for new epoch of producer {self.producer_id} "
                    f"at offset {offset}: {epoch} (request epoch), {first_seq} (seq. number), "
                    f"{self.updated.producer_epoch} (current producer epoch)",
                )
            return
        if not self.updated.is_empty:
            last_seq = self.updated.last_seq
        elif epoch == self.current.producer_epoch:
            last_seq = self.current.last_seq
        else:
            last_seq = NO_SEQUENCE
        if self.current.producer_epoch != NO_PRODUCER_EPOCH and not in_sequence(last_seq, first_seq):
            raise KafkaError(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {self.producer_id} at offset "
                f"{offset}: {first_seq} (incoming seq. number), {last_seq} "
                f"(current end sequence number)",
            )


class ProducerStateManager:
    """The producer entries of a partition, its ongoing transactions, and how far it is built."""

    def __init__(self, *, expiration_ms: int = 86400000) -> None:
        self.expiration_ms = expiration_ms
        self.producers: dict[int, ProducerStateEntry] = {}
        self.ongoing: dict[int, int] = {}  # first offset of an ongoing transaction -> producer id
        # first offset -> marker offset of completed transactions the high watermark has not passed
        self.unreplicated: dict[int, int] = {}
        self.verification_states: dict[int, VerificationStateEntry] = {}
        self.map_end_offset = 0

    # -- reads ----------------------------------------------------------------------------

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    def first_unstable_offset(self) -> int | None:
        """The first offset of the oldest transaction still open or whose marker is unreplicated."""
        unstable = [*self.ongoing, *self.unreplicated]
        return min(unstable) if unstable else None

    def has_ongoing_txn(self, producer_id: int) -> bool:
        entry = self.producers.get(producer_id)
        return entry is not None and entry.has_ongoing_txn

    def active_producers(self) -> list[ProducerStateEntry]:
        return list(self.producers.values())

    def last_stable_offset(self, completed: CompletedTxn) -> int:
        """Where a completed transaction's LSO lands: the next other ongoing one, or after it."""
        others = [offset for offset, pid in self.ongoing.items() if pid != completed.producer_id]
        return min(others) if others else completed.last_offset + 1

    def last_records_of_active_producers(self) -> dict[int, tuple[int, int]]:
        """{producer id: (last data offset or -1, epoch)} for the cleaner."""
        return {pid: (entry.last_data_offset, entry.producer_epoch) for pid, entry in self.producers.items()}

    # -- appends --------------------------------------------------------------------------

    def prepare(self, producer_id: int, origin: str) -> ProducerAppend:
        current = self.producers.get(producer_id) or ProducerStateEntry(producer_id)
        return ProducerAppend(producer_id, current, origin, self.verification_states.get(producer_id))

    def update(self, append: ProducerAppend) -> None:
        entry = self.producers.get(append.producer_id)
        if entry is None:
            entry = self.producers[append.producer_id] = ProducerStateEntry(append.producer_id)
        entry.merge(append.updated)
        for first_offset in append.started_transactions:
            self.ongoing[first_offset] = append.producer_id

    def complete_txn(self, completed: CompletedTxn) -> None:
        """The transaction ended; it stays unstable until its marker is replicated."""
        if self.ongoing.pop(completed.first_offset, None) is not None:
            self.unreplicated[completed.first_offset] = completed.last_offset

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        """Forget completed transactions whose marker is below the high watermark."""
        if self.unreplicated:
            self.unreplicated = {first: last for first, last in self.unreplicated.items() if last >= high_watermark}

    # -- verification (KIP-890 part 1) ----------------------------------------------------

    def maybe_create_verification_state_entry(
        self, producer_id: int, sequence: int, epoch: int, now_ms: int
    ) -> VerificationStateEntry:
        entry = self.verification_states.get(producer_id)
        if entry is None:
            entry = self.verification_states[producer_id] = VerificationStateEntry(now_ms, sequence, epoch)
        else:
            entry.maybe_update_lowest_sequence_and_epoch(sequence, epoch)
        return entry

    def verification_state_entry(self, producer_id: int) -> VerificationStateEntry | None:
        return self.verification_states.get(producer_id)

    def verification_guard(self, producer_id: int) -> VerificationGuard:
        entry = self.verification_states.get(producer_id)
        return entry.verification_guard if entry is not None else SENTINEL

    def clear_verification_state_entry(self, producer_id: int) -> None:
        self.verification_states.pop(producer_id, None)

    def update_map_end_offset(self, offset: int) -> None:
        self.map_end_offset = offset

    def apply_stored_batch(self, header: BatchHeader, marker: EndTxnMarker | None) -> CompletedTxn | None:
        """Replay one batch read back from the log (recovery, replication)."""
        completed = None
        if header.producer_id >= 0:
            append = self.prepare(header.producer_id, REPLICATION)
            completed = append.append(header, marker)
            if header.is_transactional:
                self.clear_verification_state_entry(header.producer_id)
            self.update(append)
            if completed is not None:
                self.complete_txn(completed)
        self.map_end_offset = header.next_offset
        return completed

    # -- removal --------------------------------------------------------------------------

    def is_expired(self, entry: ProducerStateEntry, now_ms: int) -> bool:
        return not entry.has_ongoing_txn and now_ms - entry.last_timestamp >= self.expiration_ms

    def remove_expired(self, now_ms: int) -> int:
        """Drop expired producers, and verifications older than the expiration (as Kafka)."""
        expired = [pid for pid, entry in self.producers.items() if self.is_expired(entry, now_ms)]
        for pid in expired:
            del self.producers[pid]
        for pid, verification in list(self.verification_states.items()):
            if now_ms - verification.timestamp >= self.expiration_ms:
                del self.verification_states[pid]
        return len(expired)

    def clear(self, map_end_offset: int) -> None:
        self.producers.clear()
        self.ongoing.clear()
        self.unreplicated.clear()
        self.map_end_offset = map_end_offset

    def load(self, entries: list[ProducerStateEntry], map_end_offset: int, now_ms: int) -> None:
        """Replace the state with snapshot entries (dropping expired ones)."""
        self.clear(map_end_offset)
        for entry in entries:
            if self.is_expired(entry, now_ms):
                continue
            self.producers[entry.producer_id] = entry
            if entry.has_ongoing_txn:
                self.ongoing[entry.current_txn_first_offset] = entry.producer_id
