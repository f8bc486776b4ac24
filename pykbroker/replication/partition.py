"""One partition as this broker sees it: its log, its leadership, its high watermark and ISR.

The leader appends produced batches, tracks each follower's log end offset (learned from the
follower's fetches), keeps the in-sync replica set (ISR) and moves the high watermark to the
smallest log end offset over the ISR. Consumers read only below the high watermark; followers
read up to the log end. With a single replica the ISR is the leader alone, so the high watermark
follows the log end offset at once.

ISR changes are proposed to the metadata store through `isr_listener`, which persists them
(locally, or with a compare-and-set in ZooKeeper) before they count, as Kafka's AlterPartition
does. While a proposal is in flight no other is made, and the high watermark is computed over
the "maximal" ISR (the committed one plus a replica being added), so that whichever way the
proposal ends, every member of the ISR has every record below the high watermark.

A follower counts as caught up when it fetched up to the leader's log end, or up to where the
leader's log ended at its previous fetch (Kafka's rule: under a steady stream of produce
requests a follower is never exactly at the end, but it is never behind by more than one fetch).
"""

from __future__ import annotations

import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..log.log import Log
from ..log.lookups import LATEST_TIMESTAMP, MAX_TIMESTAMP
from ..log.producer_state import CLIENT, ProducerStateEntry, VerificationGuard
from ..log.results import FetchDataInfo, LogAppendInfo, TimestampAndOffset
from ..protocol.errors import ErrorCode, KafkaError
from .fetch_types import READ_COMMITTED


@dataclass
class FollowerState:
    """What the leader knows of one follower, learned from its fetch requests."""

    log_end_offset: int = -1
    log_start_offset: int = -1  # the follower's own, from its fetches (-1 until it fetched)
    last_caught_up_ms: int = 0
    last_fetch_ms: int = 0
    last_fetch_leader_log_end_offset: int = -1


IsrListener = Callable[["Partition", list[int]], None]


class Partition:
    def __init__(self, topic: str, index: int, topic_id: uuid.UUID, log: Log, local_broker_id: int) -> None:
        self.topic = topic
        self.index = index
        self.topic_id = topic_id
        self.log = log
        self.local_broker_id = local_broker_id
        self.leader_id = -1
        self.leader_epoch = -1
        self.partition_epoch = 0
        self.replicas: list[int] = []
        self.isr: list[int] = []
        self.followers: dict[int, FollowerState] = {}
        self.epoch_start_offset = 0  # where this leader's epoch began in the log
        self.pending_isr: list[int] | None = None  # a proposed ISR not yet committed
        self.isr_listener: IsrListener | None = None
        self.bytes_appended = 0  # grows with every append: lets delayed fetches measure new data
        self._append_marks: deque[tuple[int, int]] = deque(maxlen=1024)  # (end offset, bytes)

    # -- state -------------------------------------------------------------------------
    @property
    def key(self) -> tuple[str, int]:
        return (self.topic, self.index)

    @property
    def is_leader(self) -> bool:
        return self.leader_id == self.local_broker_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def last_stable_offset(self) -> int:
        """The high watermark, or the first offset of the oldest unfinished transaction below it."""
        return self.log.last_stable_offset

    @property
    def maximal_isr(self) -> list[int]:
        """The committed ISR plus any replica a pending proposal adds."""
        if self.pending_isr is None:
            return self.isr
        return self.isr + [r for r in self.pending_isr if r not in self.isr]

    def make_leader(
        self, leader_epoch: int, replicas: list[int], isr: list[int], partition_epoch: int, now_ms: int
    ) -> None:
        """Lead at `leader_epoch`. A broker that already led keeps what it knows of its
        followers; a new leader starts them afresh."""
        was_leader = self.is_leader
        self.leader_id = self.local_broker_id
        self.partition_epoch = partition_epoch
        self.replicas = list(replicas)
        self.isr = list(isr)
        self.pending_isr = None
        known = self.followers if was_leader else {}
        self.followers = {
            r: known.get(r) or FollowerState(last_caught_up_ms=now_ms) for r in replicas if r != self.local_broker_id
        }
        if leader_epoch != self.leader_epoch or not was_leader:
            self.leader_epoch = leader_epoch
            self.epoch_start_offset = self.log_end_offset
            self.log.maybe_assign_epoch_start_offset(leader_epoch, self.epoch_start_offset)
        self.maybe_increment_high_watermark()

    def make_follower(
        self, leader_id: int, leader_epoch: int, replicas: list[int], isr: list[int], partition_epoch: int
    ) -> None:
        self.leader_id = leader_id
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch
        self.replicas = list(replicas)
        self.isr = list(isr)
        self.pending_isr = None
        self.followers = {}

    def update_replicas(self, replicas: list[int], now_ms: int) -> None:
        """The replicas changed under the same leadership (a reassignment): followers added are
        tracked from now, those removed are forgotten."""
        self.replicas = list(replicas)
        known = self.followers
        self.followers = {
            r: known.get(r) or FollowerState(last_caught_up_ms=now_ms) for r in replicas if r != self.local_broker_id
        }

    def update_isr(self, isr: list[int], partition_epoch: int) -> None:
        """A newer ISR for the same leadership (the store's view changed)."""
        if partition_epoch < self.partition_epoch:
            return
        self.isr = list(isr)
        self.partition_epoch = partition_epoch
        self.maybe_increment_high_watermark()

    def check_leader_epoch(self, current_leader_epoch: int) -> None:
        """Kafka's fencing of clients with a stale or future view of leadership."""
        if current_leader_epoch < 0:
            return
        if current_leader_epoch < self.leader_epoch:
            raise KafkaError(ErrorCode.FENCED_LEADER_EPOCH)
        if current_leader_epoch > self.leader_epoch:
            raise KafkaError(ErrorCode.UNKNOWN_LEADER_EPOCH)

    def require_leader(self) -> None:
        if not self.is_leader:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)

    def check_fetchable(self, current_leader_epoch: int, *, fetch_only_leader: bool) -> None:
        """Kafka's localLogWithEpochOrThrow: the fetcher's leader epoch first (FENCED_LEADER_EPOCH,
        UNKNOWN_LEADER_EPOCH), then, where only the leader may answer, NOT_LEADER_OR_FOLLOWER."""
        self.check_leader_epoch(current_leader_epoch)
        if fetch_only_leader:
            self.require_leader()

    # -- leader: appends ---------------------------------------------------------------
    def append_as_leader(
        self,
        records: bytearray,
        *,
        required_acks: int,
        min_insync_replicas: int,
        now_ms: int,
        origin: str = CLIENT,
        verification_guard: VerificationGuard | None = None,
    ) -> LogAppendInfo:
        """Append produced batches; returns the log's append info (see `Log.append_as_leader`
        for `origin` and `verification_guard`)."""
        self.require_leader()
        if required_acks == -1 and len(self.isr) < min_insync_replicas:
            raise KafkaError(
                ErrorCode.NOT_ENOUGH_REPLICAS,
                f"The size of the current ISR {self.isr} is insufficient to satisfy "
                f"the min.isr requirement of {min_insync_replicas} for partition "
                f"{self.topic}-{self.index}",
            )
        info = self.log.append_as_leader(
            records,
            leader_epoch=self.leader_epoch,
            now_ms=now_ms,
            origin=origin,
            verification_guard=verification_guard,
        )
        if not info.duplicate:
            self.bytes_appended += len(records)
            self._append_marks.append((info.last_offset + 1, self.bytes_appended))
        self.maybe_increment_high_watermark()
        return info

    def append_as_follower(self, records: bytes | bytearray | memoryview) -> None:
        """Append batches replicated from the leader, counted as a leader's appends are, so that
        consumers waiting on this follower (KIP-392) see the bytes below its high watermark grow."""
        info = self.log.append_as_follower(records)
        self.bytes_appended += info.valid_bytes
        self._append_marks.append((info.last_offset + 1, self.bytes_appended))

    def maybe_start_transaction_verification(self, producer_id: int, sequence: int, epoch: int) -> VerificationGuard:
        """The leader's verification guard for a producer's first transactional append here."""
        self.require_leader()
        return self.log.maybe_start_transaction_verification(producer_id, sequence, epoch)

    def active_producers(self) -> list[ProducerStateEntry]:
        """DescribeProducers: the producers the log's producer state knows now."""
        return self.log.producers.active_producers()

    def fetch_start_counter(self, for_follower: bool, read_committed: bool = False) -> int:
        """What `readable_bytes_since` measures from: for followers every byte appended; for
        consumers the bytes appended below what they may read now (high watermark, or LSO)."""
        if for_follower:
            return self.bytes_appended
        return self._bytes_below(self._consumer_limit(read_committed))

    def readable_bytes_since(self, start_counter: int, for_follower: bool, read_committed: bool = False) -> int:
        """Bytes a reader may see now that it could not when `fetch_start_counter` gave
        `start_counter`: all appended bytes for followers; for consumers those below the high
        watermark (read_committed: the last stable offset, which a marker moves over data
        appended earlier)."""
        if for_follower:
            return self.bytes_appended - start_counter
        return max(0, self._bytes_below(self._consumer_limit(read_committed)) - start_counter)

    def readable_end(self, for_follower: bool, read_committed: bool = False) -> int:
        """The offset reads stop at: the log end for followers, the high watermark (or the last
        stable offset) for consumers."""
        return self.log_end_offset if for_follower else self._consumer_limit(read_committed)

    def _consumer_limit(self, read_committed: bool) -> int:
        return self.last_stable_offset if read_committed else self.high_watermark

    def _bytes_below(self, offset: int) -> int:
        """The `bytes_appended` count of the last append that ended at or below `offset`."""
        for end_offset, cumulative in reversed(self._append_marks):
            if end_offset <= offset:
                return cumulative
        return 0

    def acks_satisfied(self, required_offset: int, min_insync_replicas: int) -> ErrorCode | None:
        """For acks=all: None while waiting, NONE once the ISR has `required_offset`."""
        if not self.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.high_watermark >= required_offset:
            if len(self.isr) < min_insync_replicas:
                return ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            return ErrorCode.NONE
        return None

    # -- leader: followers and the high watermark --------------------------------------
    def update_follower_fetch_state(
        self, replica_id: int, fetch_offset: int, now_ms: int, log_start_offset: int = -1
    ) -> bool:
        """Record a follower's fetch (its log end offset is `fetch_offset`, its log start
        `log_start_offset`); True if the high watermark moved."""
        state = self.followers.get(replica_id)
        if state is None:
            raise KafkaError(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        leader_end = self.log_end_offset
        if fetch_offset >= leader_end:
            state.last_caught_up_ms = now_ms
        elif fetch_offset >= state.last_fetch_leader_log_end_offset >= 0:
            state.last_caught_up_ms = max(state.last_caught_up_ms, state.last_fetch_ms)
        state.log_end_offset = fetch_offset
        state.log_start_offset = log_start_offset
        state.last_fetch_ms = now_ms
        state.last_fetch_leader_log_end_offset = leader_end
        self._maybe_expand_isr(replica_id, state)
        return self.maybe_increment_high_watermark()

    def maybe_increment_high_watermark(self) -> bool:
        """Move the high watermark to the smallest log end offset over the (maximal) ISR."""
        if not self.is_leader:
            return False
        candidate = self.log_end_offset
        for replica_id in self.maximal_isr:
            if replica_id != self.local_broker_id:
                follower = self.followers.get(replica_id)
                candidate = min(candidate, follower.log_end_offset if follower else -1)
        if candidate > self.high_watermark:
            self.log.high_watermark = candidate
            return True
        return False

    def _maybe_expand_isr(self, replica_id: int, state: FollowerState) -> None:
        caught_up = state.log_end_offset >= self.high_watermark and state.log_end_offset >= self.epoch_start_offset
        if replica_id not in self.isr and caught_up:
            self._propose_isr(self.isr + [replica_id])

    def maybe_shrink_isr(
        self, now_ms: int, replica_lag_time_max_ms: int, replica_fetch_ms: Mapping[int, int] | None = None
    ) -> bool:
        """Drop followers that have not caught up for `replica.lag.time.max.ms`.

        `replica_fetch_ms` holds each follower broker's last fetch of any partition: a follower
        that has this partition's whole log and still fetches is caught up even when its
        incremental fetches leave this partition out (nothing changed in it)."""
        if not self.is_leader:
            return False
        lagging = [
            r
            for r in self.isr
            if r != self.local_broker_id
            and (r not in self.followers or now_ms - self._caught_up_ms(r, replica_fetch_ms) > replica_lag_time_max_ms)
        ]
        if not lagging:
            return False
        return self._propose_isr([r for r in self.isr if r not in lagging])

    def _caught_up_ms(self, replica_id: int, replica_fetch_ms: Mapping[int, int] | None) -> int:
        state = self.followers[replica_id]
        if replica_fetch_ms is not None and state.log_end_offset >= self.log_end_offset:
            return max(state.last_caught_up_ms, replica_fetch_ms.get(replica_id, -1))
        return state.last_caught_up_ms

    def _propose_isr(self, new_isr: list[int]) -> bool:
        """Propose a new ISR unless one is in flight; True if proposed."""
        if self.pending_isr is not None:
            return False
        if self.isr_listener is None:
            self.isr = new_isr
        else:
            self.pending_isr = list(new_isr)
            self.isr_listener(self, new_isr)
        self.maybe_increment_high_watermark()
        return True

    def isr_proposal_done(self, proposed: list[int], partition_epoch: int | None) -> None:
        """The store's answer to a proposal: committed at `partition_epoch`, or refused."""
        if self.pending_isr != proposed:
            return  # a newer leadership or state replaced the proposal meanwhile
        self.pending_isr = None
        if partition_epoch is not None and partition_epoch >= self.partition_epoch:
            self.isr = list(proposed)
            self.partition_epoch = partition_epoch
        self.maybe_increment_high_watermark()

    # -- leader: where a follower's log diverges ---------------------------------------
    def end_offset_for_epoch(self, leader_epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (the largest epoch <= `leader_epoch`, where it ends), or
        (-1, -1) when this log knows no such epoch."""
        found = self.log.end_offset_for_epoch(leader_epoch)
        return (-1, -1) if found is None else found

    def diverging_epoch(self, fetch_offset: int, last_fetched_epoch: int) -> tuple[int, int] | None:
        """For a follower's fetch (v12+): (epoch, end offset) where its log stops matching this
        one, or None when its last fetched epoch agrees with this log at `fetch_offset`."""
        if last_fetched_epoch < 0:
            return None
        epoch, end_offset = self.end_offset_for_epoch(last_fetched_epoch)
        if epoch < 0 or end_offset < 0:
            return None
        if end_offset < fetch_offset or epoch < last_fetched_epoch:
            return epoch, end_offset
        return None

    # -- reads -------------------------------------------------------------------------
    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        *,
        for_follower: bool,
        min_one_message: bool,
        read_committed: bool = False,
    ) -> FetchDataInfo:
        """Batches from `fetch_offset`: the log end for followers; for consumers up to the high
        watermark, or with `read_committed` up to the last stable offset, with the aborted
        transactions overlapping what was read."""
        if for_follower:
            max_offset = None
        else:
            max_offset = self.last_stable_offset if read_committed else self.high_watermark
        return self.log.read(
            fetch_offset,
            max_bytes,
            max_offset=max_offset,
            min_one_message=min_one_message,
            read_committed=read_committed and not for_follower,
        )

    # -- ListOffsets -------------------------------------------------------------------
    def fetch_offset_for_timestamp(
        self, timestamp: int, *, isolation_level: int, for_replica: bool
    ) -> TimestampAndOffset | None:
        """The offset for `timestamp` (or a special timestamp: -1 latest, -2 earliest, ...),
        as Kafka's Partition.fetchOffsetForTimestamp. Latest is the offset a reader may fetch
        up to; a consumer is not told of a searched record at or past it (None)."""
        fetchable = self._fetchable_offset(isolation_level, for_replica)
        if timestamp == LATEST_TIMESTAMP:
            return self.log.latest()._replace(offset=fetchable)
        found = self.log.offset_for_timestamp(timestamp)
        searched = timestamp >= 0 or timestamp == MAX_TIMESTAMP
        if found is not None and searched and not for_replica and found.offset >= fetchable:
            return None
        return found

    def legacy_latest_offsets(self, max_num_offsets: int, *, isolation_level: int, for_replica: bool) -> list[int]:
        """ListOffsets v0's offsets for latest (see `Log.legacy_latest_offsets`)."""
        return self.log.legacy_latest_offsets(self._fetchable_offset(isolation_level, for_replica), max_num_offsets)

    def _fetchable_offset(self, isolation_level: int, for_replica: bool) -> int:
        """How far a reader may fetch: the log end for replicas, the last stable offset for
        read_committed consumers, else the high watermark."""
        if for_replica:
            return self.log_end_offset
        if isolation_level == READ_COMMITTED:
            return self.last_stable_offset
        return self.high_watermark
