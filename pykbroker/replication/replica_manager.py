"""The partitions this broker hosts: appends with acks, reads with long polling, offsets lookups.

The ReplicaManager follows the metadata store: when a topic appears, grows, changes configs or is
deleted, it opens, reconfigures or deletes the local logs and takes the partition role (leader or
follower) the store assigns. Produce and Fetch handlers call `append_records` and
`fetch_records`; both may wait in a purgatory (acks=all until the ISR has the data; a fetch until
`min_bytes` are available or `max_wait_ms` passes). The purgatories' timeouts and every timestamp
here come from the broker's one timer and its clock (`common/timer.py`), so tests can drive them
on a fake clock.

Replication: a follower partition is handed to the fetcher of its leader (`fetcher.py`); a
leader learns each follower's log end offset from the follower's fetches (replica id >= 0),
which moves the high watermark and completes waiting produce requests. Fetches from followers
with a last fetched epoch are checked against the leader's epochs first (Fetch v12+ diverging
epoch). `run()` shrinks ISRs of followers that fell behind for `replica.lag.time.max.ms`.

Fetch from the closest replica (KIP-392): a consumer fetch of v11+ (with client metadata) may be
answered by a follower, up to the high watermark its fetcher learned from the leader; a leader
under `replica.selector.class` = RackAwareReplicaSelector answers a consumer whose rack holds a
better replica with that replica's id and no records (`replica_selector.py`). Fetches from
followers and from older consumers are answered by the leader only.

Transactions: `handle_produce_append` is Kafka's handleProduceAppend. With
`transaction.partition.verification.enable` (KIP-890 part 1) a transactional batch of a producer
with no ongoing transaction on the partition is appended only once the transaction coordinator
(the `TxnVerifierService` given) confirms the partition is part of the transaction; the
partition's log keeps a verification guard meanwhile (see `log.producer_state`). Errors map as
Kafka 3.9's: a partition not in the transaction is INVALID_TXN_STATE ("Partition was not added to
the transaction"; TRANSACTION_ABORTABLE for Produce v11+ clients), and retriable coordinator errors
become NOT_ENOUGH_REPLICAS, which every client retries without refreshing its metadata.
Read-committed fetches read up to the last stable offset and carry the aborted transactions.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import anyio

from ..cluster.model import PartitionState, TopicInfo
from ..cluster.store import MetadataStore
from ..common.purgatory import DelayedOperation, DelayedOperationPurgatory
from ..common.timer import Timer
from ..common.topic_partition import TopicPartition
from ..config import topic_config_values
from ..log.append_origin import CLIENT, NO_SEQUENCE, SENTINEL, VerificationGuard
from ..log.config import LogConfig
from ..log.errors import KafkaStorageError
from ..log.files import future_dir_name
from ..log.manager import LogManager
from ..protocol.errors import ErrorCode, KafkaError
from ..records.errors import CorruptRecordError, InvalidRecordError, UnsupportedCompressionError
from .broker_topic_stats import BrokerTopicStats
from .fetch_types import (
    NO_PREFERRED_READ_REPLICA,
    READ_COMMITTED,
    EpochEndOffset,
    PartitionFetchRequest,
    PartitionFetchResult,
    SessionWait,
)
from .replica_selector import ClientMetadata, preferred_read_replica, replica_selector
from .replication_quota import ReplicationQuota
from .role_changes import RoleChanges, partition_ranges

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from ..config.broker import BrokerConfig
    from ..log.log import Log
    from ..log.producer_state import ProducerStateEntry
    from ..log.results import AbortedTransaction, FileRegion, TimestampAndOffset
    from .broker_client import BrokerConnection
    from .fetcher import ReplicaFetcherManager
    from .log_dir_mover import LogDirMovers
    from .partition import Partition

log = logging.getLogger(__name__)

CONSUMER_REPLICA_ID = -1  # ListOffsets' replica id of consumers
DEBUGGING_REPLICA_ID = -2  # ListOffsets' replica id that may ask any replica, not only the leader

# Produce v11+ clients understand TRANSACTION_ABORTABLE (Kafka's genericError supported operation)
TRANSACTION_ABORTABLE_MIN_PRODUCE_VERSION = 11

# coordinator errors of a verification that older clients may not retry: answered as
# NOT_ENOUGH_REPLICAS, which they retry without a metadata refresh (Kafka's ReplicaManager)
_RETRIABLE_VERIFICATION_ERRORS = (
    ErrorCode.CONCURRENT_TRANSACTIONS,
    ErrorCode.NETWORK_EXCEPTION,
    ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
    ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_COORDINATOR,
)


class TxnVerifier(Protocol):
    """The transaction coordinator's side of verification (`TxnVerifierService`)."""

    async def verify(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]: ...


@dataclass(eq=False)  # one partition's answer, never compared
class ProduceResult:
    """One partition's answer to a produce: an error, or where the records went."""

    error: ErrorCode = ErrorCode.NONE
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    record_errors: list[tuple[int, str | None]] = field(default_factory=list)
    required_offset: int = -1  # acks=all: the high watermark this append waits for


class DelayedProduce(DelayedOperation):
    """acks=all: done when every partition's high watermark reaches its appended batches."""

    def __init__(self, timeout_ms: int, manager: ReplicaManager, results: dict[TopicPartition, ProduceResult]) -> None:
        super().__init__(timeout_ms)
        self.manager = manager
        self.results = results

    def _waiting(self) -> Iterator[tuple[ProduceResult, ErrorCode | None]]:
        """(result, outcome) for each partition still owed an answer; outcome None = waiting."""
        for tp, result in self.results.items():
            if result.error != ErrorCode.NONE or result.required_offset < 0:
                continue
            partition = self.manager.partitions.get(tp)
            outcome = (
                self.manager.missing_partition_error(tp)
                if partition is None
                else partition.acks_satisfied(result.required_offset, self.manager.min_insync_replicas(tp[0]))
            )
            yield result, outcome

    def try_complete(self) -> bool:
        if any(outcome is None for _, outcome in self._waiting()):
            return False
        return self.force_complete()

    def settle(self) -> None:
        """Turn the waiting partitions into their final answers."""
        for result, outcome in list(self._waiting()):
            result.error = ErrorCode.REQUEST_TIMED_OUT if outcome is None else outcome


class DelayedFetch(DelayedOperation):
    """A fetch that waits until `min_bytes` of new data are readable."""

    def __init__(
        self,
        timeout_ms: int,
        manager: ReplicaManager,
        min_bytes: int,
        bytes_already: int,
        start_counters: dict[TopicPartition, int],
        for_follower: bool,
        read_committed: bool = False,
        session_wait: SessionWait | None = None,
        followed_epochs: dict[TopicPartition, int] | None = None,
        fetch_only_leader: bool = True,
        throttled: frozenset[TopicPartition] = frozenset(),
    ) -> None:
        super().__init__(timeout_ms)
        self.manager = manager
        self.throttled = throttled  # a follower's throttled partitions: their new data does not count
        self.min_bytes = min_bytes
        self.bytes_already = bytes_already
        self.start_counters = start_counters
        self.for_follower = for_follower
        self.read_committed = read_committed
        self.session_wait = session_wait
        # a consumer fetch served by followers here (KIP-392): the leader epoch of each partition
        # it read as a follower; the partitions it read as their leader are not in it
        self.followed_epochs = followed_epochs or {}
        self.fetch_only_leader = fetch_only_leader

    def try_complete(self) -> bool:
        available = self.bytes_already
        followed = self.followed_epochs
        for tp, start in self.start_counters.items():
            partition = self.manager.partitions.get(tp)
            # gone, led here no more (read as the leader), or at another leader epoch (read as a follower)
            if partition is None or (
                not partition.is_leader if tp not in followed else partition.leader_epoch != followed[tp]
            ):
                return self.force_complete()  # leadership moved: answer now with the error
            if tp not in self.throttled:
                available += partition.readable_bytes_since(start, self.for_follower, self.read_committed)
        if available >= self.min_bytes or self._session_partition_readable():
            return self.force_complete()
        return False

    def _session_partition_readable(self) -> bool:
        """Whether a partition of the session that this fetch did not read has changed so that
        it now has records for the fetcher (or an error to tell)."""
        if self.session_wait is None:
            return False
        for tp, request in self.session_wait.peek():
            partition = self.manager.partitions.get(tp)
            if partition is None or (self.fetch_only_leader and not partition.is_leader):
                return True
            if request.fetch_offset < partition.readable_end(self.for_follower, self.read_committed):
                return True
        return False


class LogDirEntry(NamedTuple):
    """A replica in a log directory, as DescribeLogDirs reports it."""

    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool


class PartitionSummary(NamedTuple):
    """A local partition's figures for the metrics endpoint."""

    topic: str
    partition: int
    is_leader: bool
    under_replicated: bool  # led here with fewer in-sync replicas than replicas (Kafka's isUnderReplicated)
    log_size: int  # bytes of its log's segments (Kafka's Log Size)
    high_watermark: int


class ReplicaManager:
    def __init__(
        self,
        broker_id: int,
        config: BrokerConfig,
        log_manager: LogManager,
        metadata_store: MetadataStore,
        *,
        timer: Timer,
        inter_broker_listener: str | None = None,
        connect: Callable[..., Awaitable[BrokerConnection]] | None = None,
    ) -> None:
        self.broker_id = broker_id
        self.config = config
        self.log_manager = log_manager
        self.metadata = metadata_store
        self.inter_broker_listener = inter_broker_listener
        # how followers connect to leaders: BrokerConnection.open with the inter-broker security
        self.connect = connect or open_broker_connection
        self.partitions: dict[TopicPartition, Partition] = {}
        # partitions whose log directory failed (Kafka's HostedPartition.Offline): they answer
        # KAFKA_STORAGE_ERROR and are not opened again until a restart
        self.offline_partitions: set[TopicPartition] = set()
        # the partitions led here that have followers: the only ones whose ISR can shrink
        self._leaders_with_followers: dict[TopicPartition, Partition] = {}
        # told each partition that changed in a way fetchers may need to hear of (fetch sessions)
        self._partition_change_listeners: list[Callable[[TopicPartition], None]] = []
        self._replica_fetch_ms: dict[int, int] = {}  # each follower broker's last fetch, any partition
        self.timer = timer
        self.clock = timer.clock
        self.produce_purgatory = DelayedOperationPurgatory("Produce", timer)
        self.fetch_purgatory = DelayedOperationPurgatory("Fetch", timer)
        # replication throttles (Kafka's quotas.leader and quotas.follower)
        self.leader_quota = ReplicationQuota(broker_id)
        self.follower_quota = ReplicationQuota(broker_id)
        self._configure_replication_quotas()
        # opened with the first partition followed, the first replica moved (a single broker has
        # neither: their modules are not imported)
        self._fetchers: ReplicaFetcherManager | None = None
        self._log_dir_movers: LogDirMovers | None = None
        self._tasks: TaskGroup | None = None  # run()'s, for the fetchers and movers opened later
        # KIP-392: None unless replica.selector.class names the rack-aware selector
        self.replica_selector = replica_selector(config["replica.selector.class"])
        self.replication_stopped = False  # controlled shutdown: follow no leader any more
        self.topic_stats = BrokerTopicStats()  # bytes and messages in and out (Kafka's BrokerTopicStats)
        self.isr_shrinks = 0  # ISR changes committed as leader (Kafka's IsrShrinksPerSec, IsrExpandsPerSec)
        self.isr_expands = 0
        self._delete_stray_logs_when_loaded = False  # cluster mode: see startup()
        self._last_loaded_config: tuple = (None, None, {})  # see _loaded_topic_config
        metadata_store.add_topic_listener(self._on_topic_changed)

    # -- following the metadata store ---------------------------------------------------
    def startup(self, *, delete_stray_logs: bool = False) -> None:
        """Take the roles the store assigns. With `delete_stray_logs` (cluster mode, where the
        store is the whole truth), logs of topics deleted while this broker was away go."""
        self._delete_stray_logs_when_loaded = delete_stray_logs
        if delete_stray_logs:
            self._delete_stray_logs()
        changes = RoleChanges()
        for name, info in self.metadata.topics().items():
            try:
                self._take_roles(name, info, changes)
            except KafkaError as exc:  # KAFKA_STORAGE_ERROR: a log that cannot be opened; serve the others
                log.error("Could not open every partition of %s: %s", name, exc.message_or_default)
        changes.log_summary(log)

    def log_loaded(self, topic: str, index: int) -> None:
        """The log manager finished loading a partition found on disk at start (on the loop,
        maybe long after `startup`): take the role the store gives it now. Until then the
        partition was not served here (NOT_LEADER_OR_FOLLOWER, which clients retry)."""
        key = (topic, index)
        if key in self.partitions:
            self._resume_move(self.partitions[key])  # its future log may have loaded after it
            return
        if self._stays_offline(key) or self.log_manager.is_loading(topic, index):
            return
        info = self.metadata.topic(topic)
        state = info.partitions.get(index) if info is not None else None
        if info is None or state is None:
            if self._delete_stray_logs_when_loaded and self.log_manager.get(topic, index) is not None:
                log.info("Deleting the log of %s-%d: the topic no longer exists", topic, index)
                self.log_manager.delete(topic, index)
            return
        if self.broker_id in state.replicas:
            partition = self._open_partition(topic, index, info.topic_id, self._loaded_topic_config(info))
            changes = RoleChanges()  # one partition: its role at DEBUG (the log dir reports progress)
            self._apply_partition_state(partition, state, changes)
            for _, message in changes.lines():
                log.debug(message)

    def _delete_stray_logs(self) -> None:
        topics = self.metadata.topics()
        stray: dict[str, list[int]] = {}
        for partition_log in self.log_manager.all_logs():
            info = topics.get(partition_log.topic)
            if info is None or partition_log.partition not in info.partitions:
                stray.setdefault(partition_log.topic, []).append(partition_log.partition)
                self.log_manager.delete(partition_log.topic, partition_log.partition)
        for topic, indexes in sorted(stray.items()):
            log.info(
                "Deleted the logs of %s partitions %s: the topic no longer exists", topic, partition_ranges(indexes)
            )

    async def run(self) -> None:
        """Follower fetchers, log dir moves and the periodic ISR shrink check, until cancelled."""
        try:
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                if self._fetchers is not None:
                    tasks.start_soon(self._fetchers.run)
                if self._log_dir_movers is not None:
                    tasks.start_soon(self._log_dir_movers.run)
                tasks.start_soon(self._shrink_isrs_periodically)
        finally:
            self._tasks = None

    @property
    def fetchers(self) -> ReplicaFetcherManager:
        """The fetchers of the partitions this broker follows, opened on first use."""
        if self._fetchers is None:
            from .fetcher import ReplicaFetcherManager

            self._fetchers = ReplicaFetcherManager(self, self.config, self.metadata)
            if self._tasks is not None:
                self._tasks.start_soon(self._fetchers.run)
        return self._fetchers

    @property
    def log_dir_movers(self) -> LogDirMovers:
        """The replicas moving between log directories, opened on first use."""
        if self._log_dir_movers is None:
            from .log_dir_mover import LogDirMovers

            self._log_dir_movers = LogDirMovers(self)
            if self._tasks is not None:
                self._tasks.start_soon(self._log_dir_movers.run)
        return self._log_dir_movers

    def _stop_fetching(self, tp: TopicPartition) -> None:
        if self._fetchers is not None:
            self._fetchers.remove_partition(tp)

    def _stop_move(self, tp: TopicPartition) -> None:
        if self._log_dir_movers is not None:
            self._log_dir_movers.stop(tp)

    async def _shrink_isrs_periodically(self) -> None:
        lag_ms = int(self.config["replica.lag.time.max.ms"])
        while True:
            await anyio.sleep(max(lag_ms / 2, 10) / 1000)
            self.shrink_isrs(self.clock.now_ms(), lag_ms)

    def shrink_isrs(self, now: int, lag_ms: int) -> None:
        """Take followers that fell behind out of the ISRs. Only partitions led here with
        followers are looked at: a broker with thousands of single-replica partitions checks none."""
        for partition in list(self._leaders_with_followers.values()):
            if partition.is_leader and len(partition.isr) > 1:
                partition.maybe_shrink_isr(now, lag_ms, self._replica_fetch_ms)

    def _on_topic_changed(self, name: str, info: TopicInfo | None) -> None:
        if info is None:
            self.leader_quota.remove_topic(name)
            self.follower_quota.remove_topic(name)
            self._delete_topic_partitions(name)
            return
        self.leader_quota.update_topic(name, info.configs.get("leader.replication.throttled.replicas"))
        self.follower_quota.update_topic(name, info.configs.get("follower.replication.throttled.replicas"))
        changes = RoleChanges()
        self._take_roles(name, info, changes)
        changes.log_per_topic(log)

    def _take_roles(self, name: str, info: TopicInfo, changes: RoleChanges) -> None:
        """Open the topic's partitions hosted here and take the roles the store assigns."""
        config = topic_config_values(info.configs, self.config)
        for index, state in info.partitions.items():
            if self.broker_id not in state.replicas:
                if (name, index) in self.partitions:
                    self._stop_replica((name, index))
                continue
            if self._stays_offline((name, index)):
                continue  # its log directory failed: served again only after a restart
            partition = self.partitions.get((name, index))
            if partition is None and self.log_manager.is_loading(name, index):
                changes.still_loading(name, index)
                continue  # taken up by `log_loaded`, with the state the store has then
            if partition is None:
                partition = self._open_partition(name, index, info.topic_id, config)
            else:
                partition.log.update_config(config)
            self._apply_partition_state(partition, state, changes)
        for tp in [tp for tp in self.partitions if tp[0] == name and tp[1] not in info.partitions]:
            self._remove_partition(tp)  # partitions whose creation the store took back

    def _loaded_topic_config(self, info: TopicInfo) -> dict[str, Any]:
        """The log config of a topic whose partitions are loading: partitions load in name
        order, so the last topic's config is kept (one computation per topic, not per partition)."""
        cached_overrides, cached_broker_config, config = self._last_loaded_config
        if cached_overrides is not info.configs or cached_broker_config is not self.config:
            config = topic_config_values(info.configs, self.config)
            self._last_loaded_config = (info.configs, self.config, config)
        return config

    def replication_byte_rates(self) -> tuple[float, float]:
        """The throttled replication byte rates (leader side, follower side) now."""
        now = self.clock.now_ms()
        return self.leader_quota.rate.measure(now), self.follower_quota.rate.measure(now)

    def _configure_replication_quotas(self) -> None:
        """The throttle rates and sampling windows of the broker's (dynamic) config."""
        samples = self.config["replication.quota.window.num"]
        window_s = self.config["replication.quota.window.size.seconds"]
        self.leader_quota.configure(self.config["leader.replication.throttled.rate"], samples, window_s)
        self.follower_quota.configure(self.config["follower.replication.throttled.rate"], samples, window_s)

    def reapply_topic_configs(self) -> None:
        """Recompute every local log's config (after the broker's defaults changed)."""
        self._configure_replication_quotas()
        configs: dict[str, dict | None] = {}  # one computation per topic, not per partition
        for (topic, _), partition in self.partitions.items():
            if topic not in configs:
                info = self.metadata.topic(topic)
                configs[topic] = topic_config_values(info.configs, self.config) if info is not None else None
            config = configs[topic]
            if config is not None:
                partition.log.update_config(config)

    def _open_partition(self, topic: str, index: int, topic_id: uuid.UUID, config: dict[str, Any]) -> Partition:
        from .partition import Partition  # the partition machinery loads with the first partition here

        log_ = self.log_manager.get_or_create(topic, index, config)
        partition = Partition(topic, index, topic_id, log_, self.broker_id)
        partition.isr_listener = self._propose_isr
        self.partitions[(topic, index)] = partition
        self._resume_move(partition)
        return partition

    def _resume_move(self, partition: Partition) -> None:
        """A future log found at start: its move goes on (Kafka's maybeAddLogDirFetchers)."""
        if self.log_manager.get_future(partition.topic, partition.index) is not None:
            self.log_dir_movers.start(partition)

    def _apply_partition_state(self, partition: Partition, state: PartitionState, changes: RoleChanges) -> None:
        if state.leader == self.broker_id:
            self._lead(partition, state, changes)
        elif partition.is_leader or partition.leader_id != state.leader or partition.leader_epoch != state.leader_epoch:
            self._follow(partition, state, changes)
        else:  # the same leadership: only the ISR (or replicas) changed
            partition.replicas = list(state.replicas)
            partition.isr = list(state.isr)
            partition.partition_epoch = state.partition_epoch
        if partition.is_leader and len(partition.replicas) > 1:
            self._leaders_with_followers[partition.key] = partition
        else:
            self._leaders_with_followers.pop(partition.key, None)
        self._complete_delayed(partition.key)

    def _lead(self, partition: Partition, state: PartitionState, changes: RoleChanges) -> None:
        if partition.is_leader and partition.leader_epoch == state.leader_epoch:
            if partition.replicas != state.replicas:
                partition.update_replicas(state.replicas, self.clock.now_ms())
            partition.update_isr(state.isr, state.partition_epoch)
            return
        self._stop_fetching(partition.key)
        partition.make_leader(state.leader_epoch, state.replicas, state.isr, state.partition_epoch, self.clock.now_ms())
        log.debug(
            "Leading %s-%d at leader epoch %d (isr %s, log end %d)",
            partition.topic,
            partition.index,
            state.leader_epoch,
            state.isr,
            partition.log_end_offset,
        )
        changes.lead(partition.topic, partition.index, state.leader_epoch)

    def _follow(self, partition: Partition, state: PartitionState, changes: RoleChanges) -> None:
        partition.make_follower(state.leader, state.leader_epoch, state.replicas, state.isr, state.partition_epoch)
        if state.leader < 0 or self.replication_stopped:
            self._stop_fetching(partition.key)
            return
        self.fetchers.add_partition(partition)
        log.debug(
            "Following %s-%d from broker %d at leader epoch %d",
            partition.topic,
            partition.index,
            state.leader,
            state.leader_epoch,
        )
        changes.follow(partition.topic, partition.index, state.leader, state.leader_epoch)

    def stop_replication(self) -> None:
        """Stop fetching from leaders, now and for partitions followed later (a broker shutting
        down, as Kafka's controller stops its replicas). A broker that keeps fetching while it
        shuts down would be added back to the ISRs the controller just took it out of, and
        acks=all writes would wait for it once it is gone."""
        self.replication_stopped = True
        for tp in list(self.partitions):
            self._stop_fetching(tp)

    def _delete_topic_partitions(self, topic: str) -> None:
        self.topic_stats.remove_topic(topic)
        for index in self.log_manager.loading_partitions(topic):
            self.log_manager.delete(topic, index)  # deleted once its load is over
        for tp in [tp for tp in self.partitions if tp[0] == topic]:
            self._remove_partition(tp)
        for tp in [tp for tp in self.offline_partitions if tp[0] == topic]:
            self.offline_partitions.discard(tp)  # its log stays in the failed directory until a restart

    def _stop_replica(self, tp: TopicPartition) -> None:
        """This broker's replica is no longer assigned (a reassignment moved it away): stop it
        and delete its log, as Kafka's StopReplica with delete does."""
        log.info("Replica of %s-%d is no longer assigned to this broker: stopping it and deleting its log", *tp)
        self._remove_partition(tp)

    def _remove_partition(self, tp: TopicPartition) -> None:
        self._stop_move(tp)
        del self.partitions[tp]
        self._leaders_with_followers.pop(tp, None)
        self._stop_fetching(tp)
        self.log_manager.delete(*tp)
        self.fetch_purgatory.check_and_complete(tp)
        self.produce_purgatory.check_and_complete(tp)
        self._partition_changed(tp)

    def _complete_delayed(self, tp: TopicPartition) -> None:
        """The partition's high watermark, ISR or role changed: re-check who waits on it."""
        self.produce_purgatory.check_and_complete(tp)
        self.fetch_purgatory.check_and_complete(tp)
        self._partition_changed(tp)

    def add_partition_change_listener(self, listener: Callable[[TopicPartition], None]) -> None:
        """`listener(tp)` hears of every change of a partition hosted here that a fetcher may
        need to see: records appended, high watermark or log start offset moved, leadership or
        ISR changed, partition deleted (the fetch session cache listens)."""
        self._partition_change_listeners.append(listener)

    def _partition_changed(self, tp: TopicPartition) -> None:
        for listener in self._partition_change_listeners:
            listener(tp)

    def follower_partition_changed(self, tp: TopicPartition) -> None:
        """The fetcher moved a followed partition's high watermark, log start or log end: wake
        the consumer fetches waiting on this replica and tell the fetch sessions (KIP-392)."""
        self.fetch_purgatory.check_and_complete(tp)
        self._partition_changed(tp)

    def log_start_offsets_moved(self, partitions: list[TopicPartition]) -> None:
        """Retention (on a worker thread) moved these partitions' log start offsets."""
        for tp in partitions:
            if tp in self.partitions:
                self._partition_changed(tp)

    # -- ISR changes ---------------------------------------------------------------------
    def _propose_isr(self, partition: Partition, new_isr: list[int]) -> None:
        log.info("Proposing ISR %s for %s-%d (was %s)", new_isr, partition.topic, partition.index, partition.isr)
        previous_size = len(partition.isr)

        def done(partition_epoch: int | None) -> None:
            committed = (
                partition.pending_isr == new_isr
                and partition_epoch is not None
                and partition_epoch >= partition.partition_epoch
            )
            partition.isr_proposal_done(new_isr, partition_epoch)
            if committed:
                self._count_isr_change(previous_size, len(new_isr))
            self._complete_delayed(partition.key)

        self.metadata.propose_isr(
            partition.topic, partition.index, partition.leader_epoch, partition.partition_epoch, new_isr, done
        )

    def _count_isr_change(self, previous_size: int, new_size: int) -> None:
        if new_size < previous_size:
            self.isr_shrinks += 1
        elif new_size > previous_size:
            self.isr_expands += 1

    # -- log directory failures ----------------------------------------------------------
    def handle_log_dir_failure(self, log_dir: str) -> list[TopicPartition]:
        """A log directory failed (on the loop; Kafka's ReplicaManager.handleLogDirFailure): its
        partitions go offline (KAFKA_STORAGE_ERROR to produce, fetch and offset lookups), their
        fetchers stop, whoever waits on them is answered, and the log manager lets go of their
        logs without writing. Returns the partitions that went offline."""
        log_dir = os.path.abspath(log_dir)
        if not self.log_manager.is_log_dir_online(log_dir):
            return []
        log.warning("Stopping serving replicas in dir %s", log_dir)
        offline = [tp for tp, p in self.partitions.items() if p.log.parent_dir == log_dir]
        for tp in offline:
            self._stop_fetching(tp)
        for tp in offline:
            self._mark_partition_offline(tp)
        if offline:
            log.warning(
                "Broker %d stopped fetcher for partitions %s because they are in the failed log directory %s.",
                self.broker_id,
                ",".join(f"{topic}-{index}" for topic, index in offline),
                log_dir,
            )
        for tp, future in self.log_manager.futures().items():
            if future.parent_dir == log_dir:
                log.warning("The move of %s-%d to %s failed: the directory is offline", *tp, log_dir)
                self._stop_move(tp)
        unloaded = self.log_manager.handle_log_dir_failure(log_dir)  # also those still loading there
        self.offline_partitions.update(unloaded)
        log.warning("Stopped serving replicas in dir %s", log_dir)
        return sorted(set(offline) | set(unloaded))

    def _mark_partition_offline(self, tp: TopicPartition) -> None:
        self._stop_move(tp)
        del self.partitions[tp]
        self.offline_partitions.add(tp)
        self._leaders_with_followers.pop(tp, None)
        self.fetch_purgatory.check_and_complete(tp)
        self.produce_purgatory.check_and_complete(tp)
        self._partition_changed(tp)

    def _stays_offline(self, tp: TopicPartition) -> bool:
        """Whether the partition's log is in a failed directory: it must not be opened (nor a new
        empty log created elsewhere in its place) until a restart."""
        if tp in self.offline_partitions:
            return True
        if self.log_manager.is_in_offline_dir(*tp):
            self.offline_partitions.add(tp)
            return True
        return False

    def offline_replica_count(self) -> int:
        """Partitions hosted here whose log directory failed (Kafka's OfflineReplicaCount)."""
        return len(self.offline_partitions)

    def offline_log_dir_count(self) -> int:
        """Kafka's OfflineLogDirectoryCount."""
        return len(self.log_manager.dir_failures.offline_dirs())

    def alter_log_dirs_max_lag(self) -> int:
        """The most offsets a future replica still has to copy (Kafka's ReplicaAlterLogDirsManager MaxLag)."""
        lags = [
            partition.log_end_offset - future.log_end_offset
            for key, future in self.log_manager.futures().items()
            if (partition := self.partitions.get(key)) is not None
        ]
        return max(lags, default=0)

    def is_offline(self, topic: str, index: int) -> bool:
        """Whether the partition's log directory failed (it answers KAFKA_STORAGE_ERROR)."""
        return (topic, index) in self.offline_partitions

    def missing_partition_error(self, tp: TopicPartition) -> ErrorCode:
        """What a request waiting on a partition no longer served here is answered."""
        return ErrorCode.KAFKA_STORAGE_ERROR if tp in self.offline_partitions else ErrorCode.NOT_LEADER_OR_FOLLOWER

    def is_log_dir_online(self, log_dir: str) -> bool:
        return self.log_manager.is_log_dir_online(log_dir) and not self.log_manager.dir_failures.is_offline(log_dir)

    def _offline_error(self, topic: str, index: int) -> KafkaError:
        return KafkaError(ErrorCode.KAFKA_STORAGE_ERROR, f"Partition {topic}-{index} is in an offline log directory")

    # -- lookups -----------------------------------------------------------------------
    def leader_partition(self, topic: str, index: int) -> Partition:
        partition = self.hosted_partition(topic, index)
        partition.require_leader()
        return partition

    def hosted_partition(self, topic: str, index: int) -> Partition:
        """The local replica, leader or follower (Kafka's getPartitionOrException):
        KAFKA_STORAGE_ERROR in a failed log dir, NOT_LEADER_OR_FOLLOWER where the topic has the
        partition but not here, else UNKNOWN_TOPIC_OR_PARTITION."""
        partition = self.partitions.get((topic, index))
        if partition is None:
            if (topic, index) in self.offline_partitions:
                raise self._offline_error(topic, index)
            info = self.metadata.topic(topic)
            if info is None or index not in info.partitions:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return partition

    def log_config(self, topic: str, index: int) -> LogConfig | None:
        """The config of the partition's local log (Kafka's getLogConfig); None when this
        broker hosts no replica of it."""
        partition = self.partitions.get((topic, index))
        return partition.log.config if partition is not None else None

    def active_producers(self, topic: str, index: int) -> list[ProducerStateEntry]:
        """DescribeProducers: the producer state of a partition hosted here, leader or follower
        (Kafka's activeProducerState); UNKNOWN_TOPIC_OR_PARTITION or NOT_LEADER_OR_FOLLOWER
        when there is no local replica."""
        partition = self.partitions.get((topic, index))
        if partition is None:
            if (topic, index) in self.offline_partitions:
                raise self._offline_error(topic, index)
            info = self.metadata.topic(topic)
            if info is None or index not in info.partitions:
                raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        return partition.active_producers()

    def min_insync_replicas(self, topic: str) -> int:
        info = self.metadata.topic(topic)
        configs = info.configs if info is not None else {}
        if "min.insync.replicas" in configs:
            return int(configs["min.insync.replicas"])
        return int(self.config["min.insync.replicas"])

    # -- produce -----------------------------------------------------------------------
    @property
    def transaction_verification_enabled(self) -> bool:
        return bool(self.config["transaction.partition.verification.enable"])

    async def handle_produce_append(
        self,
        entries: dict[TopicPartition, bytearray],
        *,
        required_acks: int,
        timeout_ms: int,
        transactional_id: str | None,
        verifier: TxnVerifier | None,
        api_version: int = TRANSACTION_ABORTABLE_MIN_PRODUCE_VERSION,
    ) -> dict[TopicPartition, ProduceResult]:
        """A Produce request's appends (Kafka's handleProduceAppend): verify the transactional
        partitions with the coordinator first, then append the others and the verified ones.
        `verifier` None (no transaction coordinator to ask): no verification, and none required."""
        producers: set[tuple[int, int]] = set()
        base_sequences: dict[TopicPartition, int] = {}
        for tp, records in entries.items():
            first = _transactional_batches(records)
            if first is not None:
                producers.update(first[1])
                base_sequences[tp] = first[0]
        if len(producers) > 1:
            return {
                tp: ProduceResult(
                    ErrorCode.INVALID_PRODUCER_ID_MAPPING,
                    error_message="Transactional records contained more than one producer ID",
                )
                for tp in entries
            }
        errors: dict[TopicPartition, ErrorCode] = {}
        guards: dict[TopicPartition, VerificationGuard] = {}
        if producers:
            producer_id, producer_epoch = next(iter(producers))
            errors, guards = await self.maybe_start_transaction_verification_for_partitions(
                base_sequences, transactional_id, producer_id, producer_epoch, verifier
            )
        failed = {tp: _verification_failure(error, api_version) for tp, error in errors.items()}
        to_append = {tp: records for tp, records in entries.items() if tp not in failed}
        results = await self.append_records(
            to_append,
            required_acks=required_acks,
            timeout_ms=timeout_ms,
            verification_guards=guards,
            transaction_verification=None if verifier is not None else False,
        )
        results.update(failed)
        return results

    async def maybe_start_transaction_verification_for_partitions(
        self,
        base_sequences: Mapping[TopicPartition, int],
        transactional_id: str | None,
        producer_id: int,
        producer_epoch: int,
        verifier: TxnVerifier | None,
    ) -> tuple[dict[TopicPartition, ErrorCode], dict[TopicPartition, VerificationGuard]]:
        """({partition: error}, {partition: guard}): a guard for each partition where the
        producer has no ongoing transaction and the coordinator confirmed the partition is in
        it; nothing to verify without a transactional id or with verification off. Errors are
        the coordinator's (a produce maps them, see `handle_produce_append`)."""
        if transactional_id is None or verifier is None or not self.transaction_verification_enabled:
            return {}, {}
        errors: dict[TopicPartition, ErrorCode] = {}
        guards: dict[TopicPartition, VerificationGuard] = {}
        for tp, base_sequence in base_sequences.items():
            try:
                guard = self.leader_partition(*tp).maybe_start_transaction_verification(
                    producer_id, base_sequence, producer_epoch
                )
            except KafkaError as exc:
                errors[tp] = exc.code
                continue
            if guard is not SENTINEL:
                guards[tp] = guard
        if guards:
            verified = await verifier.verify(transactional_id, producer_id, producer_epoch, list(guards))
            for tp in guards:
                error = ErrorCode(verified.get(tp, ErrorCode.NONE))
                if error != ErrorCode.NONE:
                    errors[tp] = _verifier_error(error)
        return errors, guards

    async def maybe_start_transaction_verification_for_partition(
        self,
        tp: TopicPartition,
        transactional_id: str | None,
        producer_id: int,
        producer_epoch: int,
        verifier: TxnVerifier | None,
        base_sequence: int = NO_SEQUENCE,
    ) -> tuple[ErrorCode, VerificationGuard]:
        """One partition's verification, for a coordinator's transactional append (Kafka's
        TxnOffsetCommit path): (error, guard to append with)."""
        errors, guards = await self.maybe_start_transaction_verification_for_partitions(
            {tp: base_sequence}, transactional_id, producer_id, producer_epoch, verifier
        )
        return errors.get(tp, ErrorCode.NONE), guards.get(tp, SENTINEL)

    async def append_records(
        self,
        entries: dict[TopicPartition, bytearray],
        *,
        required_acks: int,
        timeout_ms: int,
        origin: str = CLIENT,
        verification_guards: Mapping[TopicPartition, VerificationGuard] | None = None,
        transaction_verification: bool | None = None,
    ) -> dict[TopicPartition, ProduceResult]:
        """Append as each partition's leader, then wait as `required_acks` asks. `origin` is the
        log's (client, coordinator); with transaction verification on (`transaction_verification`,
        default `transaction.partition.verification.enable`) a transactional batch that starts a
        transaction needs its partition's guard in `verification_guards`."""
        results = self.append_to_local_logs(
            entries,
            required_acks=required_acks,
            origin=origin,
            verification_guards=verification_guards,
            transaction_verification=transaction_verification,
        )
        await self.wait_for_acks(results, required_acks=required_acks, timeout_ms=timeout_ms)
        return results

    def append_to_local_logs(
        self,
        entries: dict[TopicPartition, bytearray],
        *,
        required_acks: int,
        origin: str = CLIENT,
        verification_guards: Mapping[TopicPartition, VerificationGuard] | None = None,
        transaction_verification: bool | None = None,
    ) -> dict[TopicPartition, ProduceResult]:
        """The first half of `append_records`: append now, in the order given, and wake the
        fetches waiting for these partitions."""
        now = self.clock.now_ms()
        verifying = (
            self.transaction_verification_enabled if transaction_verification is None else transaction_verification
        )
        guards = verification_guards or {}
        results = {
            tp: self._append_one(
                tp, records, required_acks, now, origin, guards.get(tp, SENTINEL) if verifying else None
            )
            for tp, records in entries.items()
        }
        for tp, result in results.items():
            if result.error == ErrorCode.NONE:
                self.fetch_purgatory.check_and_complete(tp)
                self._partition_changed(tp)
        return results

    async def wait_for_acks(
        self, results: dict[TopicPartition, ProduceResult], *, required_acks: int, timeout_ms: int
    ) -> None:
        """The second half of `append_records`: the fsyncs owed, then for acks=-1 the in-sync
        replicas (the results are updated in place)."""
        await self._sync_appended(results)
        if required_acks == -1 and any(r.required_offset >= 0 for r in results.values()):
            delayed = DelayedProduce(timeout_ms, self, results)
            await self.produce_purgatory.wait_for(delayed, list(results))
            delayed.settle()

    async def _sync_appended(self, results: dict[TopicPartition, ProduceResult]) -> None:
        """Wait, off the event loop, for the fsyncs owed before the appends are acknowledged."""
        from .durability import sync_before_ack

        for tp, result in results.items():
            partition = self.partitions.get(tp)
            if result.error == ErrorCode.NONE and partition is not None:
                try:
                    await sync_before_ack(partition.log, partition.log_end_offset)
                except KafkaError as exc:  # KAFKA_STORAGE_ERROR: the fsync failed (its log dir goes offline)
                    result.error, result.error_message, result.required_offset = exc.code, exc.message, -1

    def _append_one(
        self,
        tp: TopicPartition,
        records: bytearray,
        required_acks: int,
        now: int,
        origin: str = CLIENT,
        verification_guard: VerificationGuard | None = None,
    ) -> ProduceResult:
        self.topic_stats.record_produce_request(tp[0])
        try:
            partition = self.leader_partition(*tp)
            info = partition.append_as_leader(
                records,
                required_acks=required_acks,
                min_insync_replicas=self.min_insync_replicas(tp[0]),
                now_ms=now,
                origin=origin,
                verification_guard=verification_guard,
            )
        except KafkaError as exc:
            return ProduceResult(
                exc.code, error_message=exc.message, record_errors=list(getattr(exc, "record_errors", []) or [])
            )
        except CorruptRecordError as exc:
            return ProduceResult(ErrorCode.CORRUPT_MESSAGE, error_message=str(exc))
        except UnsupportedCompressionError as exc:
            return ProduceResult(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, error_message=str(exc))
        except InvalidRecordError as exc:
            return ProduceResult(ErrorCode.INVALID_RECORD, error_message=str(exc))
        self.topic_stats.record_append(tp[0], len(records), info.last_offset - info.first_offset + 1)
        result = ProduceResult(
            base_offset=info.first_offset, log_append_time=info.log_append_time, log_start_offset=info.log_start_offset
        )
        if required_acks == -1:
            result.required_offset = info.last_offset + 1
        return result

    # -- fetch -------------------------------------------------------------------------
    async def fetch_records(
        self,
        requested: list[tuple[TopicPartition, PartitionFetchRequest]],
        *,
        replica_id: int,
        max_wait_ms: int,
        min_bytes: int,
        max_bytes: int,
        isolation_level: int = 0,
        session_wait: SessionWait | None = None,
        client_metadata: ClientMetadata | None = None,
    ) -> dict[TopicPartition, PartitionFetchResult]:
        """Read each partition; consumers with `isolation_level` 1 (read_committed) read up to
        the last stable offset and get the aborted transactions of what they read.

        A consumer with `client_metadata` (Fetch v11+) may read from a follower here, and a
        leader may answer it with a preferred read replica instead of records (KIP-392); without
        it (and for followers) only the leader answers.

        An incremental fetch reads only its session's partitions that changed; with nothing to
        answer it waits, with `session_wait`, for the others too, and reads those that changed
        meanwhile when it wakes."""
        for_follower = replica_id >= 0
        read_committed = isolation_level == READ_COMMITTED and not for_follower
        if for_follower:
            self._record_follower_fetches(requested, replica_id)
            client_metadata = None
        for tp, _ in requested:
            self.topic_stats.record_fetch_request(tp[0])
        reader = _FetchReader(self, replica_id, read_committed, client_metadata)
        results = reader.read_all(requested, max_bytes)
        total = sum(r.records_size for r in results.values())
        answer_now = any(
            r.error_code != ErrorCode.NONE or r.diverging_epoch is not None or r.preferred_read_replica >= 0
            for r in results.values()
        )
        if not (max_wait_ms <= 0 or total >= min_bytes or answer_now or (not requested and session_wait is None)):
            counters = {
                tp: self.partitions[tp].fetch_start_counter(for_follower, read_committed) for tp, _ in requested
            }
            throttled = self._throttled_for(replica_id, counters) if for_follower else frozenset()
            delayed = DelayedFetch(
                max_wait_ms,
                self,
                min_bytes,
                total,
                counters,
                for_follower,
                read_committed,
                session_wait,
                reader.followed_epochs,
                reader.fetch_only_leader,
                throttled,
            )
            keys: list = [*counters, session_wait.key] if session_wait is not None else list(counters)
            await self.fetch_purgatory.wait_for(delayed, keys)
            if session_wait is not None:
                changed = session_wait.take()
                if for_follower:
                    self._record_follower_fetches(changed, replica_id)
                requested = [*requested, *changed]
            results = reader.read_all(requested, max_bytes)
        for tp, result in results.items():
            if result.records_size:
                self.topic_stats.record_bytes_out(tp[0], result.records_size, to_follower=for_follower)
        if for_follower and self.leader_quota.active:
            self._record_leader_throttled_bytes(results)
        return results

    def _record_leader_throttled_bytes(self, results: Mapping[TopicPartition, PartitionFetchResult]) -> None:
        """Kafka's sizeOfThrottledPartitions, recorded into the leader's replication quota."""
        quota = self.leader_quota
        size = sum(r.records_size for tp, r in results.items() if r.records_size and quota.is_throttled(tp))
        if size:
            quota.record(size, self.clock.now_ms())

    def _throttled_for(self, replica_id: int, partitions: Iterable[TopicPartition]) -> frozenset[TopicPartition]:
        """The partitions whose new data a follower's waiting fetch does not count (Kafka's
        DelayedFetch leaves the throttled ones out), so that it is not woken only to be throttled."""
        if not self.leader_quota.active:
            return frozenset()
        return frozenset(tp for tp in partitions if self.leader_throttles(self.partitions[tp], replica_id))

    def leader_throttles(self, partition: Partition, replica_id: int) -> bool:
        """Kafka's shouldLeaderThrottle: a throttled partition, a follower out of the ISR, and
        the leader's replication quota exceeded."""
        quota = self.leader_quota
        return (
            quota.active
            and replica_id not in partition.isr
            and quota.is_throttled(partition.key)
            and quota.is_quota_exceeded(self.clock.now_ms())
        )

    def record_follower_session(
        self, replica_id: int, session: Iterable[tuple[TopicPartition, PartitionFetchRequest]]
    ) -> None:
        """A follower's fetch speaks for every partition of its fetch session, the idle ones its
        incremental fetches leave out included: where the follower is out of the ISR, its
        position there (the session's last fetch offset) is taken into account as a fetch of
        that partition, so that a follower that caught up on a partition nothing is written to
        is added back to its ISR (as Kafka's leader does, which reads every partition of a
        session). Where it is in the ISR, the fetches that name the partition suffice."""
        out_of_sync = [
            (tp, request)
            for tp, request in session
            if (partition := self.partitions.get(tp)) is not None
            and partition.is_leader
            and replica_id not in partition.isr
        ]
        if out_of_sync:
            self._record_follower_fetches(out_of_sync, replica_id)

    def _record_follower_fetches(
        self, requested: Iterable[tuple[TopicPartition, PartitionFetchRequest]], replica_id: int
    ) -> None:
        """A follower's fetch offsets are its log end offsets: they move the high watermark.
        An incremental fetch names only the partitions that changed; the follower's fetch time
        tells that it is still fetching the others (see `Partition.maybe_shrink_isr`)."""
        now = self.clock.now_ms()
        self._replica_fetch_ms[replica_id] = now
        for tp, request in requested:
            partition = self.partitions.get(tp)
            if (
                partition is None
                or not partition.is_leader
                or replica_id not in partition.followers
                or not partition.log_start_offset <= request.fetch_offset <= partition.log_end_offset
                or partition.diverging_epoch(request.fetch_offset, request.last_fetched_epoch) is not None
            ):
                continue
            if request.current_leader_epoch >= 0 and request.current_leader_epoch != partition.leader_epoch:
                continue
            if partition.update_follower_fetch_state(replica_id, request.fetch_offset, now, request.log_start_offset):
                self._complete_delayed(tp)

    # -- OffsetForLeaderEpoch ------------------------------------------------------------
    def end_offset_for_epoch(
        self, topic: str, index: int, leader_epoch: int, current_leader_epoch: int, *, leader_only: bool = True
    ) -> tuple[int, int]:
        """(epoch, end offset) of the largest epoch <= `leader_epoch` in the partition's log."""
        # a follower may answer too unless `leader_only`; a partition not hosted here gets the
        # right error from leader_partition()
        partition = None if leader_only else self.partitions.get((topic, index))
        if partition is None:
            partition = self.leader_partition(topic, index)
        partition.check_leader_epoch(current_leader_epoch)
        return partition.end_offset_for_epoch(leader_epoch)

    # -- ListOffsets -------------------------------------------------------------------
    def fetch_offset_for_timestamp(
        self,
        topic: str,
        index: int,
        timestamp: int,
        *,
        replica_id: int,
        isolation_level: int,
        current_leader_epoch: int = -1,
    ) -> TimestampAndOffset | None:
        """ListOffsets: the offset for `timestamp` in the partition (see
        `Partition.fetch_offset_for_timestamp`); raises KafkaError when this broker cannot
        answer (not the leader, fenced epoch, unknown partition)."""
        partition = self._partition_for_offsets(topic, index, replica_id)
        partition.check_leader_epoch(current_leader_epoch)
        return partition.fetch_offset_for_timestamp(
            timestamp, isolation_level=isolation_level, for_replica=replica_id != CONSUMER_REPLICA_ID
        )

    def legacy_fetch_offsets(
        self, topic: str, index: int, max_num_offsets: int, *, replica_id: int, isolation_level: int
    ) -> list[int]:
        """ListOffsets v0 for latest: the legacy list of offsets, newest first."""
        partition = self._partition_for_offsets(topic, index, replica_id)
        return partition.legacy_latest_offsets(
            max_num_offsets, isolation_level=isolation_level, for_replica=replica_id != CONSUMER_REPLICA_ID
        )

    def _partition_for_offsets(self, topic: str, index: int, replica_id: int) -> Partition:
        """The leader's partition; any replica's for the debugging replica id."""
        partition = self.partitions.get((topic, index))
        if replica_id == DEBUGGING_REPLICA_ID and partition is not None:
            return partition
        return self.leader_partition(topic, index)

    # -- administration ----------------------------------------------------------------
    def delete_records(self, topic: str, index: int, offset: int) -> int:
        partition = self.leader_partition(topic, index)
        if offset == -1:
            offset = partition.high_watermark
        if offset < 0 or offset > partition.high_watermark:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
        partition.log.delete_records_before(offset)
        self._partition_changed((topic, index))
        return partition.log_start_offset

    def describe_log_dirs(self) -> list[tuple[str, list[LogDirEntry]]]:
        """Each log directory with the replicas in it, future ones too (DescribeLogDirs)."""
        by_dir: dict[str, list[LogDirEntry]] = {d: [] for d in self.log_manager.log_dirs}
        futures = self.log_manager.futures()
        for (topic, index), partition in sorted(self.partitions.items()):
            current = partition.log
            by_dir.setdefault(current.parent_dir, []).append(LogDirEntry(topic, index, current.size, 0, False))
            future = futures.get((topic, index))
            if future is not None:
                lag = current.log_end_offset - future.log_end_offset
                by_dir.setdefault(future.parent_dir, []).append(LogDirEntry(topic, index, future.size, lag, True))
        for entries in by_dir.values():
            entries.sort()
        return list(by_dir.items())

    # -- moving replicas between log directories (AlterReplicaLogDirs) -------------------
    def alter_replica_log_dirs(self, destinations: Mapping[TopicPartition, str]) -> dict[TopicPartition, ErrorCode]:
        """Move each partition's replica to its log directory (Kafka's alterReplicaLogDirs)."""
        return {tp: self._alter_replica_log_dir(tp, log_dir) for tp, log_dir in destinations.items()}

    def _alter_replica_log_dir(self, tp: TopicPartition, log_dir: str) -> ErrorCode:
        topic, index = tp
        if len(future_dir_name(topic, index)) > 255:
            log.warning("Unable to alter log dirs for %s-%d: the topic name is too long", topic, index)
            return ErrorCode.INVALID_TOPIC_EXCEPTION
        if log_dir not in self.log_manager.log_dirs:
            log.warning(
                "Unable to alter log dirs for %s-%d: Log dir %s is not found in the config.", topic, index, log_dir
            )
            return ErrorCode.LOG_DIR_NOT_FOUND
        if not self.is_log_dir_online(log_dir) or tp in self.offline_partitions:
            log.warning("Unable to alter log dirs for %s-%d: Log directory %s is offline", topic, index, log_dir)
            return ErrorCode.KAFKA_STORAGE_ERROR
        partition = self.partitions.get(tp)
        future = self.log_manager.get_future(topic, index)
        if partition is not None and future is not None and future.parent_dir != log_dir:
            self._stop_move(tp)  # another destination: this move is cancelled
            self.log_manager.remove_future_log(topic, index)
            future = None
        self.log_manager.maybe_update_preferred_log_dir(topic, index, log_dir)
        if partition is None:  # created in `log_dir` when it comes
            info = self.metadata.topic(topic)
            known = info is not None and index in info.partitions
            return ErrorCode.REPLICA_NOT_AVAILABLE if known else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if partition.log.parent_dir == log_dir or future is not None:
            return ErrorCode.NONE
        offline = self.log_manager.dir_failures.offline_dirs()
        if offline:  # never a future log while a directory is offline, as Kafka
            log.warning(
                "Unable to alter log dirs for %s-%d: log directories %s are offline",
                topic,
                index,
                ",".join(sorted(offline)),
            )
            return ErrorCode.KAFKA_STORAGE_ERROR
        try:
            self.log_manager.create_future_log(topic, index, log_dir)
        except KafkaStorageError:
            return ErrorCode.KAFKA_STORAGE_ERROR
        self.log_dir_movers.start(partition)
        return ErrorCode.NONE

    def replaced_log(self, partition: Partition, replacement: Log) -> None:
        """The partition's future log was swapped in: it serves from its new directory."""
        partition.log = replacement
        self._partition_changed(partition.key)

    def partition_summaries(self) -> list[PartitionSummary]:
        """Every local partition as the metrics endpoint reports it."""
        return [
            PartitionSummary(
                topic,
                index,
                partition.is_leader,
                partition.is_leader and len(partition.isr) < len(partition.replicas),
                partition.log.size,
                partition.high_watermark,
            )
            for (topic, index), partition in self.partitions.items()
        ]

    def high_watermarks(self) -> dict[TopicPartition, int]:
        return {tp: p.high_watermark for tp, p in list(self.partitions.items())}

    def leader_hint(self, topic: str, index: int) -> tuple[int, int] | None:
        """(leader id, leader epoch) the metadata names for a partition, for clients that were
        told NOT_LEADER_OR_FOLLOWER (Produce v10+, Fetch v12+); None when unknown."""
        info = self.metadata.topic(topic)
        state = info.partitions.get(index) if info is not None else None
        if state is None or state.leader < 0:
            return None
        return state.leader, state.leader_epoch

    def shutdown(self) -> None:
        self.log_manager.checkpoint_high_watermarks(self.high_watermarks())
        self.log_manager.close()


class _FetchReader:
    """One Fetch request's reads (Kafka's readFromLocalLog with its FetchParams): who fetches, at
    which isolation, and whether a follower replica may answer (a consumer with client metadata,
    Fetch v11+) or only the leader."""

    def __init__(
        self, manager: ReplicaManager, replica_id: int, read_committed: bool, client: ClientMetadata | None
    ) -> None:
        self.manager = manager
        self.replica_id = replica_id
        self.for_follower = replica_id >= 0
        self.read_committed = read_committed
        self.fetch_only_leader = self.for_follower or client is None
        # the rack-aware selection runs only for a consumer with a rack, under a selector
        self.selecting = client if client and client.rack_id and manager.replica_selector else None
        self._racks: dict[int, str | None] | None = None  # live brokers' racks, looked up once
        self.followed_epochs: dict[TopicPartition, int] = {}  # partitions read here as a follower

    def read_all(
        self, requested: Iterable[tuple[TopicPartition, PartitionFetchRequest]], max_bytes: int
    ) -> dict[TopicPartition, PartitionFetchResult]:
        results = {}
        remaining = max_bytes
        for tp, request in requested:
            result = self.read_one(tp, request, remaining, min_one_message=remaining == max_bytes)
            remaining = max(0, remaining - result.records_size)
            results[tp] = result
        return results

    def read_one(
        self, tp: TopicPartition, request: PartitionFetchRequest, remaining: int, min_one_message: bool
    ) -> PartitionFetchResult:
        committed = self.read_committed
        try:
            partition = self.manager.hosted_partition(*tp)
            if self.selecting is not None and partition.is_leader:
                preferred = self._preferred_read_replica(partition, request.fetch_offset)
                if preferred is not None:  # the consumer is sent there, nothing is read
                    partition.check_leader_epoch(request.current_leader_epoch)
                    return _partition_state(
                        partition, aborted_transactions=[] if committed else None, preferred_read_replica=preferred
                    )
            partition.check_fetchable(request.current_leader_epoch, fetch_only_leader=self.fetch_only_leader)
            if not self.fetch_only_leader and not partition.is_leader:
                self.followed_epochs[tp] = partition.leader_epoch
            if self.for_follower:
                if self.replica_id not in partition.followers:  # as Kafka's followerReplicaOrThrow
                    raise KafkaError(
                        ErrorCode.NOT_LEADER_OR_FOLLOWER, f"Replica {self.replica_id} is not a replica of {tp}"
                    )
                diverging = partition.diverging_epoch(request.fetch_offset, request.last_fetched_epoch)
                if diverging is not None:
                    return _partition_state(partition, diverging_epoch=EpochEndOffset(*diverging))
                if self.manager.leader_throttles(partition, self.replica_id):
                    # throttled: no records this time, and read again at the session's next fetch
                    return _partition_state(partition, more_to_read=True)
            data = partition.read(
                request.fetch_offset,
                min(request.max_bytes, remaining),
                for_follower=self.for_follower,
                min_one_message=min_one_message,
                read_committed=committed,
            )
        except KafkaError as exc:
            # As Kafka's createLogReadResult: a failed partition (OFFSET_OUT_OF_RANGE, fenced
            # epochs, ...) reports no high watermark, last stable offset or log start (-1).
            return PartitionFetchResult.for_error(exc.code)
        aborted = (data.aborted_transactions or []) if committed else None
        more = data.size == 0 and request.fetch_offset < partition.readable_end(self.for_follower, committed)
        return _partition_state(
            partition, records=data.regions, records_size=data.size, aborted_transactions=aborted, more_to_read=more
        )

    def _preferred_read_replica(self, partition: Partition, fetch_offset: int) -> int | None:
        client = self.selecting
        selector = self.manager.replica_selector
        if client is None or selector is None or not partition.followers:
            return None
        if self._racks is None:
            live = self.manager.metadata.live_brokers(client.listener_name)
            self._racks = {broker.broker_id: broker.rack for broker in live}
        now = self.manager.clock.now_ms()
        return preferred_read_replica(selector, partition, client, fetch_offset, now, self._racks)


def _partition_state(
    partition: Partition,
    *,
    records: list[FileRegion] | None = None,
    records_size: int = 0,
    diverging_epoch: EpochEndOffset | None = None,
    aborted_transactions: list[AbortedTransaction] | None = None,
    more_to_read: bool = False,
    preferred_read_replica: int = NO_PREFERRED_READ_REPLICA,
) -> PartitionFetchResult:
    """A successful read's result: the partition's offsets now, and what was read (file
    regions and, read_committed, the aborted transactions in them), where a follower's log
    diverges, or the replica a consumer should read from instead."""
    return PartitionFetchResult(
        ErrorCode.NONE,
        partition.high_watermark,
        partition.last_stable_offset,
        partition.log_start_offset,
        records_size=records_size,
        preferred_read_replica=preferred_read_replica,
        diverging_epoch=diverging_epoch,
        aborted_transactions=aborted_transactions,
        records=records,
        more_to_read=more_to_read,
    )


def _transactional_batches(records: bytearray) -> tuple[int, set[tuple[int, int]]] | None:
    """(base sequence of the first batch, {(producer id, epoch)} of the transactional batches)
    of a partition's records; None when none is transactional."""
    from ..records.batch import iter_headers  # the records load with the first produce

    producers = set()
    first_sequence = None
    try:
        for _, header in iter_headers(records):
            if first_sequence is None:
                first_sequence = header.base_sequence
            if header.producer_id >= 0 and header.is_transactional:
                producers.add((header.producer_id, header.producer_epoch))
    except (InvalidRecordError, CorruptRecordError):
        pass  # the append reports it
    if not producers or first_sequence is None:
        return None
    return first_sequence, producers


def _verifier_error(error: ErrorCode) -> ErrorCode:
    """As Kafka's AddPartitionsToTxnManager: a fenced producer is told INVALID_PRODUCER_EPOCH."""
    return ErrorCode.INVALID_PRODUCER_EPOCH if error == ErrorCode.PRODUCER_FENCED else error


def _verification_failure(error: ErrorCode, api_version: int) -> ProduceResult:
    """A partition whose verification failed, answered as Kafka 3.9's Produce does."""
    if error == ErrorCode.TRANSACTION_ABORTABLE and api_version < TRANSACTION_ABORTABLE_MIN_PRODUCE_VERSION:
        error = ErrorCode.INVALID_TXN_STATE  # clients before Produce v11 do not know it
    if error == ErrorCode.INVALID_TXN_STATE:
        return ProduceResult(error, error_message="Partition was not added to the transaction")
    if error in _RETRIABLE_VERIFICATION_ERRORS:
        return ProduceResult(
            ErrorCode.NOT_ENOUGH_REPLICAS,
            error_message="Unable to verify the partition has been added to the transaction. "
            f"Underlying error: {error.name}",
        )
    return ProduceResult(error)


async def open_broker_connection(*args: Any, **kwargs: Any) -> BrokerConnection:
    """`BrokerConnection.open(*args, **kwargs)`, the client's module imported with the first
    connection to another broker (which a single broker may never open)."""
    from .broker_client import BrokerConnection

    return await BrokerConnection.open(*args, **kwargs)
