"""Consumer groups (KIP-848): the group type whose assignment the coordinator computes and hands
out through ConsumerGroupHeartbeat.

    group.py       ConsumerGroup, ConsumerGroupMember, the member states and the reconciliation
                   of a member's assignment with its target (Kafka's CurrentAssignmentBuilder)
    manager.py     ConsumerGroupManager: heartbeats, leaving, timeouts, target assignment, describe
    records.py     Kafka 4's records of consumer groups in __consumer_offsets
    replay.py      rebuilding consumer groups from those records
    assignment.py  the server-side assignors and topic regular expressions used
    offsets.py     who may commit and fetch offsets of a consumer group (member epochs)
    classic_members.py  online migration: a classic group's upgrade, classic members served
                   inside a consumer group

A consumer group lives in the coordinator's cache as the `consumer` of a `GroupMetadata` (which
keeps its committed offsets), so that offsets, listing and deletion serve both group types.
"""
