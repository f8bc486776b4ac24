"""WriteTxnMarkers (key 27), versions 0-1.

Sent by transaction coordinators to partition leaders when a transaction ends: for each marker
(producer id and epoch, COMMIT or ABORT, coordinator epoch) a control batch is appended to each
named partition as its leader (`TxnMarkerService`, see `replication/txn_markers.py`), acks=-1.
Markers for `__consumer_offsets` partitions go the same way and then complete the producer's
pending transactional offsets in the group coordinator.

- Errors per partition, as Kafka's: UNKNOWN_TOPIC_OR_PARTITION when this broker hosts no replica
  of it, NOT_LEADER_OR_FOLLOWER when it is not the leader, TRANSACTION_COORDINATOR_FENCED for a
  coordinator epoch older than the last marker's, INVALID_PRODUCER_EPOCH for an older producer
  epoch, NOT_ENOUGH_REPLICAS(_AFTER_APPEND) and REQUEST_TIMED_OUT from the acks=-1 wait.
- The response has one entry per producer id (Kafka keys its answer by producer id: markers of
  the same producer share an entry), in the order the producers first appear.
"""

from __future__ import annotations

from ..common.topic_partition import TopicPartition
from ..common.txn_marker import TxnMarker
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import WriteTxnMarkersRequest, WriteTxnMarkersResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.WRITE_TXN_MARKERS
MIN_VERSION = 0
MAX_VERSION = 1

ALTER_CLUSTER = check(API_KEY, "alter")
CLUSTER_ACTION_ON_CLUSTER = check(API_KEY, "cluster")


async def handle(request: WriteTxnMarkersRequest, ctx: RequestContext) -> WriteTxnMarkersResponse:
    markers = [_marker(m) for m in request.markers]
    if not _authorized(ctx):
        denied = CLUSTER_ACTION_ON_CLUSTER.denied
        return WriteTxnMarkersResponse(
            markers=[_marker_result(m.producer_id, dict.fromkeys(m.partitions, denied)) for m in markers]
        )
    answers = await ctx.services.txn_markers.write_txn_markers(markers) if markers else []
    by_producer: dict[int, dict[TopicPartition, ErrorCode]] = {}
    for marker, errors in zip(markers, answers):
        by_producer.setdefault(marker.producer_id, {}).update(errors)
    return WriteTxnMarkersResponse(markers=[_marker_result(pid, errors) for pid, errors in by_producer.items()])


def _authorized(ctx: RequestContext) -> bool:
    """Kafka 3.9: ALTER on the cluster (an administrator aborting a transaction, KIP-664), or else
    CLUSTER_ACTION (a transaction coordinator)."""
    return ALTER_CLUSTER.allows(ctx, log_if_denied=False) or CLUSTER_ACTION_ON_CLUSTER.allows(ctx)


def _marker(m: WriteTxnMarkersRequest.WritableTxnMarker) -> TxnMarker:
    return TxnMarker(
        producer_id=m.producer_id,
        producer_epoch=m.producer_epoch,
        committed=m.transaction_result,
        coordinator_epoch=m.coordinator_epoch,
        partitions=tuple((t.name, index) for t in m.topics for index in t.partition_indexes),
    )


def _marker_result(
    producer_id: int, errors: dict[TopicPartition, ErrorCode]
) -> WriteTxnMarkersResponse.WritableTxnMarkerResult:
    topics: dict[str, list[WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult]] = {}
    for (topic, index), error in errors.items():
        topics.setdefault(topic, []).append(
            WriteTxnMarkersResponse.WritableTxnMarkerPartitionResult(partition_index=index, error_code=error)
        )
    return WriteTxnMarkersResponse.WritableTxnMarkerResult(
        producer_id=producer_id,
        topics=[
            WriteTxnMarkersResponse.WritableTxnMarkerTopicResult(name=name, partitions=parts)
            for name, parts in topics.items()
        ],
    )
