"""One partition's log (Kafka's UnifiedLog): the offsets, producer state and leader epochs
of a partition, over its segments on disk.

    log = Log.open("/data/orders-0", LogConfig())
    info = log.append_as_leader(bytearray(batch), leader_epoch=3)
    log.high_watermark = log.log_end_offset          # the replication layer decides this
    data = log.read(info.first_offset, 1 << 20, max_offset=log.high_watermark)

`Log` validates appends and assigns their offsets, keeps the log start offset, the high
watermark and the last stable offset, the producer state (`ProducerStateManager` and its
snapshots) and the leader epoch cache. It works with collaborators, each behind an explicit
interface:

* `LocalLog` (`local_log`): the segment files of the directory, the log end offset and the
  recovery point; appends stored bytes, rolls, reads file regions, truncates, deletes, swaps
  compacted segments in, fsyncs;
* `LogSegments` (`segments`): the immutable ordered segment collection and its lookups;
* `OffsetLookups` (`lookups`): ListOffsets and OffsetForLeaderEpoch;
* `Retention` (`retention`): deleting the segments retention lets go;
* `Compaction` (`compaction`): one cleaning pass and what is cleanable.

Durability: appends only write to the page cache. When the configuration promises more
(`fsync_before_ack`, or `flush.messages` appends since the last flush) `sync_owed()` says so and
the appender calls `sync_appended(end)` on a worker thread before acknowledging, so that no fsync
ever runs on the event loop.

Files that cannot be opened, written or created (descriptor limit, disk full, permissions)
fail the operation that needed them with `KafkaStorageError` (KAFKA_STORAGE_ERROR) and leave
the log as it was: an append is undone, a roll that cannot create its segment does not
happen, a new log whose files cannot be created leaves no directory behind. Every such I/O
error but a lack of descriptors is also reported to the log directory failure channel
(`dir_failure`), which takes the whole log directory offline. A new log is
also refused while its descriptor would eat into the room kept free under the open file limit
(see `descriptor_limit`).

Threading: every method may be called from the event loop thread; `flush`, `sync_appended`,
`delete_old_segments`, `compact` and `flush_if_due` are also meant for worker threads. One
per-log lock (shared with the `LocalLog`) guards state changes and is held only briefly:
fsyncs and compaction's reading and writing happen outside it, and their results are swapped
in under it. Reads take no lock at all: they work on the immutable segment list current when
they start.
"""

from __future__ import annotations

import functools
import os
import shutil
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ..common.time import now_ms as wall_clock_ms
from ..records.batch import BatchHeader
from . import files
from .config import DEFAULT_MAX_MAP_ENTRIES, LOG_APPEND_TIME, LogConfig, as_log_config
from .deleter import DelayedDeleter
from .descriptor_limit import BUDGET
from .dir_failure import LogDirFailureChannel, is_dir_failure
from .epoch_cache import LeaderEpochCache
from .errors import ErrorCode, KafkaError, KafkaStorageError, LogClosedError, UnexpectedAppendOffsetError
from .files import HandleCache
from .loader import LogLoader
from .local_log import LocalLog
from .lookups import OffsetLookups
from .producer_snapshot import SnapshotFiles
from .producer_state import (
    CLIENT,
    COORDINATOR,
    REPLICATION,
    SENTINEL,
    BatchMetadata,
    CompletedTxn,
    ProducerAppend,
    ProducerStateManager,
    VerificationGuard,
)
from .replay import is_marker_candidate, read_marker, rebuild_producer_state
from .results import CleanerStats, FetchDataInfo, LogAppendInfo, RecoveryStats, TimestampAndOffset
from .retention import Retention
from .segment import Segment
from .segments import LogSegments
from .txn_index import AbortedTxn
from .validation import (
    AppendBatches,
    assign_offsets,
    recompress,
    split_batches,
    validate_follower_append,
    validate_leader_append,
)

if TYPE_CHECKING:
    from .compaction import Compaction

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _reporting_io_errors(
    action: str,
) -> Callable[[Callable[Concatenate[Log, _P], _R]], Callable[Concatenate[Log, _P], _R]]:
    """A `Log` method whose OSError is reported to the log directory failure channel and raised
    as KAFKA_STORAGE_ERROR ("Error while <action> <topic>-<partition> in dir <log dir>")."""

    def decorate(method: Callable[Concatenate[Log, _P], _R]) -> Callable[Concatenate[Log, _P], _R]:
        @functools.wraps(method)
        def reporting(log: Log, *args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return method(log, *args, **kwargs)
            except OSError as exc:
                raise log.storage_error(f"Error while {action} {log.topic}-{log.partition}", exc) from exc

        return reporting

    return decorate


class Log:
    """A partition's log (Kafka's UnifiedLog). Construct with `Log.open`."""

    def __init__(
        self,
        directory: str,
        config: LogConfig,
        *,
        topic: str,
        partition: int,
        fsync_before_ack: bool,
        handles: HandleCache,
        deleter: DelayedDeleter,
        time_ms: Callable[[], int],
        producer_id_expiration_ms: int,
        dir_failures: LogDirFailureChannel | None = None,
    ) -> None:
        self.directory = directory
        # where an I/O error on this log's files is reported: it takes the log directory offline
        self.dir_failures = LogDirFailureChannel() if dir_failures is None else dir_failures
        self.topic = topic
        self.partition = partition
        self._time_ms = time_ms
        self._lock = threading.RLock()
        self.local = LocalLog(
            directory,
            config,
            topic=topic,
            partition=partition,
            lock=self._lock,
            handles=handles,
            deleter=deleter,
            time_ms=time_ms,
            fsync_before_ack=fsync_before_ack,
            on_segments_deleted=self._delete_producer_snapshots,
        )
        self.epoch_cache = LeaderEpochCache(os.path.join(directory, "leader-epoch-checkpoint"))
        self.producers = ProducerStateManager(expiration_ms=producer_id_expiration_ms)
        self.snapshots = SnapshotFiles(directory)
        self.log_start_offset = 0
        self.recovery: RecoveryStats | None = None  # what opening after an unclean shutdown did
        self._high_watermark = 0
        self._roll_flush_offset: int | None = None
        # told of each roll (the log manager flushes the rolled segments soon after, as Kafka's
        # roll schedules "flush-log"): the recovery point follows the rolls
        self.roll_listener: Callable[[Log], None] | None = None
        # told the new log end offset after each truncation (a replica being moved between log
        # directories follows it)
        self.truncation_listener: Callable[[int], None] | None = None
        self.lookups = OffsetLookups(self)
        self.retention = Retention(self)
        self._compaction: Compaction | None = None  # a log that is never compacted has none

    @classmethod
    def open(
        cls,
        directory: str,
        config: LogConfig | Mapping[str, Any] | None = None,
        *,
        recovery_point: int = 0,
        log_start_offset: int = 0,
        clean_shutdown: bool = False,
        fsync_before_ack: bool = False,
        high_watermark: int | None = None,
        handles: HandleCache | None = None,
        deleter: DelayedDeleter | None = None,
        time_ms: Callable[[], int] | None = None,
        producer_id_expiration_ms: int = 86400000,
        dir_failures: LogDirFailureChannel | None = None,
    ) -> Log:
        """Open (creating if needed) the log in `directory`, named `<topic>-<partition>`.

        Without `clean_shutdown` the segments from `recovery_point` on are recovered.
        """
        name = os.path.basename(os.path.normpath(directory))
        parsed = files.parse_partition_dir(name) or files.parse_future_dir(name)
        if parsed is None:
            raise ValueError(f"{directory!r} is not named <topic>-<partition> (or <topic>-<partition>.<id>-future)")
        is_new = not os.path.isdir(directory)
        try:
            if is_new:
                BUDGET.check_room_for_new_partition()
            os.makedirs(directory, exist_ok=True)
            log = cls(
                directory,
                as_log_config(config),
                topic=parsed[0],
                partition=parsed[1],
                fsync_before_ack=fsync_before_ack,
                handles=HandleCache() if handles is None else handles,
                deleter=DelayedDeleter() if deleter is None else deleter,
                time_ms=time_ms or wall_clock_ms,
                producer_id_expiration_ms=producer_id_expiration_ms,
                dir_failures=dir_failures,
            )
            log._load(log_start_offset, recovery_point, clean_shutdown)
            log.high_watermark = log.log_start_offset if high_watermark is None else high_watermark
            return log
        except OSError as exc:
            if is_new:  # nobody has seen it: leave nothing behind
                shutil.rmtree(directory, ignore_errors=True)
            parent = os.path.dirname(os.path.normpath(directory))
            message = (
                f"Error while {'creating' if is_new else 'loading'} log for {parsed[0]}-{parsed[1]} in dir {parent}"
            )
            if dir_failures is not None and is_dir_failure(exc):
                dir_failures.fail(parent, message, exc)
            raise KafkaStorageError(message, exc) from exc

    def _load(self, log_start_offset: int, recovery_point: int, clean_shutdown: bool) -> None:
        loader = LogLoader(
            self.directory,
            segment_factory=self.local.new_segment,
            epoch_cache=self.epoch_cache,
            producers=self.producers,
            snapshots=self.snapshots,
            now_ms=self._time_ms(),
        )
        loaded = loader.load(
            log_start_offset=log_start_offset, recovery_point=recovery_point, clean_shutdown=clean_shutdown
        )
        self.local.load(loaded)
        self.log_start_offset = loaded.log_start_offset
        self.recovery = loaded.recovery

    # -- state ----------------------------------------------------------------------------

    @property
    def config(self) -> LogConfig:
        return self.local.config

    @property
    def is_future(self) -> bool:
        """Whether this is a future replica (being built in another log directory)."""
        return self.directory.endswith(files.FUTURE_DIR_SUFFIX)

    @property
    def parent_dir(self) -> str:
        """The log directory (one of `log.dirs`) that holds this partition's directory."""
        return os.path.dirname(os.path.normpath(self.directory))

    def storage_error(self, message: str, error: OSError) -> KafkaStorageError:
        """Report an I/O error on this log's files to the log directory failure channel (which
        takes the directory offline; running out of descriptors does not) and return the
        KAFKA_STORAGE_ERROR to raise."""
        full_message = f"{message} in dir {self.parent_dir}"
        if is_dir_failure(error):
            self.dir_failures.fail(self.parent_dir, full_message, error)
        return KafkaStorageError(full_message, error)

    @property
    def log_end_offset(self) -> int:
        """The offset the next appended record gets."""
        return self.local.log_end_offset

    @property
    def segments(self) -> LogSegments:
        return self.local.segments

    @property
    def size(self) -> int:
        return self.local.size

    @property
    def recovery_point(self) -> int:
        """Everything below is on disk (flushed); recovery after a crash starts here."""
        return self.local.recovery_point

    @property
    def closed(self) -> bool:
        return self.local.closed

    @property
    def fsync_before_ack(self) -> bool:
        return self.local.fsync_before_ack

    @property
    def compaction(self) -> Compaction:
        """Compaction of this log, made on first use (the first use in the process imports the
        cleaner's modules, on the caller's thread, once, for a few milliseconds)."""
        if self._compaction is None:
            from .compaction import Compaction

            self._compaction = Compaction(self)
        return self._compaction

    @property
    def cleaner_checkpoint(self) -> int | None:
        """Where the last compaction pass ended (the log manager checkpoints it)."""
        return None if self._compaction is None else self._compaction.checkpoint

    @cleaner_checkpoint.setter
    def cleaner_checkpoint(self, offset: int | None) -> None:
        if offset is None and self._compaction is None:
            return
        self.compaction.checkpoint = offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        """Set by the replication layer; kept within [log start offset, log end offset]."""
        with self._lock:
            self._high_watermark = min(max(offset, self.log_start_offset), self.local.log_end_offset)
            self.producers.on_high_watermark_updated(self._high_watermark)

    def maybe_increment_high_watermark(self, offset: int) -> bool:
        with self._lock:
            if offset <= self._high_watermark:
                return False
            self.high_watermark = offset
            return True

    @property
    def last_stable_offset(self) -> int:
        """The high watermark, or the first offset of the oldest transaction below it that is
        open or whose marker the high watermark has not passed yet."""
        first_unstable = self.producers.first_unstable_offset()
        if first_unstable is not None and first_unstable < self._high_watermark:
            return max(first_unstable, self.log_start_offset)
        return self._high_watermark

    def update_config(self, config: LogConfig | Mapping[str, Any]) -> None:
        """Apply new topic configs (AlterConfigs); new segments pick up index settings."""
        self.local.config = as_log_config(config, self.local.config)

    def _now(self, now_ms: int | None) -> int:
        return self._time_ms() if now_ms is None else now_ms

    def _check_open(self) -> None:
        if self.local.closed:
            raise LogClosedError(f"log {self.topic}-{self.partition} is closed")

    # -- appends --------------------------------------------------------------------------

    def append_as_leader(
        self,
        records: bytes | bytearray | memoryview,
        *,
        leader_epoch: int,
        timestamp_type: str | None = None,
        now_ms: int | None = None,
        max_message_bytes: int | None = None,
        message_timestamp_difference_max_ms: int | None = None,
        origin: str = CLIENT,
        verification_guard: VerificationGuard | None = None,
    ) -> LogAppendInfo:
        """Validate, assign offsets in place, stamp the epoch, and append batches from a producer.

        Batches are stored in the codec of the topic's `compression.type` (rebuilt when the
        producer used another one), as Kafka does; "producer" keeps the producer's codec.

        `records` should be a bytearray (it is rewritten in place); origin "coordinator" is
        for the broker's own writes (transaction markers, group metadata).

        `verification_guard` is None when transaction verification is off
        (`transaction.partition.verification.enable=false`). Otherwise a transactional data
        batch of a client or coordinator append whose producer has no ongoing transaction here
        must carry the guard its verification created (`maybe_start_transaction_verification`),
        or it is refused with INVALID_TXN_STATE, as Kafka's UnifiedLog.
        """
        now = self._now(now_ms)
        config = self.config
        if message_timestamp_difference_max_ms is not None:
            config = config.updated({"message.timestamp.difference.max.ms": message_timestamp_difference_max_ms})
        log_append_time = (timestamp_type or config.message_timestamp_type) == LOG_APPEND_TIME
        append = split_batches(records if isinstance(records, bytearray) else bytearray(records))
        max_message_bytes = max_message_bytes or config.max_message_bytes
        validate_leader_append(
            append,
            config,
            origin=origin,
            now_ms=now,
            log_append_time=log_append_time,
            max_message_bytes=max_message_bytes,
        )
        append = recompress(
            append,
            config.compression_type,
            max_message_bytes=max_message_bytes,
            topic_partition=f"{self.topic}-{self.partition}",
        )
        with self._lock:
            self._check_open()
            assign_offsets(append, self.local.log_end_offset, leader_epoch, now if log_append_time else None)
            self._check_append_size(append)
            updates, completed, duplicate = self._check_producers(append, origin, verification_guard)
            if duplicate is not None:
                return self._duplicate_info(duplicate, append)
            self._append_or_storage_error(append, updates, completed, now)
            return self._append_info(append, now if log_append_time else -1)

    def append_as_follower(
        self, records: bytes | bytearray | memoryview, *, now_ms: int | None = None
    ) -> LogAppendInfo:
        """Append batches replicated from the leader (offsets and epochs already assigned)."""
        now = self._now(now_ms)
        append = split_batches(records if isinstance(records, bytearray) else bytearray(records))
        validate_follower_append(append)
        with self._lock:
            self._check_open()
            if append.first_offset < self.local.log_end_offset:
                raise UnexpectedAppendOffsetError(
                    f"First offset {append.first_offset} is less than the next offset {self.local.log_end_offset}",
                    append.first_offset,
                    append.last_offset,
                )
            self._check_append_size(append)
            updates, completed, _ = self._check_producers(append, REPLICATION)
            self._append_or_storage_error(append, updates, completed, now)
            return self._append_info(append, -1)

    def _check_append_size(self, append: AppendBatches) -> None:
        if append.valid_bytes > self.config.segment_bytes:
            raise KafkaError(
                ErrorCode.RECORD_LIST_TOO_LARGE,
                f"Message batch size is {append.valid_bytes} bytes in append to partition "
                f"{self.topic}-{self.partition}, which exceeds the maximum configured segment "
                f"size of {self.config.segment_bytes}.",
            )

    def _check_producers(
        self, append: AppendBatches, origin: str, verification_guard: VerificationGuard | None = None
    ) -> tuple[dict[int, ProducerAppend], list[CompletedTxn], BatchMetadata | None]:
        """Producer checks for every batch; stops at a duplicate of an earlier client batch."""
        updates: dict[int, ProducerAppend] = {}
        completed: list[CompletedTxn] = []
        for pos, header in append.batches:
            if header.producer_id < 0:
                continue
            if origin == CLIENT:
                entry = self.producers.last_entry(header.producer_id)
                duplicate = entry.find_duplicate(header) if entry is not None else None
                if duplicate is not None:
                    return updates, completed, duplicate
            if origin in (CLIENT, COORDINATOR) and self._missing_verification(header, verification_guard):
                raise KafkaError(ErrorCode.INVALID_TXN_STATE, "Record was not part of an ongoing transaction")
            update = updates.get(header.producer_id)
            if update is None:
                update = updates[header.producer_id] = self.producers.prepare(header.producer_id, origin)
            marker = None
            if is_marker_candidate(header):
                marker = read_marker(memoryview(append.buffer)[pos : pos + header.size], header)
            done = update.append(header, marker)
            if header.is_transactional:  # the transaction now has a first offset, or ended
                self.producers.clear_verification_state_entry(header.producer_id)
            if done is not None:
                completed.append(done)
        return updates, completed, None

    def _missing_verification(self, header: BatchHeader, verification_guard: VerificationGuard | None) -> bool:
        """A transactional data batch that would start a transaction without a verification
        that is still in force (Kafka's batchMissingRequiredVerification)."""
        if verification_guard is None or not header.is_transactional or header.is_control:
            return False
        if self.producers.has_ongoing_txn(header.producer_id):
            return False
        return not self.producers.verification_guard(header.producer_id).verify(verification_guard)

    # -- transaction verification (KIP-890 part 1) ------------------------------------

    def has_ongoing_transaction(self, producer_id: int) -> bool:
        with self._lock:
            return self.producers.has_ongoing_txn(producer_id)

    def maybe_start_transaction_verification(self, producer_id: int, sequence: int, epoch: int) -> VerificationGuard:
        """The guard a transactional append must carry once the coordinator confirmed the
        partition is in the transaction; SENTINEL (nothing to verify) when the producer already
        has an ongoing transaction here."""
        with self._lock:
            if self.producers.has_ongoing_txn(producer_id):
                return SENTINEL
            entry = self.producers.maybe_create_verification_state_entry(producer_id, sequence, epoch, self._time_ms())
            return entry.verification_guard

    def _append_or_storage_error(
        self, append: AppendBatches, updates: dict[int, ProducerAppend], completed: list[CompletedTxn], now: int
    ) -> None:
        try:
            self._append(append, updates, completed, now)
        except OSError as exc:
            raise self.storage_error(f"Error while appending records to {self.topic}-{self.partition}", exc) from exc

    def _append(
        self, append: AppendBatches, updates: dict[int, ProducerAppend], completed: list[CompletedTxn], now: int
    ) -> None:
        """Write the batches and apply everything they change (lock held)."""
        for _, header in append.batches:
            self._maybe_assign_epoch(header.partition_leader_epoch, header.base_offset)
        max_timestamp, offset_of_max = append.max_timestamp_and_offset()
        self._maybe_roll(append, max_timestamp, now)
        segment = self.local.append(append.last_offset, max_timestamp, offset_of_max, append.data())
        for update in updates.values():
            self.producers.update(update)
        for txn in completed:
            if txn.is_aborted:
                lso = self.producers.last_stable_offset(txn)
                segment.txn_index.append(AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset, lso))
            self.producers.complete_txn(txn)
        self.producers.update_map_end_offset(self.local.log_end_offset)

    def _maybe_assign_epoch(self, epoch: int, start_offset: int) -> None:
        if epoch >= 0:
            self.epoch_cache.assign(epoch, start_offset)

    def _append_info(self, append: AppendBatches, log_append_time: int) -> LogAppendInfo:
        max_timestamp, offset_of_max = append.max_timestamp_and_offset()
        return LogAppendInfo(
            first_offset=append.first_offset,
            last_offset=append.last_offset,
            max_timestamp=max_timestamp,
            offset_of_max_timestamp=offset_of_max,
            log_append_time=log_append_time,
            log_start_offset=self.log_start_offset,
            record_count=append.record_count,
            valid_bytes=append.valid_bytes,
            last_leader_epoch=append.batches[-1][1].partition_leader_epoch,
        )

    def _duplicate_info(self, duplicate: BatchMetadata, append: AppendBatches) -> LogAppendInfo:
        return LogAppendInfo(
            first_offset=duplicate.first_offset,
            last_offset=duplicate.last_offset,
            max_timestamp=duplicate.timestamp,
            offset_of_max_timestamp=duplicate.last_offset,
            log_append_time=duplicate.timestamp,
            log_start_offset=self.log_start_offset,
            record_count=append.record_count,
            valid_bytes=append.valid_bytes,
            duplicate=True,
        )

    # -- durability before acknowledging ----------------------------------------------

    def sync_owed(self) -> bool:
        """Whether appends must be synced (`sync_appended`) before they are acknowledged."""
        return self.local.fsync_before_ack or self.local.flush_messages_reached()

    @_reporting_io_errors("syncing the appends of")
    def sync_appended(self, end_offset: int) -> None:
        """Make the appends below `end_offset` as durable as the configuration promises: their
        data fdatasync'ed (fsync before ack), and a full flush once `flush.messages` appends
        accumulated. Blocks: call it on a worker thread. Calls that find their appends already
        synced by another return at once."""
        if self.local.fsync_before_ack:
            self.local.sync_below(end_offset)
        if self.local.flush_messages_reached():
            self.flush()

    # -- rolling --------------------------------------------------------------------------

    def _maybe_roll(self, append: AppendBatches, max_timestamp: int, now: int) -> None:
        config = self.local.config
        if self.local.segments.active.should_roll(
            segment_bytes=config.segment_bytes,
            segment_ms=config.segment_ms,
            messages_size=append.valid_bytes,
            max_timestamp_in_messages=max_timestamp,
            max_offset_in_messages=append.last_offset,
            now=now,
        ):
            self.roll(append.first_offset)

    @_reporting_io_errors("rolling log segment for")
    def roll(self, expected_next_offset: int | None = None) -> Segment:
        """Start a new active segment at max(expected_next_offset, log end offset)."""
        with self._lock:
            base = max(expected_next_offset or 0, self.local.log_end_offset)
            active = self.local.segments.active
            if active.base_offset == base and active.size == 0:
                return active
            segment = self.local.roll(base)
            self.producers.update_map_end_offset(base)
            self._roll_flush_offset = base
            self._take_snapshot(base)
            if self.roll_listener is not None:
                self.roll_listener(self)
            return segment

    def _take_snapshot(self, offset: int) -> None:
        self.snapshots.write(offset, list(self.producers.producers.values()))

    # -- reads ----------------------------------------------------------------------------

    @_reporting_io_errors("reading records of")
    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        *,
        max_offset: int | None = None,
        min_one_message: bool = True,
        read_committed: bool = False,
    ) -> FetchDataInfo:
        """Batches from the one holding `fetch_offset`, never past `max_offset` (default: log end).

        Consumers pass the high watermark (or, read_committed, the last stable offset) as
        `max_offset`. With `read_committed` the aborted transactions overlapping the result
        are attached. OFFSET_OUT_OF_RANGE outside [log start offset, log end offset].
        """
        local = self.local
        segments, log_end_offset, log_start_offset = local.segments, local.log_end_offset, self.log_start_offset
        if fetch_offset < log_start_offset or fetch_offset > log_end_offset:
            raise KafkaError(
                ErrorCode.OFFSET_OUT_OF_RANGE,
                f"Received request for offset {fetch_offset} for partition "
                f"{self.topic}-{self.partition}, but we only have log segments in the range "
                f"{log_start_offset} to {log_end_offset}.",
            )
        limit = log_end_offset if max_offset is None else min(max_offset, log_end_offset)
        if fetch_offset >= limit:
            return FetchDataInfo(fetch_offset)
        return local.read(
            segments,
            fetch_offset,
            max_bytes,
            limit=limit,
            log_end_offset=log_end_offset,
            min_one_message=min_one_message,
            read_committed=read_committed,
        )

    @_reporting_io_errors("assigning a leader epoch of")
    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """Record the start of a leader epoch (a new leader does this at its log end offset)."""
        with self._lock:
            self._maybe_assign_epoch(leader_epoch, start_offset)

    # -- offset lookups (see `lookups`) ---------------------------------------------------

    @_reporting_io_errors("looking up offsets of")
    def offset_for_timestamp(self, target_ms: int) -> TimestampAndOffset | None:
        """ListOffsets: the earliest record with timestamp >= target_ms (or a special value)."""
        return self.lookups.offset_for_timestamp(target_ms)

    @_reporting_io_errors("looking up offsets of")
    def earliest(self) -> TimestampAndOffset:
        return self.lookups.earliest()

    @_reporting_io_errors("looking up offsets of")
    def latest(self) -> TimestampAndOffset:
        return self.lookups.latest()

    @_reporting_io_errors("looking up offsets of")
    def max_timestamp(self) -> TimestampAndOffset | None:
        return self.lookups.max_timestamp()

    @_reporting_io_errors("looking up offsets of")
    def legacy_latest_offsets(self, high_watermark: int, max_num_offsets: int) -> list[int]:
        return self.lookups.legacy_latest_offsets(high_watermark, max_num_offsets)

    @_reporting_io_errors("looking up offsets of")
    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int] | None:
        return self.lookups.end_offset_for_epoch(leader_epoch)

    # -- truncation and log start ---------------------------------------------------------

    @_reporting_io_errors("truncating")
    def truncate_to(self, target_offset: int) -> bool:
        """Remove everything at or above `target_offset`; False if there was nothing to remove."""
        if target_offset < 0:
            raise ValueError(f"cannot truncate to a negative offset ({target_offset})")
        with self._lock:
            self._check_open()
            if target_offset >= self.local.log_end_offset:
                self.epoch_cache.truncate_from_end(self.local.log_end_offset)
                return False
            if self.local.segments.first.base_offset > target_offset:
                self._truncate_fully(target_offset, None)
                return True
            self.local.truncate_to(target_offset)
            self.epoch_cache.truncate_from_end(target_offset)
            self.log_start_offset = min(target_offset, self.log_start_offset)
            self._rebuild_producer_state()
            self._after_truncation()
            return True

    @_reporting_io_errors("truncating")
    def truncate_fully_and_start_at(self, new_offset: int, log_start_offset: int | None = None) -> None:
        """Delete all data; the log restarts empty at `new_offset`."""
        with self._lock:
            self._check_open()
            self._truncate_fully(new_offset, log_start_offset)

    def _truncate_fully(self, new_offset: int, log_start_offset: int | None) -> None:
        self.local.truncate_fully_and_start_at(new_offset)
        self.epoch_cache.clear()
        self.snapshots.delete_where(lambda _: True)
        self.producers.clear(new_offset)
        self.log_start_offset = new_offset if log_start_offset is None else log_start_offset
        self._after_truncation()

    def _after_truncation(self) -> None:
        self._high_watermark = min(self._high_watermark, self.local.log_end_offset)
        self.producers.on_high_watermark_updated(self._high_watermark)  # the rebuilt state's markers
        self._roll_flush_offset = None
        if self.truncation_listener is not None:
            self.truncation_listener(self.local.log_end_offset)

    def _rebuild_producer_state(self) -> None:
        rebuild_producer_state(
            self.producers,
            self.snapshots,
            self.local.segments,
            self.log_start_offset,
            self.local.log_end_offset,
            self._time_ms(),
        )

    @_reporting_io_errors("deleting records of")
    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords: move the log start offset up to `offset` (-1: the high watermark).

        Returns the new log start offset (the low watermark). OFFSET_OUT_OF_RANGE past the
        high watermark. Whole segments below it go at the next retention run.
        """
        with self._lock:
            self._check_open()
            if offset == -1:
                offset = self._high_watermark
            if offset < 0 or offset > self._high_watermark:
                raise KafkaError(
                    ErrorCode.OFFSET_OUT_OF_RANGE,
                    f"Cannot increment the log start offset to {offset} of partition "
                    f"{self.topic}-{self.partition} since it is larger than the high "
                    f"watermark {self._high_watermark}",
                )
            self.maybe_increment_log_start_offset(offset)
            return self.log_start_offset

    def maybe_increment_log_start_offset(self, offset: int) -> None:
        """Move the log start offset up to `offset`, if that is up (lock held)."""
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        self._high_watermark = max(self._high_watermark, offset)
        self.producers.on_high_watermark_updated(self._high_watermark)
        self.local.raise_recovery_point(offset)
        self.epoch_cache.truncate_from_start(offset)

    def _delete_producer_snapshots(self, segments: list[Segment]) -> None:
        """The local log deleted `segments` (lock held): their producer snapshots go too."""
        for segment in segments:
            self.snapshots.delete(segment.base_offset)

    def remove_expired_producers(self, now_ms: int | None = None) -> int:
        with self._lock:
            return self.producers.remove_expired(self._now(now_ms))

    # -- retention and compaction (see `retention`, `compaction`) -------------------------

    @_reporting_io_errors("deleting segments of")
    def delete_old_segments(self, now_ms: int | None = None) -> int:
        """Retention: segments below the log start offset, and by retention.ms / retention.bytes
        when cleanup.policy includes delete. Returns how many segments were deleted."""
        return self.retention.delete_old_segments(self._now(now_ms))

    def cleanable_offsets(self, now_ms: int) -> tuple[int, int]:
        """(first dirty offset, first uncleanable offset) for compaction."""
        return self.compaction.cleanable_offsets(now_ms)

    def cleanable_ratio(self, now_ms: int) -> tuple[float, int]:
        """(dirty bytes / total bytes, dirty bytes) of the cleanable part."""
        return self.compaction.cleanable_ratio(now_ms)

    @_reporting_io_errors("cleaning")
    def compact(
        self, now_ms: int | None = None, *, max_map_entries: int = DEFAULT_MAX_MAP_ENTRIES
    ) -> CleanerStats | None:
        """One compaction pass (see `cleaner`); None when there is nothing dirty to clean."""
        return self.compaction.compact(self._now(now_ms), max_map_entries=max_map_entries)

    # -- flushing -------------------------------------------------------------------------

    @_reporting_io_errors("flushing log for")
    def flush(self, offset: int | None = None, *, now_ms: int | None = None) -> None:
        """fsync everything below `offset` (default: the log end), then move the recovery point."""
        local = self.local
        with self._lock:
            if local.closed:
                return
            target = local.log_end_offset if offset is None else min(offset, local.log_end_offset)
            start = local.recovery_point
            segments = local.segments.overlapping(start, target)
            truncations = local.truncations
        if target <= start:
            self.epoch_cache.flush()
            local.last_flush_ms = self._now(now_ms)
            return
        local.flush_segments(segments)
        for snapshot in self.snapshots.offsets():
            if start < snapshot <= target:
                self.snapshots.fsync(snapshot)
        self.epoch_cache.flush()
        local.fsync_dir()
        with self._lock:
            local.mark_flushed(target, truncations, self._now(now_ms))

    def flush_if_due(self, now_ms: int | None = None) -> bool:
        """The periodic flush: segments rolled since the last call, and flush.ms."""
        now = self._now(now_ms)
        with self._lock:
            rolled, self._roll_flush_offset = self._roll_flush_offset, None
        if rolled is not None:
            self.flush(rolled, now_ms=now)
        if now - self.local.last_flush_ms >= self.local.config.flush_ms:
            self.flush(now_ms=now)
            return True
        return rolled is not None

    # -- closing --------------------------------------------------------------------------

    @_reporting_io_errors("closing")
    def close(self) -> None:
        """Snapshot producer state at the log end and close the segments (no flush: see flush())."""
        with self._lock:
            if self.local.closed:
                return
            self.producers.update_map_end_offset(self.local.log_end_offset)
            self._take_snapshot(self.local.log_end_offset)
            self.local.close()

    def close_handlers(self) -> None:
        """Let go of the files without writing anything (its log directory failed; Kafka's
        closeHandlers): no flush, no producer snapshot, no index written."""
        with self._lock:
            self.local.close_handlers()

    def mark_deleted(self) -> None:
        """Stop using the log (its directory is being deleted)."""
        with self._lock:
            self.local.mark_deleted()

    def __repr__(self) -> str:
        return (
            f"Log({self.topic}-{self.partition}, log_start_offset={self.log_start_offset}, "
            f"log_end_offset={self.local.log_end_offset}, high_watermark={self._high_watermark})"
        )
