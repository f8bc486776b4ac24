"""SyncGroup (key 14), versions 0-5.

The leader sends the assignment of every member; every member gets its own assignment once the
leader's has been stored (see `coordinator/group/rebalance.py`).

- v3+: static membership (group_instance_id).
- v5+: protocol type and name are required (INCONSISTENT_GROUP_PROTOCOL when missing, or when
  they differ from the group's) and are returned.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import SyncGroupRequest, SyncGroupResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.SYNC_GROUP
MIN_VERSION = 0
MAX_VERSION = 5

READ_GROUP = check(API_KEY, "group")


async def handle(request: SyncGroupRequest, ctx: RequestContext) -> SyncGroupResponse:
    version = ctx.api_version
    if version >= 5 and (request.protocol_type is None or request.protocol_name is None):
        return SyncGroupResponse(error_code=ErrorCode.INCONSISTENT_GROUP_PROTOCOL, assignment=b"")
    if not READ_GROUP.allows(ctx, request.group_id):
        return SyncGroupResponse(error_code=READ_GROUP.denied, assignment=b"")
    result = await ctx.services.group_coordinator.sync_group(
        request.group_id,
        request.generation_id,
        request.member_id,
        request.protocol_type if version >= 5 else None,
        request.protocol_name if version >= 5 else None,
        request.group_instance_id if version >= 3 else None,
        {a.member_id: bytes(a.assignment) for a in request.assignments},
    )
    return SyncGroupResponse(
        error_code=result.error,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name,
        assignment=result.assignment,
    )
