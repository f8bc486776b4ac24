"""ListGroups (key 16), versions 0-5.

Every group this broker coordinates, with its protocol type; v4+ its state, filtered by
`states_filter` (case-insensitive, empty: all); v5+ its type ("classic"), filtered by
`types_filter`. COORDINATOR_LOAD_IN_PROGRESS (with the groups loaded so far) while partitions of
`__consumer_offsets` are loading. Without DESCRIBE on the cluster, only the groups the caller
may DESCRIBE are listed (as Kafka).
"""

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import ListGroupsRequest, ListGroupsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.LIST_GROUPS
MIN_VERSION = 0
MAX_VERSION = 5

DESCRIBE_CLUSTER = check(API_KEY, "cluster")
DESCRIBE_GROUP = check(API_KEY, "group")


async def handle(request: ListGroupsRequest, ctx: RequestContext) -> ListGroupsResponse:
    version = ctx.api_version
    error, groups = ctx.services.group_coordinator.handle_list_groups(
        request.states_filter if version >= 4 else None, request.types_filter if version >= 5 else None
    )
    if not DESCRIBE_CLUSTER.allows(ctx, log_if_denied=False):
        groups = [g for g in groups if DESCRIBE_GROUP.allows(ctx, g.group_id, log_if_denied=False)]
    return ListGroupsResponse(
        error_code=error,
        groups=[
            ListGroupsResponse.ListedGroup(
                group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state, group_type=g.group_type
            )
            for g in groups
        ],
    )
