"""Which transactional ids this broker coordinates, and their storage in `__transaction_state`
(Kafka's TransactionStateManager).

The coordinator serves the transactional ids of the `__transaction_state` partitions this broker
leads. When it becomes a partition's leader it loads the partition (meanwhile its ids answer
COORDINATOR_LOAD_IN_PROGRESS); the coordinator epoch of the partition is its leader epoch, and
every write checks that it did not change meanwhile. Ids an older pykbroker placed in the
partition loaded are moved to their own partition (`relocation.py`). When the broker stops leading a partition,
its ids are unloaded (NOT_COORDINATOR). After a load, transactions found in PrepareCommit or
PrepareAbort get their markers sent again (`send_markers`), so that a coordinator that failed
between the two steps of a commit completes it.

Writes (`append_transaction_to_log`) append one record with acks=-1 (every in-sync replica, at
least `transaction.state.log.min.isr`, the topic's `min.insync.replicas`), waiting at most
`request.timeout.ms`; once appended the pending transition is completed. Append errors become
the errors Kafka gives clients (COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, ...).

Background work, on the broker's timer: `timed_out_transactions` (Ongoing longer than their
timeout, for the coordinator to abort) and `remove_expired_transactional_ids` (ids idle for
`transactional.id.expiration.ms` in Empty, CompleteCommit or CompleteAbort get a tombstone).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...protocol.errors import ErrorCode
from ...records.records import build_batch
from ..partition_io import CoordinatorLoader, Entry, PartitionWriter
from ..placement import is_legacy_placed, legacy_partition
from ..runtime import LoopRuntime
from .formats import TxnLogValue, UnknownKey, decode_key, decode_value, txn_key, txn_value
from .metadata import (
    DEAD,
    EMPTY,
    EXPIRATION_ALLOWED,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    ONGOING,
    PREPARE_ABORT,
    PREPARE_COMMIT,
    STATES_BY_ID,
    STATES_BY_NAME,
    SendMarkers,
    TransactionMetadata,
    TxnMetadataCacheEntry,
    TxnTransitMetadata,
)
from .relocation import LegacyTransaction, TransactionRelocation
from .txn_topic import TRANSACTION_STATE_TOPIC, partition_for

if TYPE_CHECKING:
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

AppendCallback = Callable[[ErrorCode], None]


@dataclass(frozen=True)
class TransactionConfig:
    transactional_id_expiration_ms: int = 7 * 24 * 3600 * 1000
    transaction_max_timeout_ms: int = 900000
    abort_timed_out_transactions_interval_ms: int = 10000
    remove_expired_transactional_ids_interval_ms: int = 3600000
    request_timeout_ms: int = 30000

    @classmethod
    def from_broker_config(cls, config: BrokerConfig) -> TransactionConfig:
        return cls(
            transactional_id_expiration_ms=int(config["transactional.id.expiration.ms"]),
            transaction_max_timeout_ms=int(config["transaction.max.timeout.ms"]),
            abort_timed_out_transactions_interval_ms=int(
                config["transaction.abort.timed.out.transaction.cleanup.interval.ms"]
            ),
            remove_expired_transactional_ids_interval_ms=int(
                config["transaction.remove.expired.transaction.cleanup.interval.ms"]
            ),
            request_timeout_ms=int(config["request.timeout.ms"]),
        )


@dataclass(frozen=True)
class CoordinatorEpochAndTxnMetadata:
    coordinator_epoch: int
    transaction_metadata: TransactionMetadata


@dataclass(frozen=True)
class ListedTransaction:
    transactional_id: str
    producer_id: int
    state: str


@dataclass(frozen=True)
class TransactionListing:
    """ListTransactions' answer."""

    error: ErrorCode
    unknown_state_filters: list[str]
    transactions: list[ListedTransaction]


StateLookup = tuple[ErrorCode, CoordinatorEpochAndTxnMetadata | None]


class TransactionStateManager:
    def __init__(
        self,
        writer: PartitionWriter,
        loader: CoordinatorLoader,
        runtime: LoopRuntime,
        config: TransactionConfig,
        partition_count: Callable[[], int],
    ) -> None:
        self.writer = writer
        self.loader = loader
        self.runtime = runtime
        self.config = config
        self._partition_count = partition_count
        self.loading_partitions: dict[int, tuple[int, object]] = {}  # partition -> (epoch, load token)
        self.transaction_metadata_cache: dict[int, TxnMetadataCacheEntry] = {}
        self.relocation = TransactionRelocation(self)

    # -- where transactional ids live ------------------------------------------------------
    def partition_for(self, transactional_id: str) -> int:
        return partition_for(transactional_id, self._partition_count())

    def _legacy_partition_loads(self, transactional_id: str) -> bool:
        """Whether the partition an older pykbroker placed the id in loads (`relocation.py`)."""
        return legacy_partition(transactional_id, self._partition_count()) in self.loading_partitions

    @property
    def owned_partitions(self) -> set[int]:
        return set(self.transaction_metadata_cache)

    def validate_transaction_timeout_ms(self, txn_timeout_ms: int) -> bool:
        return 0 < txn_timeout_ms <= self.config.transaction_max_timeout_ms

    # -- the cache -----------------------------------------------------------------------
    def get_transaction_state(self, transactional_id: str) -> StateLookup:
        return self._get_and_maybe_add(transactional_id, None)

    def put_transaction_state_if_not_exists(self, metadata: TransactionMetadata) -> StateLookup:
        return self._get_and_maybe_add(metadata.transactional_id, metadata)

    def _get_and_maybe_add(self, transactional_id: str, created: TransactionMetadata | None) -> StateLookup:
        partition = self.partition_for(transactional_id)
        if partition in self.loading_partitions or self._legacy_partition_loads(transactional_id):
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, None
        entry = self.transaction_metadata_cache.get(partition)
        if entry is None:
            return ErrorCode.NOT_COORDINATOR, None
        metadata = entry.metadata_per_transactional_id.get(transactional_id)
        if metadata is None and created is not None:
            metadata = entry.metadata_per_transactional_id.setdefault(transactional_id, created)
        if metadata is None:
            return ErrorCode.NONE, None
        return ErrorCode.NONE, CoordinatorEpochAndTxnMetadata(entry.coordinator_epoch, metadata)

    # -- loading and unloading -------------------------------------------------------------
    def load_transactions_for_partition(
        self, partition: int, coordinator_epoch: int, send_markers: SendMarkers
    ) -> None:
        token = object()
        self.loading_partitions[partition] = (coordinator_epoch, token)
        log.info(
            "Loading transaction metadata from %s-%d at epoch %d", TRANSACTION_STATE_TOPIC, partition, coordinator_epoch
        )
        if self.loader.is_empty(TRANSACTION_STATE_TOPIC, partition):
            self._finish_load(partition, coordinator_epoch, token, [], send_markers)
        else:
            self.runtime.spawn(self._load, partition, coordinator_epoch, token, send_markers)

    async def _load(self, partition: int, coordinator_epoch: int, token: object, send_markers: SendMarkers) -> None:
        entries = await self.loader.load(TRANSACTION_STATE_TOPIC, partition)
        self._finish_load(partition, coordinator_epoch, token, entries, send_markers)

    def _finish_load(
        self, partition: int, coordinator_epoch: int, token: object, entries: list[Entry], send_markers: SendMarkers
    ) -> None:
        if self.loading_partitions.get(partition) != (coordinator_epoch, token):
            return  # resigned (or elected again) while loading
        loaded = _replay(partition, entries)
        legacy = self._take_legacy_placed(partition, loaded, entries)
        previous = self.transaction_metadata_cache.get(partition)
        if previous is not None:
            log.warning(
                "Unloaded transaction metadata of %s-%d at epoch %d as part of loading it at epoch %d",
                TRANSACTION_STATE_TOPIC,
                partition,
                previous.coordinator_epoch,
                coordinator_epoch,
            )
        self.transaction_metadata_cache[partition] = TxnMetadataCacheEntry(coordinator_epoch, loaded)
        pending_completion = []
        now = self.runtime.now_ms()
        for transactional_id, metadata in loaded.items():
            if metadata.state in (PREPARE_COMMIT, PREPARE_ABORT):
                committed = metadata.state == PREPARE_COMMIT
                pending_completion.append((transactional_id, committed, metadata, metadata.prepare_complete(now)))
        # markers are sent once the partition is no longer loading, so that writing the
        # completion is not refused with COORDINATOR_LOAD_IN_PROGRESS
        del self.loading_partitions[partition]
        for transactional_id, committed, metadata, transit in pending_completion:
            send_markers(transactional_id, coordinator_epoch, committed, metadata, transit)
        self.relocation.found(partition, legacy, send_markers)
        log.info(
            "Finished loading %d transaction metadata from %s-%d at epoch %d (%d records)",
            len(loaded),
            TRANSACTION_STATE_TOPIC,
            partition,
            coordinator_epoch,
            len(entries),
        )

    def _take_legacy_placed(
        self, partition: int, loaded: dict[str, TransactionMetadata], entries: list[Entry]
    ) -> list[LegacyTransaction]:
        """Take out of `loaded` the ids an older pykbroker placed in `partition`, with their
        last records' values."""
        count = self._partition_count()
        ids = [transactional_id for transactional_id in loaded if is_legacy_placed(transactional_id, partition, count)]
        if not ids:
            return []
        wanted = set(ids)
        values: dict[str, bytes] = {}
        for _offset, key, value in entries:
            if key is None or value is None:
                continue
            transactional_id = decode_key(key)
            if isinstance(transactional_id, str) and transactional_id in wanted:
                values[transactional_id] = value
        return [LegacyTransaction(loaded.pop(tid), partition, values[tid]) for tid in ids]

    def remove_transactions_for_partition(self, partition: int) -> None:
        self.relocation.on_partition_unloaded(partition)
        self.loading_partitions.pop(partition, None)
        entry = self.transaction_metadata_cache.pop(partition, None)
        if entry is not None:
            log.info(
                "Unloaded %d transaction metadata of %s-%d",
                len(entry.metadata_per_transactional_id),
                TRANSACTION_STATE_TOPIC,
                partition,
            )

    # -- writing ---------------------------------------------------------------------------
    def append_transaction_to_log(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        new_metadata: TxnTransitMetadata,
        callback: AppendCallback,
        retry_on_error: Callable[[ErrorCode], bool] = lambda _error: False,
    ) -> None:
        error, found = self.get_transaction_state(transactional_id)
        if error != ErrorCode.NONE:
            callback(error)
            return
        if found is None or found.coordinator_epoch != coordinator_epoch:
            callback(ErrorCode.NOT_COORDINATOR)
            return
        value = TxnLogValue(
            new_metadata.producer_id,
            new_metadata.producer_epoch,
            new_metadata.txn_timeout_ms,
            new_metadata.txn_state.id,
            new_metadata.topic_partitions,
            new_metadata.txn_last_update_timestamp,
            new_metadata.txn_start_timestamp,
        )
        record = (txn_key(transactional_id), txn_value(value, empty=new_metadata.txn_state == EMPTY))
        partition = self.partition_for(transactional_id)
        self.runtime.spawn(
            self._append,
            partition,
            [record],
            transactional_id,
            coordinator_epoch,
            new_metadata,
            callback,
            retry_on_error,
        )

    async def _append(
        self,
        partition: int,
        records: list[tuple[bytes, bytes | None]],
        transactional_id: str,
        coordinator_epoch: int,
        new_metadata: TxnTransitMetadata,
        callback: AppendCallback,
        retry_on_error: Callable[[ErrorCode], bool],
    ) -> None:
        error = await self.write_records(partition, records)
        callback(self._after_append(transactional_id, coordinator_epoch, new_metadata, error, retry_on_error))

    async def write_records(self, partition: int, records: list[tuple[bytes, bytes | None]]) -> ErrorCode:
        """Append `records` to `partition` as one batch, with acks=-1; the coordinator's error."""
        now = self.runtime.now_ms()
        batch = bytearray(build_batch([(key, value, [], now) for key, value in records], compression=0))
        error, _ = await self.writer.append(
            TRANSACTION_STATE_TOPIC, partition, batch, required_acks=-1, timeout_ms=self.config.request_timeout_ms
        )
        return _append_error(error)

    def _after_append(
        self,
        transactional_id: str,
        coordinator_epoch: int,
        new_metadata: TxnTransitMetadata,
        error: ErrorCode,
        retry_on_error: Callable[[ErrorCode], bool],
    ) -> ErrorCode:
        lookup_error, found = self.get_transaction_state(transactional_id)
        if error == ErrorCode.NONE:
            if lookup_error != ErrorCode.NONE:
                log.info("Transition of %s not applied: %s", transactional_id, lookup_error.name)
                return lookup_error
            if found is None or found.coordinator_epoch != coordinator_epoch:
                log.info("Transition of %s not applied: the coordinator epoch changed", transactional_id)
                return ErrorCode.NOT_COORDINATOR
            found.transaction_metadata.complete_transition(new_metadata)
            return ErrorCode.NONE
        log.debug("Appending %s's new metadata %s failed: %s", transactional_id, new_metadata, error.name)
        if found is not None and found.coordinator_epoch == coordinator_epoch and not retry_on_error(error):
            found.transaction_metadata.pending_state = None
        return error

    # -- timeouts and expiration -----------------------------------------------------------
    def timed_out_transactions(self) -> list[tuple[str, int, int]]:
        """(transactional id, producer id, producer epoch) of every Ongoing transaction older
        than its timeout."""
        now = self.runtime.now_ms()
        return [
            (metadata.transactional_id, metadata.producer_id, metadata.producer_epoch)
            for partition, entry in self.transaction_metadata_cache.items()
            if partition not in self.loading_partitions
            for metadata in entry.metadata_per_transactional_id.values()
            if not metadata.pending_transition_in_progress
            and metadata.state == ONGOING
            and metadata.txn_start_timestamp + metadata.txn_timeout_ms < now
        ]

    def remove_expired_transactional_ids(self) -> None:
        now = self.runtime.now_ms()
        for partition, entry in list(self.transaction_metadata_cache.items()):
            expired = [
                (metadata, metadata.prepare_dead())
                for metadata in entry.metadata_per_transactional_id.values()
                if self._should_expire(metadata, now)
            ]
            if expired:
                self.runtime.spawn(self._write_tombstones, partition, entry.coordinator_epoch, expired)

    def _should_expire(self, metadata: TransactionMetadata, now: int) -> bool:
        return (
            not metadata.pending_transition_in_progress
            and metadata.state in EXPIRATION_ALLOWED
            and metadata.txn_last_update_timestamp <= now - self.config.transactional_id_expiration_ms
        )

    async def _write_tombstones(
        self, partition: int, coordinator_epoch: int, expired: list[tuple[TransactionMetadata, TxnTransitMetadata]]
    ) -> None:
        error = await self.write_records(partition, [(txn_key(m.transactional_id), None) for m, _ in expired])
        entry = self.transaction_metadata_cache.get(partition)
        if entry is None:
            return
        for metadata, transit in expired:
            transactional_id = metadata.transactional_id
            if (
                entry.coordinator_epoch == coordinator_epoch
                and metadata.pending_state == DEAD
                and metadata.producer_epoch == transit.producer_epoch
                and error == ErrorCode.NONE
            ):
                entry.metadata_per_transactional_id.pop(transactional_id, None)
                log.debug("Removed expired transactional id %s", transactional_id)
            else:
                log.warning(
                    "Failed to remove expired transactionalId: %s from cache. Tombstone append error code: %s, "
                    "pendingState: %s, producerEpoch: %d, expected producerEpoch: %d",
                    transactional_id,
                    error.name,
                    metadata.pending_state,
                    metadata.producer_epoch,
                    transit.producer_epoch,
                )
                metadata.pending_state = None

    # -- listing ---------------------------------------------------------------------------
    def list_transaction_states(
        self, producer_ids: Iterable[int], state_names: Iterable[str], duration_ms: int = -1
    ) -> TransactionListing:
        if self.loading_partitions:
            return TransactionListing(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, [], [])
        wanted_ids = set(producer_ids)
        states, unknown = set(), []
        for name in state_names:
            if name in STATES_BY_NAME:
                states.add(STATES_BY_NAME[name])
            else:
                unknown.append(name)
        now = self.runtime.now_ms()

        def included(metadata: TransactionMetadata) -> bool:
            return not (
                metadata.state == DEAD  # being expired
                or (wanted_ids and metadata.producer_id not in wanted_ids)
                or (states and metadata.state not in states)
                or (duration_ms >= 0 and now - metadata.txn_start_timestamp <= duration_ms)
            )

        listed = [
            ListedTransaction(metadata.transactional_id, metadata.producer_id, metadata.state.name)
            for entry in self.transaction_metadata_cache.values()
            for metadata in entry.metadata_per_transactional_id.values()
            if included(metadata)
        ]
        return TransactionListing(ErrorCode.NONE, unknown, listed)


def _replay(partition: int, entries: list[Entry]) -> dict[str, TransactionMetadata]:
    """The transactional ids of a partition's records, the last record of each id winning."""
    loaded: dict[str, TransactionMetadata] = {}
    for _offset, key, value in entries:
        if key is None:
            continue
        transactional_id = decode_key(key)
        if isinstance(transactional_id, UnknownKey):
            log.warning(
                "Unknown message key with version %d while loading transaction state from %s-%d. Ignoring it. "
                "It could be a left over from an aborted upgrade.",
                transactional_id.version,
                TRANSACTION_STATE_TOPIC,
                partition,
            )
            continue
        if value is None:
            loaded.pop(transactional_id, None)
            continue
        stored = decode_value(value)
        state = STATES_BY_ID[stored.status]
        loaded[transactional_id] = TransactionMetadata(
            transactional_id,
            stored.producer_id,
            NO_PRODUCER_ID,
            stored.producer_epoch,
            NO_PRODUCER_EPOCH,
            stored.timeout_ms,
            state,
            set() if state == EMPTY else set(stored.partitions),
            stored.start_timestamp,
            stored.last_update_timestamp,
        )
    return loaded


def _append_error(error: ErrorCode) -> ErrorCode:
    """The coordinator's error for a failed append to `__transaction_state`."""
    if error in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
    ):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if error in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if error in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE):
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return error
