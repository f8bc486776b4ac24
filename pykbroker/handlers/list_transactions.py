"""ListTransactions (key 66), versions 0-1: the transactional ids this broker coordinates
(`kafka-transactions.sh list`), filtered by state names and producer ids (each filter ignored
when empty), and from v1 by `duration_filter`: only transactions running longer than that many
milliseconds (-1: no filter).

State names Kafka does not know are returned in `unknown_state_filters`; ids being expired (Dead)
are never listed; COORDINATOR_LOAD_IN_PROGRESS while any `__transaction_state` partition loads,
COORDINATOR_NOT_AVAILABLE before the coordinator started.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import ListTransactionsRequest, ListTransactionsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.LIST_TRANSACTIONS
MIN_VERSION = 0
MAX_VERSION = 1

DESCRIBE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")


async def handle(request: ListTransactionsRequest, ctx: RequestContext) -> ListTransactionsResponse:
    duration_ms = request.duration_filter if ctx.api_version >= 1 else -1
    listing = ctx.services.txn_coordinator.list_transactions(
        list(request.producer_id_filters), list(request.state_filters), duration_ms
    )
    return ListTransactionsResponse(
        error_code=listing.error,
        unknown_state_filters=listing.unknown_state_filters,
        transaction_states=[
            ListTransactionsResponse.TransactionState(
                transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state
            )
            for t in listing.transactions
            if DESCRIBE_TRANSACTIONAL_ID.allows(ctx, t.transactional_id)
        ],
    )
