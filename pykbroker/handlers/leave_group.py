"""LeaveGroup (key 13), versions 0-5.

v0-v2 name one member and answer with one error code (the member's, when the group itself was
fine); v3+ name a batch of members, dynamic ones by member id, static ones by group instance id
(an empty member id removes a static member administratively), each answered on its own.
v5+ carries the client's reason (logged).
"""

from ..coordinator.group.model import MemberIdentity
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import LeaveGroupRequest, LeaveGroupResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.LEAVE_GROUP
MIN_VERSION = 0
MAX_VERSION = 5

READ_GROUP = check(API_KEY, "group")


async def handle(request: LeaveGroupRequest, ctx: RequestContext) -> LeaveGroupResponse:
    version = ctx.api_version
    if not READ_GROUP.allows(ctx, request.group_id):
        return LeaveGroupResponse(error_code=READ_GROUP.denied)
    if version >= 3:
        leaving = [
            MemberIdentity(m.member_id, m.group_instance_id, m.reason if version >= 5 else None)
            for m in request.members
        ]
    else:
        leaving = [MemberIdentity(request.member_id)]
    result = ctx.services.group_coordinator.handle_leave_group(request.group_id, leaving)
    if version >= 3:
        return LeaveGroupResponse(
            error_code=result.error,
            members=[
                LeaveGroupResponse.MemberResponse(
                    member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error
                )
                for m in result.members
            ],
        )
    if result.error != ErrorCode.NONE or not result.members:
        return LeaveGroupResponse(error_code=result.error)
    return LeaveGroupResponse(error_code=result.members[0].error)
