"""CreateAcls (key 30), versions 0-3.

Adds ACLs through the authorizer (ALTER on the cluster needed: CLUSTER_AUTHORIZATION_FAILED on
every result otherwise; SECURITY_DISABLED without an authorizer). Each binding gets its own result:
INVALID_REQUEST for a CLUSTER resource not named `kafka-cluster`, an empty name, a name with '/' or
an unknown code ("Failed to create ACL"); UNKNOWN_SERVER_ERROR for the bindings of a resource one
of whose principals is not "<type>:<name>" (Kafka fails that resource's write). A binding with the
pattern type, resource type, operation or permission type ANY (or MATCH) fails the whole request
with UNKNOWN_SERVER_ERROR, as Kafka does. Bindings are persisted before the answer (ZooKeeper, or
the single broker's ACL file).
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import CreateAclsRequest, CreateAclsResponse
from ..security.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from ..security.acl_bindings import AclBinding
from .support.acl_requests import NO_AUTHORIZER, binding_of
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.CREATE_ACLS
MIN_VERSION = 0
MAX_VERSION = 3

ALTER_CLUSTER = check(API_KEY, "cluster")


async def handle(request: CreateAclsRequest, ctx: RequestContext) -> CreateAclsResponse:
    bindings = [binding_of(creation, ctx.api_version) for creation in request.creations]
    if not ALTER_CLUSTER.allows(ctx):
        return _uniform(len(bindings), ALTER_CLUSTER.denied, None)
    authorizer = ctx.services.authorizer
    if authorizer is None:
        return _uniform(len(bindings), ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER)
    if any(_not_a_binding(b) for b in bindings):
        return _uniform(len(bindings), ErrorCode.UNKNOWN_SERVER_ERROR, None)
    results = await authorizer.create_acls(bindings)
    return CreateAclsResponse(
        results=[
            CreateAclsResponse.AclCreationResult(
                error_code=error, error_message="" if error == ErrorCode.NONE else message
            )
            for error, message in results
        ]
    )


def _not_a_binding(binding: AclBinding) -> bool:
    """Kafka's ResourcePattern and AccessControlEntry refuse ANY (and MATCH) outright."""
    return (
        binding.pattern.pattern_type in (PatternType.ANY, PatternType.MATCH)
        or binding.pattern.resource_type == ResourceType.ANY
        or binding.entry.operation == AclOperation.ANY
        or binding.entry.permission_type == AclPermissionType.ANY
    )


def _uniform(count: int, error: ErrorCode, message: str | None) -> CreateAclsResponse:
    return CreateAclsResponse(
        results=[CreateAclsResponse.AclCreationResult(error_code=error, error_message=message) for _ in range(count)]
    )
