"""ShareGroupHeartbeat (key 76), version 1 (Kafka 4.1; v0 was 4.0's early access).

A share consumer joins (member epoch 0, with the topics it subscribes to), heartbeats (its member
epoch) and leaves (-1); its member id is its own (KIP-1082: empty or over 36 characters is
INVALID_REQUEST). The answer carries its member id and epoch, the heartbeat interval
(`share.heartbeat.interval.ms`) and, when it changed or on a full request, its assignment (topic
ids and partitions). Errors as Kafka's: INVALID_REQUEST (a malformed request, with Kafka's
message), GROUP_ID_NOT_FOUND (a group of another type, or an unknown group), UNKNOWN_MEMBER_ID,
FENCED_MEMBER_EPOCH, GROUP_MAX_SIZE_REACHED, and the coordinator errors. READ on the group is
needed (GROUP_AUTHORIZATION_FAILED), and DESCRIBE on every subscribed topic
(TOPIC_AUTHORIZATION_FAILED). Without `share.version` the API is not served (UNSUPPORTED_VERSION).
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
from .support import share_requests
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.SHARE_GROUP_HEARTBEAT
MIN_VERSION = 1
MAX_VERSION = 1

READ_GROUP = check(API_KEY, "group")
DESCRIBE_TOPIC = check(API_KEY, "topic")

Response = ShareGroupHeartbeatResponse


async def handle(request: ShareGroupHeartbeatRequest, ctx: RequestContext) -> ShareGroupHeartbeatResponse:
    service = share_requests.share_group_service(ctx)
    if service is None:
        return _error(ErrorCode.UNSUPPORTED_VERSION)
    if not share_requests.valid_member_id(request.member_id):
        return _error(ErrorCode.INVALID_REQUEST)  # Kafka's KafkaApis refuses it before anything else
    if not READ_GROUP.allows(ctx, request.group_id):
        return _error(READ_GROUP.denied)
    topics = request.subscribed_topic_names
    if topics and len(DESCRIBE_TOPIC.allowed(ctx, topics)) < len(set(topics)):
        return _error(DESCRIBE_TOPIC.denied, "The group has subscribed to topics that are not authorized.")
    result = await service.share_group_heartbeat(
        request.group_id,
        request.member_id,
        request.member_epoch,
        request.rack_id,
        None if topics is None else list(topics),
        ctx.client_id or "",
        ctx.client_host,
    )
    if result.error != ErrorCode.NONE:
        return _error(result.error, result.message)
    assignment = None
    if result.assignment is not None:
        assignment = Response.Assignment(
            topic_partitions=[
                Response.TopicPartitions(topic_id=topic_id, partitions=sorted(partitions))
                for topic_id, partitions in sorted(result.assignment.items())
            ]
        )
    return Response(
        error_code=ErrorCode.NONE,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=assignment,
    )


def _error(error: ErrorCode, message: str | None = None) -> ShareGroupHeartbeatResponse:
    return Response(error_code=error, error_message=message, member_id=None, member_epoch=0, heartbeat_interval_ms=0)
