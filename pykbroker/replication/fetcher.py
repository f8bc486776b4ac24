"""Followers fetching from their leaders: one fetcher task per leader broker.

    fetchers = ReplicaFetcherManager(replica_manager, config, metadata)
    fetchers.add_partition(partition)       # this broker follows it (partition.leader_id leads)
    fetchers.remove_partition(("orders", 0))
    await fetchers.run()                    # until cancelled

Each fetcher sends Fetch requests (v12: by topic name, with each partition's current leader
epoch and last fetched epoch, and this broker's id as replica id) over one connection to its
leader, and for each partition in the response:

- appends the batches verbatim (`append_as_follower`) and takes the leader's high watermark
  (never past its own log end) and log start offset; when either moved, the replica manager
  hears of it (`follower_partition_changed`), for consumers reading from this follower (KIP-392);
- when the leader answers with a diverging epoch, truncates where the two logs stop agreeing
  (Kafka's rule: the follower's end offset for that epoch, or the leader's, whichever is
  smaller) and fetches again, which checks the next older epoch if needed;
- when the fetch offset is out of range, asks the leader for its log end and log start
  (ListOffsets as a replica) and truncates to the leader's end, or starts over at its start
  (when that start lies inside a batch, the log starts at the batch, as Kafka's does);
- on any other error, leaves the partition alone for `replica.fetch.backoff.ms`, until the
  metadata tells it who leads now. No error ends the fetcher (or the broker).

The fetch offset itself tells the leader how far this follower got (that is how the leader's
high watermark and ISR move).

Replication throttle (Kafka's follower quota, see `replication_quota`): the bytes appended to
throttled partitions are recorded; while the follower quota is exceeded, a throttled partition
this follower is not in sync on (its log end short of the leader's high watermark) sits out of
the fetches until the rate is back under the limit (at most `MAX_THROTTLE_S` at a time).

Each fetcher keeps an incremental fetch session (KIP-227) with its leader, as Kafka's
FetchSessionHandler: the first fetch lists every partition and creates the session; later ones
list only the partitions whose fetch parameters changed (new partitions, and those whose
response moved their log end, log start or epoch), and forget the partitions no longer followed
or backing off. The leader answers only the partitions with news, so an idle follower's rounds
cost nothing per partition on either side. A session error (FETCH_SESSION_ID_NOT_FOUND,
INVALID_FETCH_SESSION_EPOCH) or a broken connection starts over with a full fetch.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from ..cluster.store import MetadataStore
from ..common.time import Clock
from ..common.topic_partition import TopicPartition
from ..log.errors import LogError, UnexpectedAppendOffsetError
from ..log.log import Log
from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..records.batch import iter_headers
from .broker_client import BrokerConnection, BrokerConnectionError, Connect
from .durability import sync_before_ack
from .fetch_session import INITIAL_EPOCH, INVALID_SESSION_ID, next_epoch
from .replication_quota import ReplicationQuota

if TYPE_CHECKING:
    from ..config.broker import BrokerConfig
    from .partition import Partition

log = logging.getLogger(__name__)

FETCH_VERSION = 12
MAX_THROTTLE_S = 1.0  # a throttled partition is looked at again at least this often
LIST_OFFSETS_VERSION = 4
EARLIEST, LATEST = -2, -1


@functools.cache
def fetch_request() -> Any:
    """The FETCH request class, generated on first use."""
    return messages.request(ApiKey.FETCH).cls


@functools.cache
def list_offsets_request() -> Any:
    """The LIST_OFFSETS request class, generated on first use."""
    return messages.request(ApiKey.LIST_OFFSETS).cls


class FollowerHost(Protocol):
    """What the fetchers need of the replica manager they serve."""

    broker_id: int
    clock: Clock
    inter_broker_listener: str | None
    connect: Connect
    follower_quota: ReplicationQuota

    def follower_partition_changed(self, tp: TopicPartition) -> None:
        """A followed partition's high watermark, log start or log end moved (consumers reading
        from this follower, KIP-392, may be waiting on it)."""


@dataclass
class FollowedPartition:
    partition: Partition
    leader_epoch: int
    retry_at: float = 0.0  # monotonic seconds; after an error, wait until then


class ReplicaFetcherManager:
    def __init__(self, replica_manager: FollowerHost, config: BrokerConfig, metadata: MetadataStore) -> None:
        self.replica_manager = replica_manager
        self.config = config
        self.metadata = metadata
        self.broker_id = replica_manager.broker_id
        self.fetchers: dict[int, LeaderFetcher] = {}
        self._tasks: anyio.abc.TaskGroup | None = None

    def add_partition(self, partition: Partition) -> None:
        """Follow `partition` from its current leader at its current leader epoch."""
        self.remove_partition(partition.key)
        fetcher = self.fetchers.get(partition.leader_id)
        if fetcher is None:
            fetcher = self.fetchers[partition.leader_id] = LeaderFetcher(partition.leader_id, self)
            if self._tasks is not None:
                self._tasks.start_soon(fetcher.run)
        fetcher.add(partition)

    def remove_partition(self, tp: TopicPartition) -> None:
        for fetcher in self.fetchers.values():
            fetcher.remove(tp)

    async def run(self) -> None:
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            for fetcher in list(self.fetchers.values()):
                tasks.start_soon(fetcher.run)
            try:
                await anyio.sleep_forever()
            finally:
                self._tasks = None


class LeaderFetcher:
    """Fetches every partition this broker follows from one leader broker."""

    def __init__(self, leader_id: int, manager: ReplicaFetcherManager) -> None:
        self.leader_id = leader_id
        self.manager = manager
        self.partitions: dict[TopicPartition, FollowedPartition] = {}
        self.session = FollowerSession()
        self._connection: BrokerConnection | None = None
        self._wake = anyio.Event()
        config = manager.config
        self.backoff_s = config["replica.fetch.backoff.ms"] / 1000
        self.max_wait_ms = config["replica.fetch.wait.max.ms"]
        self.min_bytes = config["replica.fetch.min.bytes"]
        self.max_bytes = config["replica.fetch.response.max.bytes"]
        self.partition_max_bytes = config["replica.fetch.max.bytes"]
        self.timeout_s = config["replica.socket.timeout.ms"] / 1000
        self.clock = manager.replica_manager.clock

    def add(self, partition: Partition) -> None:
        self.partitions[partition.key] = FollowedPartition(partition, partition.leader_epoch)
        self.session.backing_off.pop(partition.key, None)
        self.session.changed.add(partition.key)
        self._wake.set()

    def remove(self, tp: TopicPartition) -> None:
        self.partitions.pop(tp, None)
        self.session.changed.add(tp)  # forgotten at the next fetch

    # -- the loop ----------------------------------------------------------------------
    async def run(self) -> None:
        try:
            while True:
                ready = self._ready()
                if not ready:
                    await self._idle()
                    continue
                try:
                    await self._fetch_once(ready)
                except BrokerConnectionError as exc:
                    log.info("Fetching from broker %d failed: %s", self.leader_id, exc)
                    await self._close()
                    await anyio.sleep(self.backoff_s)
                except Exception:  # never the end of the broker: fetch again after a back-off
                    log.exception("Error fetching from broker %d", self.leader_id)
                    await self._close()
                    await anyio.sleep(self.backoff_s)
        finally:
            with anyio.CancelScope(shield=True):
                await self._close()

    def _ready(self) -> bool:
        """Whether any partition is to be fetched now; partitions whose back-off ended rejoin
        the session."""
        now = self._monotonic_s()
        for tp in [tp for tp, retry_at in self.session.backing_off.items() if retry_at <= now]:
            del self.session.backing_off[tp]
            self.session.changed.add(tp)
        return len(self.partitions) > len(self.session.backing_off)

    async def _idle(self) -> None:
        """Nothing to fetch now: wait for a new partition or the end of a back-off."""
        self._wake = anyio.Event()
        now = self._monotonic_s()
        waits = [retry_at - now for retry_at in self.session.backing_off.values()]
        with anyio.move_on_after(max(0.0, min(waits)) if waits else None):
            await self._wake.wait()
        if not self.partitions:
            await self._close()

    async def _fetch_once(self, ready: bool) -> None:
        connection = await self._connect()
        request = self._fetch_request()
        response = await connection.request(ApiKey.FETCH, FETCH_VERSION, request, extra_wait_s=self.max_wait_ms / 1000)
        if response.error_code in _SESSION_ERRORS:
            log.debug("Fetch session with broker %d ended: %s", self.leader_id, ErrorCode(response.error_code).name)
            self.session.reset(self.partitions)
            return
        if response.error_code != ErrorCode.NONE:
            self.session.reset(self.partitions)
            raise BrokerConnectionError(f"fetch failed: {ErrorCode(response.error_code).name}")
        self.session.answered(response.session_id)
        for topic in response.responses:
            for data in topic.partitions:
                followed = self.session.members.get((topic.topic, data.partition_index))
                if followed is not None and self._still_following(followed):
                    self.session.changed.add(followed.partition.key)  # its log end, start or epoch moved
                    await self._process(followed, data)

    def _still_following(self, followed: FollowedPartition) -> bool:
        partition = followed.partition
        return (
            self.partitions.get(partition.key) is followed
            and partition.leader_id == self.leader_id
            and partition.leader_epoch == followed.leader_epoch
        )

    async def _connect(self) -> BrokerConnection:
        if self._connection is not None and not self._connection.closed:
            return self._connection
        endpoint = self.manager.metadata.broker_endpoint(
            self.leader_id, self.manager.replica_manager.inter_broker_listener
        )
        if endpoint is None:
            raise BrokerConnectionError(f"broker {self.leader_id} is not registered")
        self._connection = await self.manager.replica_manager.connect(
            endpoint.host, endpoint.port, client_id=f"broker-{self.manager.broker_id}-fetcher", timeout_s=self.timeout_s
        )
        return self._connection

    async def _close(self) -> None:
        self.session.reset(self.partitions)
        if self._connection is not None:
            await self._connection.aclose()
            self._connection = None

    def _fetch_request(self) -> Any:
        """The next fetch of the session: every partition for a full fetch, else those that
        changed; partitions no longer fetched are forgotten."""
        listed, forgotten = self.session.next_request(self.partitions)
        topics: dict[str, list] = {}
        for followed in listed:
            partition = followed.partition
            latest_epoch = partition.log.epoch_cache.latest_epoch
            topics.setdefault(partition.topic, []).append(
                fetch_request().FetchPartition(
                    partition=partition.index,
                    current_leader_epoch=followed.leader_epoch,
                    fetch_offset=partition.log_end_offset,
                    last_fetched_epoch=-1 if latest_epoch is None else latest_epoch,
                    log_start_offset=partition.log_start_offset,
                    partition_max_bytes=self.partition_max_bytes,
                )
            )
        return fetch_request()(
            replica_id=self.manager.broker_id,
            max_wait_ms=self.max_wait_ms,
            min_bytes=self.min_bytes,
            max_bytes=self.max_bytes,
            isolation_level=0,
            session_id=self.session.session_id,
            session_epoch=self.session.epoch,
            topics=[fetch_request().FetchTopic(topic=name, partitions=parts) for name, parts in topics.items()],
            forgotten_topics_data=_forgotten_topics(forgotten),
            rack_id="",
        )

    # -- one partition's answer --------------------------------------------------------
    async def _process(self, followed: FollowedPartition, data: Any) -> None:
        partition = followed.partition
        error = ErrorCode(data.error_code)
        try:
            if error == ErrorCode.NONE:
                diverging = data.diverging_epoch
                if diverging is not None and diverging.epoch >= 0 and diverging.end_offset >= 0:
                    self._truncate_diverging(partition, diverging.epoch, diverging.end_offset)
                    self.manager.replica_manager.follower_partition_changed(partition.key)
                else:
                    if self._append(partition, data):
                        self.manager.replica_manager.follower_partition_changed(partition.key)
                    await sync_before_ack(partition.log, partition.log_end_offset)
                    if self.manager.replica_manager.follower_quota.is_throttled(partition.key):
                        self._account_throttled(followed, data)
            elif error == ErrorCode.OFFSET_OUT_OF_RANGE:
                await self._handle_out_of_range(followed)
                self.manager.replica_manager.follower_partition_changed(partition.key)
            else:
                log.debug(
                    "Fetch of %s-%d from broker %d: %s", partition.topic, partition.index, self.leader_id, error.name
                )
                self._back_off(followed)
        except (KafkaError, LogError, ValueError) as exc:
            log.warning(
                "Replicating %s-%d from broker %d failed: %s", partition.topic, partition.index, self.leader_id, exc
            )
            self._back_off(followed)
        except BrokerConnectionError:
            raise
        except Exception:  # as Kafka's fetcher: the partition fails, the broker goes on
            log.exception(
                "Unexpected error replicating %s-%d from broker %d", partition.topic, partition.index, self.leader_id
            )
            self._back_off(followed)

    def _append(self, partition: Partition, data: Any) -> bool:
        """Append what the leader sent and take its high watermark and log start; True when the
        high watermark or the log start moved (what a consumer of this replica can read changed)."""
        records = data.records
        if records is not None and len(records) and next(iter_headers(records), None):
            self._append_records(partition, records)
        log_ = partition.log
        moved = False
        new_high_watermark = min(data.high_watermark, log_.log_end_offset)
        if new_high_watermark > log_.high_watermark:
            log_.high_watermark = new_high_watermark
            moved = True
        leader_start = min(data.log_start_offset, log_.high_watermark)
        if leader_start > log_.log_start_offset:
            log_.delete_records_before(leader_start)
            moved = True
        return moved

    def _append_records(self, partition: Partition, records: bytes | bytearray | memoryview) -> None:
        log_ = partition.log
        try:
            partition.append_as_follower(records)
        except UnexpectedAppendOffsetError as exc:
            # Kafka's rule: an empty log restarted at the leader's log start, which fell inside
            # a batch (DeleteRecords), starts over at that batch's first offset.
            end = log_.log_end_offset
            if not (end == log_.log_start_offset and exc.first_offset < end <= exc.last_offset):
                raise
            log.info(
                "Unexpected offset in append to %s-%d: first offset %d is less than the log "
                "start offset %d. Since this is the first record appended to the "
                "follower's log, the log starts at offset %d",
                partition.topic,
                partition.index,
                exc.first_offset,
                end,
                exc.first_offset,
            )
            log_.truncate_fully_and_start_at(exc.first_offset)
            partition.append_as_follower(records)

    def _truncate_diverging(self, partition: Partition, epoch: int, end_offset: int) -> None:
        offset = truncation_offset(partition.log, epoch, end_offset)
        log.info(
            "Truncating %s-%d to offset %d: its log diverges from leader %d's at epoch %d (leader's end offset %d)",
            partition.topic,
            partition.index,
            offset,
            self.leader_id,
            epoch,
            end_offset,
        )
        partition.log.truncate_to(offset)

    async def _handle_out_of_range(self, followed: FollowedPartition) -> None:
        partition = followed.partition
        leader_end = await self._leader_offset(partition, LATEST)
        if not self._still_following(followed):
            return
        if leader_end < partition.log_end_offset:
            log.info("Truncating %s-%d to the leader's log end %d", partition.topic, partition.index, leader_end)
            partition.log.truncate_to(leader_end)
            return
        leader_start = await self._leader_offset(partition, EARLIEST)
        if not self._still_following(followed):
            return
        if leader_start > partition.log_end_offset:
            log.info("Restarting %s-%d at the leader's log start %d", partition.topic, partition.index, leader_start)
            partition.log.truncate_fully_and_start_at(leader_start)

    async def _leader_offset(self, partition: Partition, timestamp: int) -> int:
        request = list_offsets_request()(
            replica_id=self.manager.broker_id,
            isolation_level=0,
            topics=[
                list_offsets_request().ListOffsetsTopic(
                    name=partition.topic,
                    partitions=[
                        list_offsets_request().ListOffsetsPartition(
                            partition_index=partition.index,
                            current_leader_epoch=partition.leader_epoch,
                            timestamp=timestamp,
                        )
                    ],
                )
            ],
        )
        connection = await self._connect()
        response = await connection.request(ApiKey.LIST_OFFSETS, LIST_OFFSETS_VERSION, request)
        answer = response.topics[0].partitions[0]
        if answer.error_code != ErrorCode.NONE:
            raise KafkaError(ErrorCode(answer.error_code), "the leader could not list its offsets")
        return answer.offset

    def _account_throttled(self, followed: FollowedPartition, data: Any) -> None:
        """Kafka's follower quota: record the bytes fetched for a throttled partition, and hold
        the partition back while the quota is exceeded and this replica is not in sync."""
        quota = self.manager.replica_manager.follower_quota
        now = self.clock.now_ms()
        records = data.records
        if records is not None and len(records):
            quota.record(len(records), now)
        in_sync = followed.partition.log_end_offset >= data.high_watermark
        if not in_sync and quota.is_quota_exceeded(now):
            delay_s = min(MAX_THROTTLE_S, max(quota.throttle_time_ms(now) / 1000, self.max_wait_ms / 1000))
            followed.retry_at = self._monotonic_s() + delay_s
            self.session.backing_off[followed.partition.key] = followed.retry_at
            self.session.changed.add(followed.partition.key)

    def _back_off(self, followed: FollowedPartition) -> None:
        followed.retry_at = self._monotonic_s() + self.backoff_s
        self.session.backing_off[followed.partition.key] = followed.retry_at
        self.session.changed.add(followed.partition.key)  # forgotten until the back-off ends

    def _monotonic_s(self) -> float:
        return self.clock.monotonic_ms() / 1000


def truncation_offset(follower_log: Log, leader_epoch: int, leader_end_offset: int) -> int:
    """Where a follower truncates when the leader says its log ends at `leader_end_offset` for
    `leader_epoch` (the largest epoch the leader knows at or below the follower's last one)."""
    replica_end = follower_log.log_end_offset
    found = follower_log.end_offset_for_epoch(leader_epoch)
    if found is None:  # the follower knows no epoch at or below the leader's
        return min(leader_end_offset, replica_end)
    follower_epoch, follower_end = found
    if follower_epoch != leader_epoch:  # the follower never saw the leader's epoch: go back further
        return min(follower_end, replica_end)
    return min(leader_end_offset, follower_end, replica_end)


_SESSION_ERRORS = (
    ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
    ErrorCode.INVALID_FETCH_SESSION_EPOCH,
    ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
)


class FollowerSession:
    """A follower's side of its fetch session with one leader (Kafka's FetchSessionHandler):
    which partitions the leader's session holds, with the parameters it was last sent, and
    which partitions changed since."""

    def __init__(self) -> None:
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self.members: dict[TopicPartition, FollowedPartition] = {}  # as the leader's session has them
        self.changed: set[TopicPartition] = set()  # to send (or forget) at the next fetch
        self.backing_off: dict[TopicPartition, float] = {}  # left out until the monotonic time

    def reset(self, partitions: dict[TopicPartition, FollowedPartition]) -> None:
        """Start over: the next fetch is a full one, creating a new session."""
        self.session_id = INVALID_SESSION_ID
        self.epoch = INITIAL_EPOCH
        self.members = {}
        self.changed = set(partitions)

    def next_request(
        self, partitions: dict[TopicPartition, FollowedPartition]
    ) -> tuple[list[FollowedPartition], list[TopicPartition]]:
        """(partitions to list, partitions to forget) of the next fetch, which the leader's
        session then holds."""
        if self.session_id == INVALID_SESSION_ID:
            self.members = {tp: f for tp, f in partitions.items() if tp not in self.backing_off}
            self.changed = set()
            return list(self.members.values()), []
        listed, forgotten = [], []
        for tp in self.changed:
            followed = partitions.get(tp)
            if followed is None or tp in self.backing_off:
                if self.members.pop(tp, None) is not None:
                    forgotten.append(tp)
            else:
                self.members[tp] = followed
                listed.append(followed)
        self.changed = set()
        return listed, forgotten

    def answered(self, session_id: int) -> None:
        """The leader answered: the session it gave (0: none, the next fetch is full again)."""
        if session_id == INVALID_SESSION_ID:
            self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            self.changed = set(self.members)
            return
        if session_id != self.session_id:
            self.session_id, self.epoch = session_id, INITIAL_EPOCH
        self.epoch = next_epoch(self.epoch)


def _forgotten_topics(forgotten: list[TopicPartition]) -> list:
    by_topic: dict[str, list[int]] = {}
    for topic, index in forgotten:
        by_topic.setdefault(topic, []).append(index)
    return [fetch_request().ForgottenTopic(topic=topic, partitions=indexes) for topic, indexes in by_topic.items()]
