"""AddPartitionsToTxn (key 24), versions 0-5.

v0-v3 come from producers: one transaction (`v3_and_below_*`) whose partitions join its ongoing
transaction (`TransactionCoordinator.add_partitions`), all answered with the same error. v4+ come
from brokers (KIP-890 part 1): a batch of transactions, each either added or, with `verify_only`,
only checked (`verify_partitions`: NONE for partitions in the ongoing transaction,
TRANSACTION_ABORTABLE for the others), answered per transaction in `results_by_transaction` with
a top-level error code.

As Kafka: when a partition does not exist or (v0-v3) belongs to an internal topic, which no
client may write to, nothing of the transaction is attempted: the missing partitions get
UNKNOWN_TOPIC_OR_PARTITION, those of internal topics TOPIC_AUTHORIZATION_FAILED (Kafka leaves
internal topics out of the producer's write authorization) and the others
OPERATION_NOT_ATTEMPTED. The
coordinator's errors are NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE,
INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED (INVALID_PRODUCER_EPOCH below v2, which older
clients know instead), CONCURRENT_TRANSACTIONS and INVALID_REQUEST for an empty transactional id.
"""

from ..cluster.model import INTERNAL_TOPICS
from ..cluster.store import MetadataStore
from ..common.topic_partition import TopicPartition
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN
MIN_VERSION = 0
MAX_VERSION = 5

CLUSTER_ACTION_FOR_BROKER = check(API_KEY, "broker")
WRITE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")
WRITE_TOPIC = check(API_KEY, "topic")


async def handle(request: AddPartitionsToTxnRequest, ctx: RequestContext) -> AddPartitionsToTxnResponse:
    if ctx.api_version >= 4 and not CLUSTER_ACTION_FOR_BROKER.allows(ctx):  # brokers verifying
        return AddPartitionsToTxnResponse(error_code=CLUSTER_ACTION_FOR_BROKER.denied, results_by_transaction=[])
    if ctx.api_version < 4:
        topics = request.v3_and_below_topics
        errors = await _add(
            ctx,
            request.v3_and_below_transactional_id,
            request.v3_and_below_producer_id,
            request.v3_and_below_producer_epoch,
            False,
            [(t.name, p) for t in topics for p in t.partitions],
        )
        return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=_topic_results(errors))
    results: list[AddPartitionsToTxnResponse.AddPartitionsToTxnResult] = []
    for txn in request.transactions:
        partitions = [(t.name, p) for t in txn.topics for p in t.partitions]
        errors = await _add(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.verify_only, partitions)
        results.append(
            AddPartitionsToTxnResponse.AddPartitionsToTxnResult(
                transactional_id=txn.transactional_id, topic_results=_topic_results(errors)
            )
        )
    return AddPartitionsToTxnResponse(error_code=ErrorCode.NONE, results_by_transaction=results)


async def _add(
    ctx: RequestContext,
    transactional_id: str,
    producer_id: int,
    producer_epoch: int,
    verify_only: bool,
    partitions: list[TopicPartition],
) -> dict[TopicPartition, ErrorCode]:
    if ctx.api_version < 4 and not WRITE_TRANSACTIONAL_ID.allows(ctx, transactional_id):
        return dict.fromkeys(partitions, WRITE_TRANSACTIONAL_ID.denied)
    metadata = ctx.services.metadata
    if ctx.api_version < 4:  # clients: WRITE on each topic; internal topics never (as Kafka)
        writable = WRITE_TOPIC.allowed(ctx, (t for t, _ in partitions if t not in INTERNAL_TOPICS))
    else:
        writable = {t for t, _ in partitions}
    failed: dict[TopicPartition, ErrorCode] = {}
    for tp in partitions:
        if tp[0] not in writable:
            failed[tp] = WRITE_TOPIC.denied
        elif not _exists(metadata, tp):
            failed[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    if failed:
        return {tp: failed.get(tp, ErrorCode.OPERATION_NOT_ATTEMPTED) for tp in partitions}
    coordinator = ctx.services.txn_coordinator
    if verify_only:
        return await coordinator.verify_partitions(transactional_id, producer_id, producer_epoch, partitions)
    errors = await coordinator.add_partitions(transactional_id, producer_id, producer_epoch, partitions)
    if ctx.api_version < 2:
        errors = {tp: _old_client_error(error) for tp, error in errors.items()}
    return errors


def _exists(metadata: MetadataStore, tp: TopicPartition) -> bool:
    info = metadata.topic(tp[0])
    return info is not None and tp[1] in info.partitions


def _old_client_error(error: ErrorCode) -> ErrorCode:
    return ErrorCode.INVALID_PRODUCER_EPOCH if error == ErrorCode.PRODUCER_FENCED else error


def _topic_results(
    errors: dict[TopicPartition, ErrorCode],
) -> list[AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult]:
    by_topic: dict[str, list[AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult]] = {}
    for (topic, index), error in errors.items():
        by_topic.setdefault(topic, []).append(
            AddPartitionsToTxnResponse.AddPartitionsToTxnPartitionResult(
                partition_index=index, partition_error_code=error
            )
        )
    return [
        AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult(name=topic, results_by_partition=results)
        for topic, results in by_topic.items()
    ]
