"""InitializeShareGroupState (key 83), version 0.

The group coordinator initializes the durable state of a share-partition at its share
coordinator (`coordinator/share/`) when the partition is first assigned in a share group, or
when AlterShareGroupOffsets sets its start offset: a fresh snapshot with the state epoch and the
start offset (-1: not yet chosen) and no batches. An older state epoch is FENCED_STATE_EPOCH. See
`support/share_state_requests.py` for what the share-group state APIs share (CLUSTER_ACTION,
empty requests, coordinator errors).
"""

from __future__ import annotations

from collections.abc import Awaitable

from ..coordinator.share.persister import ShareState
from ..coordinator.share.shard import SharePartitionKey
from ..protocol.api_keys import ApiKey
from ..protocol.message_types import InitializeShareGroupStateRequest, InitializeShareGroupStateResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import ShareCoordinatorService
from .support.share_state_requests import answer_partitions, error_results

API_KEY = ApiKey.INITIALIZE_SHARE_GROUP_STATE
MIN_VERSION = 0
MAX_VERSION = 0

CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")
Response = InitializeShareGroupStateResponse


def _initialize(
    coordinator: ShareCoordinatorService,
    key: SharePartitionKey,
    partition: InitializeShareGroupStateRequest.PartitionData,
) -> Awaitable[ShareState]:
    return coordinator.initialize_state(key, partition.state_epoch, partition.start_offset)


async def handle(request: InitializeShareGroupStateRequest, ctx: RequestContext) -> InitializeShareGroupStateResponse:
    answers = await answer_partitions(
        ctx, CLUSTER_ACTION_ON_CLUSTER, request.group_id, request.topics, _initialize, "initialize share group state"
    )
    return Response(results=error_results(answers, Response.InitializeStateResult, Response.PartitionResult))
