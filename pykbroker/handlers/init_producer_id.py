"""InitProducerId (key 22), versions 0-5: producer ids for idempotent and transactional producers.

Without a transactional id the broker hands out a fresh producer id with epoch 0, as Kafka does
(also when a v3+ client passes its current id and epoch to bump it after an error: an idempotent
producer simply gets a new id). In a cluster, ids come from blocks reserved in ZooKeeper; while
none can be reserved the answer is COORDINATOR_NOT_AVAILABLE (retriable). A block is reserved on
a worker thread (file fsync or ZooKeeper write), before any of its ids is answered.

With a transactional id the transaction coordinator answers (`coordinator/transaction/`): a new
epoch for the id, fencing older producers (KIP-360: v3+ pass the producer id and epoch they had,
so that a retry gets the same answer); NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
CONCURRENT_TRANSACTIONS (an ongoing transaction is being aborted first), INVALID_REQUEST for an
empty id, INVALID_TRANSACTION_TIMEOUT above `transaction.max.timeout.ms`. PRODUCER_FENCED is
answered as INVALID_PRODUCER_EPOCH below v4, which older clients know instead.

A producer id without an epoch (or the reverse) is INVALID_REQUEST, as in Kafka.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.message_types import InitProducerIdRequest, InitProducerIdResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.INIT_PRODUCER_ID
MIN_VERSION = 0
MAX_VERSION = 5

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1

WRITE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")
IDEMPOTENT_WRITE_ON_CLUSTER = check(API_KEY, "idempotent")
WRITE_ANY_TOPIC = check(API_KEY, "any_topic")


async def handle(request: InitProducerIdRequest, ctx: RequestContext) -> InitProducerIdResponse:
    denied = _authorization_error(request, ctx)
    if denied is not None:
        return _error(denied)
    producer_id = request.producer_id if ctx.api_version >= 3 else NO_PRODUCER_ID
    producer_epoch = request.producer_epoch if ctx.api_version >= 3 else NO_PRODUCER_EPOCH
    if (producer_id == NO_PRODUCER_ID) != (producer_epoch == NO_PRODUCER_EPOCH):
        return _error(ErrorCode.INVALID_REQUEST)
    if request.transactional_id is not None:
        error, producer_id, producer_epoch = await ctx.services.txn_coordinator.init_producer_id(
            request.transactional_id, request.transaction_timeout_ms, producer_id, producer_epoch
        )
        if error == ErrorCode.PRODUCER_FENCED and ctx.api_version < 4:
            error = ErrorCode.INVALID_PRODUCER_EPOCH
        return InitProducerIdResponse(error_code=error, producer_id=producer_id, producer_epoch=producer_epoch)
    try:
        producer_id = await ctx.services.producer_ids.generate_producer_id_async()
    except KafkaError as exc:  # no producer id block could be reserved (cluster mode)
        return _error(exc.code)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)


def _authorization_error(request: InitProducerIdRequest, ctx: RequestContext) -> ErrorCode | None:
    """Kafka 3.9: WRITE on the transactional id; without one, IDEMPOTENT_WRITE on the cluster or
    WRITE on at least one topic (KIP-679)."""
    if request.transactional_id is not None:
        if not WRITE_TRANSACTIONAL_ID.allows(ctx, request.transactional_id):
            return WRITE_TRANSACTIONAL_ID.denied
        return None
    if IDEMPOTENT_WRITE_ON_CLUSTER.allows(ctx, log_if_denied=False) or WRITE_ANY_TOPIC.allows_any(ctx):
        return None
    return WRITE_ANY_TOPIC.denied


def _error(error: ErrorCode) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=error, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
