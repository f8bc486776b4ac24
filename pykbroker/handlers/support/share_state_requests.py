"""What the share-group state APIs (Initialize/Read/Write/Delete/ReadSummary ShareGroupState)
share: the broker-to-broker RPCs of KIP-932, answered by the share coordinator
(`coordinator/share/`), as Kafka's KafkaApis and ShareCoordinatorService answer them.

- CLUSTER_ACTION on the cluster is required: without it every partition is answered
  CLUSTER_AUTHORIZATION_FAILED.
- No topics, a topic without partitions, or an empty group id: an empty response.
- Each partition is one operation on its key `groupId:topicId:partition`, run concurrently; its
  answer goes under its topic (topics in the order they first appear, partitions once each).
- An operation that did not reach the share-partition's state (not the coordinator, loading, the
  append failed) carries "Unable to <read share group state, ...>: <reason>"; the coordinator's own
  refusals carry their message (or the error's default message).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ...common.batched_tasks import run_in_groups
from ...coordinator.share.persister import ShareState
from ...coordinator.share.shard import SharePartitionKey
from ...protocol.errors import ErrorCode
from .authorization import Check
from .context import RequestContext

if TYPE_CHECKING:
    from .services import ShareCoordinatorService

OPERATION_ERRORS = frozenset(
    {
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.UNKNOWN_SERVER_ERROR,
    }
)
NOT_AVAILABLE = "Share coordinator is not available."
T = TypeVar("T")


class PartitionData(Protocol):
    partition: int


class TopicData(Protocol):
    topic_id: uuid.UUID

    @property
    def partitions(self) -> Sequence[PartitionData]: ...


# One partition's operation: (coordinator, key, the request's partition data) -> its answer
Operation = Callable[["ShareCoordinatorService", SharePartitionKey, Any], Awaitable[ShareState]]

# (topic id, [(partition index, the answer, its error message)])
Answers = list[tuple[uuid.UUID, list[tuple[int, ShareState, str | None]]]]


def is_empty_request(group_id: str, topics: Sequence[TopicData]) -> bool:
    """Kafka answers an empty response to these."""
    return not group_id or not topics or any(not topic.partitions for topic in topics)


def refused(topics: Sequence[TopicData], error: ErrorCode, message: str | None = None) -> Answers:
    """Every partition answered `error`."""
    return [
        (topic.topic_id, [(p.partition, ShareState(error), message or error.message) for p in topic.partitions])
        for topic in topics
    ]


async def answer_partitions(
    ctx: RequestContext,
    check: Check,
    group_id: str,
    topics: Sequence[TopicData],
    operate: Operation,
    action: str,
) -> Answers:
    """Each partition's answer, grouped by topic (empty: answer an empty response)."""
    if not check.allows(ctx):
        return refused(topics, check.denied)
    if is_empty_request(group_id, topics):
        return []
    coordinator = ctx.services.share_coordinator
    if coordinator is None or not coordinator.is_active:
        return refused(topics, ErrorCode.COORDINATOR_NOT_AVAILABLE, NOT_AVAILABLE)
    by_topic: dict[uuid.UUID, dict[int, ShareState]] = {}
    keys: list[tuple[uuid.UUID, PartitionData]] = []
    for topic in topics:
        slots = by_topic.setdefault(topic.topic_id, {})
        for partition in topic.partitions:
            if partition.partition not in slots:
                slots[partition.partition] = ShareState(ErrorCode.UNKNOWN_SERVER_ERROR)
                keys.append((topic.topic_id, partition))

    async def run(key: tuple[uuid.UUID, PartitionData]) -> None:
        topic_id, partition = key
        state = await operate(coordinator, SharePartitionKey(group_id, topic_id, partition.partition), partition)
        by_topic[topic_id][partition.partition] = state

    await run_in_groups(keys, run)
    return [
        (topic_id, [(index, state, _message(state, action)) for index, state in states.items()])
        for topic_id, states in by_topic.items()
    ]


def error_results(answers: Answers, topic_result: Callable[..., T], partition_result: Callable[..., Any]) -> list[T]:
    """The answers as the results of Initialize-, Write- and DeleteShareGroupState, which carry each
    partition's error only: `topic_result(topic_id=, partitions=)` of
    `partition_result(partition=, error_code=, error_message=)`."""
    return [
        topic_result(
            topic_id=topic_id,
            partitions=[
                partition_result(partition=index, error_code=state.error, error_message=message)
                for index, state, message in partitions
            ],
        )
        for topic_id, partitions in answers
    ]


def _message(state: ShareState, action: str) -> str | None:
    if state.error == ErrorCode.NONE:
        return None
    if state.error_message is not None:
        return state.error_message
    if state.error in OPERATION_ERRORS:
        return f"Unable to {action}: {state.error.message}"
    return state.error.message
