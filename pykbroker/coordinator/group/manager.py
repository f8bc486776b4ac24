"""Which groups this broker coordinates, and their storage in `__consumer_offsets`.

The coordinator serves the groups of the `__consumer_offsets` partitions this broker leads. When
it becomes leader of a partition it loads the partition (meanwhile the partition's groups answer
COORDINATOR_LOAD_IN_PROGRESS); when it stops leading one, the partition's groups are unloaded.

Writes: `store_group` (a group's generation, members and assignment, after a rebalance),
`store_offsets` (a commit; with a producer, a transactional one) and `cleanup_group_metadata`
(tombstones for removed offsets and dead groups). Append errors are turned into the errors Kafka
gives the clients.

Transactions: the groups with transactional commits pending are kept per producer id (Kafka's
openGroupsForProducer), so that a transaction marker written to a partition of
`__consumer_offsets` completes the pending offsets of that producer in the groups of that
partition (`handle_txn_completion`). A marker that arrives while its partition loads waits for the
load, and is applied then unless the load read it already.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ...common.topic_partition import TopicPartition
from ...protocol.errors import ErrorCode
from .formats import GroupRecord, MemberRecord, OffsetAndMetadata, group_key, group_value, offset_key, offset_value
from .group import GroupMetadata
from .log_io import TxnProducer
from .offsets_topic import partition_for
from .replay import build_group, replay
from .state import DEAD, EMPTY

log = logging.getLogger(__name__)

INVALID_OFFSET = -1


@dataclass(frozen=True)
class OffsetConfig:
    max_metadata_size: int = 4096
    retention_ms: int = 7 * 24 * 3600 * 1000
    retention_check_interval_ms: int = 600000
    commit_required_acks: int = -1

    @classmethod
    def from_broker_config(cls, config) -> OffsetConfig:
        return cls(
            max_metadata_size=int(config["offset.metadata.max.bytes"]),
            retention_ms=int(config["offsets.retention.minutes"]) * 60 * 1000,
            retention_check_interval_ms=int(config["offsets.retention.check.interval.ms"]),
            commit_required_acks=int(config["offsets.commit.required.acks"]),
        )


@dataclass(frozen=True)
class FetchedOffset:
    offset: int = INVALID_OFFSET
    leader_epoch: int = -1
    metadata: str = ""
    error: ErrorCode = ErrorCode.NONE


class GroupManager:
    def __init__(self, offsets_log, runtime, offset_config: OffsetConfig, partition_count: Callable[[], int]) -> None:
        self.offsets_log = offsets_log
        self.runtime = runtime
        self.config = offset_config
        self._partition_count = partition_count
        self.groups: dict[str, GroupMetadata] = {}
        self.owned_partitions: set[int] = set()
        self.loading_partitions: set[int] = set()
        self._load_tokens: dict[int, object] = {}
        self._loaded_partitions = self._loaded_records = 0  # since loading last went idle
        self.open_groups_for_producer: dict[int, set[str]] = {}
        self._completions_while_loading: dict[int, list[tuple[int, bool, int]]] = {}

    # -- where groups live ---------------------------------------------------------------
    def partition_for(self, group_id: str) -> int:
        return partition_for(group_id, self._partition_count())

    def is_group_local(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self.owned_partitions

    def is_group_loading(self, group_id: str) -> bool:
        return self.partition_for(group_id) in self.loading_partitions

    @property
    def is_loading(self) -> bool:
        return bool(self.loading_partitions)

    # -- the cache -----------------------------------------------------------------------
    def get_group(self, group_id: str) -> GroupMetadata | None:
        return self.groups.get(group_id)

    def add_group(self, group: GroupMetadata) -> GroupMetadata:
        """Cache `group` unless a group of that id is cached already; returns the cached one."""
        return self.groups.setdefault(group.group_id, group)

    def get_or_maybe_create_group(self, group_id: str, create: bool) -> GroupMetadata | None:
        if create:
            return self.add_group(GroupMetadata(group_id, EMPTY, self.runtime.now_ms))
        return self.groups.get(group_id)

    def current_groups(self) -> list[GroupMetadata]:
        return list(self.groups.values())

    def group_not_exists(self, group_id: str) -> bool:
        group = self.groups.get(group_id)
        return self.is_group_local(group_id) and (group is None or group.is_(DEAD))

    # -- loading and unloading -------------------------------------------------------------
    def schedule_load(self, partition: int, on_group_loaded: Callable[[GroupMetadata], None]) -> None:
        if partition in self.owned_partitions or partition in self.loading_partitions:
            return
        token = object()
        self._load_tokens[partition] = token
        self.loading_partitions.add(partition)
        log.debug("Loading group metadata from __consumer_offsets-%d", partition)
        self.offsets_log.load(partition, lambda entries: self._finish_load(partition, token, entries, on_group_loaded))

    def _finish_load(
        self, partition: int, token: object, entries, on_group_loaded: Callable[[GroupMetadata], None]
    ) -> None:
        if self._load_tokens.get(partition) is not token:
            return  # unloaded (resigned) while loading
        del self._load_tokens[partition]
        replayed = replay(entries)
        self.loading_partitions.discard(partition)
        self.owned_partitions.add(partition)
        for group_id in replayed.group_ids():
            if self.partition_for(group_id) != partition:
                continue
            pending = replayed.pending_of(group_id)
            for producer_id in pending:
                self._add_producer_group(producer_id, group_id)
            group = build_group(
                group_id,
                replayed.groups.get(group_id),
                replayed.offsets_of(group_id),
                self.runtime.now_ms,
                pending,
            )
            if self.add_group(group) is group:
                on_group_loaded(group)
        for producer_id, committed, marker_offset in self._completions_while_loading.pop(partition, []):
            if marker_offset > replayed.last_offset:  # written after what the load read
                self.handle_txn_completion(producer_id, {partition}, committed)
        log.debug("Finished loading __consumer_offsets-%d: %d records", partition, len(entries))
        self._count_load(len(entries))

    def _count_load(self, records: int) -> None:
        """Loads come in bursts (all partitions at start, many on a failover): one INFO line
        for the burst, written once the loop is done with it, rather than one per partition."""
        if self._loaded_partitions == 0:
            self.runtime.call_later(0, self._report_loads)
        self._loaded_partitions += 1
        self._loaded_records += records

    def _report_loads(self) -> None:
        log.info(
            "Loaded the groups and offsets of %d __consumer_offsets partitions (%d records)",
            self._loaded_partitions,
            self._loaded_records,
        )
        self._loaded_partitions = self._loaded_records = 0

    def remove_groups_for_partition(self, partition: int, on_group_unloaded: Callable[[GroupMetadata], None]) -> None:
        self._load_tokens.pop(partition, None)
        self._completions_while_loading.pop(partition, None)
        self.loading_partitions.discard(partition)
        self.owned_partitions.discard(partition)
        for group in [g for g in self.groups.values() if self.partition_for(g.group_id) == partition]:
            del self.groups[group.group_id]
            on_group_unloaded(group)
            self._remove_group_from_all_producers(group.group_id)
        log.debug("Unloaded the groups of __consumer_offsets-%d", partition)

    # -- writing a group -------------------------------------------------------------------
    def store_group(
        self, group: GroupMetadata, assignment: dict[str, bytes], callback: Callable[[ErrorCode], None]
    ) -> None:
        if not self.is_group_local(group.group_id):
            callback(ErrorCode.NOT_COORDINATOR)
            return
        record = _group_record(group, assignment)
        self.offsets_log.append(
            self.partition_for(group.group_id),
            [(group_key(group.group_id), group_value(record))],
            lambda error, _offset: callback(_store_group_error(error)),
            acks=self.config.commit_required_acks,
        )

    # -- writing offsets -------------------------------------------------------------------
    def is_metadata_valid(self, metadata: str | None) -> bool:
        return metadata is None or len(metadata) <= self.config.max_metadata_size

    def store_offsets(
        self,
        group: GroupMetadata,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: Callable[[dict[TopicPartition, ErrorCode]], None],
        producer: TxnProducer | None = None,
    ) -> None:
        """Write a commit (with `producer`, a transactional one, pending until its
        transaction's marker) and answer `callback` once it is written or failed."""
        valid = {tp: e for tp, e in offsets.items() if self.is_metadata_valid(e.metadata)}
        if not valid:
            callback({tp: ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets})
            return
        if not self.is_group_local(group.group_id):
            callback({tp: ErrorCode.NOT_COORDINATOR for tp in offsets})
            return
        if producer is None:
            group.offsets.prepare(valid)
        else:
            self._add_producer_group(producer.producer_id, group.group_id)
            group.offsets.prepare_txn(producer.producer_id, valid)

        def appended(error: ErrorCode, base_offset: int) -> None:
            if not group.is_(DEAD):
                if error == ErrorCode.NONE:
                    self._on_offsets_appended(group, valid, base_offset, producer)
                else:
                    self._on_offsets_failed(group, valid, producer)
            outcome = maybe_convert_offset_commit_error(error)
            callback({tp: outcome if tp in valid else ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets})

        records = [
            (offset_key(group.group_id, topic, index), offset_value(entry)) for (topic, index), entry in valid.items()
        ]
        self.offsets_log.append(
            self.partition_for(group.group_id),
            records,
            appended,
            acks=self.config.commit_required_acks,
            producer=producer,
        )

    def _on_offsets_appended(
        self, group: GroupMetadata, offsets: dict, base_offset: int, producer: TxnProducer | None
    ) -> None:
        for tp, entry in offsets.items():
            if producer is None:
                group.offsets.on_appended(tp, entry, base_offset)
            else:
                group.offsets.on_txn_appended(producer.producer_id, tp, entry, base_offset)

    def _on_offsets_failed(self, group: GroupMetadata, offsets: dict, producer: TxnProducer | None) -> None:
        if producer is None:
            for tp, entry in offsets.items():
                group.offsets.on_failed(tp, entry)
            return
        # checked before this commit's own offsets are dropped, as Kafka does: the group mostly stays
        # registered for the producer, and its marker then finds nothing left to complete
        if not group.offsets.has_pending_txn_from(producer.producer_id):
            self._remove_producer_group(producer.producer_id, group.group_id)
        for tp in offsets:
            group.offsets.fail_txn(producer.producer_id, tp)

    # -- ending transactions ---------------------------------------------------------------
    def handle_txn_completion(self, producer_id: int, partitions: set[int], committed: bool) -> None:
        """A COMMIT or ABORT marker of `producer_id` was written to these partitions of
        `__consumer_offsets`: complete the producer's pending offsets in their groups."""
        open_groups = self.open_groups_for_producer.get(producer_id, set())
        for group_id in [g for g in open_groups if self.partition_for(g) in partitions]:
            group = self.groups.get(group_id)
            if group is None:
                log.info(
                    "Group %s has moved away after the transaction marker was written but before the cache was "
                    "updated. The cache on the new group owner will be updated instead.",
                    group_id,
                )
                continue
            if not group.is_(DEAD):
                group.offsets.complete_txn(producer_id, committed)
                self._remove_producer_group(producer_id, group_id)

    def defer_txn_completion(self, partition: int, producer_id: int, committed: bool, marker_offset: int) -> bool:
        """Keep a marker of a partition that is loading for the end of its load; False if the
        partition is not loading."""
        if partition not in self.loading_partitions:
            return False
        self._completions_while_loading.setdefault(partition, []).append((producer_id, committed, marker_offset))
        return True

    def _add_producer_group(self, producer_id: int, group_id: str) -> None:
        self.open_groups_for_producer.setdefault(producer_id, set()).add(group_id)

    def _remove_producer_group(self, producer_id: int, group_id: str) -> None:
        groups = self.open_groups_for_producer.get(producer_id)
        if groups is not None:
            groups.discard(group_id)
            if not groups:
                del self.open_groups_for_producer[producer_id]

    def _remove_group_from_all_producers(self, group_id: str) -> None:
        for groups in self.open_groups_for_producer.values():
            groups.discard(group_id)

    # -- reading offsets -------------------------------------------------------------------
    def get_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition] | None, require_stable: bool = False
    ) -> dict[TopicPartition, FetchedOffset]:
        group = self.groups.get(group_id)
        if group is None or group.is_(DEAD):
            return {tp: FetchedOffset() for tp in (partitions or [])}
        wanted = group.offsets.partitions() if partitions is None else list(partitions)
        result = {}
        for tp in wanted:
            entry = group.offsets.get(tp)
            if require_stable and group.offsets.is_pending(tp):
                result[tp] = FetchedOffset(error=ErrorCode.UNSTABLE_OFFSET_COMMIT)
            elif entry is None:
                result[tp] = FetchedOffset()
            else:
                result[tp] = FetchedOffset(entry.offset, entry.leader_epoch, entry.metadata)
        return result

    # -- removing offsets and groups -------------------------------------------------------
    def cleanup_group_metadata(self, groups: Iterable[GroupMetadata], selector: Callable[[GroupMetadata], dict]) -> int:
        """Remove the offsets `selector` picks from each group and write their tombstones; an
        Empty group left without offsets becomes Dead and is forgotten. Returns how many
        offsets were removed."""
        removed_count = 0
        for group in list(groups):
            removed = selector(group)
            if group.is_(EMPTY) and not group.offsets.has_offsets():
                log.info("Group %s transitioned to Dead in generation %d", group.group_id, group.generation_id)
                group.transition_to(DEAD)
            if not self.is_group_local(group.group_id):
                continue
            tombstones = [(offset_key(group.group_id, topic, index), None) for topic, index in removed]
            if group.is_(DEAD) and self.groups.get(group.group_id) is group:
                del self.groups[group.group_id]
                if group.generation_id > 0:  # a group that only stored offsets has no record
                    tombstones.append((group_key(group.group_id), None))
            if tombstones:
                self.offsets_log.append(self.partition_for(group.group_id), tombstones, None, acks=0)
                removed_count += len(removed)
        return removed_count


def _group_record(group: GroupMetadata, assignment: dict[str, bytes]) -> GroupRecord:
    return GroupRecord(
        protocol_type=group.protocol_type or "",
        generation=group.generation_id,
        protocol=group.protocol_name,
        leader=group.leader_id,
        current_state_timestamp=(-1 if group.current_state_timestamp is None else group.current_state_timestamp),
        members=[
            MemberRecord(
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.rebalance_timeout_ms,
                m.session_timeout_ms,
                m.metadata(group.protocol_name),
                assignment[m.member_id],
            )
            for m in group.members.values()
        ],
    )


def _store_group_error(error: ErrorCode) -> ErrorCode:
    """The error a rebalance reports for a failed write of the group's record."""
    if error in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    ):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if error in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if error == ErrorCode.REQUEST_TIMED_OUT:
        return ErrorCode.REBALANCE_IN_PROGRESS
    if error in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE):
        log.error("Group metadata record too large to be stored: %s", error.name)
        return ErrorCode.UNKNOWN_SERVER_ERROR
    return error


def maybe_convert_offset_commit_error(error: ErrorCode) -> ErrorCode:
    """The error an offset commit reports for a failed write of its records (or a failed
    verification of a transactional commit), as Kafka's maybeConvertOffsetCommitError."""
    if error == ErrorCode.NETWORK_EXCEPTION:  # verification failed: clients retry without a lookup
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    if error in (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    ):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if error in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.KAFKA_STORAGE_ERROR):
        return ErrorCode.NOT_COORDINATOR
    if error in (ErrorCode.MESSAGE_TOO_LARGE, ErrorCode.RECORD_LIST_TOO_LARGE, ErrorCode.INVALID_FETCH_SIZE):
        return ErrorCode.INVALID_COMMIT_OFFSET_SIZE
    return error
