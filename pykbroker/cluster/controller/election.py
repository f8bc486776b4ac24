"""The controller's rules for a partition's leader and ISR, as pure functions.

Every function takes the partition's replicas (assignment order: the first is the preferred
leader), its current state (`LeaderAndIsr`, or None before the first election) and the live
brokers with their registration epochs, and returns the new (leader, isr) or None when nothing
changes (`designated(target)` moves leadership to a chosen in-sync replica). The caller
writes the change with the leader epoch bumped.

The rules are Kafka's:
- a new partition is led by its first live replica, with every live replica in the ISR;
- a partition whose leader is gone, or registered again since it was elected, gets the first
  replica (assignment order) that is alive and in the ISR, other than the old leader when
  possible; the ISR keeps its live members. With no live ISR member, the partition goes offline
  (leader -1, the ISR keeping its last member) unless unclean election is enabled, which takes
  the first live replica, with an ISR of itself;
- a live leader keeps its place, and replicas whose brokers are gone leave the ISR;
- brokers shutting down (controlled shutdown) are never elected; a partition whose leader is
  shutting down is worth waiting for only while another of its replicas is alive and not shutting
  down (it may rejoin the ISR and take over), so the last broker of a cluster is not kept waiting.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from ...protocol.errors import ErrorCode
from ..model import NO_LEADER

if TYPE_CHECKING:  # the ZooKeeper records are loaded in ZooKeeper mode only
    from ..zk_data import LeaderAndIsr

Live = Mapping[int, int]  # broker id -> registration epoch
PREFERRED, UNCLEAN = 0, 1  # ElectLeaders' election types


def leader_is_current(state: LeaderAndIsr, live: Live, gone: Collection[int] = ()) -> bool:
    """The leader is registered, and was already when it was elected (not restarted since)."""
    return state.leader in live and state.leader not in gone and live[state.leader] < state.mzxid


def reconcile(
    replicas: list[int],
    state: LeaderAndIsr | None,
    live: Live,
    *,
    shutting_down: Collection[int] = (),
    gone: Collection[int] = (),
    unclean: bool = False,
) -> tuple[int, list[int]] | None:
    """The partition's next (leader, isr) after brokers came or went; None if unchanged.

    `gone` are brokers to treat as failed even though registered (they restarted since the
    controller last saw them: their replicas must catch up again).
    """
    alive = {r for r in live if r not in gone}
    eligible = [r for r in replicas if r in alive and r not in shutting_down]
    if state is None:
        return (eligible[0], eligible) if eligible else None
    isr_alive = [r for r in state.isr if r in alive]
    if leader_is_current(state, live, gone):
        return None if isr_alive == state.isr else (state.leader, isr_alive)
    candidates = [r for r in eligible if r in state.isr]
    others = [r for r in candidates if r != state.leader]
    if others:
        candidates = others
    if candidates:
        leader = candidates[0]
        isr = [r for r in state.isr if r == leader or (r in isr_alive and r not in shutting_down and r != state.leader)]
        return leader, isr
    if unclean and eligible:
        return eligible[0], [eligible[0]]
    keep = isr_alive or ([state.leader] if state.leader in state.isr else state.isr[-1:])
    if state.leader == NO_LEADER and keep == state.isr:
        return None
    return NO_LEADER, keep


def controlled_shutdown(
    replicas: list[int], state: LeaderAndIsr | None, broker_id: int, live: Live, shutting_down: Collection[int]
) -> tuple[int, list[int]] | None:
    """Move leadership away from `broker_id` (shutting down), or drop it from the ISR."""
    if state is None or len(replicas) < 2:
        return None
    if state.leader == broker_id:
        candidates = [r for r in replicas if r in state.isr and r in live and r not in shutting_down]
        if not candidates:
            return None
        return candidates[0], [r for r in state.isr if r not in shutting_down]
    if broker_id in state.isr and state.leader in live:
        return state.leader, [r for r in state.isr if r != broker_id]
    return None


def successor_possible(replicas: list[int], broker_id: int, live: Live, shutting_down: Collection[int]) -> bool:
    """Whether a replica other than `broker_id` (shutting down) could ever lead: one that is alive and
    not shutting down, even if not in the ISR yet. Without one, asking again cannot move leadership."""
    return any(r != broker_id and r in live and r not in shutting_down for r in replicas)


def preferred(
    replicas: list[int], state: LeaderAndIsr | None, live: Live, shutting_down: Collection[int]
) -> tuple[ErrorCode, tuple[int, list[int]] | None]:
    """Preferred leader election: make the first replica the leader."""
    if state is None or not replicas:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    first = replicas[0]
    if state.leader == first and leader_is_current(state, live):
        return ErrorCode.ELECTION_NOT_NEEDED, None
    if first in live and first not in shutting_down and first in state.isr:
        return ErrorCode.NONE, (first, list(state.isr))
    return ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, None


def unclean(
    replicas: list[int], state: LeaderAndIsr | None, live: Live, shutting_down: Collection[int]
) -> tuple[ErrorCode, tuple[int, list[int]] | None]:
    """Unclean election, when asked for: only for a partition without a live leader."""
    if state is None or not replicas:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
    if leader_is_current(state, live):
        return ErrorCode.ELECTION_NOT_NEEDED, None
    clean = reconcile(replicas, state, live, shutting_down=shutting_down)
    if clean is not None and clean[0] != NO_LEADER:
        return ErrorCode.NONE, clean
    eligible = [r for r in replicas if r in live and r not in shutting_down]
    if not eligible:
        return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, None
    return ErrorCode.NONE, (eligible[0], [eligible[0]])


def designated(
    target: int,
) -> Callable[[list[int], LeaderAndIsr | None, Live, Collection[int]], tuple[ErrorCode, tuple[int, list[int]] | None]]:
    """A leader election that makes `target` the leader (moving a partition's leadership on
    request): it must be a live replica in the ISR, not shutting down. The assignment keeps its
    order, so a later preferred election moves leadership back."""

    def elect(
        replicas: list[int], state: LeaderAndIsr | None, live: Live, shutting_down: Collection[int]
    ) -> tuple[ErrorCode, tuple[int, list[int]] | None]:
        if state is None or not replicas:
            return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None
        if target not in replicas:
            return ErrorCode.INVALID_REPLICA_ASSIGNMENT, None
        if state.leader == target and leader_is_current(state, live):
            return ErrorCode.ELECTION_NOT_NEEDED, None
        if target in live and target not in shutting_down and target in state.isr:
            return ErrorCode.NONE, (target, list(state.isr))
        return ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, None

    return elect
