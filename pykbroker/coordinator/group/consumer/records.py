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

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...record_format import flexible_value, record_type_key, record_version, schema_field
from .record_types import CURRENT_MEMBER_ASSIGNMENT as CURRENT_MEMBER_ASSIGNMENT
from .record_types import MEMBER_METADATA as MEMBER_METADATA
from .record_types import METADATA as METADATA
from .record_types import PARTITION_METADATA as PARTITION_METADATA
from .record_types import RECORD_TYPES as RECORD_TYPES
from .record_types import REGULAR_EXPRESSION as REGULAR_EXPRESSION
from .record_types import TARGET_ASSIGNMENT_MEMBER as TARGET_ASSIGNMENT_MEMBER
from .record_types import TARGET_ASSIGNMENT_METADATA as TARGET_ASSIGNMENT_METADATA

VALUE_VERSION = 0

Assignment = Mapping[uuid.UUID, frozenset[int]]


_TOPIC_PARTITIONS: dict[str, object] = {
    "name": "TopicPartitions",
    "versions": "0+",
    "fields": [schema_field("TopicId", "uuid"), schema_field("Partitions", "[]int32")],
}

KEYS = {
    METADATA: record_type_key("ConsumerGroupMetadataKey", METADATA, "GroupId"),
    PARTITION_METADATA: record_type_key("ConsumerGroupPartitionMetadataKey", PARTITION_METADATA, "GroupId"),
    MEMBER_METADATA: record_type_key("ConsumerGroupMemberMetadataKey", MEMBER_METADATA, "GroupId", "MemberId"),
    TARGET_ASSIGNMENT_METADATA: record_type_key(
        "ConsumerGroupTargetAssignmentMetadataKey", TARGET_ASSIGNMENT_METADATA, "GroupId"
    ),
    TARGET_ASSIGNMENT_MEMBER: record_type_key(
        "ConsumerGroupTargetAssignmentMemberKey", TARGET_ASSIGNMENT_MEMBER, "GroupId", "MemberId"
    ),
    CURRENT_MEMBER_ASSIGNMENT: record_type_key(
        "ConsumerGroupCurrentMemberAssignmentKey", CURRENT_MEMBER_ASSIGNMENT, "GroupId", "MemberId"
    ),
    REGULAR_EXPRESSION: record_type_key("ConsumerGroupRegularExpressionKey", REGULAR_EXPRESSION, "GroupId", "Regex"),
}

MetadataValue = flexible_value(
    "ConsumerGroupMetadataValue",
    [schema_field("Epoch", "int32"), schema_field("MetadataHash", "int64", default=0, taggedVersions="0+", tag=0)],
)
MemberMetadataValue = flexible_value(
    "ConsumerGroupMemberMetadataValue",
    [
        schema_field("InstanceId", "string", nullableVersions="0+"),
        schema_field("RackId", "string", nullableVersions="0+"),
        schema_field("ClientId", "string"),
        schema_field("ClientHost", "string"),
        schema_field("SubscribedTopicNames", "[]string"),
        schema_field("SubscribedTopicRegex", "string", nullableVersions="0+"),
        schema_field("RebalanceTimeoutMs", "int32", default=-1),
        schema_field("ServerAssignor", "string", nullableVersions="0+"),
        schema_field(
            "ClassicMemberMetadata",
            "ClassicMemberMetadata",
            nullableVersions="0+",
            default="null",
            taggedVersions="0+",
            tag=0,
            fields=[
                schema_field(
                    "SupportedProtocols",
                    "[]ClassicProtocol",
                    fields=[schema_field("Name", "string"), schema_field("Metadata", "bytes")],
                )
            ],
        ),
    ],
)
TargetAssignmentMetadataValue = flexible_value(
    "ConsumerGroupTargetAssignmentMetadataValue", [schema_field("AssignmentEpoch", "int32")]
)
TargetAssignmentMemberValue = flexible_value(
    "ConsumerGroupTargetAssignmentMemberValue",
    [schema_field("TopicPartitions", "[]TopicPartitions")],
    [_TOPIC_PARTITIONS],
)
CurrentMemberAssignmentValue = flexible_value(
    "ConsumerGroupCurrentMemberAssignmentValue",
    [
        schema_field("MemberEpoch", "int32"),
        schema_field("PreviousMemberEpoch", "int32"),
        schema_field("State", "int8"),
        schema_field("AssignedPartitions", "[]TopicPartitions"),
        schema_field("PartitionsPendingRevocation", "[]TopicPartitions"),
    ],
    [_TOPIC_PARTITIONS],
)
RegularExpressionValue = flexible_value(
    "ConsumerGroupRegularExpressionValue",
    [schema_field("Topics", "[]string"), schema_field("Version", "int64"), schema_field("Timestamp", "int64")],
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
    value = MetadataValue.decode(data, record_version(data))
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
    v = MemberMetadataValue.decode(data, record_version(data))
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
    return int(TargetAssignmentMetadataValue.decode(data, record_version(data)).assignment_epoch)


def target_assignment_member_value(assignment: Assignment) -> bytes:
    cls = TargetAssignmentMemberValue.cls
    return TargetAssignmentMemberValue.encode(cls(topic_partitions=_partitions(cls, assignment)), VALUE_VERSION)


def decode_target_assignment_member_value(data: bytes) -> dict[uuid.UUID, frozenset[int]]:
    return _assignment(TargetAssignmentMemberValue.decode(data, record_version(data)).topic_partitions)


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
    v = CurrentMemberAssignmentValue.decode(data, record_version(data))
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
    v = RegularExpressionValue.decode(data, record_version(data))
    return ResolvedRegexRecord(frozenset(v.topics), v.version, v.timestamp)
