"""DescribeAcls (key 29), versions 0-3.

The ACLs matching one filter, grouped by resource pattern (needs DESCRIBE on the cluster:
CLUSTER_AUTHORIZATION_FAILED otherwise; SECURITY_DISABLED without an authorizer). Pattern type
filters: LITERAL and PREFIXED match those patterns by name, ANY both, MATCH every pattern that
applies to the name (the literal name, the literal wildcard `*`, and prefixes of it).
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DescribeAclsRequest, DescribeAclsResponse
from ..security.acl_bindings import ResourcePattern
from .support.acl_requests import filter_of
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DESCRIBE_ACLS
MIN_VERSION = 0
MAX_VERSION = 3

DESCRIBE_CLUSTER = check(API_KEY, "cluster")


async def handle(request: DescribeAclsRequest, ctx: RequestContext) -> DescribeAclsResponse:
    binding_filter = filter_of(request, ctx.api_version)
    if not DESCRIBE_CLUSTER.allows(ctx):
        error = DESCRIBE_CLUSTER.denied
        return DescribeAclsResponse(error_code=error, error_message=error.message, resources=[])
    authorizer = ctx.services.authorizer
    if authorizer is None:
        return DescribeAclsResponse(
            error_code=ErrorCode.SECURITY_DISABLED,
            error_message="No Authorizer is configured on the broker",
            resources=[],
        )
    resources: dict[ResourcePattern, DescribeAclsResponse.DescribeAclsResource] = {}
    for binding in authorizer.acls(binding_filter):
        pattern = binding.pattern
        entry = resources.setdefault(
            pattern,
            DescribeAclsResponse.DescribeAclsResource(
                resource_type=pattern.resource_type,
                resource_name=pattern.name,
                pattern_type=pattern.pattern_type,
                acls=[],
            ),
        )
        acl = binding.entry
        entry.acls.append(
            DescribeAclsResponse.AclDescription(
                principal=acl.principal, host=acl.host, operation=acl.operation, permission_type=acl.permission_type
            )
        )
    return DescribeAclsResponse(error_code=ErrorCode.NONE, error_message=None, resources=list(resources.values()))
