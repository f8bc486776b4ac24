"""AddOffsetsToTxn (key 25), versions 0-4: a producer's transaction will commit offsets of a
group (`send_offsets_to_transaction`), so the group's `__consumer_offsets` partition joins the
transaction, as AddPartitionsToTxn does for data partitions; the offsets themselves come with
TxnOffsetCommit to the group coordinator.

Errors as AddPartitionsToTxn's; PRODUCER_FENCED is answered as INVALID_PRODUCER_EPOCH below v2.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN
MIN_VERSION = 0
MAX_VERSION = 4

WRITE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")
READ_GROUP = check(API_KEY, "group")


async def handle(request: AddOffsetsToTxnRequest, ctx: RequestContext) -> AddOffsetsToTxnResponse:
    if not WRITE_TRANSACTIONAL_ID.allows(ctx, request.transactional_id):
        return AddOffsetsToTxnResponse(error_code=WRITE_TRANSACTIONAL_ID.denied)
    if not READ_GROUP.allows(ctx, request.group_id):
        return AddOffsetsToTxnResponse(error_code=READ_GROUP.denied)
    error = await ctx.services.txn_coordinator.add_offsets(
        request.transactional_id, request.producer_id, request.producer_epoch, request.group_id
    )
    if error == ErrorCode.PRODUCER_FENCED and ctx.api_version < 2:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return AddOffsetsToTxnResponse(error_code=error)
