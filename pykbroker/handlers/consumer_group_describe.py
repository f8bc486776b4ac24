"""ConsumerGroupDescribe (key 69), versions 0-1 (KIP-848).

Each consumer group's state, group and assignment epochs, assignor and members with their
subscriptions, current and target assignments (topics by id and name). A group that does not
exist, or is not a consumer group, answers GROUP_ID_NOT_FOUND with Kafka's message. v1: each
member's type (1: a consumer protocol member).

As Kafka: UNSUPPORTED_VERSION when the consumer protocol is off; DESCRIBE on each group
(GROUP_AUTHORIZATION_FAILED for that group); a group whose assignments name a topic the caller
may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED.
"""

import uuid

from ..coordinator.group.consumer.manager import DescribedGroup
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from .support.auth import GROUP, authorized_operations
from .support.authorization import check
from .support.context import RequestContext
from .support.services import GroupService

API_KEY = ApiKey.CONSUMER_GROUP_DESCRIBE
MIN_VERSION = 0
MAX_VERSION = 1

DESCRIBE_GROUP = check(API_KEY, "group")
DESCRIBE_TOPIC = check(API_KEY, "topic")

CONSUMER_MEMBER_TYPE = 1
_TOPICS_DENIED = "The described group uses topics that the client is not authorized to describe."

Response = ConsumerGroupDescribeResponse


async def handle(request: ConsumerGroupDescribeRequest, ctx: RequestContext) -> ConsumerGroupDescribeResponse:
    coordinator = ctx.services.group_coordinator
    if not coordinator.consumer_groups_enabled:
        return Response(
            groups=[
                Response.DescribedGroup(group_id=g, error_code=ErrorCode.UNSUPPORTED_VERSION) for g in request.group_ids
            ]
        )
    groups = []
    for group_id in request.group_ids:
        if not DESCRIBE_GROUP.allows(ctx, group_id):
            groups.append(Response.DescribedGroup(group_id=group_id, error_code=DESCRIBE_GROUP.denied))
            continue
        groups.append(_described(ctx, coordinator, coordinator.consumer_group_describe(group_id), request))
    return Response(groups=groups)


def _described(
    ctx: RequestContext, coordinator: GroupService, group: DescribedGroup, request: ConsumerGroupDescribeRequest
) -> ConsumerGroupDescribeResponse.DescribedGroup:
    if group.error != ErrorCode.NONE:
        return Response.DescribedGroup(group_id=group.group_id, error_code=group.error, error_message=group.message)
    names: dict[uuid.UUID, str] = {}

    def assignment(parts: dict[uuid.UUID, frozenset[int]]) -> ConsumerGroupDescribeResponse.Assignment:
        topics = []
        for topic_id, partitions in sorted(parts.items(), key=lambda item: str(item[0])):
            name = names.setdefault(topic_id, coordinator.topic_name(topic_id) or "")
            topics.append(Response.TopicPartitions(topic_id=topic_id, topic_name=name, partitions=sorted(partitions)))
        return Response.Assignment(topic_partitions=topics)

    members = [
        Response.Member(
            member_id=d.member.member_id,
            instance_id=d.member.instance_id,
            rack_id=d.member.rack_id,
            member_epoch=d.member.member_epoch,
            client_id=d.member.client_id,
            client_host=d.member.client_host,
            subscribed_topic_names=list(d.member.subscribed_topic_names),
            subscribed_topic_regex=d.member.subscribed_topic_regex,
            assignment=assignment(d.member.assigned),
            target_assignment=assignment(d.target),
            member_type=CONSUMER_MEMBER_TYPE,
        )
        for d in group.members
    ]
    used = {name for name in names.values() if name}
    if len(DESCRIBE_TOPIC.allowed(ctx, used)) < len(used):
        return Response.DescribedGroup(
            group_id=group.group_id, error_code=DESCRIBE_TOPIC.denied, error_message=_TOPICS_DENIED
        )
    return Response.DescribedGroup(
        group_id=group.group_id,
        error_code=ErrorCode.NONE,
        group_state=group.state,
        group_epoch=group.group_epoch,
        assignment_epoch=group.assignment_epoch,
        assignor_name=group.assignor,
        members=members,
        authorized_operations=authorized_operations(ctx, GROUP, group.group_id, request.include_authorized_operations),
    )
