"""DeleteShareGroupState (key 86), version 0.

The group coordinator deletes the durable state of share-partitions at their share coordinator
(`coordinator/share/`) when a share group or its offsets are deleted: a tombstone is written for
each share-partition that has a state; one without is answered NONE, a partition the metadata
does not know UNKNOWN_TOPIC_OR_PARTITION. See
`support/share_state_requests.py` for what the share-group state APIs share (CLUSTER_ACTION,
empty requests, coordinator errors).
"""

from __future__ import annotations

from collections.abc import Awaitable

from ..coordinator.share.persister import ShareState
from ..coordinator.share.shard import SharePartitionKey
from ..protocol.api_keys import ApiKey
from ..protocol.message_types import DeleteShareGroupStateRequest, DeleteShareGroupStateResponse
from .support.authorization import check
from .support.context import RequestContext
from .support.services import ShareCoordinatorService
from .support.share_state_requests import answer_partitions, error_results

API_KEY = ApiKey.DELETE_SHARE_GROUP_STATE
MIN_VERSION = 0
MAX_VERSION = 0

CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")
Response = DeleteShareGroupStateResponse


def _delete(
    coordinator: ShareCoordinatorService, key: SharePartitionKey, _partition: DeleteShareGroupStateRequest.PartitionData
) -> Awaitable[ShareState]:
    return coordinator.delete_state(key)


async def handle(request: DeleteShareGroupStateRequest, ctx: RequestContext) -> DeleteShareGroupStateResponse:
    answers = await answer_partitions(
        ctx, CLUSTER_ACTION_ON_CLUSTER, request.group_id, request.topics, _delete, "delete share group state"
    )
    return Response(results=error_results(answers, Response.DeleteStateResult, Response.PartitionResult))
