"""EndTxn (key 26), versions 0-4: commit or abort the producer's ongoing transaction.

Answered once PrepareCommit or PrepareAbort is in `__transaction_state`; the coordinator then
writes the markers and completes the transaction (the next transaction of the producer gets
CONCURRENT_TRANSACTIONS until then). A retried EndTxn of a transaction that completed the same
way is answered NONE, of one still completing CONCURRENT_TRANSACTIONS, the other result and an
EndTxn without a transaction INVALID_TXN_STATE. Other errors: INVALID_PRODUCER_ID_MAPPING,
PRODUCER_FENCED (INVALID_PRODUCER_EPOCH below v2), NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, INVALID_REQUEST (empty id).
"""

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import EndTxnRequest, EndTxnResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.END_TXN
MIN_VERSION = 0
MAX_VERSION = 4

WRITE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")


async def handle(request: EndTxnRequest, ctx: RequestContext) -> EndTxnResponse:
    if not WRITE_TRANSACTIONAL_ID.allows(ctx, request.transactional_id):
        return EndTxnResponse(error_code=WRITE_TRANSACTIONAL_ID.denied)
    error, _producer_id, _epoch = await ctx.services.txn_coordinator.end_txn(
        request.transactional_id, request.producer_id, request.producer_epoch, request.committed
    )
    if error == ErrorCode.PRODUCER_FENCED and ctx.api_version < 2:
        error = ErrorCode.INVALID_PRODUCER_EPOCH
    return EndTxnResponse(error_code=error)
