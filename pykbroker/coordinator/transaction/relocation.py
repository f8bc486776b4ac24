"""Transactional ids an older pykbroker left in another partition of `__transaction_state`, moved
to the partition Kafka's rule gives them (`../placement.py`).

Older versions placed an id with a negative hash code in another partition than Kafka does. A
partition P loaded here may therefore hold ids that now live in a partition Q:

- While P loads, such ids answer COORDINATOR_LOAD_IN_PROGRESS as P's own do
  (`TransactionStateManager._get_and_maybe_add`).
- Once P is loaded and Q is loaded here too (at once, or when Q's load finishes), each such id
  whose Q holds none of its own enters Q's cache and its last record is written into Q as it
  was; a transaction found in PrepareCommit or PrepareAbort then gets its markers, as after any
  load. Once Q has the record, a tombstone removes the id from P, so the move happens once; a
  failed write leaves P as it was and the next load moves it again. An id Q already holds keeps
  Q's (newer) state, and P's record gets its tombstone.
- Where another broker leads Q, the ids stay in P (a WARN says so) until a broker that loaded P
  also leads Q.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

from ...protocol.errors import ErrorCode
from ..runtime import LoopRuntime
from .formats import txn_key
from .metadata import PREPARE_ABORT, PREPARE_COMMIT, SendMarkers, TransactionMetadata, TxnMetadataCacheEntry
from .txn_topic import TRANSACTION_STATE_TOPIC

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LegacyTransaction:
    """A transactional id's state as found in the partition an older pykbroker placed it in."""

    metadata: TransactionMetadata
    source: int
    value: bytes  # its last record's value, written into its own partition as it is


class TransactionPartitions(Protocol):
    """What the move needs of the TransactionStateManager."""

    runtime: LoopRuntime
    loading_partitions: dict[int, tuple[int, object]]
    transaction_metadata_cache: dict[int, TxnMetadataCacheEntry]

    def partition_for(self, transactional_id: str) -> int: ...

    async def write_records(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> ErrorCode: ...


class TransactionRelocation:
    def __init__(self, state: TransactionPartitions) -> None:
        self.state = state
        self._waiting: dict[int, list[LegacyTransaction]] = {}  # by the partition they move to

    def found(self, partition: int, legacy: list[LegacyTransaction], send_markers: SendMarkers) -> None:
        """Move (now, or once their partition is loaded) the ids of `partition`, just loaded,
        that an older pykbroker placed there; then the ids waiting for `partition`."""
        for moved in legacy:
            transactional_id = moved.metadata.transactional_id
            target = self.state.partition_for(transactional_id)
            if self._is_loaded(target):
                self._move(moved, target, send_markers)
                continue
            if target not in self.state.loading_partitions:
                log.warning(
                    "Transactional id %s in %s-%d, where an older pykbroker placed it, belongs to %s-%d, "
                    "which another broker leads: it stays until a broker leads both",
                    transactional_id,
                    TRANSACTION_STATE_TOPIC,
                    partition,
                    TRANSACTION_STATE_TOPIC,
                    target,
                )
            self._waiting.setdefault(target, []).append(moved)
        for moved in self._waiting.pop(partition, []):
            if self._is_loaded(moved.source):
                self._move(moved, partition, send_markers)

    def on_partition_unloaded(self, partition: int) -> None:
        """Forget the ids found in `partition`: its next load finds them again."""
        for target in list(self._waiting):
            kept = [t for t in self._waiting[target] if t.source != partition]
            if kept:
                self._waiting[target] = kept
            else:
                del self._waiting[target]

    def _is_loaded(self, partition: int) -> bool:
        return partition in self.state.transaction_metadata_cache and partition not in self.state.loading_partitions

    def _move(self, moved: LegacyTransaction, target: int, send_markers: SendMarkers) -> None:
        metadata = moved.metadata
        transactional_id = metadata.transactional_id
        entry = self.state.transaction_metadata_cache[target]
        key = txn_key(transactional_id)
        if transactional_id in entry.metadata_per_transactional_id:
            self.state.runtime.spawn(self._write_tombstone, moved)
            return
        entry.metadata_per_transactional_id[transactional_id] = metadata
        log.info(
            "Moving transactional id %s from %s-%d, where an older pykbroker placed it, to %s-%d",
            transactional_id,
            TRANSACTION_STATE_TOPIC,
            moved.source,
            TRANSACTION_STATE_TOPIC,
            target,
        )
        self.state.runtime.spawn(self._write, moved, target, [(key, moved.value)])
        if metadata.state in (PREPARE_COMMIT, PREPARE_ABORT):
            committed = metadata.state == PREPARE_COMMIT
            transit = metadata.prepare_complete(self.state.runtime.now_ms())
            send_markers(transactional_id, entry.coordinator_epoch, committed, metadata, transit)

    async def _write(self, moved: LegacyTransaction, target: int, records: list[tuple[bytes, bytes | None]]) -> None:
        error = await self.state.write_records(target, records)
        if error != ErrorCode.NONE:
            log.warning(
                "Moving transactional id %s to %s-%d failed: %s",
                moved.metadata.transactional_id,
                TRANSACTION_STATE_TOPIC,
                target,
                error.name,
            )
            return
        await self._write_tombstone(moved)

    async def _write_tombstone(self, moved: LegacyTransaction) -> None:
        await self.state.write_records(moved.source, [(txn_key(moved.metadata.transactional_id), None)])
