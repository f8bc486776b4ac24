"""What the requests on a group's offsets share, used by OffsetCommit, TxnOffsetCommit and
OffsetDelete (not a handler itself):

* `split_known_partitions`: partitions of unknown topics or beyond a topic's partitions get
  UNKNOWN_TOPIC_OR_PARTITION, the others go to the group coordinator;
* `response_topics`: the response's topics, one per requested topic name, with each requested
  partition's error.
"""

from __future__ import annotations

from typing import Any

from ..common.topic_partition import TopicPartition
from ..protocol.errors import ErrorCode


def split_known_partitions(
    request_topics, metadata
) -> tuple[dict[TopicPartition, ErrorCode], list[tuple[TopicPartition, Any]]]:
    """({tp: UNKNOWN_TOPIC_OR_PARTITION} for unknown partitions, [(tp, requested partition)] for
    the others, in request order)."""
    errors: dict[TopicPartition, ErrorCode] = {}
    known: list[tuple[TopicPartition, Any]] = []
    for topic in request_topics:
        info = metadata.topic(topic.name)
        for p in topic.partitions:
            tp = (topic.name, p.partition_index)
            if info is None or p.partition_index not in info.partitions:
                errors[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                known.append((tp, p))
    return errors, known


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
