"""TxnOffsetCommit (key 28), versions 0-4.

Commits a group's offsets as part of a producer's transaction (`sendOffsetsToTransaction`): the
offsets are written to `__consumer_offsets` at once, but become the group's committed offsets
only when the transaction commits (and are dropped if it aborts); meanwhile OffsetFetch with
`require_stable` answers UNSTABLE_OFFSET_COMMIT for them. See
`coordinator/group/txn_offsets.py` for the checks.

- Partitions of unknown topics or beyond a topic's partitions: UNKNOWN_TOPIC_OR_PARTITION (the
  others are still committed).
- v2+: the committed leader epoch. v3+ (KIP-447): the consumer's generation id, member id and
  group instance id, checked as an OffsetCommit's (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  FENCED_INSTANCE_ID); before v3 the commit names no member and is accepted in any group state.
- Metadata longer than `offset.metadata.max.bytes`: OFFSET_METADATA_TOO_LARGE; a batch too large
  for the log: INVALID_COMMIT_OFFSET_SIZE.
- v0-v3: a group partition that is not part of the transaction (no AddOffsetsToTxn first) is
  INVALID_TXN_STATE; v4 clients know TRANSACTION_ABORTABLE (Kafka's KIP-890 error handling).
- v0-v1: COORDINATOR_LOAD_IN_PROGRESS is answered as COORDINATOR_NOT_AVAILABLE, as Kafka does for
  the clients before 2.0 that did not retry the former (KAFKA-7296).
"""

from ..common.time import now_ms
from ..common.topic_partition import TopicPartition
from ..coordinator.group.formats import OffsetAndMetadata
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.offset_requests import refuse_all, response_topics, split_known_partitions

API_KEY = ApiKey.TXN_OFFSET_COMMIT
MIN_VERSION = 0
MAX_VERSION = 4

WRITE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")
READ_GROUP = check(API_KEY, "group")
READ_TOPIC = check(API_KEY, "topic")


async def handle(request: TxnOffsetCommitRequest, ctx: RequestContext) -> TxnOffsetCommitResponse:
    version = ctx.api_version
    denied = _authorization_error(request, ctx)
    if denied is not None:
        errors, known = refuse_all(request.topics, denied)
    else:
        errors, known = split_known_partitions(request.topics, ctx, READ_TOPIC)
    offsets = _offsets(known, version, now_ms())
    if offsets:
        errors.update(
            await ctx.services.group_coordinator.txn_commit_offsets(
                request.transactional_id,
                request.group_id,
                request.producer_id,
                request.producer_epoch,
                request.member_id if version >= 3 else "",
                request.group_instance_id if version >= 3 else None,
                request.generation_id if version >= 3 else -1,
                offsets,
            )
        )
    if version < 4:
        errors = {tp: _known_before_v4(error) for tp, error in errors.items()}
    if version < 2:
        errors = {tp: _known_before_v2(error) for tp, error in errors.items()}
    return TxnOffsetCommitResponse(
        topics=response_topics(
            request.topics,
            errors,
            TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic,
            TxnOffsetCommitResponse.TxnOffsetCommitResponsePartition,
        )
    )


def _authorization_error(request: TxnOffsetCommitRequest, ctx: RequestContext) -> ErrorCode | None:
    """Kafka: WRITE on the transactional id, then READ on the group."""
    if not WRITE_TRANSACTIONAL_ID.allows(ctx, request.transactional_id):
        return WRITE_TRANSACTIONAL_ID.denied
    if not READ_GROUP.allows(ctx, request.group_id):
        return READ_GROUP.denied
    return None


def _offsets(
    known: list[tuple[TopicPartition, TxnOffsetCommitRequest.TxnOffsetCommitRequestPartition]], version: int, now: int
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The offsets to commit of the known requested partitions."""
    return {
        tp: OffsetAndMetadata(
            offset=p.committed_offset,
            leader_epoch=p.committed_leader_epoch if version >= 2 else -1,
            metadata="" if p.committed_metadata is None else p.committed_metadata,
            commit_timestamp=now,
        )
        for tp, p in known
    }


def _known_before_v4(error: ErrorCode) -> ErrorCode:
    return ErrorCode.INVALID_TXN_STATE if error == ErrorCode.TRANSACTION_ABORTABLE else error


def _known_before_v2(error: ErrorCode) -> ErrorCode:
    return ErrorCode.COORDINATOR_NOT_AVAILABLE if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else error
