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

from typing import Any

from ...common.topic_partition import TopicPartition
from ...protocol.errors import ErrorCode
from .authorization import Check
from .context import RequestContext


def split_known_partitions(
    request_topics, ctx: RequestContext, read_topic: Check
) -> tuple[dict[TopicPartition, ErrorCode], list[tuple[TopicPartition, Any]]]:
    """({tp: error} for unreadable or unknown partitions, [(tp, requested partition)] for the
    others, in request order). Kafka checks `read_topic` on each topic before its existence."""
    errors: dict[TopicPartition, ErrorCode] = {}
    known: list[tuple[TopicPartition, Any]] = []
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


def refuse_all(
    request_topics, error: ErrorCode
) -> tuple[dict[TopicPartition, ErrorCode], list[tuple[TopicPartition, Any]]]:
    """As `split_known_partitions`, with every partition refused with `error` (a refused group)."""
    return {(topic.name, p.partition_index): error for topic in request_topics for p in topic.partitions}, []


def response_topics(request_topics, errors: dict[TopicPartition, ErrorCode], topic_cls, partition_cls) -> list:
    """`topic_cls` entries of `partition_cls` errors, one entry per requested topic name."""
    topics: dict[str, Any] = {}  # generated response topics
    for topic in request_topics:
        entry = topics.setdefault(topic.name, topic_cls(name=topic.name, partitions=[]))
        for p in topic.partitions:
            entry.partitions.append(
                partition_cls(partition_index=p.partition_index, error_code=errors[(topic.name, p.partition_index)])
            )
    return list(topics.values())
