"""Who may commit offsets to a consumer group (Kafka's ConsumerGroup.validateOffsetCommit): with
the member epoch as the generation, STALE_MEMBER_EPOCH when it is not the member's current one;
a member commits with OffsetCommit v9+ (UNSUPPORTED_VERSION before)."""

from __future__ import annotations

from ....protocol.errors import ErrorCode
from .group import ConsumerGroup

UNKNOWN_MEMBER_ID = ""


def validate_consumer_offset_commit(
    group: ConsumerGroup, member_id: str, member_epoch: int, *, is_transactional: bool, api_version: int = 9
) -> ErrorCode | None:
    """None when the commit may go ahead, else its error. A commit without a member (epoch < 0)
    is accepted by an empty group (the admin client, or a consumer without group management);
    a transactional commit before TxnOffsetCommit v3 names no member and is accepted."""
    if member_epoch < 0 and not group.members:
        return None
    if is_transactional and member_epoch < 0 and member_id == UNKNOWN_MEMBER_ID:
        return None
    member = group.members.get(member_id)
    if member is None:
        return ErrorCode.UNKNOWN_MEMBER_ID
    if member.uses_classic_protocol:  # a classic member names its member epoch as its generation
        return None if member_epoch == member.member_epoch else ErrorCode.ILLEGAL_GENERATION
    if not is_transactional and api_version < 9:
        return ErrorCode.UNSUPPORTED_VERSION  # "OffsetCommit version 9 or above must be used by members using
        # the modern group protocol"
    if member_epoch != member.member_epoch:
        return ErrorCode.STALE_MEMBER_EPOCH
    return None
