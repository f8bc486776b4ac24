"""DescribeGroups (key 15), versions 0-5.

State, protocol type, chosen protocol and members of each group. Member metadata and assignment
bytes are shown only for a Stable group (the protocol is empty in other states). A group the
coordinator does not know is described as Dead without members (no error before v6).
v3+: the group's authorized operations when asked for. v4+: members' group instance ids.
Groups the caller may not DESCRIBE come last, with GROUP_AUTHORIZATION_FAILED (as Kafka).
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DescribeGroupsRequest, DescribeGroupsResponse
from .support.auth import GROUP, authorized_operations
from .support.authorization import check
from .support.context import RequestContext
from .support.services import GroupService

API_KEY = ApiKey.DESCRIBE_GROUPS
MIN_VERSION = 0
MAX_VERSION = 5

DESCRIBE_GROUP = check(API_KEY, "group")


async def handle(request: DescribeGroupsRequest, ctx: RequestContext) -> DescribeGroupsResponse:
    include_operations = ctx.api_version >= 3 and request.include_authorized_operations
    coordinator = ctx.services.group_coordinator
    allowed = [group_id for group_id in request.groups if DESCRIBE_GROUP.allows(ctx, group_id)]
    denied = [group_id for group_id in request.groups if group_id not in allowed]
    return DescribeGroupsResponse(
        groups=[_describe(ctx, coordinator, group_id, include_operations) for group_id in allowed]
        + [
            DescribeGroupsResponse.DescribedGroup(
                error_code=DESCRIBE_GROUP.denied,
                group_id=g,
                group_state="",
                protocol_type="",
                protocol_data="",
            )
            for g in denied
        ]
    )


def _describe(
    ctx: RequestContext, coordinator: GroupService, group_id: str, include_operations: bool
) -> DescribeGroupsResponse.DescribedGroup:
    error, summary = coordinator.handle_describe_group(group_id)
    return DescribeGroupsResponse.DescribedGroup(
        error_code=error,
        group_id=group_id,
        group_state=summary.state,
        protocol_type=summary.protocol_type,
        protocol_data=summary.protocol,
        members=[
            DescribeGroupsResponse.DescribedGroupMember(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id,
                client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata,
                member_assignment=m.assignment,
            )
            for m in summary.members
        ],
        authorized_operations=authorized_operations(
            ctx, GROUP, group_id, include_operations and error == ErrorCode.NONE
        ),
    )
