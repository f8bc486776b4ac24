"""The questions put to the authorizer, one small call per resource as Kafka's `AuthHelper` does.

Handlers do not call these questions themselves: they ask the checks of their API's entry in the
authorization table (`authorization.py`), which name the operation, resource type and denial code
and call here:

    READ_GROUP = check(API_KEY, "group")
    if not READ_GROUP.allows(ctx, group_id):
        return error(READ_GROUP.denied)

The `*_authorized_operations` bit fields (`authorized_operations`) are asked here directly.

Without an authorizer (`authorizer.class.name` empty) everything is allowed and authorized
operations report every operation the resource type supports, as Kafka does.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...security.acl import CLUSTER_NAME, SUPPORTED_OPERATIONS, AclOperation, ResourceType

__all__ = ["CLUSTER_NAME"]
from .context import RequestContext

# Kafka's sentinel for "authorized operations were not requested".
OPERATIONS_NOT_REQUESTED = -2147483648

READ = AclOperation.READ
WRITE = AclOperation.WRITE
CREATE = AclOperation.CREATE
DELETE = AclOperation.DELETE
ALTER = AclOperation.ALTER
DESCRIBE = AclOperation.DESCRIBE
CLUSTER_ACTION = AclOperation.CLUSTER_ACTION
DESCRIBE_CONFIGS = AclOperation.DESCRIBE_CONFIGS
ALTER_CONFIGS = AclOperation.ALTER_CONFIGS
IDEMPOTENT_WRITE = AclOperation.IDEMPOTENT_WRITE

TOPIC = ResourceType.TOPIC
GROUP = ResourceType.GROUP
CLUSTER = ResourceType.CLUSTER
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID


def authorize(
    ctx: RequestContext, operation: AclOperation, resource_type: ResourceType, name: str, *, log_if_denied: bool = True
) -> bool:
    authorizer = ctx.services.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize(
        ctx.principal, ctx.client_host, operation, resource_type, name, log_if_denied=log_if_denied
    )


def authorize_cluster(ctx: RequestContext, operation: AclOperation, *, log_if_denied: bool = True) -> bool:
    return authorize(ctx, operation, CLUSTER, CLUSTER_NAME, log_if_denied=log_if_denied)


def filter_authorized(
    ctx: RequestContext, operation: AclOperation, resource_type: ResourceType, names: Iterable[str | None]
) -> set[str]:
    """The names of `names` the caller may perform `operation` on (each asked once)."""
    return {name for name in set(names) if name is not None and authorize(ctx, operation, resource_type, name)}


def authorize_by_resource_type(ctx: RequestContext, operation: AclOperation, resource_type: ResourceType) -> bool:
    authorizer = ctx.services.authorizer
    if authorizer is None:
        return True
    return authorizer.authorize_by_resource_type(ctx.principal, ctx.client_host, operation, resource_type)


def authorized_operations(ctx: RequestContext, resource_type: ResourceType, name: str, requested: bool = True) -> int:
    """The `*_authorized_operations` bit field of one resource (the sentinel when not requested)."""
    if not requested:
        return OPERATIONS_NOT_REQUESTED
    authorizer = ctx.services.authorizer
    if authorizer is None:
        return sum(1 << op for op in SUPPORTED_OPERATIONS[resource_type])
    return authorizer.authorized_operations(ctx.principal, ctx.client_host, resource_type, name)
