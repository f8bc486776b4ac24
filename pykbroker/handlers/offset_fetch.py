"""OffsetFetch (key 9), versions 0-9.

Committed offsets of a group (v8+: of several groups), whatever the group's state; -1 with empty
metadata and no error for partitions without a committed offset.

- v2+: a null topic list asks for every offset the group has; a group-level error is the
  response's error code. Before v2 a group error is given on each requested partition.
- v5+: the committed leader epoch. v7+: `require_stable`: UNSTABLE_OFFSET_COMMIT for a
  partition whose commit is still being written, or whose transactional commit (TxnOffsetCommit)
  waits for its transaction to end (KIP-447).
- v9's member id and epoch belong to the consumer group protocol and are not checked.

Authorization as Kafka: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED as a group error),
DESCRIBE on each topic (TOPIC_AUTHORIZATION_FAILED on its requested partitions; left out of an
all-offsets answer).
"""

from typing import Any

from ..coordinator.group.manager import FetchedOffset
from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .support.authorization import check
from .support.context import RequestContext
from .support.services import GroupService

API_KEY = ApiKey.OFFSET_FETCH
MIN_VERSION = 0
MAX_VERSION = 9

Response = messages.response(API_KEY).cls
DESCRIBE_GROUP = check(API_KEY, "group")
DESCRIBE_TOPIC = check(API_KEY, "topic")
INVALID_OFFSET = -1


async def handle(request, ctx: RequestContext):
    coordinator = ctx.services.group_coordinator
    version = ctx.api_version
    require_stable = version >= 7 and request.require_stable
    if version >= 8:
        return Response(
            groups=[_group_response(ctx, coordinator, g.group_id, g.topics, require_stable) for g in request.groups]
        )
    topics = request.topics if version >= 2 else (request.topics or [])
    error, fetched = _fetch(ctx, coordinator, request.group_id, topics, require_stable)
    if error != ErrorCode.NONE:
        if version < 2:
            return Response(
                topics=_topics(
                    Response.OffsetFetchResponseTopic,
                    Response.OffsetFetchResponsePartition,
                    _requested(topics),
                    {},
                    error,
                )
            )
        return Response(error_code=error, topics=[])
    return Response(
        error_code=ErrorCode.NONE,
        topics=_topics(
            Response.OffsetFetchResponseTopic, Response.OffsetFetchResponsePartition, list(fetched), fetched
        ),
    )


def _group_response(ctx: RequestContext, coordinator: GroupService, group_id: str, topics, require_stable: bool):
    error, fetched = _fetch(ctx, coordinator, group_id, topics, require_stable)
    return Response.OffsetFetchResponseGroup(
        group_id=group_id,
        error_code=error,
        topics=[]
        if error != ErrorCode.NONE
        else _topics(
            Response.OffsetFetchResponseTopics, Response.OffsetFetchResponsePartitions, list(fetched), fetched
        ),
    )


def _requested(topics) -> list[tuple[str, int]] | None:
    if topics is None:
        return None
    return [(t.name, index) for t in topics for index in t.partition_indexes]


def _fetch(ctx: RequestContext, coordinator: GroupService, group_id: str, topics, require_stable: bool):
    if not DESCRIBE_GROUP.allows(ctx, group_id):
        return DESCRIBE_GROUP.denied, {}
    requested = _requested(topics)
    if requested is None:
        error, fetched = coordinator.handle_fetch_offsets(group_id, None, require_stable)
        describable = {t for t, _ in fetched if DESCRIBE_TOPIC.allows(ctx, t, log_if_denied=False)}
        return error, {tp: offset for tp, offset in sorted(fetched.items()) if tp[0] in describable}
    describable = DESCRIBE_TOPIC.allowed(ctx, (t for t, _ in requested))
    error, fetched = coordinator.handle_fetch_offsets(
        group_id, [tp for tp in requested if tp[0] in describable], require_stable
    )
    for tp in requested:
        if tp[0] not in describable:
            fetched[tp] = FetchedOffset(error=DESCRIBE_TOPIC.denied)
    return error, fetched


def _topics(topic_cls, partition_cls, partitions, fetched: dict, group_error=None) -> list:
    """Response topics for `partitions` in order, each topic once; with `group_error`, every
    partition carries that error and no offset."""
    topics: dict[str, Any] = {}  # generated response topics
    for topic, index in partitions:
        entry = topics.setdefault(topic, topic_cls(name=topic, partitions=[]))
        if group_error is not None:
            entry.partitions.append(
                partition_cls(
                    partition_index=index,
                    committed_offset=INVALID_OFFSET,
                    committed_leader_epoch=-1,
                    metadata="",
                    error_code=group_error,
                )
            )
            continue
        offset = fetched[(topic, index)]
        entry.partitions.append(
            partition_cls(
                partition_index=index,
                committed_offset=offset.offset,
                committed_leader_epoch=offset.leader_epoch,
                metadata=offset.metadata,
                error_code=offset.error,
            )
        )
    return list(topics.values())
