"""The group coordinator for Kafka's classic group protocol (JoinGroup/SyncGroup/Heartbeat/
LeaveGroup), KIP-848 consumer groups (ConsumerGroupHeartbeat, in `consumer/`) and committed
offsets, stored in the internal topic `__consumer_offsets`.

    coordinator.py       GroupCoordinator: what the broker and the handlers call; lifecycle and
                         leadership of __consumer_offsets; hands each request to its owner below
    manager.py           GroupMetadataManager: the groups served, where they live, request checks,
                         writing a group's record
    loader.py            GroupLoader: loading and unloading partitions of __consumer_offsets
    replay.py            replaying a loaded partition into groups and offsets
    rebalance.py         Rebalance: the rebalance, its phases and their delayed operations
    heartbeats.py        Heartbeats: the members' session deadlines
    join.py              Joining: JoinGroup, members joining, static members taking over
    member_requests.py   MemberRequests: SyncGroup, Heartbeat and LeaveGroup
    offsets.py           OffsetMetadataManager: offset commits (transactional too), fetches, deletion
    offset_store.py      OffsetStore: writing offsets and their tombstones
    txn_offsets.py       OpenTransactions: transactional offsets pending until their markers
    offset_expiration.py OffsetExpiration: the retention check, offsets of deleted topics
    admin.py             GroupAdmin: listing, describing and deleting groups
    group.py, member.py, state.py, offset_cache.py, model.py
                         a group's bookkeeping, and the records handed back
    delayed.py           the rebalance's delayed operations (join, initial delay, sync)
    config.py            GroupConfig and OffsetConfig, from the broker's config
    formats.py           Kafka's key and value formats of __consumer_offsets records
    log_io.py            appending to and reading __consumer_offsets (through ../partition_io.py)
    offsets_topic.py     which partition holds a group; creating the topic
    consumer/            consumer groups (KIP-848): members, epochs, reconciliation, records
    assignors/           the server-side assignors of Kafka 4's groups: uniform, range, simple
    topic_regex.py       SubscribedTopicRegex: RE2/J regexes matched against whole topic names
    share/               share groups (KIP-932): ShareGroupCoordinator, their records and replay
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...common.lazy_names import names_from_modules
from . import offsets_topic
from .offsets_topic import OFFSETS_TOPIC, partition_for

if TYPE_CHECKING:
    from .config import GroupConfig, OffsetConfig
    from .coordinator import GroupCoordinator
    from .join import JoinRequest

# The names above, each imported from its module on first use: a broker that has served no group
# loads none of this package but `offsets_topic`.
_MODULE_OF = {
    "GroupConfig": "config",
    "OffsetConfig": "config",
    "GroupCoordinator": "coordinator",
    "JoinRequest": "join",
}


__getattr__ = names_from_modules(__name__, _MODULE_OF)


__all__ = [
    "GroupCoordinator",
    "GroupConfig",
    "JoinRequest",
    "OFFSETS_TOPIC",
    "OffsetConfig",
    "offsets_topic",
    "partition_for",
]
