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
- v0-v1: COORDINATOR_LOAD_IN_PROGRESS is answered as COORDINATOR_NOT_AVAILABLE, as Kafka does for
  the clients before 2.0 that did not retry the former (KAFKA-7296).
"""

from typing import Any

from ..common.time import now_ms
from ..coordinator.group.formats import OffsetAndMetadata
from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .auth import GROUP, READ, TOPIC, TRANSACTIONAL_ID, WRITE, authorize, filter_authorized
from .context import RequestContext

API_KEY = ApiKey.TXN_OFFSET_COMMIT
MIN_VERSION = 0
MAX_VERSION = 4

Response = messages.response(API_KEY).cls


async def handle(request, ctx: RequestContext):
    version = ctx.api_version
    denied = _authorization_error(request, ctx)
    if denied is not None:
        return _response(request, {(t.name, p.partition_index): denied for t in request.topics for p in t.partitions})
    errors, offsets = _split_known_partitions(request, ctx, now_ms())
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
    if version < 2:
        errors = {tp: _known_before_v2(error) for tp, error in errors.items()}
    return _response(request, errors)


def _authorization_error(request, ctx: RequestContext) -> ErrorCode | None:
    if not authorize(ctx, WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not authorize(ctx, READ, GROUP, request.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return None


def _split_known_partitions(request, ctx: RequestContext, now: int):
    """({tp: error} for unreadable or unknown partitions, {tp: offset to commit} for the others)."""
    version = ctx.api_version
    errors, offsets = {}, {}
    readable = filter_authorized(ctx, READ, TOPIC, (t.name for t in request.topics))
    for topic in request.topics:
        info = ctx.services.metadata.topic(topic.name)
        for p in topic.partitions:
            tp = (topic.name, p.partition_index)
            if topic.name not in readable:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
                continue
            if info is None or p.partition_index not in info.partitions:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                continue
            offsets[tp] = OffsetAndMetadata(
                offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch if version >= 2 else -1,
                metadata="" if p.committed_metadata is None else p.committed_metadata,
                commit_timestamp=now,
            )
    return errors, offsets


def _known_before_v2(error: ErrorCode) -> ErrorCode:
    return ErrorCode.COORDINATOR_NOT_AVAILABLE if error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else error


def _response(request, errors: dict):
    topics: dict[str, Any] = {}  # generated response topics
    for topic in request.topics:
        entry = topics.setdefault(topic.name, Response.TxnOffsetCommitResponseTopic(name=topic.name, partitions=[]))
        for p in topic.partitions:
            entry.partitions.append(
                Response.TxnOffsetCommitResponsePartition(
                    partition_index=p.partition_index, error_code=errors[(topic.name, p.partition_index)]
                )
            )
    return Response(topics=list(topics.values()))
