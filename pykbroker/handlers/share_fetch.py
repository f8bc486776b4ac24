"""ShareFetch (key 78), version 1 (KIP-932).

A share consumer fetches records acquired for it from share partitions this broker leads, and
may acknowledge records it was given in the same request. Its share session (group id, member
id) remembers the partitions it fetches: epoch 0 opens it (acknowledgements are then refused,
INVALID_REQUEST), -1 closes it after its acknowledgements (nothing is fetched; what the member
still holds is released, as when its connection closes), any other epoch
must be the session's (INVALID_SHARE_SESSION_EPOCH; SHARE_SESSION_NOT_FOUND without one) and
adds the partitions named, after dropping the forgotten ones. `group.share.max.share.sessions`
sessions at most (SHARE_SESSION_LIMIT_REACHED).

Records are the batches as stored that hold acquired records; AcquiredRecords tells which of
their offsets the member owns and how often each was delivered, for
AcquisitionLockTimeoutMs. Acknowledgement results are AcknowledgeErrorCode per partition
(INVALID_REQUEST for malformed batches, INVALID_RECORD_STATE for records not acquired by the
member). MaxWaitMs/MinBytes: the fetch waits in the ShareFetch purgatory until MinBytes are
acquired, never longer than MaxWaitMs. Partitions led elsewhere are NOT_LEADER_OR_FOLLOWER
with the leader the metadata names (CurrentLeader, NodeEndpoints). A partition whose share state
the group coordinator never initialized (never assigned in the group) is UNKNOWN_SERVER_ERROR
with the share coordinator's ErrorMessage, as Kafka answers.

A member id is required, of at most 36 characters (INVALID_REQUEST); the group id too
(INVALID_GROUP_ID). Authorization as Kafka: READ on the group (GROUP_AUTHORIZATION_FAILED for the whole request),
READ on each topic (TOPIC_AUTHORIZATION_FAILED for its partitions).

Version 2 (ShareAcquireMode, acknowledge type Renew) is not served.
"""

from __future__ import annotations

import uuid

from ..coordinator.share.partitions import (
    FINAL_EPOCH,
    INITIAL_EPOCH,
    SessionError,
    ShareFetchResult,
    ShareSessionKey,
    ShareTopicPartition,
)
from ..coordinator.share.partitions.sessions import SharePartitionKey
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import ShareFetchRequest, ShareFetchResponse
from .support import share_requests
from .support.authorization import check
from .support.context import RequestContext
from .support.services import SharePartitionService
from .support.share_requests import LeaderHints, PartitionErrors

API_KEY = ApiKey.SHARE_FETCH
MIN_VERSION = 1
MAX_VERSION = 1

READ_GROUP = check(API_KEY, "group")
READ_TOPIC = check(API_KEY, "topic")

Named = list[tuple[uuid.UUID, int]]


async def handle(request: ShareFetchRequest, ctx: RequestContext) -> ShareFetchResponse:
    share = ctx.services.share_partitions
    if share is None:
        return _error(ErrorCode.UNSUPPORTED_VERSION)
    key = share_requests.session_key(ctx, READ_GROUP, request.group_id, request.member_id)
    if isinstance(key, ErrorCode):
        return _error(key)
    group_id = key.group_id
    named = [(t.topic_id, p.partition_index) for t in request.topics for p in t.partitions]
    raw_acknowledgements = {
        (t.topic_id, p.partition_index): p.acknowledgement_batches
        for t in request.topics
        for p in t.partitions
        if p.acknowledgement_batches
    }
    epoch = request.share_session_epoch
    try:
        to_fetch = _update_session(share, ctx, key, named, request, bool(raw_acknowledgements))
    except SessionError as exc:
        return _error(exc.code)
    lock_ms = share.record_lock_duration_ms(group_id)
    served, errors = share_requests.resolve(ctx, READ_TOPIC, [*named, *to_fetch])
    by_id = {(k.topic_id, k.partition): k for k in served}
    acknowledge_errors: PartitionErrors = {n: errors[n] for n in raw_acknowledgements if n in errors}
    acknowledge_errors.update(await share_requests.acknowledge(share, key, raw_acknowledgements, by_id, errors))
    results: dict[ShareTopicPartition, ShareFetchResult] = {}
    if epoch != FINAL_EPOCH:
        fetchable = [by_id[n] for n in to_fetch if n in by_id]
        results = await share.fetch(
            group_id,
            key.member_id,
            fetchable,
            max_wait_ms=request.max_wait_ms,
            min_bytes=request.min_bytes,
            max_bytes=request.max_bytes,
            max_records=request.max_records,
        )
    else:
        await share.release_session(group_id, key.member_id)
    listed = _listed(named, results)
    moved = [(k, r.error_code) for k, r in results.items()]
    moved += [(by_id[n], e) for n, e in acknowledge_errors.items() if n in by_id]
    hints = share_requests.leader_hints(ctx, moved)
    return ShareFetchResponse(
        error_code=ErrorCode.NONE,
        acquisition_lock_timeout_ms=lock_ms,
        responses=_topic_responses(listed, by_id, results, errors, acknowledge_errors, hints),
        node_endpoints=[
            ShareFetchResponse.NodeEndpoint(node_id=n, host=h, port=p, rack=r)
            for n, h, p, r in share_requests.leader_endpoints(ctx, hints)
        ],
    )


def _error(code: ErrorCode) -> ShareFetchResponse:
    return ShareFetchResponse(error_code=code, responses=[], node_endpoints=[])


def _update_session(
    share: SharePartitionService,
    ctx: RequestContext,
    key: ShareSessionKey,
    named: Named,
    request: ShareFetchRequest,
    acknowledges: bool,
) -> Named:
    """Open, continue or close the member's share session; the partitions to fetch."""
    sessions = share.sessions
    epoch = request.share_session_epoch
    if epoch == INITIAL_EPOCH:
        if acknowledges:
            raise SessionError(ErrorCode.INVALID_REQUEST)
        session = sessions.open(key, ctx.connection_id)
    elif epoch == FINAL_EPOCH:
        sessions.get(key, epoch)
        return []
    else:
        session = sessions.continue_session(key, epoch)
    forgotten = [SharePartitionKey(t.topic_id, p) for t in request.forgotten_topics_data for p in t.partitions]
    session.update((SharePartitionKey(*n) for n in named), forgotten)
    return [(k.topic_id, k.partition) for k in session.partitions]


def _listed(named: Named, results: dict[ShareTopicPartition, ShareFetchResult]) -> Named:
    """The partitions the response lists: those the request named, and the session's others
    that have records or an error."""
    listed = dict.fromkeys(named)
    for key, result in results.items():
        if result.acquired or result.error_code != ErrorCode.NONE:
            listed.setdefault((key.topic_id, key.partition))
    return list(listed)


def _topic_responses(
    listed: Named,
    by_id: dict[tuple[uuid.UUID, int], ShareTopicPartition],
    results: dict[ShareTopicPartition, ShareFetchResult],
    errors: PartitionErrors,
    acknowledge_errors: PartitionErrors,
    hints: LeaderHints,
) -> list[ShareFetchResponse.ShareFetchableTopicResponse]:
    topics: dict[uuid.UUID, ShareFetchResponse.ShareFetchableTopicResponse] = {}
    for named in listed:
        topic_id, index = named
        key = by_id.get(named)
        result = results.get(key) if key is not None else None
        error = errors.get(named, result.error_code if result is not None else ErrorCode.NONE)
        partition = ShareFetchResponse.PartitionData(
            partition_index=index,
            error_code=error,
            error_message=result.error_message if result is not None and named not in errors else None,
            acknowledge_error_code=acknowledge_errors.get(named, ErrorCode.NONE),
            records=result.records if result is not None else b"",
            acquired_records=[
                ShareFetchResponse.AcquiredRecords(
                    first_offset=r.first_offset, last_offset=r.last_offset, delivery_count=r.delivery_count
                )
                for r in (result.acquired if result is not None else [])
            ],
        )
        leader = hints.get(named)
        if leader is not None:
            partition.current_leader = ShareFetchResponse.LeaderIdAndEpoch(leader_id=leader[0], leader_epoch=leader[1])
        topic = topics.get(topic_id)
        if topic is None:
            topic = topics[topic_id] = ShareFetchResponse.ShareFetchableTopicResponse(topic_id=topic_id, partitions=[])
        topic.partitions.append(partition)
    return list(topics.values())
