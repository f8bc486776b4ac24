"""What the share group handlers share: whether share groups are served, the member id Kafka
accepts; and what ShareFetch and ShareAcknowledge share: the checks before any partition, the
topic partitions they name (by topic id, checked for READ), their acknowledgement batches checked
as Kafka checks them and acknowledged, and the leader hints of partitions this broker does not
lead."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

from ...cluster.features import share_groups_enabled
from ...coordinator.share.partitions import (
    AcknowledgementBatch,
    AcknowledgeType,
    ShareSessionKey,
    ShareTopicPartition,
)
from ...protocol.errors import ErrorCode
from .authorization import Check
from .context import RequestContext
from .services import ShareGroupService, SharePartitionService

PartitionErrors = dict[tuple[uuid.UUID, int], ErrorCode]
LeaderHints = dict[tuple[uuid.UUID, int], tuple[int, int]]
MAX_ACKNOWLEDGE_TYPE_V1 = AcknowledgeType.REJECT
MAX_MEMBER_ID_LENGTH = 36  # a client-chosen member id (KIP-1082)


class WireAcknowledgementBatch(Protocol):
    first_offset: int
    last_offset: int
    acknowledge_types: list[int]


def share_group_service(ctx: RequestContext) -> ShareGroupService | None:
    """The share groups of this broker; None while they are not served (no service, or share
    groups not enabled)."""
    service = ctx.services.share_groups
    return service if service is not None and share_groups_enabled(ctx.services.config) else None


def valid_member_id(member_id: str) -> bool:
    """A member id is required, of at most 36 characters (else INVALID_REQUEST)."""
    return bool(member_id) and len(member_id) <= MAX_MEMBER_ID_LENGTH


def session_key(
    ctx: RequestContext, read_group: Check, group_id: str | None, member_id: str | None
) -> ShareSessionKey | ErrorCode:
    """The share session a ShareFetch or ShareAcknowledge names, or what refuses the whole request
    before it: no group id (INVALID_GROUP_ID), no READ on the group, a member id Kafka refuses
    (INVALID_REQUEST)."""
    if not group_id or not read_group.allows(ctx, group_id):
        return read_group.denied if group_id else ErrorCode.INVALID_GROUP_ID
    if not member_id or not valid_member_id(member_id):
        return ErrorCode.INVALID_REQUEST
    return ShareSessionKey(group_id, member_id)


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


async def acknowledge(
    share: SharePartitionService,
    key: ShareSessionKey,
    raw: Mapping[tuple[uuid.UUID, int], Sequence[WireAcknowledgementBatch]],
    by_id: dict[tuple[uuid.UUID, int], ShareTopicPartition],
    errors: PartitionErrors,
) -> PartitionErrors:
    """Acknowledge the batches of the partitions that may be served (those not in `errors`): each
    one's acknowledge error, INVALID_REQUEST where Kafka refuses its batches."""
    results: PartitionErrors = {}
    valid: dict[ShareTopicPartition, list[AcknowledgementBatch]] = {}
    for named, wire_batches in raw.items():
        if named in errors:
            continue
        batches = acknowledgement_batches(wire_batches)
        if batches is None:
            results[named] = ErrorCode.INVALID_REQUEST
        else:
            valid[by_id[named]] = batches
    if valid:
        done = await share.acknowledge(key.group_id, key.member_id, valid)
        results.update(((k.topic_id, k.partition), e) for k, e in done.items())
    return results


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
