"""What the requests on a group's offsets share, used by OffsetCommit, TxnOffsetCommit and
OffsetDelete (not a handler itself):

* `split_known_partitions`: partitions of topics the caller may not read (the handler's "topic"
  check of the authorization table: READ, TOPIC_AUTHORIZATION_FAILED) get the check's denial
  code, of unknown topics or beyond a topic's partitions UNKNOWN_TOPIC_OR_PARTITION, the others
  go to the group coordinator;
* `refuse_all`: every requested partition with one error (a refused group);
* `response_topics`: the response's topics, one per requested topic name, with each requested
  partition's error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from ...common.topic_partition import TopicPartition
from ...protocol.errors import ErrorCode
from .authorization import Check
from .context import RequestContext


class RequestedPartition(Protocol):
    """A partition of a request's topic (OffsetCommit, TxnOffsetCommit, OffsetDelete)."""

    @property
    def partition_index(self) -> int: ...


_Partition_co = TypeVar("_Partition_co", bound=RequestedPartition, covariant=True)
_Partition = TypeVar("_Partition", bound=RequestedPartition)
_ResponsePartition = TypeVar("_ResponsePartition")
_ResponsePartition_co = TypeVar("_ResponsePartition_co", covariant=True)
_ResponseTopic_co = TypeVar("_ResponseTopic_co", covariant=True)
_ResponseTopic = TypeVar("_ResponseTopic")


class RequestedTopic(Protocol[_Partition_co]):
    """A topic of the request, with its requested partitions."""

    @property
    def name(self) -> str: ...

    @property
    def partitions(self) -> Sequence[_Partition_co]: ...


class ResponsePartitionClass(Protocol[_ResponsePartition_co]):
    """The response's partition struct class, built from a partition's index and error."""

    def __call__(self, *, partition_index: int = ..., error_code: int = ...) -> _ResponsePartition_co: ...


class ResponseTopicClass(Protocol[_ResponsePartition, _ResponseTopic_co]):
    """The response's topic struct class, built from a topic's name and partitions."""

    def __call__(self, *, name: str = ..., partitions: list[_ResponsePartition] = ...) -> _ResponseTopic_co: ...


# ({tp: error} of the refused partitions, [(tp, requested partition)] of those the coordinator serves)
Split = tuple[dict[TopicPartition, ErrorCode], list[tuple[TopicPartition, _Partition]]]


def split_known_partitions(
    request_topics: Sequence[RequestedTopic[_Partition]], ctx: RequestContext, read_topic: Check
) -> Split[_Partition]:
    """({tp: error} for unreadable or unknown partitions, [(tp, requested partition)] for the
    others, in request order). Kafka checks `read_topic` on each topic before its existence."""
    errors: dict[TopicPartition, ErrorCode] = {}
    known: list[tuple[TopicPartition, _Partition]] = []
    readable = read_topic.allowed(ctx, (topic.name for topic in request_topics))
    for topic in request_topics:
        info = ctx.services.metadata.topic(topic.name)
        for p in topic.partitions:
            tp = (topic.name, p.partition_index)
            if topic.name not in readable:
                errors[tp] = read_topic.denied
            elif info is None or p.partition_index not in info.partitions:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                known.append((tp, p))
    return errors, known


def refuse_all(request_topics: Sequence[RequestedTopic[_Partition]], error: ErrorCode) -> Split[_Partition]:
    """As `split_known_partitions`, with every partition refused with `error` (a refused group)."""
    return {(topic.name, p.partition_index): error for topic in request_topics for p in topic.partitions}, []


def response_topics(
    request_topics: Sequence[RequestedTopic[RequestedPartition]],
    errors: dict[TopicPartition, ErrorCode],
    topic_cls: ResponseTopicClass[_ResponsePartition, _ResponseTopic],
    partition_cls: ResponsePartitionClass[_ResponsePartition],
) -> list[_ResponseTopic]:
    """`topic_cls` entries of `partition_cls` errors, one entry per requested topic name."""
    partitions_by_name: dict[str, list[_ResponsePartition]] = {}
    for topic in request_topics:
        partitions = partitions_by_name.setdefault(topic.name, [])
        partitions.extend(
            partition_cls(partition_index=p.partition_index, error_code=errors[(topic.name, p.partition_index)])
            for p in topic.partitions
        )
    return [topic_cls(name=name, partitions=partitions) for name, partitions in partitions_by_name.items()]
