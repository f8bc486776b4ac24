"""The share coordinator's state of share-partitions, rebuilt from its records: a ShareSnapshot
holds the whole state, ShareUpdates hold deltas merged into it as Kafka's
PersisterStateBatchCombiner merges batches, and a snapshot is written again every
`share.coordinator.snapshot.update.records.per.snapshot` updates. The records' bytes are Kafka's."""
from __future__ import annotations

import uuid

from pykbroker.coordinator.share.combiner import PersisterStateBatch as Batch
from pykbroker.coordinator.share.combiner import combine_state_batches
from pykbroker.coordinator.share.records import decode_record, encode_record
from pykbroker.coordinator.share.shard import (
    ShareCoordinatorShard,
    ShareGroupOffset,
    SharePartitionKey,
    ShareStateRecord,
    parse_share_coordinator_key,
)
from pykbroker.coordinator.share.state_topic import partition_for
from pykbroker.protocol.errors import ErrorCode

AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4
TOPIC_ID = uuid.UUID("12345678-1234-5678-1234-567812345678")
KEY = SharePartitionKey("share-group", TOPIC_ID, 3)


def new_shard(records_per_snapshot: int = 500) -> ShareCoordinatorShard:
    return ShareCoordinatorShard(records_per_snapshot, lambda topic_id, partition: True, lambda: 1000)


def apply(shard: ShareCoordinatorShard, result):
    records, answer = result
    for record in records:
        shard.replay(decode_record(*encode_record(record)))  # through the bytes, as a load does
    return records, answer


def test_a_snapshot_followed_by_updates_replays_into_the_merged_state():
    records = [
        ShareStateRecord(KEY, True, ShareGroupOffset(0, 1, 5, 100, (Batch(100, 109, AVAILABLE, 1),), 10, 10)),
        ShareStateRecord(KEY, False, ShareGroupOffset(0, -1, 5, -1, (Batch(102, 104, ACKNOWLEDGED, 1),))),
        ShareStateRecord(KEY, False, ShareGroupOffset(0, -1, 6, 103, (Batch(105, 105, AVAILABLE, 2),))),
    ]
    shard = new_shard()
    for record in records:
        shard.replay(decode_record(*encode_record(record)))
    assert shard.states[KEY] == ShareGroupOffset(
        0, 1, 6, 103,
        (Batch(103, 104, ACKNOWLEDGED, 1), Batch(105, 105, AVAILABLE, 2), Batch(106, 109, AVAILABLE, 1)),
        10, 10,
    )
    assert shard.leader_epochs[KEY] == 6 and shard.state_epochs[KEY] == 1


def test_a_tombstone_forgets_the_share_partition():
    shard = new_shard()
    shard.replay(ShareStateRecord(KEY, True, ShareGroupOffset(0, 1, 5, 100, ())))
    shard.replay(decode_record(*encode_record(ShareStateRecord(KEY, True, None))))
    assert KEY not in shard.states and KEY not in shard.leader_epochs


def test_writes_are_updates_between_snapshots_written_every_n_updates():
    shard = new_shard(records_per_snapshot=2)
    apply(shard, shard.initialize_state(KEY, 0, 0))
    kinds = []
    for offset in range(5):
        records, answer = apply(shard, shard.write_state(KEY, 0, 1, -1, [Batch(offset, offset, ACKNOWLEDGED, 1)]))
        assert answer.error == ErrorCode.NONE
        kinds.append("snapshot" if records[0].is_snapshot else "update")
    assert kinds == ["update", "update", "update", "snapshot", "update"]
    assert shard.states[KEY].batches == (Batch(0, 4, ACKNOWLEDGED, 1),)
    assert shard.states[KEY].snapshot_epoch == 1


def test_the_share_coordinators_errors():
    shard = new_shard()
    assert shard.read_state(KEY, 0)[1].error == ErrorCode.INVALID_REQUEST  # never initialized
    assert shard.write_state(KEY, 0, 0, 0, [])[1].error == ErrorCode.INVALID_REQUEST
    apply(shard, shard.initialize_state(KEY, 2, 0))
    apply(shard, shard.read_state(KEY, 4))  # a new leader's read records its epoch
    assert shard.write_state(KEY, 2, 3, 0, [])[1].error == ErrorCode.FENCED_LEADER_EPOCH
    assert shard.write_state(KEY, 1, 4, 0, [])[1].error == ErrorCode.FENCED_STATE_EPOCH
    assert shard.initialize_state(KEY, 1, 0)[1].error == ErrorCode.FENCED_STATE_EPOCH
    assert shard.read_state(KEY, 3)[1].error == ErrorCode.FENCED_LEADER_EPOCH
    negative = SharePartitionKey("share-group", TOPIC_ID, -1)
    assert shard.read_summary(negative, 0).error == ErrorCode.INVALID_REQUEST
    unknown = ShareCoordinatorShard(500, lambda topic_id, partition: False, lambda: 0)
    assert unknown.initialize_state(KEY, 0, 0)[1].error == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_combining_prefers_the_later_delivery_and_prunes_below_the_start_offset():
    so_far = [Batch(0, 9, AVAILABLE, 1), Batch(10, 19, ACKNOWLEDGED, 1)]
    new = [Batch(5, 12, ARCHIVED, 2)]
    assert combine_state_batches(so_far, new, 3) == [
        Batch(3, 4, AVAILABLE, 1), Batch(5, 12, ARCHIVED, 2), Batch(13, 19, ACKNOWLEDGED, 1)]
    assert combine_state_batches([Batch(0, 4, AVAILABLE, 1)], [Batch(5, 9, AVAILABLE, 1)], -1) == [
        Batch(0, 9, AVAILABLE, 1)]


def test_records_are_written_in_kafkas_bytes():
    key, value = encode_record(ShareStateRecord(KEY, False, ShareGroupOffset(7, -1, 5, 100, (Batch(1, 2, 2, 3),))))
    # ShareUpdateKey: type 1, group id, topic id, partition
    assert key == b"\x00\x01\x00\x0bshare-group" + TOPIC_ID.bytes + b"\x00\x00\x00\x03"
    # ShareUpdateValue v0 (flexible): snapshot epoch, leader epoch, start offset, compact array, no tags
    assert value == (b"\x00\x00" + b"\x00\x00\x00\x07" + b"\x00\x00\x00\x05" + (100).to_bytes(8, "big")
                     + b"\x02" + (1).to_bytes(8, "big") + (2).to_bytes(8, "big") + b"\x02\x00\x03\x00" + b"\x00")


def test_a_share_key_lives_in_the_partition_javas_hash_gives_it():
    # Utils.abs(String.hashCode) % n, where "polygenelubricants".hashCode() is Integer.MIN_VALUE
    assert partition_for("polygenelubricants", 7) == 0
    assert partition_for("a", 50) == 97 % 50
    # a negative hash counts by its absolute value (-1259237701), not its low 31 bits
    assert partition_for("hello-world-1", 50) == 1259237701 % 50
    assert parse_share_coordinator_key(KEY.coordinator_key()) == KEY
    for malformed in ("", "group", "group:topic:0", f"group:{KEY.coordinator_key().split(':')[1]}:x", ":x:1"):
        assert parse_share_coordinator_key(malformed) is None


def test_the_in_memory_persister_answers_as_the_share_coordinator():
    import anyio

    from pykbroker.coordinator.share import InMemorySharePersister

    async def scenario():
        persister = InMemorySharePersister()
        assert (await persister.read_state("g", TOPIC_ID, 0, 0)).error == ErrorCode.INVALID_REQUEST
        assert await persister.initialize_state("g", TOPIC_ID, 0, 1, -1) == ErrorCode.NONE
        fresh = await persister.read_state("g", TOPIC_ID, 0, 2)
        assert (fresh.error, fresh.state_epoch, fresh.start_offset, fresh.leader_epoch) == (ErrorCode.NONE, 1, -1, 2)
        batches = [Batch(5, 9, ACKNOWLEDGED, 1)]
        assert await persister.write_state("g", TOPIC_ID, 0, 1, 2, 5, batches) == ErrorCode.NONE
        assert await persister.write_state("g", TOPIC_ID, 0, 1, 1, 5, batches) == ErrorCode.FENCED_LEADER_EPOCH
        assert (await persister.read_state("g", TOPIC_ID, 0, 2)).batches == tuple(batches)
        brief = await persister.read_summary("g", TOPIC_ID, 0, -1)
        assert (brief.state_epoch, brief.start_offset, brief.batches) == (1, 5, ())
        assert await persister.delete_state("g", TOPIC_ID, 0) == ErrorCode.NONE
        assert (await persister.read_summary("g", TOPIC_ID, 0, -1)).start_offset == -1

    anyio.run(scenario)
