"""What ShareFetch and ShareAcknowledge share: the topic partitions they name (by topic id,
checked for READ), their acknowledgement batches checked as Kafka checks them, and the leader
hints of partitions this broker does not lead."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Protocol

from ...coordinator.share.partitions import AcknowledgementBatch, AcknowledgeType, ShareTopicPartition
from ...protocol.errors import ErrorCode
from .authorization import Check
from .context import RequestContext

PartitionErrors = dict[tuple[uuid.UUID, int], ErrorCode]
LeaderHints = dict[tuple[uuid.UUID, int], tuple[int, int]]
MAX_ACKNOWLEDGE_TYPE_V1 = AcknowledgeType.REJECT


class WireAcknowledgementBatch(Protocol):
    first_offset: int
    last_offset: int
    acknowledge_types: list[int]


def resolve(
    ctx: RequestContext, read_topic: Check, named: Iterable[tuple[uuid.UUID, int]]
) -> tuple[list[ShareTopicPartition], PartitionErrors]:
    """The partitions named that may be served, and the errors of the others: an unknown topic
    id is UNKNOWN_TOPIC_ID, a topic without READ TOPIC_AUTHORIZATION_FAILED."""
    names = ctx.services.metadata.topic_names_by_id()
    named = list(dict.fromkeys(named))
    readable = read_topic.allowed(ctx, {names.get(topic_id) for topic_id, _ in named} - {None})
    served: list[ShareTopicPartition] = []
    errors: PartitionErrors = {}
    for topic_id, partition in named:
        name = names.get(topic_id)
        if name is None:
            errors[(topic_id, partition)] = ErrorCode.UNKNOWN_TOPIC_ID
        elif name not in readable:
            errors[(topic_id, partition)] = read_topic.denied
        else:
            served.append(ShareTopicPartition(topic_id, name, partition))
    return served, errors


def acknowledgement_batches(batches: Sequence[WireAcknowledgementBatch]) -> list[AcknowledgementBatch] | None:
    """The batches, or None when Kafka refuses them (INVALID_REQUEST): a last offset before the
    first, no acknowledge type, a type count other than 1 or one per offset, an unknown type, or
    batches out of order or overlapping."""
    checked: list[AcknowledgementBatch] = []
    for batch in batches:
        types = tuple(batch.acknowledge_types)
        span = batch.last_offset - batch.first_offset + 1
        if span < 1 or batch.first_offset < 0 or not types or (len(types) != 1 and len(types) != span):
            return None
        if any(t < AcknowledgeType.GAP or t > MAX_ACKNOWLEDGE_TYPE_V1 for t in types):
            return None
        if checked and batch.first_offset <= checked[-1].last_offset:
            return None
        checked.append(AcknowledgementBatch(batch.first_offset, batch.last_offset, types))
    return checked


def leader_hints(ctx: RequestContext, errors: Iterable[tuple[ShareTopicPartition, int]]) -> LeaderHints:
    """(leader id, leader epoch) the metadata names for the partitions answered NOT_LEADER_OR_FOLLOWER."""
    hints: LeaderHints = {}
    for key, error in errors:
        if error != ErrorCode.NOT_LEADER_OR_FOLLOWER:
            continue
        hint = ctx.services.replica_manager.leader_hint(key.topic, key.partition)
        if hint is not None:
            hints[(key.topic_id, key.partition)] = hint
    return hints


def leader_endpoints(ctx: RequestContext, hints: LeaderHints) -> list[tuple[int, str, int, str | None]]:
    """(node id, host, port, rack) of the leaders named in `hints`."""
    leaders = {leader for leader, _ in hints.values()}
    return [
        (b.broker_id, b.host, b.port, b.rack)
        for b in ctx.services.live_brokers(ctx.listener_name)
        if b.broker_id in leaders
    ]
