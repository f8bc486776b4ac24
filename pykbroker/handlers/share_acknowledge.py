"""ShareAcknowledge (key 79), version 1 (KIP-932).

A share consumer accepts, releases or rejects records acquired for it, outside a ShareFetch.
The member's share session must exist (SHARE_SESSION_NOT_FOUND) and the epoch be its current
one (INVALID_SHARE_SESSION_EPOCH; epoch 0 is refused, a ShareAcknowledge never opens a
session); epoch -1 closes the session after the acknowledgements and releases what the member
still holds. Each partition's
acknowledgements are written to the share-group state before the answer; errors are per
partition: INVALID_REQUEST for malformed batches, INVALID_RECORD_STATE for records the member
does not hold, UNKNOWN_TOPIC_OR_PARTITION for a partition no ShareFetch made a share partition of
here (as Kafka), NOT_LEADER_OR_FOLLOWER (with the leader the metadata names) where this broker
does not lead.

A member id is required, of at most 36 characters (INVALID_REQUEST); the group id too
(INVALID_GROUP_ID). Authorization as Kafka: READ on the group (GROUP_AUTHORIZATION_FAILED for the whole request),
READ on each topic (TOPIC_AUTHORIZATION_FAILED for its partitions).

Version 2 (IsRenewAck, acknowledge type Renew) is not served.
"""

from __future__ import annotations

import uuid

from ..coordinator.share.partitions import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    SessionError,
)
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ShareAcknowledgeRequest, ShareAcknowledgeResponse
from .support import share_requests
from .support.authorization import check
from .support.context import RequestContext
from .support.share_requests import PartitionErrors

API_KEY = ApiKey.SHARE_ACKNOWLEDGE
MIN_VERSION = 1
MAX_VERSION = 1

READ_GROUP = check(API_KEY, "group")
READ_TOPIC = check(API_KEY, "topic")


async def handle(request: ShareAcknowledgeRequest, ctx: RequestContext) -> ShareAcknowledgeResponse:
    share = ctx.services.share_partitions
    if share is None:
        return _error(ErrorCode.UNSUPPORTED_VERSION)
    key = share_requests.session_key(ctx, READ_GROUP, request.group_id, request.member_id)
    if isinstance(key, ErrorCode):
        return _error(key)
    group_id = key.group_id
    epoch = request.share_session_epoch
    try:
        if epoch == INITIAL_EPOCH:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        if epoch == FINAL_EPOCH:
            share.sessions.get(key, epoch)
        else:
            share.sessions.continue_session(key, epoch)
    except SessionError as exc:
        return _error(exc.code)
    raw = {(t.topic_id, p.partition_index): p.acknowledgement_batches for t in request.topics for p in t.partitions}
    served, errors = share_requests.resolve(ctx, READ_TOPIC, raw)
    by_id = {(k.topic_id, k.partition): k for k in served}
    errors.update(await share_requests.acknowledge(share, key, raw, by_id, errors))
    if epoch == FINAL_EPOCH:
        await share.release_session(group_id, key.member_id)
    hints = share_requests.leader_hints(ctx, [(by_id[n], e) for n, e in errors.items() if n in by_id])
    return ShareAcknowledgeResponse(
        error_code=ErrorCode.NONE,
        responses=_topic_responses(list(raw), errors, hints),
        node_endpoints=[
            ShareAcknowledgeResponse.NodeEndpoint(node_id=n, host=h, port=p, rack=r)
            for n, h, p, r in share_requests.leader_endpoints(ctx, hints)
        ],
    )


def _error(code: ErrorCode) -> ShareAcknowledgeResponse:
    return ShareAcknowledgeResponse(error_code=code, responses=[], node_endpoints=[])


def _topic_responses(
    listed: list[tuple[uuid.UUID, int]], errors: PartitionErrors, hints: share_requests.LeaderHints
) -> list[ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse]:
    topics: dict[uuid.UUID, ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse] = {}
    for named in listed:
        topic_id, index = named
        partition = ShareAcknowledgeResponse.PartitionData(
            partition_index=index, error_code=errors.get(named, ErrorCode.NONE)
        )
        leader = hints.get(named)
        if leader is not None:
            partition.current_leader = ShareAcknowledgeResponse.LeaderIdAndEpoch(
                leader_id=leader[0], leader_epoch=leader[1]
            )
        topic = topics.get(topic_id)
        if topic is None:
            topic = topics[topic_id] = ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse(
                topic_id=topic_id, partitions=[]
            )
        topic.partitions.append(partition)
    return list(topics.values())
