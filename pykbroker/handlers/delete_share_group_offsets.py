"""DeleteShareGroupOffsets (key 92), version 0 (Kafka 4.1).

Deletes the share state of topics of an empty share group through the share persister (the topic
is no longer initialized in the group). NON_EMPTY_GROUP while the group has members;
GROUP_ID_NOT_FOUND for a group of another type or an unknown group; a topic unknown or without
share state in the group: UNKNOWN_TOPIC_OR_PARTITION for that topic. DELETE on the group
(GROUP_AUTHORIZATION_FAILED for the whole request), READ on each topic (TOPIC_AUTHORIZATION_FAILED
for that topic).
"""

from ..common.uuids import ZERO_UUID
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse
from .support import share_requests
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DELETE_SHARE_GROUP_OFFSETS
MIN_VERSION = 0
MAX_VERSION = 0

DELETE_GROUP = check(API_KEY, "group")
READ_TOPIC = check(API_KEY, "topic")

Response = DeleteShareGroupOffsetsResponse


async def handle(request: DeleteShareGroupOffsetsRequest, ctx: RequestContext) -> DeleteShareGroupOffsetsResponse:
    service = share_requests.share_group_service(ctx)
    if service is None:
        return Response(error_code=ErrorCode.UNSUPPORTED_VERSION, responses=[])
    if not DELETE_GROUP.allows(ctx, request.group_id):
        return Response(error_code=DELETE_GROUP.denied, error_message=DELETE_GROUP.denied.message, responses=[])
    names = list(dict.fromkeys(t.topic_name for t in request.topics))
    allowed = READ_TOPIC.allowed(ctx, names)
    result = await service.delete_share_group_offsets(request.group_id, [n for n in names if n in allowed])
    if result.error != ErrorCode.NONE:
        return Response(error_code=result.error, error_message=result.message, responses=[])
    by_name = {t.name: t for t in result.topics}
    denied = READ_TOPIC.denied
    responses = []
    for name in names:
        topic = by_name.get(name)
        responses.append(
            Response.DeleteShareGroupOffsetsResponseTopic(
                topic_name=name,
                topic_id=ZERO_UUID if topic is None else topic.topic_id,
                error_code=denied if topic is None else topic.error,
                error_message=denied.message if topic is None else topic.message,
            )
        )
    return Response(error_code=ErrorCode.NONE, responses=responses)
