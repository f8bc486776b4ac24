"""OffsetDelete (key 47), version 0.

Deletes committed offsets of a group: any of an Empty group's; of a consumer group with members
only those of topics no member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC for the others); a
non-consumer group with members gets NON_EMPTY_GROUP. Unknown topics or partitions:
UNKNOWN_TOPIC_OR_PARTITION. A group error (e.g. GROUP_ID_NOT_FOUND) is answered alone, without
partitions.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import OffsetDeleteRequest, OffsetDeleteResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.offset_requests import response_topics, split_known_partitions

API_KEY = ApiKey.OFFSET_DELETE
MIN_VERSION = 0
MAX_VERSION = 0

DELETE_GROUP = check(API_KEY, "group")
READ_TOPIC = check(API_KEY, "topic")


async def handle(request: OffsetDeleteRequest, ctx: RequestContext) -> OffsetDeleteResponse:
    if not DELETE_GROUP.allows(ctx, request.group_id):
        return OffsetDeleteResponse(error_code=DELETE_GROUP.denied, topics=[])
    errors, known = split_known_partitions(request.topics, ctx, READ_TOPIC)
    group_error, results = ctx.services.group_coordinator.handle_delete_offsets(
        request.group_id, [tp for tp, _ in known]
    )
    if group_error != ErrorCode.NONE:
        return OffsetDeleteResponse(error_code=group_error, topics=[])
    errors.update(results)
    topics = response_topics(
        request.topics,
        errors,
        OffsetDeleteResponse.OffsetDeleteResponseTopic,
        OffsetDeleteResponse.OffsetDeleteResponsePartition,
    )
    return OffsetDeleteResponse(error_code=ErrorCode.NONE, topics=topics)
