"""Share groups (KIP-932): the group side, beside the classic groups in `__consumer_offsets`.

coordinator.py   ShareGroupCoordinator: ShareGroupHeartbeat, ShareGroupDescribe, the share
                 groups of ListGroups and DeleteGroups, Describe/Alter/DeleteShareGroupOffsets,
                 share-partition state initialization, member session expiry, leave listeners
model.py         ShareGroup, ShareGroupMember
records.py       the ShareGroup* records of __consumer_offsets, as Kafka 4 writes them
replay.py        rebuilding share groups from a loaded partition
results.py       what the coordinator hands back to the handlers
record_types.py  the record types of the share group records

Nothing is imported here: the group coordinator loads the share group code on the first share
group request or share group record.
"""
