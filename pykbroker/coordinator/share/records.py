"""The records of `__share_group_state`: Kafka's ShareSnapshot and ShareUpdate keys and values,
byte for byte.

Each key and value starts with an int16 version. The key's version is the record type:

    ShareSnapshotKey  (0)  GroupId: string, TopicId: uuid, Partition: int32
    ShareUpdateKey    (1)  GroupId: string, TopicId: uuid, Partition: int32
    ShareSnapshotValue v0  (flexible) SnapshotEpoch: int32, StateEpoch: int32, LeaderEpoch: int32,
                           StartOffset: int64, CreateTimestamp: int64, WriteTimestamp: int64,
                           StateBatches: [FirstOffset: int64, LastOffset: int64,
                           DeliveryState: int8, DeliveryCount: int16];
                           tagged DeliveryCompleteCount (0, default -1; read and unused)
    ShareUpdateValue   v0  (flexible) SnapshotEpoch: int32, LeaderEpoch: int32, StartOffset: int64,
                           StateBatches as above; tagged DeliveryCompleteCount (0)

A null value is a tombstone: the share-partition's state was deleted. Keys of other types are
skipped while loading, as Kafka does.
"""

from __future__ import annotations

import logging
import uuid

from ..record_format import RecordFormat, record_version, schema_field
from .combiner import PersisterStateBatch
from .shard import ShareGroupOffset, SharePartitionKey, ShareStateRecord

log = logging.getLogger(__name__)

SHARE_SNAPSHOT_RECORD_TYPE = 0
SHARE_UPDATE_RECORD_TYPE = 1
VALUE_VERSION = 0


def _key_format(name: str) -> RecordFormat:
    return RecordFormat(
        {
            "type": "data",
            "name": name,
            "validVersions": "0-1",  # written with the record type as its version
            "flexibleVersions": "none",
            "fields": [
                schema_field("GroupId", "string"),
                schema_field("TopicId", "uuid"),
                schema_field("Partition", "int32"),
            ],
        }
    )


_STATE_BATCHES = schema_field(
    "StateBatches",
    "[]StateBatch",
    fields=[
        schema_field("FirstOffset", "int64"),
        schema_field("LastOffset", "int64"),
        schema_field("DeliveryState", "int8"),
        schema_field("DeliveryCount", "int16"),
    ],
)
_DELIVERY_COMPLETE_COUNT = schema_field("DeliveryCompleteCount", "int32", taggedVersions="0+", tag=0, default=-1)

ShareSnapshotKey = _key_format("ShareSnapshotKey")
ShareUpdateKey = _key_format("ShareUpdateKey")

ShareSnapshotValue = RecordFormat(
    {
        "type": "data",
        "name": "ShareSnapshotValue",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [
            schema_field("SnapshotEpoch", "int32"),
            schema_field("StateEpoch", "int32"),
            schema_field("LeaderEpoch", "int32"),
            schema_field("StartOffset", "int64"),
            _DELIVERY_COMPLETE_COUNT,
            schema_field("CreateTimestamp", "int64"),
            schema_field("WriteTimestamp", "int64"),
            _STATE_BATCHES,
        ],
    }
)

ShareUpdateValue = RecordFormat(
    {
        "type": "data",
        "name": "ShareUpdateValue",
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": [
            schema_field("SnapshotEpoch", "int32"),
            schema_field("LeaderEpoch", "int32"),
            schema_field("StartOffset", "int64"),
            _DELIVERY_COMPLETE_COUNT,
            _STATE_BATCHES,
        ],
    }
)


def _batches_out(fmt: RecordFormat, batches: tuple[PersisterStateBatch, ...]) -> list[object]:
    cls = fmt.classes["StateBatch"]
    return [
        cls(
            first_offset=b.first_offset,
            last_offset=b.last_offset,
            delivery_state=b.delivery_state,
            delivery_count=b.delivery_count,
        )
        for b in batches
    ]


def _batches_in(batches: list[object]) -> tuple[PersisterStateBatch, ...]:
    return tuple(
        PersisterStateBatch(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count)  # type: ignore[attr-defined]
        for b in batches
    )


def encode_record(record: ShareStateRecord) -> tuple[bytes, bytes | None]:
    """The (key, value) bytes of a record; value None for a tombstone."""
    key_format = ShareSnapshotKey if record.is_snapshot else ShareUpdateKey
    record_type = SHARE_SNAPSHOT_RECORD_TYPE if record.is_snapshot else SHARE_UPDATE_RECORD_TYPE
    k = record.key
    key = key_format.encode(
        key_format.cls(group_id=k.group_id, topic_id=k.topic_id, partition=k.partition), record_type
    )
    value = record.value
    if value is None:
        return key, None
    if record.is_snapshot:
        fmt = ShareSnapshotValue
        obj = fmt.cls(
            snapshot_epoch=value.snapshot_epoch,
            state_epoch=value.state_epoch,
            leader_epoch=value.leader_epoch,
            start_offset=value.start_offset,
            create_timestamp=value.create_timestamp,
            write_timestamp=value.write_timestamp,
            state_batches=_batches_out(fmt, value.batches),
        )
    else:
        fmt = ShareUpdateValue
        obj = fmt.cls(
            snapshot_epoch=value.snapshot_epoch,
            leader_epoch=value.leader_epoch,
            start_offset=value.start_offset,
            state_batches=_batches_out(fmt, value.batches),
        )
    return key, fmt.encode(obj, VALUE_VERSION)


def decode_record(key: bytes, value: bytes | None) -> ShareStateRecord | None:
    """The record in (key, value) bytes; None for a key of another type (skipped)."""
    record_type = record_version(key)
    if record_type not in (SHARE_SNAPSHOT_RECORD_TYPE, SHARE_UPDATE_RECORD_TYPE):
        log.warning("Skipping a record of unknown type %d in __share_group_state", record_type)
        return None
    is_snapshot = record_type == SHARE_SNAPSHOT_RECORD_TYPE
    key_obj = (ShareSnapshotKey if is_snapshot else ShareUpdateKey).decode(key, record_type)
    share_key = SharePartitionKey(key_obj.group_id, uuid.UUID(str(key_obj.topic_id)), key_obj.partition)
    if value is None:
        return ShareStateRecord(share_key, is_snapshot, None)
    value_version = record_version(value)
    if is_snapshot:
        v = ShareSnapshotValue.decode(value, value_version)
        offset = ShareGroupOffset(
            v.snapshot_epoch,
            v.state_epoch,
            v.leader_epoch,
            v.start_offset,
            _batches_in(v.state_batches),
            v.create_timestamp,
            v.write_timestamp,
        )
    else:
        v = ShareUpdateValue.decode(value, value_version)
        offset = ShareGroupOffset(v.snapshot_epoch, -1, v.leader_epoch, v.start_offset, _batches_in(v.state_batches))
    return ShareStateRecord(share_key, is_snapshot, offset)
