"""DescribeTransactions (key 65), version 0: the state of transactional ids this broker
coordinates (`kafka-transactions.sh describe`).

Each id is answered on its own: its state name (Empty, Ongoing, PrepareCommit, ...), producer id
and epoch, timeout, start time (-1 without a transaction) and partitions; or
TRANSACTIONAL_ID_NOT_FOUND (unknown or expiring), NOT_COORDINATOR,
COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE (not started), INVALID_REQUEST (empty id),
with the other fields at their defaults, as Kafka answers.
"""

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import DescribeTransactionsRequest, DescribeTransactionsResponse
from .support.authorization import check
from .support.context import RequestContext

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS
MIN_VERSION = 0
MAX_VERSION = 0

DESCRIBE_TRANSACTIONAL_ID = check(API_KEY, "transactional_id")
DESCRIBE_TOPIC = check(API_KEY, "topic")


async def handle(request: DescribeTransactionsRequest, ctx: RequestContext) -> DescribeTransactionsResponse:
    coordinator = ctx.services.txn_coordinator
    states: list[DescribeTransactionsResponse.TransactionState] = []
    for transactional_id in request.transactional_ids:
        if not DESCRIBE_TRANSACTIONAL_ID.allows(ctx, transactional_id):
            states.append(
                DescribeTransactionsResponse.TransactionState(
                    error_code=DESCRIBE_TRANSACTIONAL_ID.denied, transactional_id=transactional_id
                )
            )
            continue
        described = coordinator.describe_transaction(transactional_id)
        states.append(
            DescribeTransactionsResponse.TransactionState(
                error_code=described.error,
                transactional_id=described.transactional_id,
                transaction_state=described.state,
                transaction_timeout_ms=described.timeout_ms,
                transaction_start_time_ms=described.start_time_ms,
                producer_id=described.producer_id,
                producer_epoch=described.producer_epoch,
                topics=[
                    DescribeTransactionsResponse.TopicData(topic=t, partitions=p)
                    for t, p in described.topics.items()
                    if DESCRIBE_TOPIC.allows(ctx, t)  # only the topics the caller may describe
                ],
            )
        )
    return DescribeTransactionsResponse(transaction_states=states)
