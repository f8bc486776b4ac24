"""JoinGroup (key 11), versions 0-9.

Joins a classic group or rejoins it for a rebalance; the answer waits until the rebalance's
join phase completes (see `coordinator/group/rebalance.py`).

- v0 has no rebalance timeout: the session timeout serves as one.
- v4+: a dynamic member joining with an empty member id gets MEMBER_ID_REQUIRED and its id.
- v5+: static membership (group_instance_id).
- v7+: the response names the protocol type; its protocol name is null rather than empty.
- v8+: the client's reason (logged). v9+: a rejoining static leader may skip the assignment.
- The member's client host is shown as Kafka shows it, "/<address>".
"""

from ..coordinator.group import JoinRequest
from ..coordinator.group.model import JoinResult
from ..protocol.api_keys import ApiKey
from ..protocol.message_types import JoinGroupRequest, JoinGroupResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.JOIN_GROUP
MIN_VERSION = 0
MAX_VERSION = 9

READ_GROUP = check(API_KEY, "group")


async def handle(request: JoinGroupRequest, ctx: RequestContext) -> JoinGroupResponse:
    version = ctx.api_version
    if not READ_GROUP.allows(ctx, request.group_id):
        return JoinGroupResponse(
            error_code=READ_GROUP.denied,
            generation_id=-1,
            protocol_name=None if version >= 7 else "",  # no protocol: null where the field is nullable (v7+)
            leader="",
            member_id="",
        )
    instance_id = request.group_instance_id if version >= 5 else None
    join = JoinRequest(
        group_id=request.group_id,
        member_id=request.member_id,
        group_instance_id=instance_id,
        client_id=ctx.client_id or "",
        client_host=f"/{ctx.client_host}",
        rebalance_timeout_ms=request.session_timeout_ms if version == 0 else request.rebalance_timeout_ms,
        session_timeout_ms=request.session_timeout_ms,
        protocol_type=request.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in request.protocols],
        require_known_member_id=version >= 4 and instance_id is None,
        supports_skipping_assignment=version >= 9,
        reason=request.reason if version >= 8 else None,
    )
    result = await ctx.services.group_coordinator.join_group(join)
    return _response(result, version)


def _response(result: JoinResult, version: int) -> JoinGroupResponse:
    protocol_name = result.protocol_name
    if version < 7 and protocol_name is None:
        protocol_name = ""
    elif version >= 7 and protocol_name == "":
        protocol_name = None
    return JoinGroupResponse(
        error_code=result.error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=protocol_name,
        leader=result.leader_id,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[
            JoinGroupResponse.JoinGroupResponseMember(
                member_id=m.member_id, group_instance_id=m.group_instance_id, metadata=m.metadata
            )
            for m in result.members
        ],
    )
