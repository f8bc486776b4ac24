"""OffsetFetch (key 9), versions 0-9.

Committed offsets of a group (v8+: of several groups), whatever the group's state; -1 with empty
metadata and no error for partitions without a committed offset.

- v2+: a null topic list asks for every offset the group has; a group-level error is the
  response's error code. Before v2 a group error is given on each requested partition.
- v5+: the committed leader epoch. v7+: `require_stable`: UNSTABLE_OFFSET_COMMIT for a
  partition whose commit is still being written, or whose transactional commit (TxnOffsetCommit)
  waits for its transaction to end (KIP-447).
- v9: a consumer group (KIP-848) member names itself and its epoch: UNKNOWN_MEMBER_ID or
  STALE_MEMBER_EPOCH when they are not current (epoch -1: not a member, not checked).

Authorization as Kafka: DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED as a group error),
DESCRIBE on each topic (TOPIC_AUTHORIZATION_FAILED on its requested partitions; left out of an
all-offsets answer).
"""

from collections.abc import Callable
from typing import TypeVar

from ..common.topic_partition import TopicPartition
from ..coordinator.group.model import FetchedOffset
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import OffsetFetchRequest, OffsetFetchResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import GroupService

API_KEY = ApiKey.OFFSET_FETCH
MIN_VERSION = 0
MAX_VERSION = 9

DESCRIBE_GROUP = check(API_KEY, "group")
DESCRIBE_TOPIC = check(API_KEY, "topic")
INVALID_OFFSET = -1


Topic = TypeVar("Topic", OffsetFetchResponse.OffsetFetchResponseTopic, OffsetFetchResponse.OffsetFetchResponseTopics)
Partition = TypeVar(
    "Partition", OffsetFetchResponse.OffsetFetchResponsePartition, OffsetFetchResponse.OffsetFetchResponsePartitions
)
Fetched = dict[TopicPartition, FetchedOffset]
# The requested topics: before v8 in the request itself, from v8 per group
RequestedTopics = list[OffsetFetchRequest.OffsetFetchRequestTopic] | list[OffsetFetchRequest.OffsetFetchRequestTopics]


async def handle(request: OffsetFetchRequest, ctx: RequestContext) -> OffsetFetchResponse:
    coordinator = ctx.services.group_coordinator
    version = ctx.api_version
    require_stable = version >= 7 and request.require_stable
    if version >= 8:
        return OffsetFetchResponse(
            groups=[
                _group_response(ctx, coordinator, g.group_id, g.topics, require_stable, _member(g, version))
                for g in request.groups
            ]
        )
    topics = request.topics if version >= 2 else (request.topics or [])
    error, fetched = _fetch(ctx, coordinator, request.group_id, topics, require_stable)
    if error != ErrorCode.NONE:
        if version < 2:
            return OffsetFetchResponse(
                topics=_topics(
                    _v0_topic, OffsetFetchResponse.OffsetFetchResponsePartition, _requested(topics) or [], {}, error
                )
            )
        return OffsetFetchResponse(error_code=error, topics=[])
    return OffsetFetchResponse(
        error_code=ErrorCode.NONE,
        topics=_topics(_v0_topic, OffsetFetchResponse.OffsetFetchResponsePartition, list(fetched), fetched),
    )


def _group_response(
    ctx: RequestContext,
    coordinator: GroupService,
    group_id: str,
    topics: list[OffsetFetchRequest.OffsetFetchRequestTopics] | None,
    require_stable: bool,
    member: tuple[str | None, int],
) -> OffsetFetchResponse.OffsetFetchResponseGroup:
    error, fetched = _fetch(ctx, coordinator, group_id, topics, require_stable, member)
    return OffsetFetchResponse.OffsetFetchResponseGroup(
        group_id=group_id,
        error_code=error,
        topics=[]
        if error != ErrorCode.NONE
        else _topics(_v8_topic, OffsetFetchResponse.OffsetFetchResponsePartitions, list(fetched), fetched),
    )


def _member(group: OffsetFetchRequest.OffsetFetchRequestGroup, version: int) -> tuple[str | None, int]:
    """v9: the consumer group member asking, and its epoch (-1: not a member)."""
    return (group.member_id, group.member_epoch) if version >= 9 else (None, -1)


def _requested(topics: RequestedTopics | None) -> list[TopicPartition] | None:
    if topics is None:
        return None
    return [(t.name, index) for t in topics for index in t.partition_indexes]


def _fetch(
    ctx: RequestContext,
    coordinator: GroupService,
    group_id: str,
    topics: RequestedTopics | None,
    require_stable: bool,
    member: tuple[str | None, int] = (None, -1),
) -> tuple[ErrorCode, Fetched]:
    if not DESCRIBE_GROUP.allows(ctx, group_id):
        return DESCRIBE_GROUP.denied, {}
    member_error = coordinator.validate_offset_fetch(group_id, *member)
    if member_error is not None:
        return member_error, {}
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


def _v0_topic(
    name: str, partitions: list[OffsetFetchResponse.OffsetFetchResponsePartition]
) -> OffsetFetchResponse.OffsetFetchResponseTopic:
    return OffsetFetchResponse.OffsetFetchResponseTopic(name=name, partitions=partitions)


def _v8_topic(
    name: str, partitions: list[OffsetFetchResponse.OffsetFetchResponsePartitions]
) -> OffsetFetchResponse.OffsetFetchResponseTopics:
    return OffsetFetchResponse.OffsetFetchResponseTopics(name=name, partitions=partitions)


def _topics(
    make_topic: Callable[[str, list[Partition]], Topic],
    partition_cls: Callable[..., Partition],
    partitions: list[TopicPartition],
    fetched: Fetched,
    group_error: ErrorCode | None = None,
) -> list[Topic]:
    """Response topics for `partitions` in order, each topic once; with `group_error`, every
    partition carries that error and no offset."""
    topics: dict[str, list[Partition]] = {}
    for topic, index in partitions:
        entry = topics.setdefault(topic, [])
        if group_error is not None:
            entry.append(
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
        entry.append(
            partition_cls(
                partition_index=index,
                committed_offset=offset.offset,
                committed_leader_epoch=offset.leader_epoch,
                metadata=offset.metadata,
                error_code=offset.error,
            )
        )
    return [make_topic(name, partitions) for name, partitions in topics.items()]
