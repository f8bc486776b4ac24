"""The records of consumer groups (KIP-848) in `__consumer_offsets`, as Kafka 4 writes them.

Kafka 4 frames every coordinator record the same way: the key starts with an int16 that is the
record's type (its `apiKey`), then the key's fields; the value starts with its own int16 version
(0 for all of these, flexible). A null value is a tombstone.

    type  key (fields)                                   value (v0)
    3     ConsumerGroupMetadataKey (GroupId)             Epoch, tagged MetadataHash (tag 0)
    5     ConsumerGroupMemberMetadataKey (GroupId, MemberId)
                                                         InstanceId, RackId, ClientId, ClientHost,
                                                         SubscribedTopicNames, SubscribedTopicRegex,
                                                         RebalanceTimeoutMs, ServerAssignor,
                                                         tagged ClassicMemberMetadata (tag 0)
    6     ConsumerGroupTargetAssignmentMetadataKey (GroupId)
                                                         AssignmentEpoch
    7     ConsumerGroupTargetAssignmentMemberKey (GroupId, MemberId)
                                                         TopicPartitions [TopicId, Partitions]
    8     ConsumerGroupCurrentMemberAssignmentKey (GroupId, MemberId)
                                                         MemberEpoch, PreviousMemberEpoch, State,
                                                         AssignedPartitions, PartitionsPendingRevocation
    16    ConsumerGroupRegularExpressionKey (GroupId, Regex)
                                                         Topics, Version, Timestamp

As Kafka 4.1 does, the subscribed topics' metadata is tracked by the hash in the group's
metadata record; ConsumerGroupPartitionMetadata (type 4) is read and ignored.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...record_format import RecordFormat

METADATA = 3
PARTITION_METADATA = 4
MEMBER_METADATA = 5
TARGET_ASSIGNMENT_METADATA = 6
TARGET_ASSIGNMENT_MEMBER = 7
CURRENT_MEMBER_ASSIGNMENT = 8
REGULAR_EXPRESSION = 16
RECORD_TYPES = frozenset(
    {
        METADATA,
        PARTITION_METADATA,
        MEMBER_METADATA,
        TARGET_ASSIGNMENT_METADATA,
        TARGET_ASSIGNMENT_MEMBER,
        CURRENT_MEMBER_ASSIGNMENT,
        REGULAR_EXPRESSION,
    }
)
VALUE_VERSION = 0

Assignment = Mapping[uuid.UUID, frozenset[int]]


def _f(name: str, type_: str, **extra: object) -> dict[str, object]:
    return {"name": name, "type": type_, "versions": "0+", **extra}


def _key(name: str, record_type: int, *fields: str) -> dict[str, object]:
    version = str(record_type)
    return {
        "type": "data",
        "name": name,
        "validVersions": version,
        "flexibleVersions": "none",
        "fields": [{"name": f, "type": "string", "versions": version} for f in fields],
    }


def _value(name: str, fields: list[dict[str, object]], structs: list[dict[str, object]] | None = None) -> RecordFormat:
    raw: dict[str, Any] = {
        "type": "data",
        "name": name,
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": fields,
    }
    if structs:
        raw["commonStructs"] = structs
    return RecordFormat(raw)


_TOPIC_PARTITIONS: dict[str, object] = {
    "name": "TopicPartitions",
    "versions": "0+",
    "fields": [_f("TopicId", "uuid"), _f("Partitions", "[]int32")],
}

KEYS = {
    METADATA: RecordFormat(_key("ConsumerGroupMetadataKey", METADATA, "GroupId")),
    PARTITION_METADATA: RecordFormat(_key("ConsumerGroupPartitionMetadataKey", PARTITION_METADATA, "GroupId")),
    MEMBER_METADATA: RecordFormat(_key("ConsumerGroupMemberMetadataKey", MEMBER_METADATA, "GroupId", "MemberId")),
    TARGET_ASSIGNMENT_METADATA: RecordFormat(
        _key("ConsumerGroupTargetAssignmentMetadataKey", TARGET_ASSIGNMENT_METADATA, "GroupId")
    ),
    TARGET_ASSIGNMENT_MEMBER: RecordFormat(
        _key("ConsumerGroupTargetAssignmentMemberKey", TARGET_ASSIGNMENT_MEMBER, "GroupId", "MemberId")
    ),
    CURRENT_MEMBER_ASSIGNMENT: RecordFormat(
        _key("ConsumerGroupCurrentMemberAssignmentKey", CURRENT_MEMBER_ASSIGNMENT, "GroupId", "MemberId")
    ),
    REGULAR_EXPRESSION: RecordFormat(_key("ConsumerGroupRegularExpressionKey", REGULAR_EXPRESSION, "GroupId", "Regex")),
}

MetadataValue = _value(
    "ConsumerGroupMetadataValue",
    [_f("Epoch", "int32"), _f("MetadataHash", "int64", default=0, taggedVersions="0+", tag=0)],
)
MemberMetadataValue = _value(
    "ConsumerGroupMemberMetadataValue",
    [
        _f("InstanceId", "string", nullableVersions="0+"),
        _f("RackId", "string", nullableVersions="0+"),
        _f("ClientId", "string"),
        _f("ClientHost", "string"),
        _f("SubscribedTopicNames", "[]string"),
        _f("SubscribedTopicRegex", "string", nullableVersions="0+"),
        _f("RebalanceTimeoutMs", "int32", default=-1),
        _f("ServerAssignor", "string", nullableVersions="0+"),
        _f(
            "ClassicMemberMetadata",
            "ClassicMemberMetadata",
            nullableVersions="0+",
            default="null",
            taggedVersions="0+",
            tag=0,
            fields=[
                _f(
                    "SupportedProtocols",
                    "[]ClassicProtocol",
                    fields=[_f("Name", "string"), _f("Metadata", "bytes")],
                )
            ],
        ),
    ],
)
TargetAssignmentMetadataValue = _value("ConsumerGroupTargetAssignmentMetadataValue", [_f("AssignmentEpoch", "int32")])
TargetAssignmentMemberValue = _value(
    "ConsumerGroupTargetAssignmentMemberValue", [_f("TopicPartitions", "[]TopicPartitions")], [_TOPIC_PARTITIONS]
)
CurrentMemberAssignmentValue = _value(
    "ConsumerGroupCurrentMemberAssignmentValue",
    [
        _f("MemberEpoch", "int32"),
        _f("PreviousMemberEpoch", "int32"),
        _f("State", "int8"),
        _f("AssignedPartitions", "[]TopicPartitions"),
        _f("PartitionsPendingRevocation", "[]TopicPartitions"),
    ],
    [_TOPIC_PARTITIONS],
)
RegularExpressionValue = _value(
    "ConsumerGroupRegularExpressionValue", [_f("Topics", "[]string"), _f("Version", "int64"), _f("Timestamp", "int64")]
)


# -- what the records mean ----------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerKey:
    record_type: int
    group_id: str
    member_id: str | None = None  # member records
    regex: str | None = None  # regular expression records


@dataclass(frozen=True)
class MemberMetadataRecord:
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_protocols: tuple[tuple[str, bytes], ...] | None = None  # ClassicMemberMetadata's


@dataclass(frozen=True)
class CurrentAssignmentRecord:
    member_epoch: int
    previous_member_epoch: int
    state: int
    assigned: dict[uuid.UUID, frozenset[int]]
    pending_revocation: dict[uuid.UUID, frozenset[int]]


@dataclass(frozen=True)
class ResolvedRegexRecord:
    topics: frozenset[str]
    version: int
    timestamp: int


# -- keys -----------------------------------------------------------------------------------------


def key(record_type: int, group_id: str, member_id: str | None = None, regex: str | None = None) -> bytes:
    fmt = KEYS[record_type]
    fields: dict[str, str] = {"group_id": group_id}
    if member_id is not None:
        fields["member_id"] = member_id
    if regex is not None:
        fields["regex"] = regex
    return fmt.encode(fmt.cls(**fields), record_type)


def decode_key(record_type: int, data: bytes) -> ConsumerKey:
    value = KEYS[record_type].decode(data, record_type)
    return ConsumerKey(record_type, value.group_id, getattr(value, "member_id", None), getattr(value, "regex", None))


# -- values ---------------------------------------------------------------------------------------


def _partitions(cls: Any, assignment: Assignment) -> list[Any]:
    return [
        cls.TopicPartitions(topic_id=topic_id, partitions=sorted(parts))
        for topic_id, parts in sorted(assignment.items(), key=lambda item: str(item[0]))
        if parts
    ]


def _assignment(items: list[Any]) -> dict[uuid.UUID, frozenset[int]]:
    return {tp.topic_id: frozenset(tp.partitions) for tp in items if tp.partitions}


def metadata_value(epoch: int, metadata_hash: int) -> bytes:
    return MetadataValue.encode(MetadataValue.cls(epoch=epoch, metadata_hash=metadata_hash), VALUE_VERSION)


def decode_metadata_value(data: bytes) -> tuple[int, int]:
    value = MetadataValue.decode(data, _version(data))
    return value.epoch, value.metadata_hash


def member_metadata_value(record: MemberMetadataRecord) -> bytes:
    cls = MemberMetadataValue.cls
    classic = None
    if record.classic_protocols is not None:
        classic = cls.ClassicMemberMetadata(
            supported_protocols=[
                cls.ClassicProtocol(name=name, metadata=metadata) for name, metadata in record.classic_protocols
            ]
        )
    return MemberMetadataValue.encode(
        cls(
            instance_id=record.instance_id,
            rack_id=record.rack_id,
            client_id=record.client_id,
            client_host=record.client_host,
            subscribed_topic_names=list(record.subscribed_topic_names),
            subscribed_topic_regex=record.subscribed_topic_regex,
            rebalance_timeout_ms=record.rebalance_timeout_ms,
            server_assignor=record.server_assignor,
            classic_member_metadata=classic,
        ),
        VALUE_VERSION,
    )


def decode_member_metadata_value(data: bytes) -> MemberMetadataRecord:
    v = MemberMetadataValue.decode(data, _version(data))
    classic = v.classic_member_metadata
    return MemberMetadataRecord(
        v.instance_id,
        v.rack_id,
        v.client_id,
        v.client_host,
        tuple(v.subscribed_topic_names),
        v.subscribed_topic_regex,
        v.rebalance_timeout_ms,
        v.server_assignor,
        None if classic is None else tuple((p.name, bytes(p.metadata)) for p in classic.supported_protocols),
    )


def target_assignment_metadata_value(assignment_epoch: int) -> bytes:
    cls = TargetAssignmentMetadataValue.cls
    return TargetAssignmentMetadataValue.encode(cls(assignment_epoch=assignment_epoch), VALUE_VERSION)


def decode_target_assignment_metadata_value(data: bytes) -> int:
    return int(TargetAssignmentMetadataValue.decode(data, _version(data)).assignment_epoch)


def target_assignment_member_value(assignment: Assignment) -> bytes:
    cls = TargetAssignmentMemberValue.cls
    return TargetAssignmentMemberValue.encode(cls(topic_partitions=_partitions(cls, assignment)), VALUE_VERSION)


def decode_target_assignment_member_value(data: bytes) -> dict[uuid.UUID, frozenset[int]]:
    return _assignment(TargetAssignmentMemberValue.decode(data, _version(data)).topic_partitions)


def current_assignment_value(record: CurrentAssignmentRecord) -> bytes:
    cls = CurrentMemberAssignmentValue.cls
    return CurrentMemberAssignmentValue.encode(
        cls(
            member_epoch=record.member_epoch,
            previous_member_epoch=record.previous_member_epoch,
            state=record.state,
            assigned_partitions=_partitions(cls, record.assigned),
            partitions_pending_revocation=_partitions(cls, record.pending_revocation),
        ),
        VALUE_VERSION,
    )


def decode_current_assignment_value(data: bytes) -> CurrentAssignmentRecord:
    v = CurrentMemberAssignmentValue.decode(data, _version(data))
    return CurrentAssignmentRecord(
        v.member_epoch,
        v.previous_member_epoch,
        v.state,
        _assignment(v.assigned_partitions),
        _assignment(v.partitions_pending_revocation),
    )


def regular_expression_value(record: ResolvedRegexRecord) -> bytes:
    return RegularExpressionValue.encode(
        RegularExpressionValue.cls(topics=sorted(record.topics), version=record.version, timestamp=record.timestamp),
        VALUE_VERSION,
    )


def decode_regular_expression_value(data: bytes) -> ResolvedRegexRecord:
    v = RegularExpressionValue.decode(data, _version(data))
    return ResolvedRegexRecord(frozenset(v.topics), v.version, v.timestamp)


def _version(data: bytes) -> int:
    (version,) = struct.unpack_from(">h", data)
    return int(version)
