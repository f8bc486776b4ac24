"""The record types (key versions) of the share group records of `__consumer_offsets`, apart from
their formats (`records.py`), so that a partition's loading tells share records from the others
without loading the share group code."""

PARTITION_METADATA = 9
MEMBER_METADATA = 10
GROUP_METADATA = 11
TARGET_ASSIGNMENT_METADATA = 12
TARGET_ASSIGNMENT_MEMBER = 13
CURRENT_MEMBER_ASSIGNMENT = 14
STATE_PARTITION_METADATA = 15
SHARE_RECORD_TYPES = frozenset(range(PARTITION_METADATA, STATE_PARTITION_METADATA + 1))


def is_share_record(record_type: int) -> bool:
    return record_type in SHARE_RECORD_TYPES
