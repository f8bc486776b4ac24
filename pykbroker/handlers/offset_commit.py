"""OffsetCommit (key 8), versions 0-9.

Commits offsets of a group to `__consumer_offsets` (acks=all); see `coordinator/group/offsets.py`
for who may commit when.

- Partitions of unknown topics or beyond a topic's partitions: UNKNOWN_TOPIC_OR_PARTITION.
- v0 has no generation or member id: it commits as a simple consumer (generation -1).
- v1 may carry a commit timestamp per partition (-1: now).
- v2-v4 may carry a retention time (-1: the broker's `offsets.retention.minutes`); an explicit
  one gives the offsets an expire timestamp of now + retention.
- v6+: the committed leader epoch. v7+: static membership (group_instance_id).
- Metadata longer than `offset.metadata.max.bytes`: OFFSET_METADATA_TOO_LARGE.
"""

from typing import Any

from ..common.time import now_ms
from ..coordinator.group.formats import OffsetAndMetadata
from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .auth import GROUP, READ, TOPIC, authorize, filter_authorized
from .context import RequestContext

API_KEY = ApiKey.OFFSET_COMMIT
MIN_VERSION = 0
MAX_VERSION = 9

Response = messages.response(API_KEY).cls


async def handle(request, ctx: RequestContext):
    version = ctx.api_version
    if not authorize(ctx, READ, GROUP, request.group_id):
        every = {
            (t.name, p.partition_index): ErrorCode.GROUP_AUTHORIZATION_FAILED
            for t in request.topics
            for p in t.partitions
        }
        return _response(request, every)
    errors, offsets = _split_known_partitions(request, ctx, now_ms())
    if offsets:
        errors.update(
            await ctx.services.group_coordinator.commit_offsets(
                request.group_id,
                request.member_id if version >= 1 else "",
                request.group_instance_id if version >= 7 else None,
                request.generation_id_or_member_epoch if version >= 1 else -1,
                offsets,
            )
        )
    return _response(request, errors)


def _split_known_partitions(request, ctx: RequestContext, now: int):
    """({tp: error} for unknown partitions, {tp: offset to commit} for the others)."""
    version = ctx.api_version
    retention = request.retention_time_ms if 2 <= version <= 4 else -1
    expire_timestamp = None if retention == -1 else now + retention
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
            commit_timestamp = p.commit_timestamp if version == 1 else -1
            offsets[tp] = OffsetAndMetadata(
                offset=p.committed_offset,
                leader_epoch=p.committed_leader_epoch if version >= 6 else -1,
                metadata="" if p.committed_metadata is None else p.committed_metadata,
                commit_timestamp=now if commit_timestamp == -1 else commit_timestamp,
                expire_timestamp=expire_timestamp,
            )
    return errors, offsets


def _response(request, errors: dict):
    topics: dict[str, Any] = {}  # generated response topics
    for topic in request.topics:
        entry = topics.setdefault(topic.name, Response.OffsetCommitResponseTopic(name=topic.name, partitions=[]))
        for p in topic.partitions:
            entry.partitions.append(
                Response.OffsetCommitResponsePartition(
                    partition_index=p.partition_index, error_code=errors[(topic.name, p.partition_index)]
                )
            )
    return Response(topics=list(topics.values()))
