"""Fetch from the closest replica (KIP-392): which replica a consumer should read a partition from.

`replica.selector.class` names the selector, as in Kafka. Two are provided, Kafka's own:

- `org.apache.kafka.common.replica.LeaderSelector`: always the leader (the same as no selector).
- `org.apache.kafka.common.replica.RackAwareReplicaSelector`: a consumer whose `client.rack`
  (Fetch v11+ `rack_id`) matches the `broker.rack` of some candidate replica reads from the leader
  if the leader is in that rack, else from the most caught-up replica there (highest log end
  offset, then the one caught up most recently); a consumer without a rack, or whose rack holds no
  candidate, reads from the leader.

The leader offers as candidates itself and the followers in the ISR whose log holds the fetch
offset (log start <= offset <= log end), each only while the metadata lists its broker alive with
an endpoint on the consumer's listener (Kafka's ReplicaManager.findPreferredReadReplica). Any
other class name stops the broker at start (the setting's validator in `config/definitions.py`), as
Kafka does when it cannot load the class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .partition import Partition

RACK_AWARE_REPLICA_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
LEADER_SELECTOR = "org.apache.kafka.common.replica.LeaderSelector"


class ClientMetadata(NamedTuple):
    """What the selector knows of a fetching consumer (Kafka's ClientMetadata): its `client.rack`
    (None or "" for none) and the listener it came in on."""

    rack_id: str | None
    listener_name: str


class ReplicaView(NamedTuple):
    """A candidate replica (Kafka's ReplicaView): its broker, that broker's rack, its log end
    offset and how long ago it was last caught up with the leader (0 for the leader)."""

    broker_id: int
    rack: str | None
    log_end_offset: int
    time_since_caught_up_ms: int


# (client, candidates, leader) -> the chosen replica
ReplicaSelector = Callable[[ClientMetadata, Iterable[ReplicaView], ReplicaView], ReplicaView]


def replica_selector(class_name: str | None) -> ReplicaSelector | None:
    """The selector `replica.selector.class` names; None where every consumer reads from the
    leader (no selector, or the leader selector), so the fetch path does no selection at all."""
    if class_name == RACK_AWARE_REPLICA_SELECTOR:
        return select_rack_aware
    return None


def preferred_read_replica(
    selector: ReplicaSelector,
    partition: Partition,
    client: ClientMetadata,
    fetch_offset: int,
    now_ms: int,
    racks: Mapping[int, str | None],
) -> int | None:
    """Kafka's findPreferredReadReplica on the leader: the broker id of the replica the selector
    picks among the candidates, or None for the leader itself. `racks` holds the rack of each
    live broker with an endpoint on the client's listener; a broker missing there is no candidate."""
    candidates = [
        ReplicaView(broker_id, racks[broker_id], state.log_end_offset, now_ms - state.last_caught_up_ms)
        for broker_id, state in partition.followers.items()
        if broker_id in racks
        and broker_id in partition.isr
        and state.log_start_offset <= fetch_offset <= state.log_end_offset
    ]
    if not candidates:
        return None
    leader = ReplicaView(partition.local_broker_id, racks.get(partition.local_broker_id), partition.log_end_offset, 0)
    chosen = selector(client, candidates, leader)
    return None if chosen is leader else chosen.broker_id


def select_rack_aware(client: ClientMetadata, candidates: Iterable[ReplicaView], leader: ReplicaView) -> ReplicaView:
    """Kafka's RackAwareReplicaSelector.select: the leader unless the client's rack holds other
    candidates and not the leader; then the most caught-up of those."""
    rack = client.rack_id
    if not rack:
        return leader
    same_rack = [replica for replica in candidates if replica.rack == rack]
    if not same_rack or leader.rack == rack:
        return leader
    return max(same_rack, key=_caught_up_order)


def _caught_up_order(replica: ReplicaView) -> tuple[int, int]:
    """Kafka's ReplicaView.comparator: higher log end offset first, then the more recently caught up."""
    return replica.log_end_offset, -replica.time_since_caught_up_ms
