"""ShareGroupDescribe (key 77), version 1 (Kafka 4.1).

Each share group's state (Empty, Stable), group epoch, assignment epoch, assignor ("simple") and
members: member id, rack, member epoch, client id and host, subscribed topic names and assigned
topic partitions. A group of another type or an unknown group: GROUP_ID_NOT_FOUND with Kafka's
message; an empty group id: INVALID_GROUP_ID; the coordinator errors per group. DESCRIBE on each
group is needed (GROUP_AUTHORIZATION_FAILED), and on the topics its members use
(TOPIC_AUTHORIZATION_FAILED for the group otherwise). Authorized operations when asked.
"""

from ..coordinator.group.share.results import DescribedShareGroup
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ShareGroupDescribeRequest, ShareGroupDescribeResponse
from .support import share_requests
from .support.auth import GROUP, authorized_operations
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.SHARE_GROUP_DESCRIBE
MIN_VERSION = 1
MAX_VERSION = 1

DESCRIBE_GROUP = check(API_KEY, "group")
DESCRIBE_TOPIC = check(API_KEY, "topic")

Response = ShareGroupDescribeResponse


async def handle(request: ShareGroupDescribeRequest, ctx: RequestContext) -> ShareGroupDescribeResponse:
    service = share_requests.share_group_service(ctx)
    groups = []
    for group_id in request.group_ids:
        if service is None:
            groups.append(_failed(group_id, ErrorCode.UNSUPPORTED_VERSION))
        elif not DESCRIBE_GROUP.allows(ctx, group_id):
            groups.append(_failed(group_id, DESCRIBE_GROUP.denied))
        else:
            groups.append(_describe(service.describe_share_group(group_id), request, ctx))
    return Response(groups=groups)


def _describe(
    described: DescribedShareGroup, request: ShareGroupDescribeRequest, ctx: RequestContext
) -> Response.DescribedGroup:
    if described.error != ErrorCode.NONE:
        return _failed(described.group_id, described.error, described.message)
    topics = {name for m in described.members for name in m.subscribed_topic_names}
    topics |= {name for m in described.members for _, name, _ in m.assignment}
    if topics and len(DESCRIBE_TOPIC.allowed(ctx, topics)) < len(topics):
        return _failed(
            described.group_id,
            DESCRIBE_TOPIC.denied,
            "The described group uses topics that the client is not authorized to describe.",
        )
    include_operations = request.include_authorized_operations
    return Response.DescribedGroup(
        error_code=ErrorCode.NONE,
        group_id=described.group_id,
        group_state=described.state,
        group_epoch=described.group_epoch,
        assignment_epoch=described.assignment_epoch,
        assignor_name=described.assignor,
        members=[
            Response.Member(
                member_id=m.member_id,
                rack_id=m.rack_id,
                member_epoch=m.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=m.subscribed_topic_names,
                assignment=Response.Assignment(
                    topic_partitions=[
                        Response.TopicPartitions(topic_id=tid, topic_name=name, partitions=partitions)
                        for tid, name, partitions in m.assignment
                    ]
                ),
            )
            for m in described.members
        ],
        authorized_operations=authorized_operations(ctx, GROUP, described.group_id, include_operations),
    )


def _failed(group_id: str, error: ErrorCode, message: str | None = None) -> Response.DescribedGroup:
    return Response.DescribedGroup(
        error_code=error, error_message=message, group_id=group_id, group_state="", assignor_name=""
    )
