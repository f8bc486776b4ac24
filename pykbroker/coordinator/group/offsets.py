"""A group's committed offsets (Kafka's OffsetMetadataManager): OffsetCommit, TxnOffsetCommit,
OffsetFetch and OffsetDelete.

Commits with generation -1 and no member id are "simple" commits (standalone consumers, admin
tools): they are accepted while the group is Empty, and create the group if it does not exist.
Otherwise the committer must be a member of the current generation; during CompletingRebalance
commits get REBALANCE_IN_PROGRESS, during PreparingRebalance the previous generation may still
commit.

A transactional commit (TxnOffsetCommit) creates an unknown group Empty. With a verifier (KIP-890
part 1, `transaction.partition.verification.enable`), the group's `__consumer_offsets` partition
must be part of the producer's ongoing transaction; a failed verification answers its error
(NETWORK_EXCEPTION becomes COORDINATOR_LOAD_IN_PROGRESS) for every partition. Then the committer
is checked as Kafka's validateOffsetCommit does for transactional commits (KIP-447): a Dead group
answers COORDINATOR_NOT_AVAILABLE; a commit naming a generation, a member id or a group instance
id (TxnOffsetCommit v3+) must come from a current member (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID)
of the current generation (ILLEGAL_GENERATION); one naming none of them (v0-v2) is accepted
whatever the group's state. The offsets are written as a transactional batch of the producer and
stay pending until the transaction's marker (`txn_offsets.py`).

Every request first passes the group checks (`GroupMetadataManager.validate_group_status`); the
writes go through the `OffsetStore`. Expiration lives in `offset_expiration.py`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from ...common.topic_partition import TopicPartition
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ..runtime import Reply
from .group import GroupMetadata
from .heartbeats import Heartbeats
from .log_io import TxnProducer
from .manager import GroupMetadataManager
from .model import UNKNOWN_MEMBER_ID, FetchedOffset
from .offset_store import CommitCallback, Offsets, OffsetStore, maybe_convert_offset_commit_error
from .offsets_topic import OFFSETS_TOPIC
from .state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE

log = logging.getLogger(__name__)

# (transactional id, producer id, producer epoch, topic-partition) -> (the verification's error,
# the guard the transactional append must carry)
TxnVerifier = Callable[[str, int, int, TopicPartition], Awaitable[tuple[ErrorCode, object]]]


class OffsetMetadataManager:
    def __init__(self, groups: GroupMetadataManager, store: OffsetStore, heartbeats: Heartbeats) -> None:
        self.groups = groups
        self.store = store
        self.heartbeats = heartbeats
        # KIP-890 part 1: checks that a transactional commit's partition is in its transaction
        # (broker.py sets it; None: no check)
        self.txn_verifier: TxnVerifier | None = None

    # -- OffsetCommit ----------------------------------------------------------------------
    def handle_commit_offsets(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Offsets,
        callback: CommitCallback,
        *,
        api_version: int = 8,
    ) -> None:
        error = self.groups.validate_group_status(group_id, ApiKey.OFFSET_COMMIT)
        if error is not None:
            callback({tp: error for tp in offsets})
            return
        group = self.groups.get_group(group_id)
        if group is None:
            if generation_id >= 0:  # a member of a group this coordinator does not know
                unknown = ErrorCode.GROUP_ID_NOT_FOUND if api_version >= 9 else ErrorCode.ILLEGAL_GENERATION
                callback({tp: unknown for tp in offsets})
                return
            log.info("Creating simple consumer group %s via manual offset commit.", group_id)
            group = self.groups.get_or_create_group(group_id)
        if group.consumer is not None:
            from .consumer.offsets import validate_consumer_offset_commit  # loaded with consumer groups

            error = validate_consumer_offset_commit(
                group.consumer, member_id, generation_id, is_transactional=False, api_version=api_version
            )
        else:
            error = _validate_offset_commit(group, generation_id, member_id, group_instance_id)
        if error is not None:
            callback({tp: error for tp in offsets})
        elif group.is_(EMPTY):
            self.store.store_offsets(group, offsets, callback)
        elif group.state in (STABLE, PREPARING_REBALANCE):
            # the previous generation may still commit while the group prepares to rebalance
            self.heartbeats.complete_and_schedule_next_heartbeat(group, group.get(member_id))
            self.store.store_offsets(group, offsets, callback)
        elif group.is_(COMPLETING_REBALANCE):
            callback({tp: ErrorCode.REBALANCE_IN_PROGRESS for tp in offsets})

    # -- TxnOffsetCommit -------------------------------------------------------------------
    async def txn_commit_offsets(
        self,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Offsets,
    ) -> dict[TopicPartition, ErrorCode]:
        error = self.groups.validate_group_status(group_id, ApiKey.TXN_OFFSET_COMMIT)
        if error is not None:
            return {tp: error for tp in offsets}
        group = self.groups.get_or_create_group(group_id)
        guard: object = None
        if self.txn_verifier is not None:
            partition = (OFFSETS_TOPIC, self.groups.partition_for(group_id))
            error, guard = await self.txn_verifier(transactional_id, producer_id, producer_epoch, partition)
            if error != ErrorCode.NONE:
                final = maybe_convert_offset_commit_error(error)
                return {tp: final for tp in offsets}
        reply: Reply[dict[TopicPartition, ErrorCode]] = Reply()
        producer = TxnProducer(producer_id, producer_epoch, guard)
        self.handle_txn_commit_offsets(group, producer, member_id, group_instance_id, generation_id, offsets, reply.set)
        return await reply.wait()

    def handle_txn_commit_offsets(
        self,
        group: GroupMetadata,
        producer: TxnProducer,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: Offsets,
        callback: CommitCallback,
    ) -> None:
        """Kafka's doTxnCommitOffsets: check the committer, then write the pending offsets."""
        if group.consumer is not None:
            from .consumer.offsets import validate_consumer_offset_commit  # loaded with consumer groups

            error = validate_consumer_offset_commit(group.consumer, member_id, generation_id, is_transactional=True)
        else:
            error = _validate_offset_commit(group, generation_id, member_id, group_instance_id, is_transactional=True)
        if error is not None:
            callback({tp: error for tp in offsets})
            return
        self.store.store_offsets(group, offsets, callback, producer)

    # -- OffsetFetch -----------------------------------------------------------------------
    def handle_fetch_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool = False
    ) -> tuple[ErrorCode, dict[TopicPartition, FetchedOffset]]:
        """Committed offsets whatever the group's state (a group may use Kafka only to store
        offsets); all of the group's offsets when `partitions` is None."""
        error = self.groups.validate_group_status(group_id, ApiKey.OFFSET_FETCH)
        if error is not None:
            return error, {}
        return ErrorCode.NONE, self.get_offsets(group_id, partitions, require_stable)

    def get_offsets(
        self, group_id: str, partitions: list[TopicPartition] | None, require_stable: bool = False
    ) -> dict[TopicPartition, FetchedOffset]:
        group = self.groups.get_group(group_id)
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

    # -- OffsetDelete ----------------------------------------------------------------------
    def handle_delete_offsets(
        self, group_id: str, partitions: list[TopicPartition]
    ) -> tuple[ErrorCode, dict[TopicPartition, ErrorCode]]:
        """(group error, per-partition errors); the partition errors are empty on a group
        error. Offsets of topics a consumer group's members subscribe to stay."""
        error = self.groups.validate_group_status(group_id, ApiKey.OFFSET_DELETE)
        if error is not None:
            return error, {}
        group = self.groups.get_group(group_id)
        if group is None or group.is_(DEAD):
            return self.groups.missing_group_error(group_id), {}
        results: dict[TopicPartition, ErrorCode]
        if group.is_(EMPTY) and not group.is_active_consumer_group:
            deletable, results = list(partitions), {}
        elif group.is_consumer_group:
            deletable = [tp for tp in partitions if not group.is_subscribed_to_topic(tp[0])]
            results = {
                tp: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC for tp in partitions if group.is_subscribed_to_topic(tp[0])
            }
        else:
            return ErrorCode.NON_EMPTY_GROUP, {}
        if deletable:
            removed = self.store.cleanup_group_metadata([group], lambda g: g.offsets.remove(deletable))
            results.update({tp: ErrorCode.NONE for tp in deletable})
            log.info("Deleted offsets of group %s for %s; %d offsets removed", group_id, deletable, removed)
        return ErrorCode.NONE, results


def _validate_offset_commit(
    group: GroupMetadata,
    generation_id: int,
    member_id: str,
    group_instance_id: str | None,
    is_transactional: bool = False,
) -> ErrorCode | None:
    """Kafka's validateOffsetCommit: who may commit to `group` (a transactional commit
    before TxnOffsetCommit v3 names no member and generation, and is accepted whatever
    the group's state)."""
    if group.is_(DEAD):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    if generation_id < 0 and group.is_(EMPTY):
        return None  # the admin client, or a consumer without group management
    if generation_id >= 0 or member_id != UNKNOWN_MEMBER_ID or group_instance_id is not None:
        error = group.validate_current_member(member_id, group_instance_id)
        if error is not None:
            return error
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        return None
    if not is_transactional and not group.is_(EMPTY):
        return ErrorCode.UNKNOWN_MEMBER_ID  # only members commit to a non-empty group
    return None
