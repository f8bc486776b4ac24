"""OffsetDelete (key 47), version 0.

Deletes committed offsets of a group: any of an Empty group's; of a consumer group with members
only those of topics no member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC for the others); a
non-consumer group with members gets NON_EMPTY_GROUP. Unknown topics or partitions:
UNKNOWN_TOPIC_OR_PARTITION. A group error (e.g. GROUP_ID_NOT_FOUND) is answered alone, without
partitions.
"""

from typing import Any

from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .auth import DELETE, GROUP, READ, TOPIC, authorize, filter_authorized
from .context import RequestContext

API_KEY = ApiKey.OFFSET_DELETE
MIN_VERSION = 0
MAX_VERSION = 0

Response = messages.response(API_KEY).cls


async def handle(request, ctx: RequestContext):
    if not authorize(ctx, DELETE, GROUP, request.group_id):
        return Response(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, topics=[])
    errors, known = {}, []
    readable = filter_authorized(ctx, READ, TOPIC, (t.name for t in request.topics))
    for topic in request.topics:
        info = ctx.services.metadata.topic(topic.name)
        for p in topic.partitions:
            tp = (topic.name, p.partition_index)
            if topic.name not in readable:
                errors[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif info is None or p.partition_index not in info.partitions:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                known.append(tp)
    group_error, results = ctx.services.group_coordinator.handle_delete_offsets(request.group_id, known)
    if group_error != ErrorCode.NONE:
        return Response(error_code=group_error, topics=[])
    errors.update(results)
    topics: dict[str, Any] = {}  # generated response topics
    for topic in request.topics:
        entry = topics.setdefault(topic.name, Response.OffsetDeleteResponseTopic(name=topic.name, partitions=[]))
        for p in topic.partitions:
            entry.partitions.append(
                Response.OffsetDeleteResponsePartition(
                    partition_index=p.partition_index, error_code=errors[(topic.name, p.partition_index)]
                )
            )
    return Response(error_code=ErrorCode.NONE, topics=list(topics.values()))
