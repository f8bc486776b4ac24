"""Produce (key 0), versions 0-11.

Each partition's records are appended as they came (offsets assigned in the batch header); the
response carries the base offset, the LogAppendTime when the topic uses it (v2+), the log start
offset (v5+), and per-batch errors with a message (v8+).

- v0-v2 carry legacy magic 0/1 message sets: they are up-converted to one magic 2 batch, since
  the log stores magic 2 only (as Kafka 3 does).
- v3+ must carry exactly one magic 2 batch per partition (INVALID_RECORD otherwise).
- Clients cannot write to internal topics (INVALID_TOPIC_EXCEPTION), as in Kafka.
- zstd needs v7+ (UNSUPPORTED_COMPRESSION_TYPE before).
- acks must be -1, 0 or 1 (INVALID_REQUIRED_ACKS). acks=0 gets no response; if any partition
  failed, the connection is closed instead so that the client refreshes its metadata.
- acks=-1 waits until the in-sync replicas have the data, at most `timeout_ms`; with fewer
  in-sync replicas than `min.insync.replicas` it fails with NOT_ENOUGH_REPLICAS before appending
  (or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank while it waited).
- Transactional batches (v3+, with the request's `transactional_id`): with
  `transaction.partition.verification.enable` (KIP-890 part 1) the first batch of a transaction
  on a partition is appended only once the transaction coordinator confirms the partition was
  added to the transaction; otherwise INVALID_TXN_STATE ("Partition was not added to the
  transaction"; TRANSACTION_ABORTABLE for v11), and NOT_ENOUGH_REPLICAS when the coordinator
  could not answer (retriable). Transactional batches of more than one producer in one request
  are INVALID_PRODUCER_ID_MAPPING. A request with transactional batches but no
  `transactional_id` fails as a whole with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as in Kafka
  (which checks the id's authorization before anything else).
- From v10, NOT_LEADER_OR_FOLLOWER carries the leader the metadata names (`current_leader`) and
  its endpoint (`node_endpoints`), so that clients can retry without refreshing metadata first.
- Authorization as Kafka 3.9: transactional batches need WRITE on the request's transactional id
  (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition otherwise); each topic needs WRITE
  (TOPIC_AUTHORIZATION_FAILED, checked before anything else about its partitions). Idempotent
  batches need nothing more (IDEMPOTENT_WRITE is asked by InitProducerId).
- Client quotas as Kafka's: once the request is answered, its size in bytes counts against the
  client's `producer_byte_rate` and its time against `request_percentage` (not for acks=0); a
  violation answers with `throttle_time_ms` and mutes the connection for that long (the records
  are appended all the same).
"""

from ..cluster.model import INTERNAL_TOPICS
from ..common.time import now_ms
from ..common.topic_partition import TopicPartition
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import ProduceRequest, ProduceResponse
from ..records import batch
from ..records.compression import ZSTD
from ..records.errors import InvalidRecordError
from ..replication.replica_manager import ProduceResult
from .support.authorization import check
from .support.context import CloseConnection, RequestContext
from .support.quota_requests import quota_client_id, quota_user, request_throttle_ms, throttle

API_KEY = ApiKey.PRODUCE
MIN_VERSION = 0
MAX_VERSION = 11

WRITE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")
WRITE_TOPIC = check(API_KEY, "topic")


async def handle(request: ProduceRequest, ctx: RequestContext) -> ProduceResponse | None:
    if ctx.api_version >= 3 and _has_transactional_batches(request) and not _may_write_transactionally(request, ctx):
        return _uniform_response(request, WRITE_TRANSACTIONAL_ID.denied)
    acks = request.acks
    if acks not in (-1, 0, 1):
        return _uniform_response(request, ErrorCode.INVALID_REQUIRED_ACKS)
    writable = WRITE_TOPIC.allowed(ctx, (t.name for t in request.topic_data))
    entries, early_results = _collect_partitions(request, ctx.api_version, writable)
    results = await ctx.services.replica_manager.handle_produce_append(
        entries,
        required_acks=acks,
        timeout_ms=request.timeout_ms,
        transactional_id=request.transactional_id if ctx.api_version >= 3 else None,
        verifier=ctx.services.txn_verifier,
        api_version=ctx.api_version,
    )
    results.update(early_results)
    _record_quotas(ctx, acks)
    if acks == 0:
        failed = [tp for tp, r in results.items() if r.error != ErrorCode.NONE]
        if failed:
            raise CloseConnection(f"acks=0 produce failed for {failed}: {results[failed[0]].error.name}")
        return None
    response = _response(request, results)
    if ctx.api_version >= 10:
        _add_leader_hints(response, ctx)
    return response


def _record_quotas(ctx: RequestContext, acks: int) -> None:
    """Kafka's produce quota: the request's size in bytes (not its records) against the client's
    `producer_byte_rate`, and, unless acks=0, its time against `request_percentage`."""
    quotas = ctx.services.quotas
    if quotas is None or not (quotas.produce.enabled or quotas.request.enabled):
        return
    at_ms = now_ms()
    user, client_id = quota_user(ctx), quota_client_id(ctx)
    throttle(
        ctx, quotas.produce, quotas.produce.record_and_get_throttle_time_ms(user, client_id, ctx.request_size, at_ms)
    )
    if acks == 0:
        ctx.request_quota_recorded = True  # Kafka records no request time for acks=0
    else:
        throttle(ctx, quotas.request, request_throttle_ms(ctx, at_ms))


def _add_leader_hints(response: ProduceResponse, ctx: RequestContext) -> None:
    replica_manager = ctx.services.replica_manager
    leaders = set()
    for topic in response.responses:
        for part in topic.partition_responses:
            if part.error_code != ErrorCode.NOT_LEADER_OR_FOLLOWER:
                continue
            hint = replica_manager.leader_hint(topic.name, part.index)
            if hint is not None:
                part.current_leader = ProduceResponse.LeaderIdAndEpoch(leader_id=hint[0], leader_epoch=hint[1])
                leaders.add(hint[0])
    if leaders:
        response.node_endpoints = [
            ProduceResponse.NodeEndpoint(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
            for b in ctx.services.live_brokers(ctx.listener_name)
            if b.broker_id in leaders
        ]


def _may_write_transactionally(request: ProduceRequest, ctx: RequestContext) -> bool:
    """Transactional batches need the request's transactional id, and WRITE on it."""
    transactional_id = request.transactional_id
    return transactional_id is not None and WRITE_TRANSACTIONAL_ID.allows(ctx, transactional_id)


def _collect_partitions(
    request: ProduceRequest, version: int, writable: set[str]
) -> tuple[dict[TopicPartition, bytearray], dict[TopicPartition, ProduceResult]]:
    """({tp: magic 2 records} to append, {tp: result} for partitions rejected up front)."""
    entries: dict[TopicPartition, bytearray] = {}
    rejected: dict[TopicPartition, ProduceResult] = {}
    for topic in request.topic_data:
        for part in topic.partition_data:
            tp = (topic.name, part.index)
            if topic.name not in writable:
                rejected[tp] = ProduceResult(WRITE_TOPIC.denied)
                continue
            try:
                _refuse_internal_topic(topic.name)
                entries[tp] = _as_single_v2_batch(part.records, version)
            except InvalidRecordError as exc:
                rejected[tp] = ProduceResult(ErrorCode.INVALID_RECORD, error_message=str(exc))
            except KafkaError as exc:
                rejected[tp] = ProduceResult(exc.code, error_message=exc.message)
    return entries, rejected


def _has_transactional_batches(request: ProduceRequest) -> bool:
    """Whether a partition's records start with a transactional batch (Kafka's
    `RequestUtils.hasTransactionalRecords`); records too short or of an older magic are not."""
    for topic in request.topic_data:
        for part in topic.partition_data:
            records = part.records
            if records and len(records) >= batch.BATCH_HEADER_SIZE and records[batch.MAGIC_OFFSET] == 2:
                if batch.unpack_header(records).is_transactional:
                    return True
    return False


def _refuse_internal_topic(name: str) -> None:
    """Only the broker itself writes to internal topics such as `__consumer_offsets`."""
    if name in INTERNAL_TOPICS:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Cannot append to internal topic {name}")


def _as_single_v2_batch(records: bytes | bytearray | None, version: int) -> bytearray:
    if not records:
        raise InvalidRecordError("Produce request has no records for a partition")
    magic = batch.read_magic(records)
    if magic < 2:
        if version >= 3:
            raise InvalidRecordError(
                f"Produce requests with version {version} are only "
                "allowed to contain record batches with magic version 2"
            )
        from ..records import legacy  # magic 0 and 1: loaded with the first such produce

        return bytearray(legacy.upconvert_to_v2(bytes(records), base_offset=0))
    header = batch.parse_header(records)
    if version < 7 and header.compression == ZSTD:
        raise KafkaError(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, "Produce requests with version below 7 cannot use zstd compression"
        )
    if version >= 3 and header.size != len(records):
        raise InvalidRecordError(
            f"Produce requests with version {version} are only allowed to "
            "contain exactly one record batch per partition"
        )
    return records if isinstance(records, bytearray) else bytearray(records)


def _partition_response(index: int, result: ProduceResult) -> ProduceResponse.PartitionProduceResponse:
    return ProduceResponse.PartitionProduceResponse(
        index=index,
        error_code=result.error,
        base_offset=result.base_offset,
        log_append_time_ms=result.log_append_time,
        log_start_offset=result.log_start_offset,
        record_errors=[
            ProduceResponse.BatchIndexAndErrorMessage(batch_index=i, batch_index_error_message=message)
            for i, message in result.record_errors
        ],
        error_message=result.error_message,
    )


def _response(request: ProduceRequest, results: dict[TopicPartition, ProduceResult]) -> ProduceResponse:
    return ProduceResponse(
        responses=[
            ProduceResponse.TopicProduceResponse(
                name=topic.name,
                partition_responses=[
                    _partition_response(part.index, results[(topic.name, part.index)]) for part in topic.partition_data
                ],
            )
            for topic in request.topic_data
        ]
    )


def _uniform_response(request: ProduceRequest, error: ErrorCode) -> ProduceResponse:
    return _response(
        request, {(t.name, p.index): ProduceResult(error) for t in request.topic_data for p in t.partition_data}
    )
