"""One classic group: members, generation, leader, chosen protocol, state and offsets.

This is bookkeeping only; the coordinator's collaborators (`join`, `rebalance`, `offsets`, ...)
decide when things happen.
Members are kept in join order; the first member to join becomes the leader, and a new leader is
picked from the remaining members when the leader goes.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from ...common.purgatory import DelayedOperation
from ...protocol import messages
from ...protocol.errors import ErrorCode
from .member import JoinCallback, MemberMetadata, Protocols, chain_callbacks
from .model import NO_PROTOCOL, GroupOverview, GroupSummary, JoinedMember, JoinResult, MemberSummary, SyncResult
from .offset_cache import OffsetCache
from .state import COMPLETING_REBALANCE, DEAD, EMPTY, PREPARING_REBALANCE, STABLE, VALID_PREVIOUS_STATES, GroupState

if TYPE_CHECKING:
    from .consumer.group import ConsumerGroup

log = logging.getLogger(__name__)

CONSUMER_PROTOCOL_TYPE = "consumer"


class Cancellable(Protocol):
    """A scheduled callback of the coordinator's runtime (`runtime.Timer`)."""

    def cancel(self) -> None: ...


class GroupMetadata:
    def __init__(self, group_id: str, state: GroupState, now_ms: Callable[[], int]) -> None:
        self.group_id = group_id
        self.state = state
        self._now_ms = now_ms
        self.current_state_timestamp: int | None = now_ms()
        self.protocol_type: str | None = None
        self.protocol_name: str | None = None
        self.generation_id = 0
        self.leader_id: str | None = None
        self.members: dict[str, MemberMetadata] = {}
        self.static_members: dict[str, str] = {}  # group.instance.id -> member id
        self.pending_members: set[str] = set()  # got MEMBER_ID_REQUIRED, not joined yet
        self.pending_sync_members: set[str] = set()  # got their JoinGroup answer, no SyncGroup yet
        self.num_awaiting_join = 0
        self.supported_protocols: Counter[str] = Counter()
        self.subscribed_topics: frozenset[str] | None = None
        self.new_member_added = False  # lets the initial rebalance delay be extended
        self.offsets = OffsetCache()
        self.consumer: ConsumerGroup | None = None  # set: a consumer group (KIP-848), not a classic one
        # the coordinator's timers for this group: a pending join or sync completion
        self.join_operation: DelayedOperation | None = None
        self.sync_operation: DelayedOperation | None = None
        self.heartbeat_timers: dict[str, Cancellable] = {}

    # -- state -------------------------------------------------------------------------
    def is_(self, state: GroupState) -> bool:
        return self.state is state

    def transition_to(self, target: GroupState) -> None:
        if self.state not in VALID_PREVIOUS_STATES[target]:
            raise RuntimeError(
                f"Group {self.group_id} should be in one of "
                f"{sorted(map(str, VALID_PREVIOUS_STATES[target]))} before "
                f"moving to {target}; it is {self.state}"
            )
        self.state = target
        self.current_state_timestamp = self._now_ms()

    @property
    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[PREPARING_REBALANCE]

    def is_in_states(self, lower_case_states: set[str]) -> bool:
        if self.consumer is not None:
            return self.consumer.state.lower() in lower_case_states
        return str(self.state).lower() in lower_case_states

    @property
    def is_consumer_group(self) -> bool:
        return self.protocol_type == CONSUMER_PROTOCOL_TYPE

    @property
    def is_active_consumer_group(self) -> bool:
        """A consumer group (KIP-848) with members: never Empty to the classic bookkeeping."""
        return self.consumer is not None and bool(self.consumer.members)

    # -- members -----------------------------------------------------------------------
    def has(self, member_id: str) -> bool:
        return member_id in self.members

    def get(self, member_id: str) -> MemberMetadata:
        return self.members[member_id]

    @property
    def size(self) -> int:
        return len(self.members)

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def add(self, member: MemberMetadata, callback: JoinCallback | None = None) -> None:
        if member.group_instance_id is not None:
            if member.group_instance_id in self.static_members:
                raise RuntimeError(f"static member {member.group_instance_id} is already in group {self.group_id}")
            self.static_members[member.group_instance_id] = member.member_id
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self.supported_protocols.update(member.protocol_names())
        member.awaiting_join = callback
        if member.is_awaiting_join:
            self.num_awaiting_join += 1
        self.pending_members.discard(member.member_id)

    def remove(self, member_id: str) -> None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self.supported_protocols.subtract(member.protocol_names())
            if member.is_awaiting_join:
                self.num_awaiting_join -= 1
            if member.group_instance_id is not None:
                self.static_members.pop(member.group_instance_id, None)
        if self.is_leader(member_id):
            self.leader_id = next(iter(self.members), None)
        self.pending_members.discard(member_id)
        self.pending_sync_members.discard(member_id)

    def update_member(
        self,
        member: MemberMetadata,
        protocols: Protocols,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        callback: JoinCallback | None,
    ) -> None:
        self.supported_protocols.subtract(member.protocol_names())
        member.protocols = list(protocols)
        self.supported_protocols.update(member.protocol_names())
        member.rebalance_timeout_ms = rebalance_timeout_ms
        member.session_timeout_ms = session_timeout_ms
        if callback is not None and not member.is_awaiting_join:
            self.num_awaiting_join += 1
        elif callback is None and member.is_awaiting_join:
            self.num_awaiting_join -= 1
        member.awaiting_join = chain_callbacks(member.awaiting_join, callback)

    def invoke_join_callback(self, member: MemberMetadata, result: JoinResult) -> None:
        callback = member.awaiting_join
        if callback is not None:  # member.is_awaiting_join
            member.awaiting_join = None
            self.num_awaiting_join -= 1
            callback(result)

    def invoke_sync_callback(self, member: MemberMetadata, result: SyncResult) -> bool:
        callback = member.awaiting_sync
        if callback is None:  # not member.is_awaiting_sync
            return False
        member.awaiting_sync = None
        callback(result)
        return True

    def not_yet_rejoined_members(self) -> list[MemberMetadata]:
        return [m for m in self.members.values() if not m.is_awaiting_join]

    @property
    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join and not self.pending_members

    @property
    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def generate_member_id(self, client_id: str, group_instance_id: str | None) -> str:
        prefix = client_id if group_instance_id is None else group_instance_id
        return f"{prefix}-{uuid.uuid4()}"

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep the leader if it rejoined, else pick a member that did; False if none did."""
        if self.leader_id is None:
            return False
        if self.get(self.leader_id).is_awaiting_join:
            return True
        for member_id, member in self.members.items():
            if member.is_awaiting_join:
                log.info(
                    "Group %s leader %s failed to join before the rebalance timeout; %s is the new leader",
                    self.group_id,
                    self.leader_id,
                    member_id,
                )
                self.leader_id = member_id
                return True
        return False

    # -- static members ----------------------------------------------------------------
    def current_static_member_id(self, group_instance_id: str | None) -> str | None:
        return None if group_instance_id is None else self.static_members.get(group_instance_id)

    def replace_static_member(
        self,
        group_instance_id: str,
        old_member_id: str,
        new_member_id: str,
        fenced_join: JoinResult,
        fenced_sync: SyncResult,
    ) -> MemberMetadata:
        """Give a static member a new member id; whoever waits under the old id is fenced."""
        member = self.members.pop(old_member_id)
        self.invoke_join_callback(member, fenced_join)
        self.invoke_sync_callback(member, fenced_sync)
        member.member_id = new_member_id
        self.members[new_member_id] = member
        if self.is_leader(old_member_id):
            self.leader_id = new_member_id
        if old_member_id in self.pending_sync_members:
            self.pending_sync_members.discard(old_member_id)
            self.pending_sync_members.add(new_member_id)
        self.static_members[group_instance_id] = new_member_id
        return member

    def validate_current_member(self, member_id: str, group_instance_id: str | None) -> ErrorCode | None:
        """UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID unless `member_id` is a member (and, for a
        static member, the one its group.instance.id maps to now)."""
        if group_instance_id is not None:
            current = self.current_static_member_id(group_instance_id)
            if current is None:
                return ErrorCode.UNKNOWN_MEMBER_ID
            if current != member_id:
                log.info(
                    "Request memberId=%s for static member with groupInstanceId=%s is fenced by current memberId=%s",
                    member_id,
                    group_instance_id,
                    current,
                )
                return ErrorCode.FENCED_INSTANCE_ID
        if not self.has(member_id):
            return ErrorCode.UNKNOWN_MEMBER_ID
        return None

    # -- pending members ---------------------------------------------------------------
    def is_pending_member(self, member_id: str) -> bool:
        return member_id in self.pending_members and not self.has(member_id)

    def has_received_sync_from_all_members(self) -> bool:
        return not self.pending_sync_members

    # -- protocols ---------------------------------------------------------------------
    def supports_protocols(self, protocol_type: str, protocol_names: set[str]) -> bool:
        if self.is_(EMPTY):
            return bool(protocol_type) and bool(protocol_names)
        return self.protocol_type == protocol_type and any(
            self.supported_protocols[name] == len(self.members) for name in protocol_names
        )

    def candidate_protocols(self) -> set[str]:
        return {name for name, count in self.supported_protocols.items() if count == len(self.members) and count > 0}

    def select_protocol(self) -> str:
        """The protocol all members support that most members prefer."""
        if not self.members:
            raise RuntimeError("Cannot select protocol for empty group")
        candidates = self.candidate_protocols()
        votes = Counter(member.vote(candidates) for member in self.members.values())
        return votes.most_common(1)[0][0]

    # -- generations -------------------------------------------------------------------
    def init_next_generation(self) -> None:
        self.generation_id += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(COMPLETING_REBALANCE)
        else:
            self.protocol_name = None
            self.subscribed_topics = self.compute_subscribed_topics()
            self.transition_to(EMPTY)
        self.pending_sync_members.clear()

    def compute_subscribed_topics(self) -> frozenset[str] | None:
        """The topics the members of a consumer group subscribe to; None when unknown (not a
        consumer group, no protocol chosen yet, or metadata that does not parse)."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        if not self.members:
            return frozenset()
        if self.protocol_name is None:
            return None
        topics: set[str] = set()
        try:
            for member in self.members.values():
                topics.update(subscription_topics(member.metadata(self.protocol_name)))
        except Exception:  # the metadata is the client's own bytes
            log.warning(
                "Failed to parse the consumer protocol of group %s; its subscribed topics are unknown", self.group_id
            )
            return None
        return frozenset(topics)

    def is_subscribed_to_topic(self, topic: str) -> bool:
        if self.consumer is not None:
            return self.consumer.is_subscribed_to_topic(topic)
        return True if self.subscribed_topics is None else topic in self.subscribed_topics

    def current_member_metadata(self) -> list[JoinedMember]:
        if self.state in (DEAD, PREPARING_REBALANCE):
            raise RuntimeError(f"Cannot obtain member metadata for group in state {self.state}")
        return [
            JoinedMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
            for m in self.members.values()
        ]

    # -- descriptions ------------------------------------------------------------------
    def summary(self) -> GroupSummary:
        if self.is_(STABLE):
            protocol = self.protocol_name
            members = [
                MemberSummary(
                    m.member_id, m.group_instance_id, m.client_id, m.client_host, m.metadata(protocol), m.assignment
                )
                for m in self.members.values()
            ]
            return GroupSummary(str(self.state), self.protocol_type or "", protocol or NO_PROTOCOL, members)
        members = [
            MemberSummary(m.member_id, m.group_instance_id, m.client_id, m.client_host, b"", b"")
            for m in self.members.values()
        ]
        return GroupSummary(str(self.state), self.protocol_type or "", NO_PROTOCOL, members)

    def overview(self) -> GroupOverview:
        if self.consumer is not None:
            return GroupOverview(self.group_id, CONSUMER_PROTOCOL_TYPE, self.consumer.state, "consumer")
        return GroupOverview(self.group_id, self.protocol_type or "", str(self.state))

    def __repr__(self) -> str:
        return (
            f"GroupMetadata(group_id={self.group_id!r}, generation={self.generation_id}, "
            f"protocol_type={self.protocol_type!r}, state={self.state}, "
            f"members={list(self.members)})"
        )


def subscription_topics(metadata: bytes) -> list[str]:
    """The topics of a ConsumerProtocolSubscription, read as its version 0 prefix (which every
    later version extends), whatever version it declares."""
    if len(metadata) < 2:
        raise ValueError("consumer protocol metadata too short")
    subscription, _ = messages.by_name("ConsumerProtocolSubscription").decode(bytes(metadata), 2, version=0)
    return list(subscription.topics)
