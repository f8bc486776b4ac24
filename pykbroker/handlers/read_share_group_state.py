"""ReadShareGroupState (key 84), version 0.

A share-partition leader reads the durable state of a share-partition from its share coordinator
(`coordinator/share/`), giving its leader epoch: a newer epoch is recorded, an older one is
FENCED_LEADER_EPOCH (-1 reads without either). The answer is the state epoch, start offset and state batches; a
share-partition never initialized is INVALID_REQUEST. See `support/share_state_requests.py` for
what the share-group state APIs share (CLUSTER_ACTION, empty requests, coordinator errors).
"""

from __future__ import annotations

from collections.abc import Awaitable

from ..coordinator.share.persister import ShareState
from ..coordinator.share.shard import SharePartitionKey
from ..protocol.api_keys import ApiKey
from ..protocol.message_types import ReadShareGroupStateRequest, ReadShareGroupStateResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import ShareCoordinatorService
from .support.share_state_requests import answer_partitions

API_KEY = ApiKey.READ_SHARE_GROUP_STATE
MIN_VERSION = 0
MAX_VERSION = 0

CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")
Response = ReadShareGroupStateResponse


def _read(
    coordinator: ShareCoordinatorService, key: SharePartitionKey, partition: ReadShareGroupStateRequest.PartitionData
) -> Awaitable[ShareState]:
    return coordinator.read_state(key, partition.leader_epoch)


async def handle(request: ReadShareGroupStateRequest, ctx: RequestContext) -> ReadShareGroupStateResponse:
    answers = await answer_partitions(
        ctx, CLUSTER_ACTION_ON_CLUSTER, request.group_id, request.topics, _read, "read share group state"
    )
    return Response(
        results=[
            Response.ReadStateResult(
                topic_id=topic_id,
                partitions=[
                    Response.PartitionResult(
                        partition=index,
                        error_code=state.error,
                        error_message=message,
                        state_epoch=state.state_epoch,
                        start_offset=state.start_offset,
                        state_batches=[
                            Response.StateBatch(
                                first_offset=b.first_offset,
                                last_offset=b.last_offset,
                                delivery_state=b.delivery_state,
                                delivery_count=b.delivery_count,
                            )
                            for b in state.batches
                        ],
                    )
                    for index, state, message in partitions
                ],
            )
            for topic_id, partitions in answers
        ]
    )
