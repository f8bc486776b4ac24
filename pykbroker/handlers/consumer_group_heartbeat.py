"""ConsumerGroupHeartbeat (key 68), versions 0-1 (KIP-848).

A consumer group member joins (epoch 0), heartbeats (its epoch), leaves (-1) or, as a static
member, leaves for a while (-2); the answer carries its member id and epoch, the heartbeat
interval and, when it changed or on a full request, its assignment (see
`coordinator/group/consumer/manager.py`). v1: SubscribedTopicRegex, and the client chooses its
member id (an empty one is INVALID_REQUEST).

As Kafka: UNSUPPORTED_VERSION when `group.coordinator.rebalance.protocols` leaves "consumer" out;
READ on the group (GROUP_AUTHORIZATION_FAILED); DESCRIBE on every subscribed topic name
(TOPIC_AUTHORIZATION_FAILED otherwise); topics a regex matches are those the member may DESCRIBE.
"""

import uuid

from ..coordinator.group.consumer.manager import HeartbeatRequest
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.CONSUMER_GROUP_HEARTBEAT
MIN_VERSION = 0
MAX_VERSION = 1

READ_GROUP = check(API_KEY, "group")
DESCRIBE_TOPIC = check(API_KEY, "topic")


async def handle(request: ConsumerGroupHeartbeatRequest, ctx: RequestContext) -> ConsumerGroupHeartbeatResponse:
    coordinator = ctx.services.group_coordinator
    if not coordinator.consumer_groups_enabled:
        return ConsumerGroupHeartbeatResponse(error_code=ErrorCode.UNSUPPORTED_VERSION)
    if not READ_GROUP.allows(ctx, request.group_id):
        return ConsumerGroupHeartbeatResponse(error_code=READ_GROUP.denied)
    names = request.subscribed_topic_names
    if names and len(DESCRIBE_TOPIC.allowed(ctx, names)) < len(set(names)):
        return ConsumerGroupHeartbeatResponse(error_code=DESCRIBE_TOPIC.denied)
    regex = request.subscribed_topic_regex if ctx.api_version >= 1 else None
    result = await coordinator.consumer_group_heartbeat(
        HeartbeatRequest(
            group_id=request.group_id,
            member_id=request.member_id,
            member_epoch=request.member_epoch,
            instance_id=request.instance_id,
            rack_id=request.rack_id,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            subscribed_topic_names=names,
            subscribed_topic_regex=regex,
            server_assignor=request.server_assignor,
            owned=_owned(request),
            client_id=ctx.client_id or "",
            client_host=ctx.client_host,
            api_version=ctx.api_version,
            authorized_topics=lambda topics: DESCRIBE_TOPIC.allowed(ctx, topics),
        )
    )
    if result.error != ErrorCode.NONE:
        return ConsumerGroupHeartbeatResponse(error_code=result.error, error_message=result.message)
    return ConsumerGroupHeartbeatResponse(
        error_code=ErrorCode.NONE,
        member_id=result.member_id,
        member_epoch=result.member_epoch,
        heartbeat_interval_ms=result.heartbeat_interval_ms,
        assignment=None
        if result.assignment is None
        else ConsumerGroupHeartbeatResponse.Assignment(
            topic_partitions=[
                ConsumerGroupHeartbeatResponse.TopicPartitions(topic_id=topic_id, partitions=sorted(parts))
                for topic_id, parts in sorted(result.assignment.items(), key=lambda item: str(item[0]))
            ]
        ),
    )


def _owned(request: ConsumerGroupHeartbeatRequest) -> dict[uuid.UUID, frozenset[int]] | None:
    if request.topic_partitions is None:
        return None
    owned: dict[uuid.UUID, frozenset[int]] = {}
    for tp in request.topic_partitions:
        owned[tp.topic_id] = owned.get(tp.topic_id, frozenset()) | frozenset(tp.partitions)
    return owned
