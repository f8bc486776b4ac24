"""Heartbeat (key 12), versions 0-4.

Keeps a member's session alive. REBALANCE_IN_PROGRESS tells the member to rejoin; while the
group's partition is loading the answer is NONE (see `coordinator/group/member_requests.py`).
v3+: static membership (group_instance_id).
"""

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import HeartbeatRequest, HeartbeatResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.HEARTBEAT
MIN_VERSION = 0
MAX_VERSION = 4

READ_GROUP = check(API_KEY, "group")


async def handle(request: HeartbeatRequest, ctx: RequestContext) -> HeartbeatResponse:
    if not READ_GROUP.allows(ctx, request.group_id):
        return HeartbeatResponse(error_code=READ_GROUP.denied)
    error = ctx.services.group_coordinator.handle_heartbeat(
        request.group_id,
        request.member_id,
        request.group_instance_id if ctx.api_version >= 3 else None,
        request.generation_id,
    )
    return HeartbeatResponse(error_code=error)
