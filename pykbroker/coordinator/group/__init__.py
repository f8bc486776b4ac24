"""The group coordinator for Kafka's classic group protocol (JoinGroup/SyncGroup/Heartbeat/
LeaveGroup) and committed offsets, stored in the internal topic `__consumer_offsets`.

    coordinator.py    the coordinator: request checks, leadership of __consumer_offsets
    join.py           JoinGroup: members joining, static members taking over
    member_requests.py  SyncGroup, Heartbeat and LeaveGroup
    rebalance.py      the rebalance, its phases and the members' deadlines
    offsets.py        offset commits, fetches, deletion and expiration
    txn_offsets.py    transactional offset commits and the end of their transactions
    admin.py          listing, describing and deleting groups
    group.py, member.py, state.py, offset_cache.py, model.py
                      a group's bookkeeping
    delayed.py        the rebalance's delayed operations (join, initial delay, sync)
    manager.py        the groups this broker serves and their storage
    formats.py        Kafka's key and value formats of __consumer_offsets records
    replay.py         loading a partition of __consumer_offsets
    log_io.py         appending to and reading __consumer_offsets (through ../partition_io.py)
    offsets_topic.py  which partition holds a group; creating the topic
    runtime.py        timers and background tasks on the event loop
"""

from .coordinator import GroupCoordinator
from .join import GroupConfig, JoinRequest
from .offsets_topic import OFFSETS_TOPIC, partition_for

__all__ = ["GroupCoordinator", "GroupConfig", "JoinRequest", "OFFSETS_TOPIC", "partition_for"]
