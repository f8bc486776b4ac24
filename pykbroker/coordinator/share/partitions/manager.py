"""The share partitions this broker leads, for every share group, and what ShareFetch and
ShareAcknowledge ask of them (Kafka's `SharePartitionManager` and `DelayedShareFetch`).

A share partition is created and loaded from the persister when a share consumer first
fetches it here, and dropped when this broker stops leading the partition, when its load fails
(a state the group coordinator never initialized: UNKNOWN_SERVER_ERROR with the persister's
message) or when the persister fences it: the next fetch loads it again. Acknowledgements reach
only share partitions a fetch created (UNKNOWN_TOPIC_OR_PARTITION otherwise), as in Kafka.

A fetch reads each partition through the replica manager's read path (max wait 0) from the share
partition's next fetch offset, acquires what it can for the member and returns the stored
batches holding acquired records.
With fewer than `min_bytes` acquired it waits in the ShareFetch purgatory, up to `max_wait_ms`,
until a partition has records to acquire (appended, released or whose lock expired).

Share sessions live here too (`sessions`); `release_member` is the hook for a member that left
its share group: its acquired records are released and its session goes.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ....common.batched_tasks import run_in_groups
from ....common.purgatory import DelayedOperation, DelayedOperationPurgatory
from ....common.timer import Timer
from ....common.topic_partition import TopicPartition
from ....protocol.errors import ErrorCode, KafkaError
from ....replication.fetch_types import PartitionFetchRequest, PartitionFetchResult
from ...runtime import LoopRuntime
from ..persister import SharePersister
from .fetch_utils import aborted_batches, acquired_bytes, fetched_batches, parse_duration_ms
from .sessions import ShareSessionCache, ShareSessionKey
from .share_partition import SharePartition
from .states import READ_COMMITTED, AcknowledgementBatch, AcquiredRange, ShareSettings

if TYPE_CHECKING:
    from ....config import BrokerConfig
    from ....replication.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

CONSUMER_REPLICA_ID = -1
GroupConfig = Callable[[str], Mapping[str, str]]


@dataclass(frozen=True)
class ShareTopicPartition:
    """A topic partition as share requests name it: by id, with the name the metadata gives."""

    topic_id: uuid.UUID
    topic: str
    partition: int

    @property
    def topic_partition(self) -> TopicPartition:
        return (self.topic, self.partition)


@dataclass
class ShareFetchResult:
    error_code: ErrorCode = ErrorCode.NONE
    records: bytes = b""
    acquired: list[AcquiredRange] = field(default_factory=list)
    error_message: str | None = None


@dataclass(frozen=True)
class PartitionError:
    """Why a share partition cannot be served here: Kafka's error code and message."""

    error_code: ErrorCode
    error_message: str | None = None


class DelayedShareFetch(DelayedOperation):
    """A share fetch that acquired too little: it completes once a partition it asked for has
    records to acquire, or when its wait is over."""

    def __init__(self, timeout_ms: int, ready: Callable[[], bool]) -> None:
        super().__init__(timeout_ms)
        self.ready = ready

    def try_complete(self) -> bool:
        return self.force_complete() if self.ready() else False


def share_fetch_key(tp: TopicPartition) -> tuple[str, str, int]:
    """The ShareFetch purgatory's key of a topic partition."""
    return ("share-fetch", tp[0], tp[1])


class SharePartitionManager:
    def __init__(
        self,
        replica_manager: ReplicaManager,
        persister: SharePersister,
        timer: Timer,
        current_config: Callable[[], BrokerConfig],
        group_config: GroupConfig = lambda group_id: {},
    ) -> None:
        self.replica_manager = replica_manager
        self.persister = persister
        self.timer = timer
        self.current_config = current_config
        self.group_config = group_config
        self.runtime = LoopRuntime(timer, "Share partitions")
        self.purgatory = DelayedOperationPurgatory("ShareFetch", timer)
        self.sessions = ShareSessionCache(int(current_config()["group.share.max.share.sessions"]))
        self.partitions: dict[tuple[str, TopicPartition], SharePartition] = {}  # (group id, tp) -> state
        self._groups_of: dict[TopicPartition, set[str]] = {}  # the groups with a share partition of tp
        replica_manager.add_partition_change_listener(self._partition_changed)

    async def run(self) -> None:
        """Serve background writes (after lock expiry) until cancelled."""
        await self.runtime.run()

    # -- settings -------------------------------------------------------------------------
    def settings(self, group_id: str) -> ShareSettings:
        """The group's share settings: its own configs over the broker's defaults."""
        config = self.current_config()
        group = self.group_config(group_id)

        def value(group_key: str, broker_key: str) -> int:
            return int(group.get(group_key) or config[broker_key])

        return ShareSettings(
            record_lock_duration_ms=value("share.record.lock.duration.ms", "group.share.record.lock.duration.ms"),
            delivery_count_limit=value("share.delivery.count.limit", "group.share.delivery.count.limit"),
            max_in_flight_records=value("share.partition.max.record.locks", "group.share.partition.max.record.locks"),
            auto_offset_reset=str(group.get("share.auto.offset.reset") or "latest").lower(),
            isolation_level=READ_COMMITTED
            if str(group.get("share.isolation.level", "")).lower() == "read_committed"
            else 0,
        )

    def record_lock_duration_ms(self, group_id: str) -> int:
        return self.settings(group_id).record_lock_duration_ms

    # -- share partitions -----------------------------------------------------------------
    async def share_partition(
        self, group_id: str, key: ShareTopicPartition, *, create: bool = True
    ) -> SharePartition | PartitionError:
        """The group's share partition of `key`, loaded; or why it cannot be served here. Without
        `create`, only one already made here (by a fetch) is used: UNKNOWN_TOPIC_OR_PARTITION."""
        tp = key.topic_partition
        try:
            leader = self.replica_manager.leader_partition(*tp)
        except KafkaError as exc:
            return PartitionError(exc.code)
        share_partition = self.partitions.get((group_id, tp))
        if share_partition is not None and (
            share_partition.fenced or share_partition.leader_epoch not in (-1, leader.leader_epoch)
        ):
            self._drop(group_id, tp)
            share_partition = None
        if share_partition is None:
            if not create:
                return PartitionError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            share_partition = self._create(group_id, key)
        error = await share_partition.maybe_initialize(
            leader.leader_epoch, lambda strategy: self._reset_offset(tp, strategy, group_id)
        )
        if error != ErrorCode.NONE:
            if self.partitions.get((group_id, tp)) is share_partition:
                self._drop(group_id, tp)  # loaded again by the next fetch
            return PartitionError(error, share_partition.load_error_message)
        return share_partition

    def _create(self, group_id: str, key: ShareTopicPartition) -> SharePartition:
        tp = key.topic_partition
        share_partition = SharePartition(
            group_id,
            key.topic_id,
            key.topic,
            key.partition,
            persister=self.persister,
            timer=self.timer,
            settings=lambda: self.settings(group_id),
            spawn=self.runtime.spawn,
            on_records_available=lambda: self._records_available(tp),
        )
        self.partitions[(group_id, tp)] = share_partition
        self._groups_of.setdefault(tp, set()).add(group_id)
        return share_partition

    def _records_available(self, tp: TopicPartition) -> None:
        self.purgatory.check_and_complete(share_fetch_key(tp))

    def _drop(self, group_id: str, tp: TopicPartition) -> None:
        share_partition = self.partitions.pop((group_id, tp), None)
        if share_partition is not None:
            share_partition.close()
        groups = self._groups_of.get(tp)
        if groups is not None:
            groups.discard(group_id)
            if not groups:
                del self._groups_of[tp]

    def _partition_changed(self, tp: TopicPartition) -> None:
        """Records appended, or the partition's leadership changed: waiting fetches look again,
        and share partitions this broker no longer leads (at their epoch) are dropped."""
        groups = self._groups_of.get(tp)
        if groups:
            partition = self.replica_manager.partitions.get(tp)
            for group_id in list(groups):
                share_partition = self.partitions[(group_id, tp)]
                if (
                    partition is None
                    or not partition.is_leader
                    or (share_partition.leader_epoch not in (-1, partition.leader_epoch))
                ):
                    self._drop(group_id, tp)
        self.purgatory.check_and_complete(share_fetch_key(tp))

    def _reset_offset(self, tp: TopicPartition, strategy: str, group_id: str) -> int:
        """The start offset of a share partition read for the first time (share.auto.offset.reset)."""
        partition = self.replica_manager.leader_partition(*tp)
        read_committed = self.settings(group_id).isolation_level == READ_COMMITTED
        latest = partition.readable_end(False, read_committed)
        if strategy == "earliest":
            return partition.log_start_offset
        if strategy.startswith("by_duration:"):
            try:
                since = self.timer.clock.now_ms() - parse_duration_ms(strategy.split(":", 1)[1])
            except ValueError:
                return latest
            found = self.replica_manager.fetch_offset_for_timestamp(
                tp[0], tp[1], since, replica_id=CONSUMER_REPLICA_ID, isolation_level=int(read_committed)
            )
            return found.offset if found is not None and found.offset >= 0 else latest
        return latest

    # -- ShareFetch -----------------------------------------------------------------------
    async def fetch(
        self,
        group_id: str,
        member_id: str,
        partitions: Sequence[ShareTopicPartition],
        *,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        max_records: int,
    ) -> dict[ShareTopicPartition, ShareFetchResult]:
        """Acquire records of `partitions` for the member, waiting up to `max_wait_ms` for
        `min_bytes` of them."""
        results: dict[ShareTopicPartition, ShareFetchResult] = {}
        served: list[tuple[ShareTopicPartition, SharePartition]] = []
        for key in partitions:
            found = await self.share_partition(group_id, key)
            if isinstance(found, SharePartition):
                served.append((key, found))
            else:
                results[key] = ShareFetchResult(found.error_code, error_message=found.error_message)
        acquired = await self._acquire(member_id, served, max_bytes, max_records)
        total = sum(len(r.records) for r in acquired.values())
        has_error = bool(results) or any(r.error_code != ErrorCode.NONE for r in acquired.values())
        if served and max_wait_ms > 0 and total < max(min_bytes, 1) and not has_error:
            settings = self.settings(group_id)
            ready = self._ready_check(served, settings.isolation_level == READ_COMMITTED)
            delayed = DelayedShareFetch(max_wait_ms, ready)
            await self.purgatory.wait_for(delayed, [share_fetch_key(k.topic_partition) for k, _ in served])
            if not delayed.expired:
                more = await self._acquire(member_id, served, max_bytes, max_records)
                acquired = {key: _merged(acquired[key], more[key]) for key in acquired}
        results.update(acquired)
        return results

    def _ready_check(
        self, served: list[tuple[ShareTopicPartition, SharePartition]], read_committed: bool
    ) -> Callable[[], bool]:
        def ready() -> bool:
            for key, share_partition in served:
                partition = self.replica_manager.partitions.get(key.topic_partition)
                if partition is None or not partition.is_leader or share_partition.fenced:
                    return True
                if share_partition.can_acquire(partition.readable_end(False, read_committed)):
                    return True
            return False

        return ready

    async def _acquire(
        self,
        member_id: str,
        served: list[tuple[ShareTopicPartition, SharePartition]],
        max_bytes: int,
        max_records: int,
    ) -> dict[ShareTopicPartition, ShareFetchResult]:
        results: dict[ShareTopicPartition, ShareFetchResult] = {}
        remaining_bytes = max_bytes
        remaining_records = max_records if max_records > 0 else 2**62
        for key, share_partition in served:
            if remaining_records <= 0:
                results[key] = ShareFetchResult()
                continue
            result = await self._acquire_one(member_id, key, share_partition, remaining_bytes, remaining_records)
            remaining_bytes = max(0, remaining_bytes - len(result.records))
            remaining_records -= sum(r.last_offset - r.first_offset + 1 for r in result.acquired)
            results[key] = result
        return results

    async def _acquire_one(
        self,
        member_id: str,
        key: ShareTopicPartition,
        share_partition: SharePartition,
        max_bytes: int,
        max_records: int,
    ) -> ShareFetchResult:
        settings = share_partition.settings()
        read = await self._read(key, share_partition.next_fetch_offset(), max_bytes, settings.isolation_level)
        if read.error_code == ErrorCode.OFFSET_OUT_OF_RANGE and self._skip_to_log_start(key, share_partition):
            read = await self._read(key, share_partition.next_fetch_offset(), max_bytes, settings.isolation_level)
        if read.error_code != ErrorCode.NONE:
            return ShareFetchResult(ErrorCode(read.error_code))
        if not read.records or not isinstance(read.records, list):
            return ShareFetchResult()
        data = b"".join(region.read_bytes() for region in read.records)
        batches = fetched_batches(data)
        aborted = (
            aborted_batches(batches, read.aborted_transactions or [])
            if settings.isolation_level == READ_COMMITTED
            else frozenset()
        )
        acquired = share_partition.acquire(member_id, batches, max_records, aborted)
        return ShareFetchResult(records=acquired_bytes(data, batches, acquired), acquired=acquired)

    def _skip_to_log_start(self, key: ShareTopicPartition, share_partition: SharePartition) -> bool:
        """Records in flight were deleted from the log: the share partition moves to its start."""
        partition = self.replica_manager.partitions.get(key.topic_partition)
        if partition is None or share_partition.next_fetch_offset() >= partition.log_start_offset:
            return False
        share_partition.skip_to(partition.log_start_offset)
        return True

    async def _read(
        self, key: ShareTopicPartition, offset: int, max_bytes: int, isolation_level: int
    ) -> PartitionFetchResult:
        tp = key.topic_partition
        request = PartitionFetchRequest(fetch_offset=offset, max_bytes=max(max_bytes, 1))
        read = await self.replica_manager.fetch_records(
            [(tp, request)],
            replica_id=CONSUMER_REPLICA_ID,
            max_wait_ms=0,
            min_bytes=0,
            max_bytes=max(max_bytes, 1),
            isolation_level=isolation_level,
        )
        return read[tp]

    # -- ShareAcknowledge -----------------------------------------------------------------
    async def acknowledge(
        self, group_id: str, member_id: str, acknowledgements: Mapping[ShareTopicPartition, list[AcknowledgementBatch]]
    ) -> dict[ShareTopicPartition, ErrorCode]:
        """Apply the member's acknowledgements of each partition, each written before it is
        answered; a partition no fetch made a share partition of here is UNKNOWN_TOPIC_OR_PARTITION."""
        results: dict[ShareTopicPartition, ErrorCode] = {}

        async def acknowledge_one(item: tuple[ShareTopicPartition, list[AcknowledgementBatch]]) -> None:
            key, batches = item
            found = await self.share_partition(group_id, key, create=False)
            if isinstance(found, SharePartition):
                results[key] = await found.acknowledge(member_id, batches)
            else:
                results[key] = found.error_code

        await run_in_groups(list(acknowledgements.items()), acknowledge_one)
        return results

    # -- sessions ending, members leaving -------------------------------------------------
    async def release_session(self, group_id: str, member_id: str) -> ErrorCode:
        """A share session closed (epoch -1): it goes, and the records the member still holds
        are released. SHARE_SESSION_NOT_FOUND without one."""
        if self.sessions.remove(ShareSessionKey(group_id, member_id)) is None:
            return ErrorCode.SHARE_SESSION_NOT_FOUND
        await self._release_records(group_id, member_id)
        return ErrorCode.NONE

    def connection_closed(self, connection_id: str) -> None:
        """A client connection closed: the share sessions it opened end as if closed by the
        client, releasing their members' records (Kafka's connection disconnect listener)."""
        for key in self.sessions.remove_opened_on(connection_id):
            self.runtime.spawn(self._release_records, key.group_id, key.member_id)

    async def release_member(self, group_id: str, member_id: str) -> None:
        """A member left its share group: its share session goes and its acquired records are
        released (delivered again to the others)."""
        self.sessions.remove_member(group_id, member_id)
        await self._release_records(group_id, member_id)

    async def _release_records(self, group_id: str, member_id: str) -> None:
        for (group, _), share_partition in list(self.partitions.items()):
            if group == group_id and share_partition.loaded:
                await share_partition.release_member(member_id)

    def on_member_leave(self, group_id: str, member_id: str) -> None:
        """`release_member` from a synchronous listener (the share group's membership hook)."""
        self.runtime.spawn(self.release_member, group_id, member_id)

    def shutdown(self) -> None:
        for group_id, tp in list(self.partitions):
            self._drop(group_id, tp)


def _merged(first: ShareFetchResult, second: ShareFetchResult) -> ShareFetchResult:
    if first.error_code != ErrorCode.NONE or not second.acquired:
        return first if first.acquired or first.error_code != ErrorCode.NONE else second
    if not first.acquired:
        return second
    return ShareFetchResult(second.error_code, first.records + second.records, [*first.acquired, *second.acquired])
