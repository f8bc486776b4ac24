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

from ..common.time import now_ms
from ..common.topic_partition import TopicPartition
from ..coordinator.group.formats import OffsetAndMetadata
from ..protocol.api_keys import ApiKey
from ..protocol.message_types import OffsetCommitRequest, OffsetCommitResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.offset_requests import refuse_all, response_topics, split_known_partitions

API_KEY = ApiKey.OFFSET_COMMIT
MIN_VERSION = 0
MAX_VERSION = 9

READ_GROUP = check(API_KEY, "group")
READ_TOPIC = check(API_KEY, "topic")


async def handle(request: OffsetCommitRequest, ctx: RequestContext) -> OffsetCommitResponse:
    version = ctx.api_version
    if not READ_GROUP.allows(ctx, request.group_id):
        errors, known = refuse_all(request.topics, READ_GROUP.denied)
    else:
        errors, known = split_known_partitions(request.topics, ctx, READ_TOPIC)
    offsets = _offsets(request, known, version, now_ms())
    if offsets:
        errors.update(
            await ctx.services.group_coordinator.commit_offsets(
                request.group_id,
                request.member_id if version >= 1 else "",
                request.group_instance_id if version >= 7 else None,
                request.generation_id_or_member_epoch if version >= 1 else -1,
                offsets,
                api_version=version,
            )
        )
    return OffsetCommitResponse(
        topics=response_topics(
            request.topics,
            errors,
            OffsetCommitResponse.OffsetCommitResponseTopic,
            OffsetCommitResponse.OffsetCommitResponsePartition,
        )
    )


def _offsets(
    request: OffsetCommitRequest,
    known: list[tuple[TopicPartition, OffsetCommitRequest.OffsetCommitRequestPartition]],
    version: int,
    now: int,
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The offsets to commit of the known requested partitions."""
    retention = request.retention_time_ms if 2 <= version <= 4 else -1
    expire_timestamp = None if retention == -1 else now + retention
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for tp, p in known:
        commit_timestamp = p.commit_timestamp if version == 1 else -1
        offsets[tp] = OffsetAndMetadata(
            offset=p.committed_offset,
            leader_epoch=p.committed_leader_epoch if version >= 6 else -1,
            metadata="" if p.committed_metadata is None else p.committed_metadata,
            commit_timestamp=now if commit_timestamp == -1 else commit_timestamp,
            expire_timestamp=expire_timestamp,
        )
    return offsets
