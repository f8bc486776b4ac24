"""DescribeCluster (key 60), versions 0-1.

The cluster id, the controller id and the live brokers with their endpoints on the listener the
client used, plus the cluster's authorized operations when asked for. Brokers serve endpoint type
1 (BROKER) only: asking a broker for controllers (2) fails with MISMATCHED_ENDPOINT_TYPE, any
other type with UNSUPPORTED_ENDPOINT_TYPE (v1); v0 requests cannot ask, but would get
INVALID_REQUEST. A controller id that is not among the brokers is reported as -1, as Kafka does.
"""

from __future__ import annotations

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DescribeClusterRequest, DescribeClusterResponse
from .support.auth import CLUSTER, CLUSTER_NAME, authorized_operations
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CLUSTER
MIN_VERSION = 0
MAX_VERSION = 1

DESCRIBE_CLUSTER = check(API_KEY, "cluster")

ENDPOINT_TYPES = {1: "BROKER", 2: "CONTROLLER"}
BROKER_ENDPOINT = 1


async def handle(request: DescribeClusterRequest, ctx: RequestContext) -> DescribeClusterResponse:
    refusal = _endpoint_refusal(request.endpoint_type, ctx.api_version)
    if refusal is not None:
        return refusal
    brokers = [
        DescribeClusterResponse.DescribeClusterBroker(broker_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
        for b in ctx.services.live_brokers(ctx.listener_name)
    ]
    controller_id = ctx.services.metadata.controller_id
    return DescribeClusterResponse(
        error_code=ErrorCode.NONE,
        endpoint_type=BROKER_ENDPOINT,
        cluster_id=ctx.services.metadata.cluster_id,
        controller_id=controller_id if any(b.broker_id == controller_id for b in brokers) else -1,
        brokers=brokers,
        cluster_authorized_operations=_cluster_operations(ctx, request.include_cluster_authorized_operations),
    )


def _cluster_operations(ctx: RequestContext, requested: bool) -> int:
    """Kafka answers 0 to a caller without DESCRIBE on the cluster (the request itself is allowed)."""
    if requested and not DESCRIBE_CLUSTER.allows(ctx):
        return 0
    return authorized_operations(ctx, CLUSTER, CLUSTER_NAME, requested)


def _endpoint_refusal(endpoint_type: int, version: int) -> DescribeClusterResponse | None:
    if endpoint_type not in ENDPOINT_TYPES:
        code = ErrorCode.INVALID_REQUEST if version == 0 else ErrorCode.UNSUPPORTED_ENDPOINT_TYPE
        return DescribeClusterResponse(error_code=code, error_message=f"Unsupported endpoint type {endpoint_type}")
    if endpoint_type != BROKER_ENDPOINT:
        code = ErrorCode.INVALID_REQUEST if version == 0 else ErrorCode.MISMATCHED_ENDPOINT_TYPE
        wanted = ENDPOINT_TYPES[endpoint_type]
        return DescribeClusterResponse(
            error_code=code,
            error_message=f"The request was sent to an endpoint of type BROKER, "
            f"but we wanted an endpoint of type {wanted}",
        )
    return None
