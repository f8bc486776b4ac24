"""FindCoordinator (key 10), versions 0-6.

The coordinator of a group is the leader of the group's `__consumer_offsets` partition (see
`coordinator/group/offsets_topic.py`), the coordinator of a transactional id the leader of the
id's `__transaction_state` partition (`coordinator/transaction/txn_topic.py`), the share
coordinator of a share-partition key `groupId:topicId:partition` the leader of the key's
`__share_group_state` partition (`coordinator/share/state_topic.py`); each topic is created on
first use. v0-v3 ask for one key (v0: always a group), v4+ for a batch of
`coordinator_keys`, each answered on its own. A request that creates a topic is answered once the
creation is durable in the metadata store, since coordinators then write to it.

- Key types GROUP (0) and TRANSACTION (1) are served, and SHARE (2) from v6 (KIP-932; brokers
  ask it, with CLUSTER_ACTION on the cluster, else CLUSTER_AUTHORIZATION_FAILED); other key types,
  SHARE before v6 and a SHARE key that is not `groupId:topicId:partition` (Kafka's
  SharePartitionKey.validate) are INVALID_REQUEST.
- COORDINATOR_NOT_AVAILABLE when the internal topic cannot be created (e.g. fewer live brokers
  than `offsets.topic.replication.factor`, `transaction.state.log.replication.factor` or
  `share.coordinator.state.topic.replication.factor`) or the
  partition has no live leader and no live in-sync replica to elect (a partition led here from a
  failed log directory has no live leader).
- While the coordinator moves (its broker gone from ZooKeeper, an in-sync replica still live and
  the controller yet to elect it) the answer waits for the election, up to
  `ELECTION_WAIT_S`. Kafka's brokers learn of a dead leader and of its successor in the same
  UpdateMetadata, so Kafka names the old coordinator or the new one, never COORDINATOR_NOT_AVAILABLE,
  in that moment; and librdkafka (2.x) stops looking up a coordinator after two retried
  COORDINATOR_NOT_AVAILABLE answers until some broker's state changes, so an admin request
  waited out its timeout there.
- As Kafka, v1-v3 answer success with the error message "NONE", errors with the error's default
  message and node -1, host "" and port -1.
"""

import anyio

from ..cluster.model import PartitionState, TopicInfo
from ..coordinator.group import offsets_topic
from ..coordinator.share import state_topic
from ..coordinator.share.shard import parse_share_coordinator_key
from ..coordinator.transaction import txn_topic
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import FindCoordinatorRequest, FindCoordinatorResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.FIND_COORDINATOR
MIN_VERSION = 0
MAX_VERSION = 6

DESCRIBE_GROUP = check(API_KEY, "group")
DESCRIBE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")
CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
SHARE_KEY_TYPE = 2
SHARE_MIN_VERSION = 6
NO_NODE = (-1, "", -1)
ELECTION_WAIT_S = 10.0  # at most this long for the controller to elect a moving coordinator
ELECTION_POLL_S = 0.05


async def handle(request: FindCoordinatorRequest, ctx: RequestContext) -> FindCoordinatorResponse:
    key_type = request.key_type if ctx.api_version >= 1 else GROUP_KEY_TYPE
    internal_topics = (
        offsets_topic.OFFSETS_TOPIC,
        txn_topic.TRANSACTION_STATE_TOPIC,
        state_topic.SHARE_GROUP_STATE_TOPIC,
    )
    existed = {name for name in internal_topics if ctx.services.metadata.topic(name) is not None}
    if ctx.api_version >= 4:
        response = FindCoordinatorResponse(
            coordinators=[await _batched_entry(ctx, key_type, key) for key in request.coordinator_keys]
        )
    else:
        error, (node_id, host, port) = await _find(ctx, key_type, request.key)
        response = FindCoordinatorResponse(
            error_code=error, error_message=error.message or error.name, node_id=node_id, host=host, port=port
        )
    if any(name not in existed and ctx.services.metadata.topic(name) is not None for name in internal_topics):
        # created here: coordinators write to it once answered, so it must be durable first
        await ctx.services.metadata.wait_durable()
    return response


async def _batched_entry(ctx: RequestContext, key_type: int, key: str) -> FindCoordinatorResponse.Coordinator:
    error, (node_id, host, port) = await _find(ctx, key_type, key)
    message = error.message if error == ErrorCode.INVALID_REQUEST else None
    return FindCoordinatorResponse.Coordinator(
        key=key, node_id=node_id, host=host, port=port, error_code=error, error_message=message
    )


async def _find(ctx: RequestContext, key_type: int, key: str) -> tuple[ErrorCode, tuple[int, str, int]]:
    """The coordinator of `key`; while its partition waits for the controller to elect a leader,
    the answer waits too (up to `ELECTION_WAIT_S`)."""
    deadline = anyio.current_time() + ELECTION_WAIT_S
    while True:
        error, node, state = _lookup(ctx, key_type, key)
        if state is None or not _election_pending(ctx, state) or anyio.current_time() >= deadline:
            return error, node
        await anyio.sleep(ELECTION_POLL_S)


def _lookup(
    ctx: RequestContext, key_type: int, key: str
) -> tuple[ErrorCode, tuple[int, str, int], PartitionState | None]:
    """The coordinator of `key` as the metadata says now, and its partition's state."""
    error, info, partition = _coordinator_partition(ctx, key_type, key)
    if error != ErrorCode.NONE:
        return error, NO_NODE, None
    state = None if info is None else info.partitions.get(partition)
    if state is None or state.leader < 0 or _offline_here(ctx, info, partition, state.leader):
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE, state
    for node in ctx.services.live_brokers(ctx.listener_name):
        if node.broker_id == state.leader:
            return ErrorCode.NONE, (node.broker_id, node.host, node.port), None
    return ErrorCode.COORDINATOR_NOT_AVAILABLE, NO_NODE, state


def _election_pending(ctx: RequestContext, state: PartitionState) -> bool:
    """No live leader, but a live in-sync replica the cluster's controller is about to elect."""
    if not ctx.services.config.get("zookeeper.connect"):
        return False  # one broker: no controller elects anyone
    live = {node.broker_id for node in ctx.services.live_brokers(ctx.listener_name)}
    return any(replica in live for replica in state.isr)


def _offline_here(ctx: RequestContext, info: TopicInfo | None, partition: int, leader: int) -> bool:
    """The partition is led here but its log directory failed: it has no live leader until the
    controller moves it (as Kafka's, whose controller leaves it without a leader meanwhile)."""
    services = ctx.services
    return (
        info is not None and leader == services.broker_id and services.replica_manager.is_offline(info.name, partition)
    )


def _coordinator_partition(ctx: RequestContext, key_type: int, key: str) -> tuple[ErrorCode, TopicInfo | None, int]:
    """The internal topic (created on first use; None if it cannot be) and the partition whose
    leader coordinates `key`, or why the key may not be looked up."""
    services = ctx.services
    if key_type == GROUP_KEY_TYPE:
        if not DESCRIBE_GROUP.allows(ctx, key):
            return DESCRIBE_GROUP.denied, None, -1
        info = offsets_topic.ensure_created(services.metadata, services.topic_creator, services.config)
        return ErrorCode.NONE, info, services.group_coordinator.partition_for(key)
    if key_type == TRANSACTION_KEY_TYPE:
        if not DESCRIBE_TRANSACTIONAL_ID.allows(ctx, key):
            return DESCRIBE_TRANSACTIONAL_ID.denied, None, -1
        info = txn_topic.ensure_created(services.metadata, services.topic_creator, services.config)
        return ErrorCode.NONE, info, services.txn_coordinator.partition_for(key)
    if key_type == SHARE_KEY_TYPE and ctx.api_version >= SHARE_MIN_VERSION:
        if not CLUSTER_ACTION_ON_CLUSTER.allows(ctx):
            return CLUSTER_ACTION_ON_CLUSTER.denied, None, -1
        partition = _share_partition(ctx, key)
        if partition is None:
            return ErrorCode.INVALID_REQUEST, None, -1
        info = state_topic.ensure_created(services.metadata, services.topic_creator, services.config)
        return ErrorCode.NONE, info, partition
    return ErrorCode.INVALID_REQUEST, None, -1


def _share_partition(ctx: RequestContext, key: str) -> int | None:
    """The `__share_group_state` partition of a SHARE key; None for a malformed key."""
    share_key = parse_share_coordinator_key(key)
    if share_key is None:
        return None
    coordinator = ctx.services.share_coordinator
    if coordinator is not None:
        return coordinator.partition_for(share_key)
    count = state_topic.partition_count(ctx.services.metadata, ctx.services.config)
    return state_topic.partition_for(key, count)
