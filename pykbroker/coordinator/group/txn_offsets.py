"""Transactional offset commits (TxnOffsetCommit) and the end of their transactions, as Kafka's
classic GroupCoordinator and GroupMetadataManager do them.

    errors = await coordinator.txn_commit_offsets(transactional_id, group_id, producer_id,
                                                  producer_epoch, member_id, group_instance_id,
                                                  generation_id, offsets)
    coordinator.complete_transaction(offsets_partition, producer_id, committed, marker_offset)

A transactional commit first passes the checks of every group request (INVALID_GROUP_ID for an
empty group id, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR); an
unknown group is created Empty. With a verifier (KIP-890 part 1, `transaction.partition.
verification.enable`), the group's `__consumer_offsets` partition must be part of the producer's
ongoing transaction; a failed verification answers its error (NETWORK_EXCEPTION becomes
COORDINATOR_LOAD_IN_PROGRESS) for every partition. Then the committer is checked as Kafka's
validateOffsetCommit does for transactional commits (KIP-447): a Dead group answers
COORDINATOR_NOT_AVAILABLE; a commit naming a generation, a member id or a group instance id
(TxnOffsetCommit v3+) must come from a current member (UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID) of
the current generation (ILLEGAL_GENERATION); one naming none of them (v0-v2) is accepted whatever
the group's state. The offsets are written to `__consumer_offsets` as a transactional batch of the
producer and stay pending (`offset_cache.py`) until the transaction's marker reaches that
partition: `complete_transaction` (called on the event loop once the marker is written) makes
them the group's committed offsets on COMMIT and drops them on ABORT, for the groups of that
partition only.

This mixin expects `manager`, `validate_group_status` and `txn_verifier` of the coordinator, and
the `Offsets` mixin.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ...common.topic_partition import TopicPartition
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from .formats import OffsetAndMetadata
from .group import GroupMetadata
from .log_io import TxnProducer
from .manager import GroupManager, maybe_convert_offset_commit_error
from .offsets import CommitCallback
from .offsets_topic import OFFSETS_TOPIC
from .runtime import Reply
from .state import EMPTY

log = logging.getLogger(__name__)

# (transactional id, producer id, producer epoch, topic-partition) -> (the verification's error,
# the guard the transactional append must carry)
TxnVerifier = Callable[[str, int, int, TopicPartition], Awaitable[tuple[ErrorCode, object]]]


class TxnOffsets:
    # What this mixin uses of the coordinator and the other mixins, declared for the type
    # checker only (GroupCoordinator sets the attributes; the methods are defined elsewhere)
    manager: GroupManager
    txn_verifier: TxnVerifier | None

    if TYPE_CHECKING:

        def validate_group_status(self, group_id: str | None, api: int) -> ErrorCode | None: ...
        def _validate_offset_commit(
            self,
            group: GroupMetadata,
            generation_id: int,
            member_id: str,
            group_instance_id: str | None,
            is_transactional: bool = False,
        ) -> ErrorCode | None: ...

    async def txn_commit_offsets(
        self,
        transactional_id: str,
        group_id: str,
        producer_id: int,
        producer_epoch: int,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
    ) -> dict[TopicPartition, ErrorCode]:
        error = self.validate_group_status(group_id, ApiKey.TXN_OFFSET_COMMIT)
        if error is not None:
            return {tp: error for tp in offsets}
        group = self.manager.get_group(group_id)
        if group is None:
            group = self.manager.add_group(GroupMetadata(group_id, EMPTY, self.manager.runtime.now_ms))
        guard: object = None
        if self.txn_verifier is not None:
            partition = (OFFSETS_TOPIC, self.manager.partition_for(group_id))
            error, guard = await self.txn_verifier(transactional_id, producer_id, producer_epoch, partition)
            if error != ErrorCode.NONE:
                final = maybe_convert_offset_commit_error(error)
                return {tp: final for tp in offsets}
        reply = Reply()
        self.handle_txn_commit_offsets(
            group,
            TxnProducer(producer_id, producer_epoch, guard),
            member_id,
            group_instance_id,
            generation_id,
            offsets,
            reply.set,
        )
        return await reply.wait()

    def handle_txn_commit_offsets(
        self,
        group: GroupMetadata,
        producer: TxnProducer,
        member_id: str,
        group_instance_id: str | None,
        generation_id: int,
        offsets: dict[TopicPartition, OffsetAndMetadata],
        callback: CommitCallback,
    ) -> None:
        """Kafka's doTxnCommitOffsets: check the committer, then write the pending offsets."""
        error = self._validate_offset_commit(group, generation_id, member_id, group_instance_id, is_transactional=True)
        if error is not None:
            callback({tp: error for tp in offsets})
            return
        self.manager.store_offsets(group, offsets, callback, producer)

    def complete_transaction(
        self, offsets_partition: int, producer_id: int, committed: bool, marker_offset: int
    ) -> None:
        """The COMMIT (`committed`) or ABORT marker of `producer_id` was written at
        `marker_offset` of `__consumer_offsets` partition `offsets_partition`."""
        log.debug(
            "Transaction of producer %d %s in %s-%d at offset %d",
            producer_id,
            "committed" if committed else "aborted",
            OFFSETS_TOPIC,
            offsets_partition,
            marker_offset,
        )
        if self.manager.defer_txn_completion(offsets_partition, producer_id, committed, marker_offset):
            return
        self.manager.handle_txn_completion(producer_id, {offsets_partition}, committed)
