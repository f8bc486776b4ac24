"""Fetch (key 1), versions 0-17.

Reads stored batches and sends them as they lie on disk (file regions handed to `sendfile`), with
long polling: the response goes out as soon as `min_bytes` are readable, or after `max_wait_ms`.
Per-partition `partition_max_bytes` and the response-wide `max_bytes` (v3+) limit the size, except
that the first batch is always returned whole so that a consumer can make progress. A consumer's
`max_bytes` is further capped by the broker's `fetch.max.bytes` (KIP-541) and by
`pykbroker.fetch.response.max.bytes` (8 MiB: see config/definitions.py); followers are not.

- v0-v3 clients read only magic 0/1 message sets: their data is down-converted (v0-v1 to magic
  0, v2-v3 to magic 1) in memory.
- Before v10, a consumer gets UNSUPPORTED_COMPRESSION_TYPE for the partitions of a topic whose
  `compression.type` is zstd, as from Kafka.
- v4+ carry the last stable offset. A read_committed consumer (isolation level 1) reads up to
  the last stable offset (the first offset of the oldest transaction not yet decided) and is
  given the aborted transactions overlapping what it read, from the `.txnindex` files, so that
  it drops their records; read_uncommitted reads up to the high watermark.
- v5+ carry the log start offset; v7+ use incremental fetch sessions (KIP-227); v13+ name topics
  by id.
- v11+ carry the consumer's `rack_id` (`client.rack`) and the preferred read replica (KIP-392):
  with `replica.selector.class` = RackAwareReplicaSelector, a leader answers a consumer whose rack
  holds an in-sync follower (and not the leader) with that follower's id and no records, at once;
  a follower answers consumers of v11+ (never older ones) up to its high watermark, which it
  learns from its leader. See `replication/replica_selector.py`.
- A follower (replica id >= 0; v15+ in `replica_state`) reads up to the log end offset, and its
  fetch offset tells the leader how far it has replicated; an incremental fetch speaks for every
  partition of its session, so a follower that caught up on an idle partition rejoins its ISR.
  From v12, a follower's last fetched epoch is checked against the leader's log: where they
  disagree the answer is a diverging epoch (epoch and end offset) without records, and the
  follower truncates.
- From v12, NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH carry the leader the metadata names
  (`current_leader`), and from v16 its endpoint (`node_endpoints`), so that clients need not
  refresh their metadata first (KIP-951).
- Authorization as Kafka: consumers need READ on each topic, followers CLUSTER_ACTION on the
  cluster; the partitions refused are answered TOPIC_AUTHORIZATION_FAILED without being read.
- Client quotas as Kafka's (followers are exempt): a consumer's `max_bytes` is capped at what its
  `consumer_byte_rate` allows in one quota window; the response's size counts against that rate
  and the request's time against `request_percentage`. A violation answers with no partitions
  (an incremental session keeps its id and epoch, a new session is not created), the throttle time
  in `throttle_time_ms`, and the connection muted for that long.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from ..common.time import now_ms
from ..protocol.api_keys import ApiKey
from ..protocol.codegen import ZERO_UUID, RecordsData
from ..protocol.errors import ErrorCode
from ..protocol.message_types import FetchRequest, FetchResponse
from ..records import batch
from ..records.errors import UnsupportedCompressionError
from ..replication.fetch_session import FetchContext, TopicIdPartition, session_wait_key
from ..replication.fetch_types import (
    PartitionFetchRequest,
    PartitionFetchResult,
    PartitionsToRead,
    SessionWait,
)
from ..replication.replica_selector import ClientMetadata
from .support.authorization import Check, check
from .support.context import RequestContext
from .support.quota_requests import quota_client_id, quota_user, request_throttle_ms, throttle
from .support.services import BrokerServices, ReplicaService

if TYPE_CHECKING:
    from ..cluster.store import MetadataStore
    from ..log.results import FileRegion
    from ..replication.fetch_types import FetchedRecords

API_KEY = ApiKey.FETCH
MIN_VERSION = 0
MAX_VERSION = 17

CLUSTER_ACTION_FOR_FOLLOWER = check(API_KEY, "follower")
READ_TOPIC = check(API_KEY, "topic")
READ_COMMITTED = 1
ZSTD_MIN_VERSION = 10  # the first Fetch version whose consumers read zstd batches

Requested = list[tuple[TopicIdPartition, PartitionFetchRequest]]  # partitions and what is asked of each
Listed = list[tuple[TopicIdPartition, PartitionFetchResult]]  # the partitions the response lists, read
TopicKey = tuple["str | None", uuid.UUID]  # a response topic: its name (None for an unknown id) and id
LeaderHints = dict[tuple["str | None", uuid.UUID, int], tuple[int, int]]  # partition -> (leader, epoch)


async def handle(request: FetchRequest, ctx: RequestContext) -> FetchResponse:
    version = ctx.api_version
    services = ctx.services
    replica_id = request.replica_state.replica_id if version >= 15 else request.replica_id
    session = services.fetch_sessions.new_context(
        version=version,
        session_id=request.session_id if version >= 7 else 0,
        session_epoch=request.session_epoch if version >= 7 else -1,
        fetch_data={
            _key(t, p.partition, version): _partition_request(p, version) for t in request.topics for p in t.partitions
        },
        forgotten=[_key(t, p, version) for t in _forgotten_topics(request, version) for p in t.partitions],
        is_follower=replica_id >= 0,
        now_ms=now_ms(),
        topic_names=_topic_names_by_id(services.metadata) if version >= 13 else None,
    )
    to_read, denied = _authorized(ctx, session.partitions_to_read(), is_follower=replica_id >= 0)
    if replica_id >= 0 and CLUSTER_ACTION_FOR_FOLLOWER.allows(ctx, log_if_denied=False):
        services.replica_manager.record_follower_session(
            replica_id, [(key.topic_partition, p) for key, p in session.session_partitions()]
        )
    isolation = request.isolation_level if version >= 4 else 0
    max_bytes = request.max_bytes if version >= 3 else 0x7FFFFFFF
    if replica_id < 0:
        max_bytes = _within_quota_window(ctx, _within_broker_limits(services, max_bytes))
    read = await services.replica_manager.fetch_records(
        [(key.topic_partition, p) for key, p in to_read],
        replica_id=replica_id,
        max_wait_ms=request.max_wait_ms,
        min_bytes=min(request.min_bytes, max_bytes),
        max_bytes=max_bytes,
        isolation_level=isolation,
        session_wait=_session_wait(ctx, session, to_read, denied, is_follower=replica_id >= 0),
        client_metadata=ClientMetadata(request.rack_id, ctx.listener_name) if version >= 11 else None,
    )
    results = {key: _for_version(read[key.topic_partition], version) for key, _ in to_read}
    results.update(
        (key, PartitionFetchResult(error_code=_check_of(replica_id >= 0).denied, records=b"")) for key in denied
    )
    if version < ZSTD_MIN_VERSION and replica_id < 0:
        _refuse_zstd_topics(results, services.replica_manager)
    if replica_id < 0 and _throttled(ctx, session, results):
        error, session_id, _ = session.throttled_response()
        return FetchResponse(
            error_code=error, session_id=session_id, responses=[], throttle_time_ms=ctx.throttle_time_ms
        )
    error, session_id, included = session.build_response(results, now_ms=now_ms())
    hints = _leader_hints(included, version, services)
    response = FetchResponse(
        error_code=error, session_id=session_id, responses=_topic_responses(included, version, isolation, hints)
    )
    if version >= 16:
        response.node_endpoints = _node_endpoints(hints, services, ctx.listener_name)
    return response


def _within_broker_limits(services: BrokerServices, max_bytes: int) -> int:
    """A consumer's `max_bytes` capped by the broker's `fetch.max.bytes` (as Kafka) and by
    `pykbroker.fetch.response.max.bytes`, so that big fetches come in responses a client starts
    to parse sooner."""
    config = services.config
    return min(max_bytes, config["fetch.max.bytes"], config["pykbroker.fetch.response.max.bytes"])


def _within_quota_window(ctx: RequestContext, max_bytes: int) -> int:
    """Kafka caps a consumer's fetch at what its quota lets it take in one quota window without a
    certain throttle (`getMaxValueInQuotaWindow`)."""
    quotas = ctx.services.quotas
    if quotas is None or not quotas.fetch.enabled:
        return max_bytes
    window_bytes = quotas.fetch.max_value_in_quota_window(quota_user(ctx), quota_client_id(ctx))
    return max_bytes if window_bytes >= max_bytes else int(window_bytes)


def _throttled(
    ctx: RequestContext, session: FetchContext, results: dict[TopicIdPartition, PartitionFetchResult]
) -> bool:
    """Kafka's consumer fetch quota: the response's size against `consumer_byte_rate` and the
    request's time against `request_percentage`. A throttled fetch is answered empty (its bytes
    taken back from the quota) with the throttle time, and its session stays as it was."""
    quotas = ctx.services.quotas
    if quotas is None or not (quotas.fetch.enabled or quotas.request.enabled):
        return False
    at_ms = now_ms()
    user, client_id = quota_user(ctx), quota_client_id(ctx)
    size = _response_size(session.preview_response(results).partitions)
    bandwidth_ms = quotas.fetch.record_and_get_throttle_time_ms(user, client_id, size, at_ms)
    throttle(ctx, quotas.fetch, bandwidth_ms)
    throttle(ctx, quotas.request, request_throttle_ms(ctx, at_ms))
    if ctx.throttle_time_ms <= 0:
        return False
    quotas.fetch.unrecord(user, client_id, size, at_ms)
    return True


RESPONSE_OVERHEAD = 16  # the fixed fields of a fetch response (throttle, error, session id, ...)
PARTITION_OVERHEAD = 46  # a partition's fixed fields (index, error, offsets, lengths) and its topic's share


def _response_size(listed: Listed) -> int:
    """The size a response listing these partitions would have, from their records' sizes (the
    fixed fields estimated): what the fetch quota counts, per request, never per record."""
    return RESPONSE_OVERHEAD + sum(PARTITION_OVERHEAD + (result.records_size or 0) for _, result in listed)


def _session_wait(
    ctx: RequestContext, session: FetchContext, to_read: Requested, denied: list[TopicIdPartition], *, is_follower: bool
) -> SessionWait | None:
    """For an incremental fetch: how it waits for the session's partitions it did not read, and
    reads those that changed meanwhile (added to `to_read`, or to `denied`)."""
    session_id = session.session_to_wait_on
    if session_id is None:
        return None

    def take() -> PartitionsToRead:
        allowed, refused = _authorized(ctx, session.changed_meanwhile(), is_follower=is_follower)
        to_read.extend(allowed)
        denied.extend(refused)
        return [(key.topic_partition, p) for key, p in allowed]

    def peek() -> PartitionsToRead:
        return [(key.topic_partition, p) for key, p in session.peek_changed_meanwhile()]

    return SessionWait(session_wait_key(session_id), peek, take)


def _check_of(is_follower: bool) -> Check:
    """The check a fetch is authorized by: a follower's is on the cluster, a consumer's on each topic."""
    return CLUSTER_ACTION_FOR_FOLLOWER if is_follower else READ_TOPIC


def _authorized(
    ctx: RequestContext, partitions: Requested, *, is_follower: bool
) -> tuple[Requested, list[TopicIdPartition]]:
    """(partitions to read, keys denied): followers need CLUSTER_ACTION on the cluster, consumers
    READ on each topic; Kafka answers the others with the check's denial code (TOPIC_AUTHORIZATION_FAILED)."""
    if is_follower:
        allowed = CLUSTER_ACTION_FOR_FOLLOWER.allows(ctx)
        return (partitions, []) if allowed else ([], [key for key, _ in partitions])
    readable = READ_TOPIC.allowed(ctx, (key.topic_partition[0] for key, _ in partitions))
    return (
        [(key, p) for key, p in partitions if key.topic_partition[0] in readable],
        [key for key, _ in partitions if key.topic_partition[0] not in readable],
    )


def _topic_names_by_id(metadata: MetadataStore) -> Mapping[uuid.UUID, str]:
    """{topic id: name} of every topic, for requests that name topics by id (v13+): the store's
    index, whose lookups do not walk every topic."""
    return metadata.topic_names_by_id()


def _key(
    topic: FetchRequest.FetchTopic | FetchRequest.ForgottenTopic, partition: int, version: int
) -> TopicIdPartition:
    if version >= 13:
        return TopicIdPartition(topic.topic_id, None, partition)
    return TopicIdPartition(ZERO_UUID, topic.topic, partition)


def _forgotten_topics(request: FetchRequest, version: int) -> list[FetchRequest.ForgottenTopic]:
    return request.forgotten_topics_data if version >= 7 else []


def _partition_request(p: FetchRequest.FetchPartition, version: int) -> PartitionFetchRequest:
    return PartitionFetchRequest(
        fetch_offset=p.fetch_offset,
        log_start_offset=p.log_start_offset if version >= 5 else -1,
        max_bytes=p.partition_max_bytes,
        current_leader_epoch=p.current_leader_epoch if version >= 9 else -1,
        last_fetched_epoch=p.last_fetched_epoch if version >= 12 else -1,
    )


def _for_version(result: PartitionFetchResult, version: int) -> PartitionFetchResult:
    """The result as the request's version carries it: its records (down-converted below v4)
    and, from v12, the diverging epoch."""
    error = result.error_code
    try:
        records = _records_for_version(result.records, version)
    except UnsupportedCompressionError:  # zstd data cannot be down-converted for v0-v3
        error, records = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, b""
    return replace(
        result,
        error_code=error,
        records_size=len(records),
        records=records,
        diverging_epoch=result.diverging_epoch if version >= 12 else None,
    )


def _refuse_zstd_topics(results: dict[TopicIdPartition, PartitionFetchResult], replica_manager: ReplicaService) -> None:
    """As Kafka: a consumer older than Fetch v10 gets UNSUPPORTED_COMPRESSION_TYPE (and no
    offsets) for every partition of a topic whose `compression.type` is zstd."""
    for key in results:
        config = replica_manager.log_config(*key.topic_partition)
        if config is not None and config.compression_type == "zstd":
            results[key] = PartitionFetchResult(error_code=ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, records=b"")


_MOVED = (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.FENCED_LEADER_EPOCH)


def _leader_hints(entries: Listed, version: int, services: BrokerServices) -> LeaderHints:
    """{(topic name, topic id, partition): (leader id, leader epoch)} for partitions whose leader moved."""
    if version < 12:
        return {}
    hints: LeaderHints = {}
    names: Mapping[uuid.UUID, str] | None = None
    for key, result in entries:
        if result.error_code not in _MOVED:
            continue
        topic = key.topic
        if topic is None:
            names = names if names is not None else _topic_names_by_id(services.metadata)
            topic = names.get(key.topic_id)
        hint = services.replica_manager.leader_hint(topic, key.partition) if topic else None
        if hint is not None:
            hints[(key.topic, key.topic_id, key.partition)] = hint
    return hints


def _node_endpoints(
    hints: LeaderHints, services: BrokerServices, listener_name: str
) -> list[FetchResponse.NodeEndpoint]:
    leaders = {leader for leader, _ in hints.values()}
    return [
        FetchResponse.NodeEndpoint(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
        for b in services.live_brokers(listener_name)
        if b.broker_id in leaders
    ]


def _topic_responses(
    entries: Listed, version: int, isolation: int, hints: LeaderHints
) -> list[FetchResponse.FetchableTopicResponse]:
    topics: dict[TopicKey, FetchResponse.FetchableTopicResponse] = {}
    for key, result in entries:
        topic = topics.get((key.topic, key.topic_id))
        if topic is None:
            topic = topics[(key.topic, key.topic_id)] = FetchResponse.FetchableTopicResponse(
                # a name is None only for an unknown topic id (v13+), and v13+ do not send names
                topic=key.topic or "",
                topic_id=key.topic_id,
                partitions=[],
            )
        hint = hints.get((key.topic, key.topic_id, key.partition))
        topic.partitions.append(_partition_response(key.partition, result, version, isolation, hint))
    return list(topics.values())


# partitions Kafka answers before reading them: their aborted transactions are [], not null
_REFUSED_BEFORE_READING = (
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.UNKNOWN_TOPIC_ID,
    ErrorCode.TOPIC_AUTHORIZATION_FAILED,
)


def _partition_response(
    index: int, result: PartitionFetchResult, version: int, isolation: int, hint: tuple[int, int] | None = None
) -> FetchResponse.PartitionData:
    response = FetchResponse.PartitionData(
        partition_index=index,
        error_code=result.error_code,
        high_watermark=result.high_watermark,
        last_stable_offset=result.last_stable_offset,
        log_start_offset=result.log_start_offset,
        aborted_transactions=_aborted_transactions(result, isolation),
        # `_for_version` made the records what a response carries (one region or bytes)
        records=b"" if result.records is None else cast(RecordsData, result.records),
    )
    if result.diverging_epoch is not None:
        response.diverging_epoch = FetchResponse.EpochEndOffset(
            epoch=result.diverging_epoch.epoch, end_offset=result.diverging_epoch.end_offset
        )
    if result.has_preferred_read_replica:  # only ever for v11+ (client metadata)
        response.preferred_read_replica = result.preferred_read_replica
    if hint is not None:
        response.current_leader = FetchResponse.LeaderIdAndEpoch(leader_id=hint[0], leader_epoch=hint[1])
    return response


def _aborted_transactions(
    result: PartitionFetchResult, isolation: int
) -> list[FetchResponse.AbortedTransaction] | None:
    """read_committed: the aborted transactions the read overlapped (empty when none or on an
    error); read_uncommitted: null, except for partitions Kafka refuses before reading."""
    if isolation != READ_COMMITTED:
        return [] if result.error_code in _REFUSED_BEFORE_READING else None
    return [
        FetchResponse.AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset)
        for txn in result.aborted_transactions or []
    ]


def _records_for_version(regions: FetchedRecords | None, version: int) -> FileRegion | bytes:
    if not regions:
        return b""
    if not isinstance(regions, list):  # already what a response carries
        return regions
    if version >= 4:
        return regions[0] if len(regions) == 1 else b"".join(r.read_bytes() for r in regions)
    data = b"".join(r.read_bytes() for r in regions)
    return _down_convert(data, magic=0 if version <= 1 else 1)


def _down_convert(data: bytes, magic: int) -> bytes:
    """Whole batches only (a fetch may end in a partial one), as a legacy message set."""
    from ..records import legacy  # loaded with the first fetch of a client that old

    end = 0
    for pos, header in batch.iter_headers(data):
        end = pos + header.size
    return legacy.downconvert(data[:end], magic) if end else b""
