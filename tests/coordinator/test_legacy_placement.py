"""Where a key's coordinator lives, and what a coordinator does with state an older pykbroker
placed by its old rule: groups found in the partition the old rule named are moved to their
own partition when it loads, so that a restarted broker answers for them as before."""
from __future__ import annotations

from pykbroker.common.java_order import signed_string_hash
from pykbroker.coordinator.group.formats import (GroupKey, MemberRecord, GroupRecord, OffsetAndMetadata,
                                                 decode_key, group_key, group_value, offset_key,
                                                 offset_value)
from pykbroker.coordinator.placement import coordinator_partition, legacy_partition
from pykbroker.coordinator.group.state import STABLE
from pykbroker.protocol.errors import ErrorCode

from .fakes import MemoryOffsetsLog, commit, coordinator, fetch

PARTITIONS = 10
T0P0, T0P1 = ("orders", 0), ("orders", 1)


def misplaced_id(prefix: str, *, old_partition_loads_first: bool, partitions: int = PARTITIONS) -> str:
    """A key whose partitions under the two rules differ, the old one lower (loaded first) or
    higher than the new one."""
    for index in range(10_000):
        key = f"{prefix}-{index}"
        new, old = coordinator_partition(key, partitions), legacy_partition(key, partitions)
        if new != old and (old < new) == old_partition_loads_first:
            return key
    raise AssertionError("no such key")


def test_a_key_with_a_negative_hash_code_lives_where_kafka_puts_it():
    assert signed_string_hash("my-group") == -1906497762
    assert coordinator_partition("my-group", 50) == 1906497762 % 50 == 12
    assert legacy_partition("my-group", 50) == 36  # the low 31 bits: not Kafka's
    assert coordinator_partition("polygenelubricants", 50) == 0  # Integer.MIN_VALUE
    assert coordinator_partition("hello", 50) == legacy_partition("hello", 50) == 99162322 % 50


def write_old_group(log: MemoryOffsetsLog, group: str, offsets: dict, *, member: str = "m-1") -> int:
    """What an older pykbroker wrote for a Stable group of one member and its offsets; the
    partition it wrote them in."""
    old = legacy_partition(group, PARTITIONS)
    record = GroupRecord("consumer", 3, "range", member, 1_000, [
        MemberRecord(member, "instance-1", "client", "/127.0.0.1", 30_000, 10_000, b"sub", b"assigned")])
    stored = log.records[old]
    stored.append((len(stored), group_key(group), group_value(record)))
    for (topic, index), offset in offsets.items():
        stored.append((len(stored), offset_key(group, topic, index), offset_value(OffsetAndMetadata(offset))))
    return old


def live_keys(log: MemoryOffsetsLog, partition: int) -> set:
    """The keys of a partition that a replay ends with a value (tombstones applied)."""
    live: dict = {}
    for _offset, key, value in log.records[partition]:
        live[key] = value
    return {decode_key(key) for key, value in live.items() if value is not None}


def test_a_restart_finds_groups_and_offsets_an_older_version_placed_by_the_old_rule():
    for old_first in (True, False):
        group = misplaced_id("app", old_partition_loads_first=old_first)
        log = MemoryOffsetsLog()
        old = write_old_group(log, group, {T0P0: 5, T0P1: 6})
        new = coordinator_partition(group, PARTITIONS)

        restarted = coordinator(log, partitions=PARTITIONS)
        assert fetch(restarted, group) == {T0P0: 5, T0P1: 6}
        loaded = restarted.manager.get_group(group)
        assert (loaded.state, loaded.generation_id, loaded.leader_id) == (STABLE, 3, "m-1")
        assert loaded.get("m-1").group_instance_id == "instance-1"
        # written into the group's own partition, and removed from the old one
        assert GroupKey(group) in live_keys(log, new)
        assert live_keys(log, old) == set()

        again = coordinator(log, partitions=PARTITIONS)
        assert fetch(again, group) == {T0P0: 5, T0P1: 6}
        assert again.manager.get_group(group).generation_id == 3


def test_state_written_in_the_groups_own_partition_wins_over_the_old_placement():
    """Offsets committed where the group lives now are newer than anything the old rule wrote;
    offsets only the old partition has are still found."""
    group = misplaced_id("app", old_partition_loads_first=False)
    log = MemoryOffsetsLog()
    first = coordinator(log, partitions=PARTITIONS)
    commit(first, {T0P0: 50}, group=group)
    write_old_group(log, group, {T0P0: 5, T0P1: 6})
    assert fetch(coordinator(log, partitions=PARTITIONS), group) == {T0P0: 50, T0P1: 6}
    assert fetch(coordinator(log, partitions=PARTITIONS), group) == {T0P0: 50, T0P1: 6}


def test_a_group_waits_while_the_partition_of_its_old_placement_loads():
    group = misplaced_id("app", old_partition_loads_first=False)
    c = coordinator(partitions=PARTITIONS)
    old = legacy_partition(group, PARTITIONS)
    c.on_resignation(old)
    c.manager.start_loading(old)
    error, _ = c.handle_fetch_offsets(group, None)
    assert error == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS


def test_a_failed_move_keeps_the_old_records_for_the_next_load():
    group = misplaced_id("app", old_partition_loads_first=True)
    log = MemoryOffsetsLog()
    old = write_old_group(log, group, {T0P0: 5})
    log.fail_with = ErrorCode.NOT_LEADER_OR_FOLLOWER
    coordinator(log, partitions=PARTITIONS)
    log.fail_with = None
    assert len(live_keys(log, old)) == 2
    assert fetch(coordinator(log, partitions=PARTITIONS), group) == {T0P0: 5}
