"""Share sessions (Kafka's `ShareSessionCache` and `ShareSession`): the partitions a share
consumer fetches from this broker, keyed by (group id, member id), with an epoch.

A ShareFetch with epoch 0 opens a session (replacing the member's previous one), -1 closes it,
and any other epoch must be the session's current one, which then moves on by one (from
INT32_MAX back to 1). A ShareAcknowledge may not open one. At most
`group.share.max.share.sessions` sessions live at once (SHARE_SESSION_LIMIT_REACHED).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from ....protocol.errors import ErrorCode

INITIAL_EPOCH = 0
FINAL_EPOCH = -1
_MAX_EPOCH = 2**31 - 1


class SharePartitionKey(NamedTuple):
    """A topic partition of a share session, by topic id (with its name when known)."""

    topic_id: uuid.UUID
    partition: int


class ShareSessionKey(NamedTuple):
    group_id: str
    member_id: str


@dataclass
class ShareSession:
    key: ShareSessionKey
    connection_id: str = ""  # the client connection that opened it: its close ends the session
    epoch: int = 1  # the epoch the next request must carry
    partitions: dict[SharePartitionKey, None] = field(default_factory=dict)  # in the order added

    def update(self, added: Iterable[SharePartitionKey], forgotten: Iterable[SharePartitionKey]) -> None:
        for key in forgotten:
            self.partitions.pop(key, None)
        for key in added:
            self.partitions.setdefault(key, None)

    def advance(self) -> None:
        self.epoch = 1 if self.epoch >= _MAX_EPOCH else self.epoch + 1


class SessionError(Exception):
    def __init__(self, code: ErrorCode) -> None:
        super().__init__(code.name)
        self.code = code


class ShareSessionCache:
    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[ShareSessionKey, ShareSession] = {}

    def __len__(self) -> int:
        return len(self.sessions)

    def open(self, key: ShareSessionKey, connection_id: str = "") -> ShareSession:
        """Epoch 0: a new session for the member (its previous one goes), opened on the client
        connection `connection_id`."""
        self.sessions.pop(key, None)
        if len(self.sessions) >= self.max_sessions:
            raise SessionError(ErrorCode.SHARE_SESSION_LIMIT_REACHED)
        session = self.sessions[key] = ShareSession(key, connection_id)
        return session

    def continue_session(self, key: ShareSessionKey, epoch: int) -> ShareSession:
        """Epoch > 0: the member's session, whose epoch must be `epoch`; it then moves on."""
        session = self.get(key, epoch)
        session.advance()
        return session

    def get(self, key: ShareSessionKey, epoch: int) -> ShareSession:
        """The member's session, checked against `epoch` (-1 matches any)."""
        session = self.sessions.get(key)
        if session is None:
            raise SessionError(ErrorCode.SHARE_SESSION_NOT_FOUND)
        if epoch != FINAL_EPOCH and epoch != session.epoch:
            raise SessionError(ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        return session

    def remove(self, key: ShareSessionKey) -> ShareSession | None:
        return self.sessions.pop(key, None)

    def remove_member(self, group_id: str, member_id: str) -> None:
        self.sessions.pop(ShareSessionKey(group_id, member_id), None)

    def remove_opened_on(self, connection_id: str) -> list[ShareSessionKey]:
        """The client connection closed: the sessions it opened go; their keys."""
        keys = [key for key, session in self.sessions.items() if session.connection_id == connection_id]
        for key in keys:
            del self.sessions[key]
        return keys
