"""One partition's log: segments on disk in Kafka's layout, and the offsets around them.

    log = Log.open("/data/orders-0", LogConfig())
    info = log.append_as_leader(bytearray(batch), leader_epoch=3)
    log.high_watermark = log.log_end_offset          # the replication layer decides this
    data = log.read(info.first_offset, 1 << 20, max_offset=log.high_watermark)

The ListOffsets lookups, retention and compaction live in their own modules (`lookups`,
`retention`, `compaction`) as mixins of `Log`.

Durability: appends only write to the page cache. When the configuration promises more
(`fsync_before_ack`, or `flush.messages` appends since the last flush) `sync_owed()` says so and
the appender calls `sync_appended(end)` on a worker thread before acknowledging, so that no fsync
ever runs on the event loop.

Files that cannot be opened, written or created (descriptor limit, disk full, permissions)
fail the operation that needed them with `KafkaStorageError` (KAFKA_STORAGE_ERROR) and leave
the log as it was: an append is undone, a roll that cannot create its segment does not
happen, a new log whose files cannot be created leaves no directory behind. A new log is
also refused while its descriptor would eat into the room kept free under the open file limit
(see `descriptor_limit`).

Threading: every method may be called from the event loop thread; `flush`, `sync_appended`,
`delete_old_segments`, `compact` and `flush_if_due` are also meant for worker threads. A per-log lock guards state
changes and is held only briefly: fsyncs and compaction's reading and writing happen
outside it, and their results are swapped in under it. Reads take no lock at all: they work
on the immutable segment list current when they start.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable

from ..common.time import now_ms as wall_clock_ms
from ..records.batch import BatchHeader
from . import files
from .compaction import Compaction
from .config import LOG_APPEND_TIME, LogConfig, as_log_config
from .deleter import DelayedDeleter
from .descriptor_limit import BUDGET
from .epoch_cache import LeaderEpochCache
from .errors import ErrorCode, KafkaError, KafkaStorageError, LogClosedError, UnexpectedAppendOffsetError
from .files import HandleCache
from .loader import LogLoader
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
from .results import AbortedTransaction, FetchDataInfo, LogAppendInfo, RecoveryStats
from .retention import Retention
from .segment import Segment
from .segments import SegmentList
from .txn_index import AbortedTxn
from .validation import (
    AppendBatches,
    assign_offsets,
    recompress,
    split_batches,
    validate_follower_append,
    validate_leader_append,
)


class Log(OffsetLookups, Retention, Compaction):
    """A partition's log. Construct with `Log.open`."""

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
    ) -> None:
        self.directory = directory
        self.topic = topic
        self.partition = partition
        self.config = config
        self.fsync_before_ack = fsync_before_ack
        self._handles = handles
        self._deleter = deleter
        self._time_ms = time_ms
        self._lock = threading.RLock()
        self._sync_lock = threading.Lock()  # one `sync_appended` at a time
        self._synced_offset = 0  # fsync before ack: everything below is on disk
        self._dir_sync_owed = False  # fsync before ack: a segment file was created since
        self.epoch_cache = LeaderEpochCache(os.path.join(directory, "leader-epoch-checkpoint"))
        self.producers = ProducerStateManager(expiration_ms=producer_id_expiration_ms)
        self.snapshots = SnapshotFiles(directory)
        self._segments = SegmentList()
        self.log_start_offset = 0
        self._log_end_offset = 0
        self.recovery_point = 0
        self.recovery: RecoveryStats | None = None  # what opening after an unclean shutdown did
        self._high_watermark = 0
        self._last_flush_ms = time_ms()
        self._roll_flush_offset: int | None = None
        # told of each roll (the log manager flushes the rolled segments soon after, as Kafka's
        # roll schedules "flush-log"): the recovery point follows the rolls
        self.roll_listener: Callable[[Log], None] | None = None
        self._truncations = 0
        self._limit_position: tuple[int, Segment, int] | None = None
        self.cleaner_checkpoint: int | None = None
        self._pending_swap: tuple[Segment, list[Segment]] | None = None  # see replace_segments
        self.closed = False

    @classmethod
    def open(
        cls,
        directory: str,
        config: LogConfig | dict | None = None,
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
    ) -> Log:
        """Open (creating if needed) the log in `directory`, named `<topic>-<partition>`.

        Without `clean_shutdown` the segments from `recovery_point` on are recovered.
        """
        parsed = files.parse_partition_dir(os.path.basename(os.path.normpath(directory)))
        if parsed is None:
            raise ValueError(f"{directory!r} is not named <topic>-<partition>")
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
            )
            log._load(log_start_offset, recovery_point, clean_shutdown)
            log.high_watermark = log.log_start_offset if high_watermark is None else high_watermark
            return log
        except OSError as exc:
            if is_new:  # nobody has seen it: leave nothing behind
                shutil.rmtree(directory, ignore_errors=True)
            raise KafkaStorageError(
                f"Error while {'creating' if is_new else 'loading'} log for {parsed[0]}-{parsed[1]} "
                f"in dir {os.path.dirname(os.path.normpath(directory))}",
                exc,
            ) from exc

    def _load(self, log_start_offset: int, recovery_point: int, clean_shutdown: bool) -> None:
        loader = LogLoader(
            self.directory,
            segment_factory=self._segment,
            epoch_cache=self.epoch_cache,
            producers=self.producers,
            snapshots=self.snapshots,
            now_ms=self._time_ms(),
        )
        loaded = loader.load(
            log_start_offset=log_start_offset, recovery_point=recovery_point, clean_shutdown=clean_shutdown
        )
        self._segments = loaded.segments
        self.log_start_offset = loaded.log_start_offset
        self.recovery_point = loaded.recovery_point
        self._log_end_offset = loaded.log_end_offset
        self._synced_offset = loaded.log_end_offset
        self.recovery = loaded.recovery
        self._segments.active.pin()

    def _segment(self, base_offset: int, *, suffix: str = "", create: bool = False) -> Segment:
        make = Segment.create if create else Segment
        return make(
            self.directory,
            base_offset,
            index_interval_bytes=self.config.index_interval_bytes,
            max_index_bytes=self.config.segment_index_bytes,
            suffix=suffix,
            handles=self._handles,
            created_ms=self._time_ms(),
        )

    # -- state ----------------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        """The offset the next appended record gets."""
        return self._log_end_offset

    @property
    def segments(self) -> SegmentList:
        return self._segments

    @property
    def size(self) -> int:
        return self._segments.size_in_bytes()

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        """Set by the replication layer; kept within [log start offset, log end offset]."""
        with self._lock:
            self._high_watermark = min(max(offset, self.log_start_offset), self._log_end_offset)
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

    def update_config(self, config: LogConfig | dict) -> None:
        """Apply new topic configs (AlterConfigs); new segments pick up index settings."""
        self.config = as_log_config(config, self.config)

    def _now(self, now_ms: int | None) -> int:
        return self._time_ms() if now_ms is None else now_ms

    def _check_open(self) -> None:
        if self.closed:
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
            assign_offsets(append, self._log_end_offset, leader_epoch, now if log_append_time else None)
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
            if append.first_offset < self._log_end_offset:
                raise UnexpectedAppendOffsetError(
                    f"First offset {append.first_offset} is less than the next offset {self._log_end_offset}",
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
            raise KafkaStorageError(f"Error while appending records to {self._name_in_dir()}", exc) from exc

    def _name_in_dir(self) -> str:
        """Kafka's way of naming a partition in storage errors: `<topic>-<partition> in dir <log dir>`."""
        return f"{self.topic}-{self.partition} in dir {os.path.dirname(os.path.normpath(self.directory))}"

    def _append(
        self, append: AppendBatches, updates: dict[int, ProducerAppend], completed: list[CompletedTxn], now: int
    ) -> None:
        """Write the batches and apply everything they change (lock held)."""
        for _, header in append.batches:
            self._maybe_assign_epoch(header.partition_leader_epoch, header.base_offset)
        max_timestamp, offset_of_max = append.max_timestamp_and_offset()
        segment = self._maybe_roll(append, max_timestamp, now)
        segment.append(append.last_offset, max_timestamp, offset_of_max, append.data())
        self._log_end_offset = append.last_offset + 1
        for update in updates.values():
            self.producers.update(update)
        for txn in completed:
            if txn.is_aborted:
                lso = self.producers.last_stable_offset(txn)
                segment.txn_index.append(AbortedTxn(txn.producer_id, txn.first_offset, txn.last_offset, lso))
            self.producers.complete_txn(txn)
        self.producers.update_map_end_offset(self._log_end_offset)

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
        return self.fsync_before_ack or self._flush_messages_reached()

    def _flush_messages_reached(self) -> bool:
        return self._log_end_offset - self.recovery_point >= self.config.flush_messages

    def sync_appended(self, end_offset: int) -> None:
        """Make the appends below `end_offset` as durable as the configuration promises: their
        data fdatasync'ed (fsync before ack), and a full flush once `flush.messages` appends
        accumulated. Blocks: call it on a worker thread. Calls that find their appends already
        synced by another return at once."""
        if self.fsync_before_ack:
            self._fdatasync_below(end_offset)
        if self._flush_messages_reached():
            self.flush()

    def _fdatasync_below(self, end_offset: int) -> None:
        with self._sync_lock:
            with self._lock:
                if self.closed or end_offset <= self._synced_offset:
                    return
                target = self._log_end_offset
                segments = self._segments.overlapping(self._synced_offset, target)
                dir_owed, self._dir_sync_owed = self._dir_sync_owed, False
                truncations = self._truncations
            for segment in segments:
                try:
                    segment.fdatasync_log()
                except FileNotFoundError:
                    pass  # deleted meanwhile
                except OSError:
                    if not self.closed:
                        raise
                    return  # closed meanwhile (deleted, or the broker stopping): nothing to ack
            if dir_owed:
                files.fsync_dir(self.directory)  # acknowledged data must be findable after a crash
            with self._lock:
                if truncations == self._truncations:
                    self._synced_offset = max(self._synced_offset, target)

    # -- rolling --------------------------------------------------------------------------

    def _maybe_roll(self, append: AppendBatches, max_timestamp: int, now: int) -> Segment:
        segment = self._segments.active
        if segment.should_roll(
            segment_bytes=self.config.segment_bytes,
            segment_ms=self.config.segment_ms,
            messages_size=append.valid_bytes,
            max_timestamp_in_messages=max_timestamp,
            max_offset_in_messages=append.last_offset,
            now=now,
        ):
            return self.roll(append.first_offset)
        return segment

    def roll(self, expected_next_offset: int | None = None) -> Segment:
        """Start a new active segment at max(expected_next_offset, log end offset)."""
        with self._lock:
            base = max(expected_next_offset or 0, self._log_end_offset)
            active = self._segments.active
            if active.base_offset == base and active.size == 0:
                return active
            segment = self._new_active_segment(base)
            active.on_become_inactive()
            if self.fsync_before_ack:
                self._dir_sync_owed = True  # synced by the next `sync_appended`
            self._segments = self._segments.with_segment(segment)
            self.producers.update_map_end_offset(base)
            self._roll_flush_offset = base
            self._take_snapshot(base)
            if self.roll_listener is not None:
                self.roll_listener(self)
            return segment

    def _new_active_segment(self, base: int) -> Segment:
        """A new segment at `base`, created and pinned; when its files cannot be opened, an
        OSError and no file left behind."""
        segment = self._segment(base, create=True)
        try:
            segment.pin()
        except OSError:
            segment.delete_files()
            raise
        return segment

    def _take_snapshot(self, offset: int) -> None:
        self.snapshots.write(offset, list(self.producers.producers.values()))

    # -- reads ----------------------------------------------------------------------------

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
        segments, log_end_offset, log_start_offset = self._segments, self._log_end_offset, self.log_start_offset
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
        try:
            return self._read(segments, fetch_offset, max_bytes, limit, log_end_offset, min_one_message, read_committed)
        except OSError as exc:
            raise KafkaStorageError(f"Error while reading records of {self._name_in_dir()}", exc) from exc

    def _read(
        self,
        segments: SegmentList,
        fetch_offset: int,
        max_bytes: int,
        limit: int,
        log_end_offset: int,
        min_one_message: bool,
        read_committed: bool,
    ) -> FetchDataInfo:
        for index in range(max(segments.floor_index(fetch_offset), 0), len(segments)):
            segment = segments[index]
            max_position = self._max_position(segments, index, limit, log_end_offset)
            info = segment.read(fetch_offset, max_bytes, max_position, min_one_message)
            if info is not None:
                if read_committed:
                    info.aborted_transactions = self._aborted_transactions(segments, index, info, log_end_offset)
                return info
        return FetchDataInfo(fetch_offset)

    def _max_position(self, segments: SegmentList, index: int, limit: int, log_end_offset: int) -> int:
        """Where a read of segment `index` must stop so that it stays below offset `limit`."""
        segment = segments[index]
        if limit >= segments.upper_bound(index, log_end_offset):
            return segment.size
        cached = self._limit_position
        if cached is not None and cached[0] == limit and cached[1] is segment:
            return cached[2]
        located = segment.translate_offset(limit)
        position = segment.size if located is None else located[1]
        self._limit_position = (limit, segment, position)
        return position

    def _aborted_transactions(
        self, segments: SegmentList, index: int, info: FetchDataInfo, log_end_offset: int
    ) -> list[AbortedTransaction]:
        segment = segments[index]
        upper = segment.fetch_upper_bound_offset(info.position, info.size)
        if upper is None:
            upper = segments.upper_bound(index, log_end_offset)
        found: list[AbortedTransaction] = []
        for later in range(index, len(segments)):
            txns, complete = segments[later].txn_index.collect(info.fetch_offset, upper)
            found.extend(AbortedTransaction(txn.producer_id, txn.first_offset) for txn in txns)
            if complete:
                break
        return found

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """Record the start of a leader epoch (a new leader does this at its log end offset)."""
        with self._lock:
            self._maybe_assign_epoch(leader_epoch, start_offset)

    # -- truncation and log start ---------------------------------------------------------

    def truncate_to(self, target_offset: int) -> bool:
        """Remove everything at or above `target_offset`; False if there was nothing to remove."""
        if target_offset < 0:
            raise ValueError(f"cannot truncate to a negative offset ({target_offset})")
        with self._lock:
            self._check_open()
            if target_offset >= self._log_end_offset:
                self.epoch_cache.truncate_from_end(self._log_end_offset)
                return False
            self._withdraw_pending_swap()
            if self._segments.first.base_offset > target_offset:
                self._truncate_fully(target_offset, None)
                return True
            doomed = [s for s in self._segments if s.base_offset > target_offset]
            self._segments = self._segments.without(doomed)
            self._schedule_deletion(doomed)
            active = self._segments.active
            active.truncate_to(target_offset)
            active.pin()
            self._log_end_offset = target_offset
            self.epoch_cache.truncate_from_end(target_offset)
            self.log_start_offset = min(target_offset, self.log_start_offset)
            self._rebuild_producer_state()
            self._after_truncation()
            return True

    def truncate_fully_and_start_at(self, new_offset: int, log_start_offset: int | None = None) -> None:
        """Delete all data; the log restarts empty at `new_offset`."""
        with self._lock:
            self._check_open()
            self._truncate_fully(new_offset, log_start_offset)

    def _truncate_fully(self, new_offset: int, log_start_offset: int | None) -> None:
        self._withdraw_pending_swap()
        doomed = list(self._segments)
        self._schedule_deletion(doomed)
        segment = self._segment(new_offset, create=True)
        segment.pin()
        self._segments = SegmentList([segment])
        self.epoch_cache.clear()
        self.snapshots.delete_where(lambda _: True)
        self.producers.clear(new_offset)
        self.log_start_offset = new_offset if log_start_offset is None else log_start_offset
        self._log_end_offset = new_offset
        self._after_truncation()

    def _after_truncation(self) -> None:
        self.recovery_point = min(self.recovery_point, self._log_end_offset)
        self._high_watermark = min(self._high_watermark, self._log_end_offset)
        self.producers.on_high_watermark_updated(self._high_watermark)  # the rebuilt state's markers
        self._roll_flush_offset = None
        self._limit_position = None
        self._synced_offset = min(self._synced_offset, self._log_end_offset)
        self._truncations += 1

    def _rebuild_producer_state(self) -> None:
        rebuild_producer_state(
            self.producers, self.snapshots, self._segments, self.log_start_offset, self._log_end_offset, self._time_ms()
        )

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
            self._increment_log_start_offset(offset)
            return self.log_start_offset

    def _increment_log_start_offset(self, offset: int) -> None:
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        self._high_watermark = max(self._high_watermark, offset)
        self.producers.on_high_watermark_updated(self._high_watermark)
        self.recovery_point = max(self.recovery_point, offset)
        self.epoch_cache.truncate_from_start(offset)

    # -- deleting segments ----------------------------------------------------------------

    def _schedule_deletion(self, segments: list[Segment], now: int | None = None) -> None:
        """Rename to .deleted now, remove after file.delete.delay.ms."""
        self._withdraw_pending_swap(segments)
        due = self._now(now) + self.config.file_delete_delay_ms
        for segment in segments:
            segment.change_suffix(files.DELETED_SUFFIX)
            self.snapshots.delete(segment.base_offset)
            self._deleter.schedule(due, segment.delete_files)
        self._limit_position = None

    def remove_expired_producers(self, now_ms: int | None = None) -> int:
        with self._lock:
            return self.producers.remove_expired(self._now(now_ms))

    # -- flushing -------------------------------------------------------------------------

    def flush(self, offset: int | None = None, *, now_ms: int | None = None) -> None:
        """fsync everything below `offset` (default: the log end), then move the recovery point."""
        with self._lock:
            if self.closed:
                return
            target = self._log_end_offset if offset is None else min(offset, self._log_end_offset)
            start = self.recovery_point
            segments = self._segments.overlapping(start, target)
            truncations = self._truncations
        if target <= start:
            self.epoch_cache.flush()
            self._last_flush_ms = self._now(now_ms)
            return
        for segment in segments:
            try:
                segment.flush()
            except FileNotFoundError:
                pass  # deleted meanwhile
        for snapshot in self.snapshots.offsets():
            if start < snapshot <= target:
                self.snapshots.fsync(snapshot)
        self.epoch_cache.flush()
        files.fsync_dir(self.directory)
        with self._lock:
            if truncations == self._truncations:
                self.recovery_point = max(self.recovery_point, target)
            self._last_flush_ms = self._now(now_ms)

    def flush_if_due(self, now_ms: int | None = None) -> bool:
        """The periodic flush: segments rolled since the last call, and flush.ms."""
        now = self._now(now_ms)
        with self._lock:
            rolled, self._roll_flush_offset = self._roll_flush_offset, None
        if rolled is not None:
            self.flush(rolled, now_ms=now)
        if now - self._last_flush_ms >= self.config.flush_ms:
            self.flush(now_ms=now)
            return True
        return rolled is not None

    # -- closing --------------------------------------------------------------------------

    def close(self) -> None:
        """Snapshot producer state at the log end and close the segments (no flush: see flush())."""
        with self._lock:
            if self.closed:
                return
            self.producers.update_map_end_offset(self._log_end_offset)
            self._take_snapshot(self._log_end_offset)
            for segment in self._segments:
                segment.close()
            self.closed = True

    def mark_deleted(self) -> None:
        """Stop using the log (its directory is being deleted)."""
        with self._lock:
            for segment in self._segments:
                segment.abandon()
            self.closed = True

    def __repr__(self) -> str:
        return (
            f"Log({self.topic}-{self.partition}, log_start_offset={self.log_start_offset}, "
            f"log_end_offset={self._log_end_offset}, high_watermark={self._high_watermark})"
        )
