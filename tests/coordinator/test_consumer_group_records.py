"""Consumer groups (KIP-848) in the coordinator, without a broker: Kafka 4's record framing in
`__consumer_offsets` (the key's version is the record type), the replay that rebuilds a group, and
the group size cap."""
from pykbroker.coordinator.group import GroupConfig, GroupCoordinator, OffsetConfig
from pykbroker.coordinator.group.consumer import records
from pykbroker.coordinator.group.consumer.manager import ConsumerGroupSettings, HeartbeatRequest
from pykbroker.protocol.errors import ErrorCode

from .fakes import FakeRuntime, MemoryOffsetsLog


def consumer_coordinator(log, max_size=2**31 - 1):
    c = GroupCoordinator(0, GroupConfig(), OffsetConfig(), log, FakeRuntime(), lambda: 1, None,
                         ConsumerGroupSettings(max_size=max_size))
    c.startup()
    c.on_election(0)
    return c


def join(c, member_id, topics=("orders",), instance_id=None):
    answers = []
    c.consumer_groups.handle_heartbeat(HeartbeatRequest(
        "g", member_id, 0, instance_id=instance_id, rebalance_timeout_ms=30000,
        subscribed_topic_names=list(topics), owned={}), answers.append)
    return answers[0]


def test_the_records_are_framed_as_kafka_4_writes_them():
    log = MemoryOffsetsLog()
    join(consumer_coordinator(log), "m1")
    types = [int.from_bytes(key[:2], "big") for _, key, _ in log.records[0]]
    assert types == [records.MEMBER_METADATA, records.METADATA, records.TARGET_ASSIGNMENT_MEMBER,
                     records.TARGET_ASSIGNMENT_METADATA, records.CURRENT_MEMBER_ASSIGNMENT]
    _, key, value = log.records[0][1]
    assert key == b"\x00\x03\x00\x01g" and records.decode_metadata_value(value)[0] == 1
    _, key, value = log.records[0][0]
    assert records.decode_key(records.MEMBER_METADATA, key) == records.ConsumerKey(5, "g", "m1")
    assert records.decode_member_metadata_value(value).subscribed_topic_names == ("orders",)


def test_a_loaded_partition_gives_the_group_back_with_its_epochs_and_members():
    log = MemoryOffsetsLog()
    first = consumer_coordinator(log)
    join(first, "m1", instance_id="i1")
    join(first, "m2")
    again = consumer_coordinator(log).manager.get_group("g").consumer
    assert (again.group_epoch, again.assignment_epoch) == (2, 2)
    assert sorted(again.members) == ["m1", "m2"] and again.static_members == {"i1": "m1"}
    assert again.members["m2"].member_epoch == 2


def test_a_full_group_refuses_a_new_member_with_kafkas_message():
    c = consumer_coordinator(MemoryOffsetsLog(), max_size=1)
    assert join(c, "m1").error == ErrorCode.NONE
    refused = join(c, "m2")
    assert refused.error == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert refused.message == "The consumer group has reached its maximum capacity of 1 members."
    assert join(c, "m1").error == ErrorCode.NONE  # a member already in may rejoin


def test_leaving_writes_tombstones_for_the_member_and_a_new_group_epoch():
    log = MemoryOffsetsLog()
    c = consumer_coordinator(log)
    joined = join(c, "m1")
    answers = []
    c.consumer_groups.handle_heartbeat(HeartbeatRequest("g", "m1", -1), answers.append)
    assert answers[0].member_epoch == -1 and joined.member_epoch == 1
    tail = log.records[0][-4:]
    assert [value is None for _, _, value in tail] == [True, True, True, False]
    assert records.decode_metadata_value(tail[-1][2])[0] == 2
    assert c.manager.get_group("g").consumer.members == {}


def test_a_heartbeat_whose_records_are_not_written_changes_nothing():
    log = MemoryOffsetsLog()
    c = consumer_coordinator(log)
    join(c, "m1")
    log.fail_with = ErrorCode.NOT_ENOUGH_REPLICAS
    assert join(c, "m2").error == ErrorCode.COORDINATOR_NOT_AVAILABLE
    group = c.manager.get_group("g").consumer
    assert sorted(group.members) == ["m1"] and group.group_epoch == 1
    assert join(consumer_coordinator(MemoryOffsetsLog()), "m1").error == ErrorCode.NONE
    failing = MemoryOffsetsLog()
    failing.fail_with = ErrorCode.NOT_ENOUGH_REPLICAS
    fresh = consumer_coordinator(failing)
    assert join(fresh, "m1").error == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert fresh.manager.get_group("g") is None
