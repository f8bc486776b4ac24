"""The records of `__consumer_offsets`: Kafka's key and value formats, byte for byte.

Every key and value starts with an int16 version, then the fields of that version:

    OffsetCommitKey    v0/v1  group: string, topic: string, partition: int32
    GroupMetadataKey   v2     group: string
    OffsetCommitValue  v0-v4  offset: int64, [leaderEpoch: int32 v3+], metadata: string,
                              commitTimestamp: int64, [expireTimestamp: int64 v1 only]
                              (v4 is flexible: compact strings and tagged fields)
    GroupMetadataValue v0-v4  protocolType, generation, protocol, leader, [currentStateTimestamp
                              v2+], members: [memberId, [groupInstanceId v3+], clientId,
                              clientHost, [rebalanceTimeout v1+], sessionTimeout, subscription,
                              assignment] (v4 flexible)

As Kafka 3.9 does, offsets are written as OffsetCommitKey v1 with OffsetCommitValue v3 (v1 when
the commit carried a retention time, which sets an expire timestamp), and groups as
GroupMetadataKey v2 with GroupMetadataValue v3. A null value is a tombstone. Any version above
is read; keys of other versions are reported as unknown and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..record_format import RecordFormat, record_version, schema_field

OFFSET_KEY_VERSION = 1
GROUP_KEY_VERSION = 2
OFFSET_VALUE_VERSION = 3
OFFSET_VALUE_VERSION_WITH_EXPIRY = 1
GROUP_VALUE_VERSION = 3


_SCHEMAS = {
    "OffsetCommitKey": {
        "type": "data",
        "name": "OffsetCommitKey",
        "validVersions": "0-1",
        "flexibleVersions": "none",
        "fields": [
            schema_field("group", "string"),
            schema_field("topic", "string"),
            schema_field("partition", "int32"),
        ],
    },
    "GroupMetadataKey": {
        "type": "data",
        "name": "GroupMetadataKey",
        "validVersions": "2",
        "flexibleVersions": "none",
        "fields": [schema_field("group", "string", "2")],
    },
    "OffsetCommitValue": {
        "type": "data",
        "name": "OffsetCommitValue",
        "validVersions": "0-4",
        "flexibleVersions": "4+",
        "fields": [
            schema_field("offset", "int64"),
            schema_field("leaderEpoch", "int32", "3+", default=-1),
            schema_field("metadata", "string"),
            schema_field("commitTimestamp", "int64"),
            schema_field("expireTimestamp", "int64", "1", default=-1),
        ],
    },
    "GroupMetadataValue": {
        "type": "data",
        "name": "GroupMetadataValue",
        "validVersions": "0-4",
        "flexibleVersions": "4+",
        "fields": [
            schema_field("protocolType", "string"),
            schema_field("generation", "int32"),
            schema_field("protocol", "string", nullableVersions="0+"),
            schema_field("leader", "string", nullableVersions="0+"),
            schema_field("currentStateTimestamp", "int64", "2+", default=-1),
            schema_field("members", "[]MemberMetadata"),
        ],
        "commonStructs": [
            {
                "name": "MemberMetadata",
                "versions": "0+",
                "fields": [
                    schema_field("memberId", "string"),
                    schema_field("groupInstanceId", "string", "3+", default="null", nullableVersions="3+"),
                    schema_field("clientId", "string"),
                    schema_field("clientHost", "string"),
                    schema_field("rebalanceTimeout", "int32", "1+"),
                    schema_field("sessionTimeout", "int32"),
                    schema_field("subscription", "bytes"),
                    schema_field("assignment", "bytes"),
                ],
            }
        ],
    },
}


_FORMATS = {name: RecordFormat(raw) for name, raw in _SCHEMAS.items()}
OffsetCommitKey = _FORMATS["OffsetCommitKey"]
GroupMetadataKey = _FORMATS["GroupMetadataKey"]
OffsetCommitValue = _FORMATS["OffsetCommitValue"]
GroupMetadataValue = _FORMATS["GroupMetadataValue"]


# -- what the records mean --------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group: str


@dataclass(frozen=True)
class UnknownKey:
    version: int


@dataclass(frozen=True)
class OffsetAndMetadata:
    """A committed offset. `leader_epoch` -1 and `expire_timestamp` None when absent."""

    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int | None = None


@dataclass
class MemberRecord:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass
class GroupRecord:
    """A group's stored state: what GroupMetadataValue holds."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int  # -1 when unknown (values before v2)
    members: list[MemberRecord]


# -- keys -------------------------------------------------------------------------------------


def offset_key(group: str, topic: str, partition: int) -> bytes:
    return OffsetCommitKey.encode(
        OffsetCommitKey.cls(group=group, topic=topic, partition=partition), OFFSET_KEY_VERSION
    )


def group_key(group: str) -> bytes:
    return GroupMetadataKey.encode(GroupMetadataKey.cls(group=group), GROUP_KEY_VERSION)


def decode_key(data: bytes) -> OffsetKey | GroupKey | UnknownKey:
    version = record_version(data)
    if version in (0, 1):
        key = OffsetCommitKey.decode(data, version)
        return OffsetKey(key.group, key.topic, key.partition)
    if version == GROUP_KEY_VERSION:
        return GroupKey(GroupMetadataKey.decode(data, version).group)
    return UnknownKey(version)


# -- values -----------------------------------------------------------------------------------


def offset_value(entry: OffsetAndMetadata) -> bytes:
    version = OFFSET_VALUE_VERSION if entry.expire_timestamp is None else OFFSET_VALUE_VERSION_WITH_EXPIRY
    return OffsetCommitValue.encode(
        OffsetCommitValue.cls(
            offset=entry.offset,
            leader_epoch=entry.leader_epoch,
            metadata=entry.metadata,
            commit_timestamp=entry.commit_timestamp,
            expire_timestamp=-1 if entry.expire_timestamp is None else entry.expire_timestamp,
        ),
        version,
    )


def decode_offset_value(data: bytes) -> OffsetAndMetadata:
    version = record_version(data)
    value = OffsetCommitValue.decode(data, version)
    return OffsetAndMetadata(
        offset=value.offset,
        leader_epoch=value.leader_epoch if version >= 3 else -1,
        metadata=value.metadata,
        commit_timestamp=value.commit_timestamp,
        expire_timestamp=value.expire_timestamp if version == 1 else None,
    )


def group_value(record: GroupRecord) -> bytes:
    cls = GroupMetadataValue.cls
    return GroupMetadataValue.encode(
        cls(
            protocol_type=record.protocol_type,
            generation=record.generation,
            protocol=record.protocol,
            leader=record.leader,
            current_state_timestamp=record.current_state_timestamp,
            members=[
                cls.MemberMetadata(
                    member_id=m.member_id,
                    group_instance_id=m.group_instance_id,
                    client_id=m.client_id,
                    client_host=m.client_host,
                    rebalance_timeout=m.rebalance_timeout_ms,
                    session_timeout=m.session_timeout_ms,
                    subscription=m.subscription,
                    assignment=m.assignment,
                )
                for m in record.members
            ],
        ),
        GROUP_VALUE_VERSION,
    )


def decode_group_value(data: bytes) -> GroupRecord:
    version = record_version(data)
    value = GroupMetadataValue.decode(data, version)
    return GroupRecord(
        protocol_type=value.protocol_type,
        generation=value.generation,
        protocol=value.protocol,
        leader=value.leader,
        current_state_timestamp=value.current_state_timestamp if version >= 2 else -1,
        members=[
            MemberRecord(
                member_id=m.member_id,
                group_instance_id=m.group_instance_id if version >= 3 else None,
                client_id=m.client_id,
                client_host=m.client_host,
                rebalance_timeout_ms=m.rebalance_timeout if version >= 1 else m.session_timeout,
                session_timeout_ms=m.session_timeout,
                subscription=bytes(m.subscription),
                assignment=bytes(m.assignment),
            )
            for m in value.members
        ],
    )
