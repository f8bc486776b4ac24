"""DeleteGroups (key 42), versions 0-2.

Deletes Empty groups with their committed offsets (NON_EMPTY_GROUP for groups with members,
GROUP_ID_NOT_FOUND for groups the coordinator does not have). One result per distinct group;
groups the caller may not DELETE come last with GROUP_AUTHORIZATION_FAILED.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import DeleteGroupsRequest, DeleteGroupsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DELETE_GROUPS
MIN_VERSION = 0
MAX_VERSION = 2

DELETE_GROUP = check(API_KEY, "group")


async def handle(request: DeleteGroupsRequest, ctx: RequestContext) -> DeleteGroupsResponse:
    group_ids = list(dict.fromkeys(request.groups_names))
    allowed = DELETE_GROUP.allowed(ctx, group_ids)
    errors = ctx.services.group_coordinator.handle_delete_groups([g for g in group_ids if g in allowed])
    errors.update({g: DELETE_GROUP.denied for g in group_ids if g not in allowed})
    order = [g for g in group_ids if g in allowed] + [g for g in group_ids if g not in allowed]
    return DeleteGroupsResponse(
        results=[DeleteGroupsResponse.DeletableGroupResult(group_id=g, error_code=errors[g]) for g in order]
    )
