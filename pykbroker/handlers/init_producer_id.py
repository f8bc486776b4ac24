"""InitProducerId (key 22), versions 0-5: producer ids for idempotent producers.

Without a transactional id the broker hands out a fresh producer id with epoch 0, as Kafka does
(also when a v3+ client passes its current id and epoch to bump it after an error: an idempotent
producer simply gets a new id). Transactional ids need the transaction coordinator, which this
broker does not have yet: such requests get COORDINATOR_NOT_AVAILABLE, as from a Kafka cluster
whose transaction coordinator is unavailable. In a cluster, ids come from blocks reserved in
ZooKeeper; while none can be reserved the answer is COORDINATOR_NOT_AVAILABLE (retriable). A block
is reserved on a worker thread (file fsync or ZooKeeper write), before any of its ids is answered.
"""

from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode, KafkaError
from .context import RequestContext

API_KEY = ApiKey.INIT_PRODUCER_ID
MIN_VERSION = 0
MAX_VERSION = 5

Response = messages.response(API_KEY).cls


async def handle(request, ctx: RequestContext):
    if request.transactional_id is not None:
        return Response(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE, producer_id=-1, producer_epoch=-1)
    try:
        producer_id = await ctx.services.producer_ids.generate_producer_id_async()
    except KafkaError as exc:  # no producer id block could be reserved (cluster mode)
        return Response(error_code=exc.code, producer_id=-1, producer_epoch=-1)
    return Response(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)
