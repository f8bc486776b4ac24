"""WriteShareGroupState (key 85), version 0.

A share-partition leader writes the durable state of a share-partition to its share coordinator
(`coordinator/share/`): state epoch, leader epoch, start offset (-1: unchanged) and the state
batches that changed, merged into the state as Kafka's PersisterStateBatchCombiner does. An older
leader epoch is FENCED_LEADER_EPOCH, an older state epoch FENCED_STATE_EPOCH, a share-partition
never initialized INVALID_REQUEST, a partition the metadata does not know
UNKNOWN_TOPIC_OR_PARTITION. See `support/share_state_requests.py` for what the share-group state
APIs share (CLUSTER_ACTION, empty requests, coordinator errors).
"""

from __future__ import annotations

from collections.abc import Awaitable

from ..coordinator.share.combiner import PersisterStateBatch
from ..coordinator.share.persister import ShareState
from ..coordinator.share.shard import SharePartitionKey
from ..protocol.api_keys import ApiKey
from ..protocol.message_types import WriteShareGroupStateRequest, WriteShareGroupStateResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import ShareCoordinatorService
from .support.share_state_requests import answer_partitions, error_results

API_KEY = ApiKey.WRITE_SHARE_GROUP_STATE
MIN_VERSION = 0
MAX_VERSION = 0

CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")
Response = WriteShareGroupStateResponse


def _write(
    coordinator: ShareCoordinatorService, key: SharePartitionKey, partition: WriteShareGroupStateRequest.PartitionData
) -> Awaitable[ShareState]:
    batches = [
        PersisterStateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)
        for b in partition.state_batches
    ]
    return coordinator.write_state(key, partition.state_epoch, partition.leader_epoch, partition.start_offset, batches)


async def handle(request: WriteShareGroupStateRequest, ctx: RequestContext) -> WriteShareGroupStateResponse:
    answers = await answer_partitions(
        ctx, CLUSTER_ACTION_ON_CLUSTER, request.group_id, request.topics, _write, "write share group state"
    )
    return Response(results=error_results(answers, Response.WriteStateResult, Response.PartitionResult))
