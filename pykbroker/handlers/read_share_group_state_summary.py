"""ReadShareGroupStateSummary (key 87), version 0.

The group coordinator reads the state epoch and start offset of share-partitions from their share
coordinator (`coordinator/share/`), for DescribeShareGroupOffsets: nothing is written; a
share-partition never initialized answers state epoch 0 and start offset -1. An older leader
epoch (other than -1) is FENCED_LEADER_EPOCH. See `support/share_state_requests.py` for what the
share-group state APIs share (CLUSTER_ACTION, empty requests, coordinator errors).
"""

from __future__ import annotations

from collections.abc import Awaitable

from ..coordinator.share.persister import ShareState
from ..coordinator.share.shard import SharePartitionKey
from ..protocol.api_keys import ApiKey
from ..protocol.message_types import ReadShareGroupStateSummaryRequest, ReadShareGroupStateSummaryResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import ShareCoordinatorService
from .support.share_state_requests import answer_partitions

API_KEY = ApiKey.READ_SHARE_GROUP_STATE_SUMMARY
MIN_VERSION = 0
MAX_VERSION = 0

CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")
Response = ReadShareGroupStateSummaryResponse


def _read_summary(
    coordinator: ShareCoordinatorService,
    key: SharePartitionKey,
    partition: ReadShareGroupStateSummaryRequest.PartitionData,
) -> Awaitable[ShareState]:
    return coordinator.read_summary(key, partition.leader_epoch)


async def handle(request: ReadShareGroupStateSummaryRequest, ctx: RequestContext) -> ReadShareGroupStateSummaryResponse:
    answers = await answer_partitions(
        ctx,
        CLUSTER_ACTION_ON_CLUSTER,
        request.group_id,
        request.topics,
        _read_summary,
        "read share group state summary",
    )
    return Response(
        results=[
            Response.ReadStateSummaryResult(
                topic_id=topic_id,
                partitions=[
                    Response.PartitionResult(
                        partition=index,
                        error_code=state.error,
                        error_message=message,
                        state_epoch=state.state_epoch,
                        start_offset=state.start_offset,
                    )
                    for index, state, message in partitions
                ],
            )
            for topic_id, partitions in answers
        ]
    )
