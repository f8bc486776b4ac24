"""AddOffsetsToTxn (key 25), versions 0-4: a producer's transaction will commit offsets of a
group (`send_offsets_to_transaction`), so the group's `__consumer_offsets` partition joins the
transaction, as AddPartitionsToTxn does for data partitions; the offsets themselves come with
TxnOffsetCommit to the group coordinator.

Errors as AddPartitionsToTxn's; PRODUCER_FENCED is answered as INVALID_PRODUCER_EPOCH below v2.
"""

from ..protocol import messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from .auth import GROUP, READ, TRANSACTIONAL_ID, WRITE, authorize
from .context import RequestContext

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN
MIN_VERSION = 0
MAX_VERSION = 4

Response = messages.response(API_KEY).cls


async def handle(request, ctx: RequestContext):
    if not authorize(ctx, WRITE, TRANSACTIONAL_ID, request.transactional_id):
        return Response(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not authorize(ctx, READ, GROUP, request.group_id):
        return Response(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    error = await ctx.services.txn_coordinator.add_offsets(
        request.transactional_id, request.producer_id, request.producer_epoch, request.group_id
    )
    if error == ErrorCode.PRODUCER_FENCED and ctx.api_version < 2:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return Response(error_code=error)
