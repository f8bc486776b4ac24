"""One member of a classic group: its protocols, timeouts, assignment and pending responses.

A member waiting in JoinGroup holds `awaiting_join` (the callback that answers it), one waiting
in SyncGroup holds `awaiting_sync`. `is_new` marks a member added in the current rebalance that
has not received its JoinGroup answer yet: it is expired after the new-member join timeout
rather than its session timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .model import JoinResult, SyncResult

Protocols = list[tuple[str, bytes]]  # (protocol name, metadata) in the member's preference order
JoinCallback = Callable[[JoinResult], None]  # answers a JoinGroup
SyncCallback = Callable[[SyncResult], None]  # answers a SyncGroup
R = TypeVar("R")


class MemberMetadata:
    def __init__(
        self,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        rebalance_timeout_ms: int,
        session_timeout_ms: int,
        protocol_type: str,
        protocols: Protocols,
    ) -> None:
        self.member_id = member_id
        self.group_instance_id = group_instance_id
        self.client_id = client_id
        self.client_host = client_host
        self.rebalance_timeout_ms = rebalance_timeout_ms
        self.session_timeout_ms = session_timeout_ms
        self.protocol_type = protocol_type
        self.protocols: Protocols = list(protocols)
        self.assignment = b""
        self.awaiting_join: JoinCallback | None = None
        self.awaiting_sync: SyncCallback | None = None
        self.is_new = False

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def is_awaiting_join(self) -> bool:
        return self.awaiting_join is not None

    @property
    def is_awaiting_sync(self) -> bool:
        return self.awaiting_sync is not None

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str | None) -> bytes:
        """The member's metadata for `protocol` (a group's protocol_name: None when the group
        has none, which no member supports)."""
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise ValueError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: Protocols) -> bool:
        """Same protocols, in the same order, with the same metadata."""
        return [(n, bytes(m)) for n, m in protocols] == [(n, bytes(m)) for n, m in self.protocols]

    def vote(self, candidates: set[str]) -> str:
        """The member's most preferred protocol among `candidates`."""
        for name, _ in self.protocols:
            if name in candidates:
                return name
        raise ValueError(f"member {self.member_id} supports none of {sorted(candidates)}")

    def expires_on_heartbeat_timeout(self) -> bool:
        """Whether a missed heartbeat deadline removes this member now. Members waiting for
        their JoinGroup or SyncGroup answer are excused, except new members, whose deadline is
        the new-member join timeout."""
        return self.is_new or not (self.is_awaiting_join or self.is_awaiting_sync)

    def __repr__(self) -> str:
        return (
            f"MemberMetadata(member_id={self.member_id!r}, "
            f"group_instance_id={self.group_instance_id!r}, client_id={self.client_id!r}, "
            f"protocols={self.protocol_names()})"
        )


def chain_callbacks(old: Callable[[R], None] | None, new: Callable[[R], None] | None) -> Callable[[R], None] | None:
    """A callback that answers both a superseded request and the one replacing it (a client
    that retried JoinGroup or SyncGroup on another connection), so that none waits forever."""
    if old is None or new is None:
        return new

    def both(result: R) -> None:
        old(result)
        new(result)

    return both
