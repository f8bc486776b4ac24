"""What an append to a partition's log says of itself, as its callers name it without loading
the log: where it comes from (a client's produce, a coordinator, a follower's replication), the
sequence of a batch without one, and the guard of a transaction's verification (KIP-890).
`producer_state` checks them; the replication layer and the coordinators pass them on.
"""

from __future__ import annotations

NO_SEQUENCE = -1

CLIENT = "client"
COORDINATOR = "coordinator"
REPLICATION = "replication"


class VerificationGuard:
    """A unique token for one verification (Kafka's VerificationGuard): equal only to itself."""

    __slots__ = ()

    def verify(self, request_guard: VerificationGuard) -> bool:
        """Whether an append carrying `request_guard` passes this stored guard."""
        return request_guard is not SENTINEL and request_guard is self


SENTINEL = VerificationGuard()  # no verification: never verifies anything
