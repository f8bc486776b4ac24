"""FindCoordinator (key 10), versions 0-5.

The coordinator of a group is the leader of the group's `__consumer_offsets` partition (see
`coordinator/group/offsets_topic.py`), the coordinator of a transactional id the leader of the
id's `__transaction_state` partition (`coordinator/transaction/txn_topic.py`); each topic is
created on first use. v0-v3 ask for one key (v0: always a group), v4+ for a batch of
`coordinator_keys`, each answered on its own. A request that creates a topic is answered once the
creation is durable in the metadata store, since coordinators then write to it.

- Key types GROUP (0) and TRANSACTION (1) are served; other key types make the request
  INVALID_REQUEST.
- COORDINATOR_NOT_AVAILABLE when the internal topic cannot be created (e.g. fewer live brokers
  than `offsets.topic.replication.factor` or `transaction.state.log.replication.factor`) or the
  partition has no live leader.
- As Kafka, v1-v3 answer success with the error message "NONE", errors with the error's default
  message and node -1, host "" and port -1.
"""

from ..coordinator.group import offsets_topic
from ..coordinator.transaction import txn_topic
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import FindCoordinatorRequest, FindCoordinatorResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.FIND_COORDINATOR
MIN_VERSION = 0
MAX_VERSION = 5

DESCRIBE_GROUP = check(API_KEY, "group")
DESCRIBE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
NO_NODE = (-1, "", -1)


async def handle(request: FindCoordinatorRequest, ctx: RequestContext) -> FindCoordinatorResponse:
    key_type = request.key_type if ctx.api_version >= 1 else GROUP_KEY_TYPE
    internal_topics = (offsets_topic.OFFSETS_TOPIC, txn_topic.TRANSACTION_STATE_TOPIC)
    existed = {name for name in internal_topics if ctx.services.metadata.topic(name) is not None}
    if ctx.api_version >= 4:
        response = FindCoordinatorResponse(
            coordinators=[_batched_entry(ctx, key_type, key) for key in request.coordinator_keys]
        )
    else:
        error, (node_id, host, port) = _find(ctx, key_type, request.key)
        response = FindCoordinatorResponse(
            error_code=error, error_message=error.message or error.name, node_id=node_id, host=host, port=port
        )
    if any(name not in existed and ctx.services.metadata.topic(name) is not None for name in internal_topics):
        # created here: coordinators write to it once answered, so it must be durable first
        await ctx.services.metadata.wait_durable()
    return response


def _batched_entry(ctx: RequestContext, key_type: int, key: str) -> FindCoordinatorResponse.Coordinator:
    error, (node_id, host, port) = _find(ctx, key_type, key)
    message = error.message if error == ErrorCode.INVALID_REQUEST else None
    return FindCoordinatorResponse.Coordinator(
        key=key, node_id=node_id, host=host, port=port, error_code=error, error_message=message
    )


def _find(ctx: RequestContext, key_type: int, key: str) -> tuple[ErrorCode, tuple[int, str, int]]:
    services = ctx.services
    if key_type == GROUP_KEY_TYPE and not DESCRIBE_GROUP.allows(ctx, key):
        return DESCRIBE_GROUP.denied, NO_NODE
    if key_type == TRANSACTION_KEY_TYPE and not DESCRIBE_TRANSACTIONAL_ID.allows(ctx, key):
        return DESCRIBE_TRANSACTIONAL_ID.denied, NO_NODE
    if key_type == GROUP_KEY_TYPE:
        info = offsets_topic.ensure_created(services.metadata, services.topic_creator, services.config)
        partition = services.group_coordinator.partition_for(key)
    elif key_type == TRANSACTION_KEY_TYPE:
        info = txn_topic.ensure_created(services.metadata, services.topic_creator, services.config)
        partition = services.txn_coordinator.partition_for(key)
    else:
        return ErrorCode.INVALID_REQUEST, NO_NODE
    state = None if info is None else info.partitions.get(partition)
    if state is None or state.leader < 0:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE
    for node in services.live_brokers(ctx.listener_name):
        if node.broker_id == state.leader:
            return ErrorCode.NONE, (node.broker_id, node.host, node.port)
    return ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE
