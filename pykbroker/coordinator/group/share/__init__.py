"""Share groups (KIP-932): the group side, beside the classic groups in `__consumer_offsets`.

coordinator.py   ShareGroupCoordinator: ShareGroupHeartbeat, ShareGroupDescribe, the share
                 groups of ListGroups and DeleteGroups, Describe/Alter/DeleteShareGroupOffsets,
                 share-partition state initialization, member session expiry, leave listeners
model.py         ShareGroup, ShareGroupMember
records.py       the ShareGroup* records of __consumer_offsets, as Kafka 4 writes them
replay.py        rebuilding share groups from a loaded partition
assignor.py      the `simple` assignor (the assignors package's, or a stand-in)
persister.py     the share persister interface used here; an in-memory persister
results.py       what the coordinator hands back to the handlers
"""

from .coordinator import ShareGroupConfig, ShareGroupCoordinator, TopicsView
from .persister import InMemorySharePersister, SharePersister

__all__ = ["InMemorySharePersister", "ShareGroupConfig", "ShareGroupCoordinator", "SharePersister", "TopicsView"]
