"""Writing a group's offsets to `__consumer_offsets` and keeping its offset cache in step (Kafka's
GroupMetadataManager.storeOffsets and cleanupGroupMetadata).

`store_offsets` writes a commit (with a producer, a transactional one, pending until its
transaction's marker: `txn_offsets.py`) and answers once it is written or failed: a commit is
staged in the group's cache before its append and materialized once the append succeeded, so
that the latest write wins. Offsets whose metadata is larger than `offset.metadata.max.bytes`
answer OFFSET_METADATA_TOO_LARGE and are not written; append errors are turned into the errors
Kafka gives the clients (`maybe_convert_offset_commit_error`).

`cleanup_group_metadata` removes offsets (expired, deleted, of a deleted topic or group) and
writes their tombstones; an Empty group left without offsets becomes Dead and is forgotten, with
a tombstone for its group record.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from ...common.topic_partition import TopicPartition
from ...protocol.errors import ErrorCode
from .config import OffsetConfig
from .formats import OffsetAndMetadata, group_key, offset_key, offset_value
from .group import GroupMetadata
from .log_io import OffsetsLog, Records, TxnProducer
from .manager import GroupMetadataManager
from .state import DEAD, EMPTY
from .txn_offsets import OpenTransactions

log = logging.getLogger(__name__)

Offsets = dict[TopicPartition, OffsetAndMetadata]
CommitCallback = Callable[[dict[TopicPartition, ErrorCode]], None]  # answers a commit, per partition
OffsetSelector = Callable[[GroupMetadata], Offsets]  # removes some of a group's offsets; returns them


class OffsetStore:
    def __init__(
        self,
        groups: GroupMetadataManager,
        offsets_log: OffsetsLog,
        config: OffsetConfig,
        open_transactions: OpenTransactions,
    ) -> None:
        self.groups = groups
        self.offsets_log = offsets_log
        self.config = config
        self.open_transactions = open_transactions

    # -- writing offsets -------------------------------------------------------------------
    def is_metadata_valid(self, metadata: str | None) -> bool:
        return metadata is None or len(metadata) <= self.config.max_metadata_size

    def store_offsets(
        self,
        group: GroupMetadata,
        offsets: Offsets,
        callback: CommitCallback,
        producer: TxnProducer | None = None,
    ) -> None:
        """Write a commit (with `producer`, a transactional one, pending until its
        transaction's marker) and answer `callback` once it is written or failed."""
        valid = {tp: e for tp, e in offsets.items() if self.is_metadata_valid(e.metadata)}
        if not valid:
            callback({tp: ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets})
            return
        if producer is None:
            group.offsets.prepare(valid)
        else:
            self.open_transactions.add_producer_group(producer.producer_id, group.group_id)
            group.offsets.prepare_txn(producer.producer_id, valid)

        def appended(error: ErrorCode, base_offset: int) -> None:
            if not group.is_(DEAD):
                if error == ErrorCode.NONE:
                    self._on_offsets_appended(group, valid, base_offset, producer)
                else:
                    self._on_offsets_failed(group, valid, producer)
            outcome = maybe_convert_offset_commit_error(error)
            callback({tp: outcome if tp in valid else ErrorCode.OFFSET_METADATA_TOO_LARGE for tp in offsets})

        records: Records = [
            (offset_key(group.group_id, topic, index), offset_value(entry)) for (topic, index), entry in valid.items()
        ]
        self.offsets_log.append(
            self.groups.partition_for(group.group_id),
            records,
            appended,
            acks=self.config.commit_required_acks,
            producer=producer,
        )

    def _on_offsets_appended(
        self, group: GroupMetadata, offsets: Offsets, base_offset: int, producer: TxnProducer | None
    ) -> None:
        for tp, entry in offsets.items():
            if producer is None:
                group.offsets.on_appended(tp, entry, base_offset)
            else:
                group.offsets.on_txn_appended(producer.producer_id, tp, entry, base_offset)

    def _on_offsets_failed(self, group: GroupMetadata, offsets: Offsets, producer: TxnProducer | None) -> None:
        if producer is None:
            for tp, entry in offsets.items():
                group.offsets.on_failed(tp, entry)
            return
        # checked before this commit's own offsets are dropped, as Kafka does: the group mostly stays
        # registered for the producer, and its marker then finds nothing left to complete
        if not group.offsets.has_pending_txn_from(producer.producer_id):
            self.open_transactions.remove_producer_group(producer.producer_id, group.group_id)
        for tp in offsets:
            group.offsets.fail_txn(producer.producer_id, tp)

    # -- removing offsets and groups -------------------------------------------------------
    def cleanup_group_metadata(self, groups: Iterable[GroupMetadata], selector: OffsetSelector) -> int:
        """Remove the offsets `selector` picks from each group and write their tombstones; an
        Empty group left without offsets becomes Dead and is forgotten. Returns how many
        offsets were removed."""
        removed_count = 0
        for group in list(groups):
            removed = selector(group)
            if group.is_(EMPTY) and not group.offsets.has_offsets() and not group.is_active_consumer_group:
                log.info("Group %s transitioned to Dead in generation %d", group.group_id, group.generation_id)
                group.transition_to(DEAD)
            if not self.groups.is_group_local(group.group_id):
                continue
            tombstones: Records = [(offset_key(group.group_id, topic, index), None) for topic, index in removed]
            if group.is_(DEAD) and self.groups.remove_group(group):
                if group.generation_id > 0:  # a group that only stored offsets has no record
                    tombstones.append((group_key(group.group_id), None))
                if group.consumer is not None:
                    from .consumer.manager import group_tombstones  # loaded with consumer groups

                    tombstones.extend(group_tombstones(group.consumer))
            if tombstones:
                self.offsets_log.append(self.groups.partition_for(group.group_id), tombstones, None, acks=0)
                removed_count += len(removed)
        return removed_count


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
