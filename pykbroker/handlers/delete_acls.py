"""DeleteAcls (key 31), versions 0-3.

Deletes the ACLs each filter matches and lists them per filter (an ACL matched by several filters
is listed under the first). Needs ALTER on the cluster (CLUSTER_AUTHORIZATION_FAILED on every
filter result otherwise; SECURITY_DISABLED without an authorizer). The deletions are persisted
before the answer.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DeleteAclsRequest, DeleteAclsResponse
from .support.acl_requests import NO_AUTHORIZER, filter_of
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DELETE_ACLS
MIN_VERSION = 0
MAX_VERSION = 3

ALTER_CLUSTER = check(API_KEY, "cluster")


async def handle(request: DeleteAclsRequest, ctx: RequestContext) -> DeleteAclsResponse:
    filters = [filter_of(f, ctx.api_version) for f in request.filters]
    if not ALTER_CLUSTER.allows(ctx):
        error = ALTER_CLUSTER.denied
        return _uniform(len(filters), error, error.message)
    authorizer = ctx.services.authorizer
    if authorizer is None:
        return _uniform(len(filters), ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    deleted = await authorizer.delete_acls(filters)
    return DeleteAclsResponse(
        filter_results=[
            DeleteAclsResponse.DeleteAclsFilterResult(
                error_code=ErrorCode.NONE,
                error_message=None,
                matching_acls=[
                    DeleteAclsResponse.DeleteAclsMatchingAcl(
                        error_code=error,
                        error_message=message,
                        resource_type=binding.pattern.resource_type,
                        resource_name=binding.pattern.name,
                        pattern_type=binding.pattern.pattern_type,
                        principal=binding.entry.principal,
                        host=binding.entry.host,
                        operation=binding.entry.operation,
                        permission_type=binding.entry.permission_type,
                    )
                    for binding, error, message in bindings
                ],
            )
            for bindings in deleted
        ]
    )


def _uniform(count: int, error: ErrorCode, message: str | None) -> DeleteAclsResponse:
    return DeleteAclsResponse(
        filter_results=[
            DeleteAclsResponse.DeleteAclsFilterResult(error_code=error, error_message=message, matching_acls=[])
            for _ in range(count)
        ]
    )
