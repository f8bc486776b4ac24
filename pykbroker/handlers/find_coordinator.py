"""FindCoordinator (key 10), versions 0-5.

The coordinator of a group is the leader of the group's `__consumer_offsets` partition (see
`coordinator/group/offsets_topic.py`); the topic is created on first use. v0-v3 ask for one key
(v0: always a group), v4+ for a batch of `coordinator_keys`, each answered on its own. A request
that creates the topic is answered once the creation is durable in the metadata store, since
groups then commit offsets to it.

- Key type GROUP (0) is served. TRANSACTION (1) keys get COORDINATOR_NOT_AVAILABLE (there is no
  transaction coordinator yet); other key types make the request INVALID_REQUEST.
- COORDINATOR_NOT_AVAILABLE when `__consumer_offsets` cannot be created (e.g. fewer live
  brokers than `offsets.topic.replication.factor`) or the partition has no live leader.
- As Kafka, v1-v3 answer success with the error message "NONE", errors with the error's default
  message and node -1, host "" and port -1.
"""

from ..coordinator.group.offsets_topic import OFFSETS_TOPIC, ensure_created
from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .context import RequestContext

API_KEY = ApiKey.FIND_COORDINATOR
MIN_VERSION = 0
MAX_VERSION = 5

Response = messages.response(API_KEY).cls

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
NO_NODE = (-1, "", -1)


async def handle(request, ctx: RequestContext):
    key_type = request.key_type if ctx.api_version >= 1 else GROUP_KEY_TYPE
    offsets_topic_existed = ctx.services.metadata.topic(OFFSETS_TOPIC) is not None
    if ctx.api_version >= 4:
        response = Response(coordinators=[_batched_entry(ctx, key_type, key) for key in request.coordinator_keys])
    else:
        error, (node_id, host, port) = _find(ctx, key_type, request.key)
        response = Response(
            error_code=error, error_message=error.message or error.name, node_id=node_id, host=host, port=port
        )
    if not offsets_topic_existed and ctx.services.metadata.topic(OFFSETS_TOPIC) is not None:
        # created here: groups commit to it once answered, so it must be durable first
        await ctx.services.metadata.wait_durable()
    return response


def _batched_entry(ctx: RequestContext, key_type: int, key: str):
    error, (node_id, host, port) = _find(ctx, key_type, key)
    message = error.message if error == ErrorCode.INVALID_REQUEST else None
    return Response.Coordinator(key=key, node_id=node_id, host=host, port=port, error_code=error, error_message=message)


def _find(ctx: RequestContext, key_type: int, key: str) -> tuple[ErrorCode, tuple[int, str, int]]:
    if key_type == TRANSACTION_KEY_TYPE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE
    if key_type != GROUP_KEY_TYPE:
        return ErrorCode.INVALID_REQUEST, NO_NODE
    services = ctx.services
    info = ensure_created(services.metadata, services.topic_creator, services.config)
    state = None if info is None else info.partitions.get(services.group_coordinator.partition_for(key))
    if state is None or state.leader < 0:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE
    for node in services.live_brokers(ctx.listener_name):
        if node.broker_id == state.leader:
            return ErrorCode.NONE, (node.broker_id, node.host, node.port)
    return ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE
