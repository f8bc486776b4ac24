"""ControlledShutdown (key 7), versions 0-3: a broker about to stop asks the controller to move
its leaderships away first.

Served by the controller. Each partition the stopping broker leads gets another leader from its
ISR; the partitions it follows drop it from their ISR. The answer lists the partitions it still
leads (no other ISR member is alive), for which the broker retries later; partitions with a
single replica are never listed, since their leadership cannot move.

- NOT_CONTROLLER when this broker is not the controller; BROKER_NOT_AVAILABLE for a broker that
  is not registered; STALE_BROKER_EPOCH (v2+) for an epoch older than the broker's registration.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import ControlledShutdownRequest, ControlledShutdownResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.CONTROLLED_SHUTDOWN
MIN_VERSION = 0
MAX_VERSION = 3

CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")


async def handle(request: ControlledShutdownRequest, ctx: RequestContext) -> ControlledShutdownResponse:
    if not CLUSTER_ACTION_ON_CLUSTER.allows(ctx):
        return ControlledShutdownResponse(error_code=CLUSTER_ACTION_ON_CLUSTER.denied, remaining_partitions=[])
    broker_epoch = request.broker_epoch if ctx.api_version >= 2 else -1
    error, remaining = await ctx.services.controller.controlled_shutdown(request.broker_id, broker_epoch)
    return ControlledShutdownResponse(
        error_code=error,
        remaining_partitions=[
            ControlledShutdownResponse.RemainingPartition(topic_name=topic, partition_index=partition)
            for topic, partition in remaining
        ],
    )
