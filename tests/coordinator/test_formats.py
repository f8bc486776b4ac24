"""The bytes of `__consumer_offsets` records, and which partition holds a group: both must be
Kafka's exactly, since Kafka tools read the topic and clients compute nothing but brokers do."""
import struct

from pykbroker.coordinator.group.formats import (GroupRecord, GroupKey, MemberRecord,
                                                 OffsetAndMetadata, OffsetKey, UnknownKey,
                                                 decode_group_value, decode_key,
                                                 decode_offset_value, group_key, group_value,
                                                 offset_key, offset_value)
from pykbroker.common.java_order import signed_string_hash as java_string_hash
from pykbroker.coordinator.group.offsets_topic import partition_for


def kafka_string(text: str) -> bytes:
    return struct.pack(">h", len(text.encode())) + text.encode()


def test_offset_commit_key_is_version_1_group_topic_partition():
    assert offset_key("grp", "orders", 7) == (b"\x00\x01" + kafka_string("grp")
                                              + kafka_string("orders") + struct.pack(">i", 7))
    assert decode_key(offset_key("grp", "orders", 7)) == OffsetKey("grp", "orders", 7)


def test_version_0_offset_keys_are_read_too():
    key = b"\x00\x00" + kafka_string("grp") + kafka_string("orders") + struct.pack(">i", 1)
    assert decode_key(key) == OffsetKey("grp", "orders", 1)


def test_group_metadata_key_is_version_2_group():
    assert group_key("grp") == b"\x00\x02" + kafka_string("grp")
    assert decode_key(group_key("grp")) == GroupKey("grp")
    assert decode_key(b"\x00\x03" + kafka_string("x")) == UnknownKey(3)


def test_offset_commit_value_is_version_3():
    value = offset_value(OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000))
    assert value == (b"\x00\x03" + struct.pack(">qi", 42, 5) + kafka_string("meta")
                     + struct.pack(">q", 1_700_000_000_000))
    assert decode_offset_value(value) == OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000)


def test_an_offset_with_an_expire_timestamp_is_written_as_version_1():
    value = offset_value(OffsetAndMetadata(42, 5, "", 1000, expire_timestamp=2000))
    assert value == b"\x00\x01" + struct.pack(">q", 42) + kafka_string("") + struct.pack(">qq", 1000, 2000)
    assert decode_offset_value(value) == OffsetAndMetadata(42, -1, "", 1000, 2000)


def test_older_and_flexible_offset_values_are_read():
    v0 = b"\x00\x00" + struct.pack(">q", 7) + kafka_string("m") + struct.pack(">q", 99)
    assert decode_offset_value(v0) == OffsetAndMetadata(7, -1, "m", 99)
    # v4: compact string (length + 1 as unsigned varint) and an empty tagged-field section
    v4 = b"\x00\x04" + struct.pack(">qi", 7, 3) + b"\x02m" + struct.pack(">q", 99) + b"\x00"
    assert decode_offset_value(v4) == OffsetAndMetadata(7, 3, "m", 99)


def test_group_metadata_value_is_version_3_and_round_trips():
    record = GroupRecord("consumer", 4, "range", "m-1", 1_700_000_000_000, [
        MemberRecord("m-1", "instance-1", "client", "/10.0.0.1", 30000, 10000, b"sub", b"asg")])
    value = group_value(record)
    assert value[:2] == b"\x00\x03"
    assert value[2:] .startswith(kafka_string("consumer") + struct.pack(">i", 4)
                                 + kafka_string("range") + kafka_string("m-1")
                                 + struct.pack(">q", 1_700_000_000_000) + struct.pack(">i", 1)
                                 + kafka_string("m-1") + kafka_string("instance-1"))
    assert value.endswith(struct.pack(">ii", 30000, 10000) + struct.pack(">i", 3) + b"sub"
                          + struct.pack(">i", 3) + b"asg")
    assert decode_group_value(value) == record


def test_an_empty_groups_value_has_null_protocol_and_leader():
    record = GroupRecord("consumer", 2, None, None, 123, [])
    value = group_value(record)
    assert value == (b"\x00\x03" + kafka_string("consumer") + struct.pack(">i", 2)
                     + b"\xff\xff\xff\xff" + struct.pack(">q", 123) + struct.pack(">i", 0))
    assert decode_group_value(value) == record


def test_java_string_hash_code():
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -2**31
    assert java_string_hash("\U0001F600") == 0xD83D * 31 + 0xDE00  # UTF-16 surrogate pair


def test_a_groups_partition_is_kafkas():
    assert partition_for("polygenelubricants", 50) == 0  # abs(Integer.MIN_VALUE) is 0 here
    assert partition_for("hello", 50) == 99162322 % 50
    # a negative hash code: Kafka takes its absolute value (Utils.abs), not its low 31 bits
    assert java_string_hash("my-group") == -1906497762
    assert partition_for("my-group", 50) == 1906497762 % 50 == 12
