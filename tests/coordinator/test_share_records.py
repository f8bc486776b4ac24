"""The share group records of `__consumer_offsets`, byte for byte as Kafka 4 writes them: a key is
its record type (int16) and the key's fields; a value is version 0 (int16) and flexible fields."""
import uuid

from pykbroker.coordinator.group.share import records
from pykbroker.coordinator.group.share.replay import replay_share_groups
from pykbroker.coordinator.partition_io import LoadedRecord

TOPIC = uuid.UUID(int=7)


def test_a_key_is_the_record_type_then_the_group_and_member():
    assert records.key(records.GROUP_METADATA, "g") == b"\x00\x0b" + b"\x00\x01g"
    assert records.key(records.CURRENT_MEMBER_ASSIGNMENT, "g", "m") == b"\x00\x0e" + b"\x00\x01g" + b"\x00\x01m"
    assert records.decode_key(b"\x00\x0d\x00\x01g\x00\x01m") == records.ShareKey(13, "g", "m")
    assert records.decode_key(b"\x00\x02\x00\x01g") is None  # a classic group's key


def test_a_value_is_version_0_with_flexible_fields():
    # epoch 3, metadata hash 0, no tagged fields
    assert records.group_metadata_value(3, 0) == b"\x00\x00" + b"\x00\x00\x00\x03" + bytes(8) + b"\x00"
    assert records.target_assignment_metadata_value(4) == b"\x00\x00\x00\x00\x00\x04\x00"


def loaded(offset, key, value):
    return LoadedRecord(batch_offset=offset, key=key, value=value)


def test_replay_rebuilds_a_group_and_a_tombstone_removes_it():
    member = records.MemberMetadata(None, "client", "/127.0.0.1", ("t",))
    current = records.CurrentAssignment(2, 1, {TOPIC: frozenset({0})})
    written = [
        loaded(0, records.key(records.GROUP_METADATA, "g"), records.group_metadata_value(2, 9)),
        loaded(1, records.key(records.MEMBER_METADATA, "g", "m"), records.member_metadata_value(member)),
        loaded(2, records.key(records.CURRENT_MEMBER_ASSIGNMENT, "g", "m"), records.current_assignment_value(current)),
        loaded(3, records.key(records.TARGET_ASSIGNMENT_METADATA, "g"), records.target_assignment_metadata_value(2)),
        loaded(4, records.key(records.GROUP_METADATA, "gone"), records.group_metadata_value(1, 0)),
        loaded(5, records.key(records.GROUP_METADATA, "gone"), None),
    ]
    [group] = replay_share_groups(written)
    assert (group.group_id, group.group_epoch, group.metadata_hash, group.assignment_epoch) == ("g", 2, 9, 2)
    assert group.members["m"].member_epoch == 2 and group.members["m"].assigned == {TOPIC: frozenset({0})}
    assert group.members["m"].subscribed_topic_names == ("t",)
