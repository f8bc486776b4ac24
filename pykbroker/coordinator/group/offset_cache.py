"""A group's committed offsets as the coordinator serves them, and the commits in flight.

A commit is staged (`prepare`) before its records are appended to `__consumer_offsets`, and
materialized (`on_appended`) once the append succeeded, remembering the offset of the batch that
holds it, so that the latest write always wins. A failed append drops the staged commit.

A transactional commit (TxnOffsetCommit) is kept per producer id, as Kafka's GroupMetadata does:
staged (`prepare_txn`), given its batch offset once appended (`on_txn_appended`) or dropped if
the append failed (`fail_txn`), and still pending until its transaction ends: on COMMIT
(`complete_txn`) each offset becomes the committed one unless a commit written later to the log
holds that partition; on ABORT they are dropped. A partition with a commit of either kind in
flight `is_pending` (OffsetFetch's require_stable answers UNSTABLE_OFFSET_COMMIT). Expiration
passes over partitions with a consumer's commit in flight only, as Kafka's does: pending
transactional offsets are never expired themselves, and keep the group from being deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...common.topic_partition import TopicPartition
from .formats import OffsetAndMetadata

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StoredOffset:
    entry: OffsetAndMetadata
    batch_offset: int  # where the record holding it sits in __consumer_offsets


@dataclass(frozen=True)
class PendingTxnOffset:
    """A transactional commit waiting for its transaction's end; `batch_offset` is None until
    its record is appended."""

    entry: OffsetAndMetadata
    batch_offset: int | None = None


class OffsetCache:
    def __init__(self) -> None:
        self._offsets: dict[TopicPartition, StoredOffset] = {}
        self._pending: dict[TopicPartition, OffsetAndMetadata] = {}
        self._pending_txn: dict[int, dict[TopicPartition, PendingTxnOffset]] = {}  # by producer id

    # -- reading -----------------------------------------------------------------------
    def get(self, tp: TopicPartition) -> OffsetAndMetadata | None:
        stored = self._offsets.get(tp)
        return None if stored is None else stored.entry

    def all(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: stored.entry for tp, stored in self._offsets.items()}

    def partitions(self) -> list[TopicPartition]:
        return list(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)

    def has_offsets(self) -> bool:
        return bool(self._offsets) or bool(self._pending) or bool(self._pending_txn)

    def is_pending(self, tp: TopicPartition) -> bool:
        """Whether a commit of `tp` is in flight: a consumer's being written, or a
        transactional one whose transaction has not ended."""
        return tp in self._pending or any(tp in offsets for offsets in self._pending_txn.values())

    def active_producers(self) -> list[int]:
        """The producers with transactional commits pending in this group."""
        return list(self._pending_txn)

    def has_pending_txn_from(self, producer_id: int) -> bool:
        return producer_id in self._pending_txn

    def pending_txn(self, producer_id: int) -> dict[TopicPartition, PendingTxnOffset]:
        return dict(self._pending_txn.get(producer_id, {}))

    # -- commits -----------------------------------------------------------------------
    def load(self, tp: TopicPartition, stored: StoredOffset) -> None:
        self._offsets[tp] = stored

    def prepare(self, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self._pending.update(offsets)

    def on_appended(self, tp: TopicPartition, entry: OffsetAndMetadata, batch_offset: int) -> None:
        if tp in self._pending:
            current = self._offsets.get(tp)
            if current is None or current.batch_offset < batch_offset:
                self._offsets[tp] = StoredOffset(entry, batch_offset)
        if self._pending.get(tp) == entry:
            del self._pending[tp]

    def on_failed(self, tp: TopicPartition, entry: OffsetAndMetadata) -> None:
        if self._pending.get(tp) == entry:
            del self._pending[tp]

    # -- transactional commits ---------------------------------------------------------
    def load_pending_txn(self, producer_id: int, offsets: dict[TopicPartition, StoredOffset]) -> None:
        """Pending transactional offsets found in the log (their batch offsets known)."""
        self._pending_txn[producer_id] = {
            tp: PendingTxnOffset(stored.entry, stored.batch_offset) for tp, stored in offsets.items()
        }

    def prepare_txn(self, producer_id: int, offsets: dict[TopicPartition, OffsetAndMetadata]) -> None:
        pending = self._pending_txn.setdefault(producer_id, {})
        for tp, entry in offsets.items():
            pending[tp] = PendingTxnOffset(entry)

    def on_txn_appended(
        self, producer_id: int, tp: TopicPartition, entry: OffsetAndMetadata, batch_offset: int
    ) -> None:
        pending = self._pending_txn.get(producer_id)
        if pending is not None and tp in pending and pending[tp].entry == entry:
            pending[tp] = PendingTxnOffset(entry, batch_offset)

    def fail_txn(self, producer_id: int, tp: TopicPartition) -> None:
        """The record of a transactional commit was not written: forget it (the producer
        gets an error and retries, maybe with another coordinator)."""
        pending = self._pending_txn.get(producer_id)
        if pending is None:
            return  # the partition emigrated meanwhile
        pending.pop(tp, None)
        if not pending:
            del self._pending_txn[producer_id]

    def complete_txn(self, producer_id: int, committed: bool) -> None:
        """The producer's transaction ended: on commit its offsets become the committed ones,
        unless a commit written after them to the log holds the partition already."""
        pending = self._pending_txn.pop(producer_id, None)
        if pending is None or not committed:
            return
        for tp, offset in pending.items():
            if offset.batch_offset is None:
                log.error(
                    "Trying to complete a transactional offset commit for producer %d of %s even though "
                    "the offset commit record itself has not been appended to the log",
                    producer_id,
                    tp,
                )
                continue
            current = self._offsets.get(tp)
            if current is None or current.batch_offset < offset.batch_offset:
                self._offsets[tp] = StoredOffset(offset.entry, offset.batch_offset)

    # -- removal -----------------------------------------------------------------------
    def remove(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        """Forget the offsets of `partitions`, pending ones of both kinds included; returns
        the committed ones removed."""
        removed = {}
        for tp in list(partitions):
            self._pending.pop(tp, None)
            for pending in self._pending_txn.values():
                pending.pop(tp, None)  # an emptied producer stays until its transaction ends, as in Kafka
            stored = self._offsets.pop(tp, None)
            if stored is not None:
                removed[tp] = stored.entry
        return removed

    def remove_all(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.remove(list(self._offsets))

    def remove_expired(
        self,
        now_ms: int,
        retention_ms: int,
        base_timestamp: Callable[[OffsetAndMetadata], int],
        keep_topics: frozenset[str] = frozenset(),
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        """Drop offsets whose retention has passed since `base_timestamp(entry)` (or whose
        explicit expire timestamp, from a commit with a retention time, has passed), except
        those of `keep_topics` and those with a commit in flight."""
        expired = [
            tp
            for tp, stored in self._offsets.items()
            if tp[0] not in keep_topics
            and tp not in self._pending
            and _is_expired(stored.entry, now_ms, retention_ms, base_timestamp)
        ]
        return self.remove(expired)


def _is_expired(
    entry: OffsetAndMetadata, now_ms: int, retention_ms: int, base_timestamp: Callable[[OffsetAndMetadata], int]
) -> bool:
    if entry.expire_timestamp is not None:
        return now_ms >= entry.expire_timestamp
    return now_ms - base_timestamp(entry) >= retention_ms
