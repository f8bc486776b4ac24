"""The share group records of `__consumer_offsets`, as Kafka 4 writes them.

A key is an int16 record type followed by the key's fields (Kafka 4's coordinator records: the
"version" of the key is the record type); a value is an int16 version (0) followed by the flexible
fields. A null value is a tombstone.

    type 10  ShareGroupMemberMetadata          key: group, member  value: rack, client id/host, subscribed topics
    type 11  ShareGroupMetadata                key: group          value: epoch, metadata hash
    type 12  ShareGroupTargetAssignmentMetadata key: group         value: assignment epoch
    type 13  ShareGroupTargetAssignmentMember  key: group, member  value: topic partitions
    type 14  ShareGroupCurrentMemberAssignment key: group, member  value: epoch, previous epoch, state, partitions
    type 15  ShareGroupStatePartitionMetadata  key: group          value: initializing, initialized, deleting topics

Type 9 (ShareGroupPartitionMetadata, Kafka 4.0's early access) is read and ignored.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from ...record_format import flexible_value, record_type_key, record_version, schema_field
from .record_types import CURRENT_MEMBER_ASSIGNMENT as CURRENT_MEMBER_ASSIGNMENT
from .record_types import GROUP_METADATA as GROUP_METADATA
from .record_types import MEMBER_METADATA as MEMBER_METADATA
from .record_types import PARTITION_METADATA as PARTITION_METADATA
from .record_types import SHARE_RECORD_TYPES as SHARE_RECORD_TYPES
from .record_types import STATE_PARTITION_METADATA as STATE_PARTITION_METADATA
from .record_types import TARGET_ASSIGNMENT_MEMBER as TARGET_ASSIGNMENT_MEMBER
from .record_types import TARGET_ASSIGNMENT_METADATA as TARGET_ASSIGNMENT_METADATA

VALUE_VERSION = 0
MEMBER_STATE_STABLE = 0  # Kafka's MemberState.STABLE: share members never revoke

Assignment = dict[uuid.UUID, frozenset[int]]  # partitions by topic id


_TOPIC_PARTITIONS = [schema_field("TopicId", "uuid"), schema_field("Partitions", "[]int32")]

KEYS = {
    MEMBER_METADATA: record_type_key("ShareGroupMemberMetadataKey", MEMBER_METADATA, "GroupId", "MemberId"),
    GROUP_METADATA: record_type_key("ShareGroupMetadataKey", GROUP_METADATA, "GroupId"),
    TARGET_ASSIGNMENT_METADATA: record_type_key(
        "ShareGroupTargetAssignmentMetadataKey", TARGET_ASSIGNMENT_METADATA, "GroupId"
    ),
    TARGET_ASSIGNMENT_MEMBER: record_type_key(
        "ShareGroupTargetAssignmentMemberKey", TARGET_ASSIGNMENT_MEMBER, "GroupId", "MemberId"
    ),
    CURRENT_MEMBER_ASSIGNMENT: record_type_key(
        "ShareGroupCurrentMemberAssignmentKey", CURRENT_MEMBER_ASSIGNMENT, "GroupId", "MemberId"
    ),
    STATE_PARTITION_METADATA: record_type_key(
        "ShareGroupStatePartitionMetadataKey", STATE_PARTITION_METADATA, "GroupId"
    ),
}
GroupMetadataValue = flexible_value(
    "ShareGroupMetadataValue", [schema_field("Epoch", "int32"), schema_field("MetadataHash", "int64", default=0)]
)
MemberMetadataValue = flexible_value(
    "ShareGroupMemberMetadataValue",
    [
        schema_field("RackId", "string", nullableVersions="0+"),
        schema_field("ClientId", "string"),
        schema_field("ClientHost", "string"),
        schema_field("SubscribedTopicNames", "[]string"),
    ],
)
TargetAssignmentMetadataValue = flexible_value(
    "ShareGroupTargetAssignmentMetadataValue", [schema_field("AssignmentEpoch", "int32")]
)
TargetAssignmentMemberValue = flexible_value(
    "ShareGroupTargetAssignmentMemberValue",
    [schema_field("TopicPartitions", "[]TopicPartition", fields=_TOPIC_PARTITIONS)],
)
CurrentMemberAssignmentValue = flexible_value(
    "ShareGroupCurrentMemberAssignmentValue",
    [
        schema_field("MemberEpoch", "int32"),
        schema_field("PreviousMemberEpoch", "int32"),
        schema_field("State", "int8"),
        schema_field("AssignedPartitions", "[]TopicPartitions"),
    ],
    [{"name": "TopicPartitions", "versions": "0+", "fields": _TOPIC_PARTITIONS}],
)
_TOPIC_PARTITIONS_INFO = [
    schema_field("TopicId", "uuid"),
    schema_field("TopicName", "string"),
    schema_field("Partitions", "[]int32"),
]
StatePartitionMetadataValue = flexible_value(
    "ShareGroupStatePartitionMetadataValue",
    [
        schema_field("InitializingTopics", "[]TopicPartitionsInfo"),
        schema_field("InitializedTopics", "[]TopicPartitionsInfo"),
        schema_field("DeletingTopics", "[]TopicInfo"),
    ],
    [
        {"name": "TopicPartitionsInfo", "versions": "0+", "fields": _TOPIC_PARTITIONS_INFO},
        {
            "name": "TopicInfo",
            "versions": "0+",
            "fields": [schema_field("TopicId", "uuid"), schema_field("TopicName", "string")],
        },
    ],
)


@dataclass(frozen=True)
class ShareKey:
    record_type: int
    group_id: str
    member_id: str | None = None


@dataclass(frozen=True)
class MemberMetadata:
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]


@dataclass(frozen=True)
class CurrentAssignment:
    member_epoch: int
    previous_member_epoch: int
    assigned: Assignment


@dataclass(frozen=True)
class StatePartitions:
    """Which topic partitions have share-group state: being initialized, initialized, being deleted.
    `names` remembers each topic id's name as written."""

    initializing: dict[uuid.UUID, frozenset[int]]
    initialized: dict[uuid.UUID, frozenset[int]]
    deleting: frozenset[uuid.UUID]
    names: dict[uuid.UUID, str]


# -- keys ------------------------------------------------------------------------------------


def key(record_type: int, group_id: str, member_id: str | None = None) -> bytes:
    fmt = KEYS[record_type]
    if member_id is None:
        return fmt.encode(fmt.cls(group_id=group_id), record_type)
    return fmt.encode(fmt.cls(group_id=group_id, member_id=member_id), record_type)


def decode_key(data: bytes) -> ShareKey | None:
    """The key of a share group record; None for type 9 (no longer used) or other types."""
    record_type = record_version(data)
    fmt = KEYS.get(record_type)
    if fmt is None:
        return None
    decoded = fmt.decode(data, record_type)
    return ShareKey(record_type, decoded.group_id, getattr(decoded, "member_id", None))


# -- values ----------------------------------------------------------------------------------


def _topic_partitions(struct_cls: Any, assignment: Assignment) -> list[Any]:
    """An assignment as the records' TopicPartitions structs, topics and partitions in order."""
    return [
        struct_cls(topic_id=topic_id, partitions=sorted(partitions))
        for topic_id, partitions in sorted(assignment.items())
    ]


def _assignment(topic_partitions: list[Any]) -> Assignment:
    return {tp.topic_id: frozenset(tp.partitions) for tp in topic_partitions}


def group_metadata_value(epoch: int, metadata_hash: int) -> bytes:
    fmt = GroupMetadataValue
    return fmt.encode(fmt.cls(epoch=epoch, metadata_hash=metadata_hash), VALUE_VERSION)


def decode_group_metadata(data: bytes) -> tuple[int, int]:
    value = GroupMetadataValue.decode(data, record_version(data))
    return value.epoch, value.metadata_hash


def member_metadata_value(member: MemberMetadata) -> bytes:
    fmt = MemberMetadataValue
    return fmt.encode(
        fmt.cls(
            rack_id=member.rack_id,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=list(member.subscribed_topic_names),
        ),
        VALUE_VERSION,
    )


def decode_member_metadata(data: bytes) -> MemberMetadata:
    value = MemberMetadataValue.decode(data, record_version(data))
    return MemberMetadata(value.rack_id, value.client_id, value.client_host, tuple(value.subscribed_topic_names))


def target_assignment_metadata_value(assignment_epoch: int) -> bytes:
    fmt = TargetAssignmentMetadataValue
    return fmt.encode(fmt.cls(assignment_epoch=assignment_epoch), VALUE_VERSION)


def decode_target_assignment_metadata(data: bytes) -> int:
    return int(TargetAssignmentMetadataValue.decode(data, record_version(data)).assignment_epoch)


def target_assignment_member_value(assignment: Assignment) -> bytes:
    fmt = TargetAssignmentMemberValue
    return fmt.encode(
        fmt.cls(topic_partitions=_topic_partitions(fmt.cls.TopicPartition, assignment)),
        VALUE_VERSION,
    )


def decode_target_assignment_member(data: bytes) -> Assignment:
    value = TargetAssignmentMemberValue.decode(data, record_version(data))
    return _assignment(value.topic_partitions)


def current_assignment_value(current: CurrentAssignment) -> bytes:
    fmt = CurrentMemberAssignmentValue
    return fmt.encode(
        fmt.cls(
            member_epoch=current.member_epoch,
            previous_member_epoch=current.previous_member_epoch,
            state=MEMBER_STATE_STABLE,
            assigned_partitions=_topic_partitions(fmt.cls.TopicPartitions, current.assigned),
        ),
        VALUE_VERSION,
    )


def decode_current_assignment(data: bytes) -> CurrentAssignment:
    value = CurrentMemberAssignmentValue.decode(data, record_version(data))
    return CurrentAssignment(
        value.member_epoch,
        value.previous_member_epoch,
        _assignment(value.assigned_partitions),
    )


def state_partitions_value(state: StatePartitions) -> bytes:
    fmt = StatePartitionMetadataValue

    def infos(topics: dict[uuid.UUID, frozenset[int]]) -> list[Any]:
        return [
            fmt.cls.TopicPartitionsInfo(topic_id=tid, topic_name=state.names.get(tid, ""), partitions=sorted(parts))
            for tid, parts in sorted(topics.items())
        ]

    return fmt.encode(
        fmt.cls(
            initializing_topics=infos(state.initializing),
            initialized_topics=infos(state.initialized),
            deleting_topics=[
                fmt.cls.TopicInfo(topic_id=tid, topic_name=state.names.get(tid, "")) for tid in sorted(state.deleting)
            ],
        ),
        VALUE_VERSION,
    )


def decode_state_partitions(data: bytes) -> StatePartitions:
    value = StatePartitionMetadataValue.decode(data, record_version(data))
    names = {t.topic_id: t.topic_name for t in [*value.initializing_topics, *value.initialized_topics]}
    names.update({t.topic_id: t.topic_name for t in value.deleting_topics})
    return StatePartitions(
        {t.topic_id: frozenset(t.partitions) for t in value.initializing_topics},
        {t.topic_id: frozenset(t.partitions) for t in value.initialized_topics},
        frozenset(t.topic_id for t in value.deleting_topics),
        names,
    )
