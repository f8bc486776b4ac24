"""A partition's replica assignment while it is reassigned (KIP-455), as pure values and rules.

Kafka's `ReplicaAssignment`: the replicas (RS) of a partition being reassigned are its original
replicas (ORS) followed by the target replicas (TRS) it does not have yet; `adding` (AR) are the
target replicas not in the original set, `removing` (RR) the original replicas not in the target.
A partition is being reassigned while either list is non-empty. `reassign_to(target)` is the
assignment of a new (or replacing) reassignment: it starts from the original replicas, so a
reassignment asked while another runs replaces it, and one to the original replicas cancels it.

The checks of a requested target (`invalid_target`) give Kafka's errors and messages.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from ...protocol.errors import ErrorCode

ReassignmentError = tuple[ErrorCode, str | None]


@dataclass(frozen=True)
class ReplicaAssignment:
    replicas: list[int]
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)

    @property
    def origin(self) -> list[int]:
        """The replicas before the reassignment (ORS)."""
        return [r for r in self.replicas if r not in self.adding]

    @property
    def target(self) -> list[int]:
        """The replicas after it (TRS)."""
        return [r for r in self.replicas if r not in self.removing]

    @property
    def being_reassigned(self) -> bool:
        return bool(self.adding or self.removing)

    def reassign_to(self, target: list[int]) -> ReplicaAssignment:
        origin = self.origin
        full = _distinct(target + origin)
        return ReplicaAssignment(full, [r for r in full if r not in origin], [r for r in full if r not in target])


def _distinct(replicas: list[int]) -> list[int]:
    return list(dict.fromkeys(replicas))


def invalid_target(current: ReplicaAssignment, target: list[int], live: Collection[int]) -> ReassignmentError | None:
    """Why `target` cannot be a partition's new replicas (Kafka's validateReplicas), or None."""
    if not target:
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Empty replica list specified in partition reassignment."
    if len(set(target)) != len(target):
        return (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"Duplicate replica ids in partition reassignment replica list: {scala_buffer(target)}",
        )
    if any(r < 0 for r in target):
        return ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Invalid broker id in replica list: {scala_buffer(target)}"
    adding = current.reassign_to(target).adding
    if not set(adding) <= set(live):
        return (
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            "Replica assignment has brokers that are not alive. Replica list: "
            f"{scala_buffer(adding)}, live broker list: {scala_set(live)}",
        )
    return None


def scala_buffer(values: list[int]) -> str:
    """A list as Kafka's controller prints it (a Scala ArrayBuffer)."""
    return f"ArrayBuffer({', '.join(map(str, values))})"


def scala_set(values: Collection[int]) -> str:
    """A set of broker ids as Kafka's controller prints it (a Scala immutable Set)."""
    name = "Set" if len(values) <= 4 else "HashSet"
    return f"{name}({', '.join(map(str, sorted(values)))})"
