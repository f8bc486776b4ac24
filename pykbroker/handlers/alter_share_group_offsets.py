"""AlterShareGroupOffsets (key 91), version 0 (Kafka 4.1).

Sets the share-partition start offset of partitions of a share group, initializing their share
state through the share persister with the given offset. Only an empty group: NON_EMPTY_GROUP
while it has members; a missing group is created empty; a group of another type:
GROUP_ID_NOT_FOUND. An unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION per partition. READ
on the group (GROUP_AUTHORIZATION_FAILED for the whole request) and on each topic
(TOPIC_AUTHORIZATION_FAILED per partition).
"""

import uuid

from ..common.uuids import ZERO_UUID
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse
from .support import share_requests
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ALTER_SHARE_GROUP_OFFSETS
MIN_VERSION = 0
MAX_VERSION = 0

READ_GROUP = check(API_KEY, "group")
READ_TOPIC = check(API_KEY, "topic")

Response = AlterShareGroupOffsetsResponse


async def handle(request: AlterShareGroupOffsetsRequest, ctx: RequestContext) -> AlterShareGroupOffsetsResponse:
    service = share_requests.share_group_service(ctx)
    if service is None:
        return _failed(request, ErrorCode.UNSUPPORTED_VERSION, None)
    if not READ_GROUP.allows(ctx, request.group_id):
        return _failed(request, READ_GROUP.denied, READ_GROUP.denied.message)
    asked = [(t.topic_name, [(p.partition_index, p.start_offset) for p in t.partitions]) for t in request.topics]
    allowed = READ_TOPIC.allowed(ctx, [name for name, _ in asked])
    result = await service.alter_share_group_offsets(request.group_id, [t for t in asked if t[0] in allowed])
    if result.error != ErrorCode.NONE:
        return _failed(request, result.error, result.message)
    by_name = {t.name: t for t in result.topics}
    responses = []
    for name, partitions in asked:
        topic = by_name.get(name)
        if topic is None:
            denied = READ_TOPIC.denied
            responses.append(_topic(name, ZERO_UUID, [(p, denied, denied.message) for p, _ in partitions]))
        else:
            responses.append(
                _topic(name, topic.topic_id, [(p.partition, p.error, p.message) for p in topic.partitions])
            )
    return Response(error_code=ErrorCode.NONE, responses=responses)


def _topic(
    name: str, topic_id: uuid.UUID, partitions: list[tuple[int, ErrorCode, str | None]]
) -> Response.AlterShareGroupOffsetsResponseTopic:
    return Response.AlterShareGroupOffsetsResponseTopic(
        topic_name=name,
        topic_id=topic_id,
        partitions=[
            Response.AlterShareGroupOffsetsResponsePartition(partition_index=p, error_code=error, error_message=message)
            for p, error, message in partitions
        ],
    )


def _failed(
    request: AlterShareGroupOffsetsRequest, error: ErrorCode, message: str | None
) -> AlterShareGroupOffsetsResponse:
    """The whole request refused: the error at the top and for every partition, as Kafka."""
    return Response(
        error_code=error,
        error_message=message,
        responses=[
            _topic(t.topic_name, ZERO_UUID, [(p.partition_index, error, message) for p in t.partitions])
            for t in request.topics
        ],
    )
