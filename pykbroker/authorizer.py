"""Authorization: which operations a client may perform on a resource.

There are no ACLs yet, so every operation a resource type supports is allowed; the bit sets below
are what Kafka reports through `*_authorized_operations` fields when a client asks for them.
"""

from enum import IntEnum


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


# Kafka's sentinel for "authorized operations were not requested".
OPERATIONS_NOT_REQUESTED = -2147483648

_TOPIC_OPERATIONS = (
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.CREATE,
    AclOperation.DESCRIBE,
    AclOperation.DELETE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
)
_CLUSTER_OPERATIONS = (
    AclOperation.CREATE,
    AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
)
_GROUP_OPERATIONS = (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE)


def _bits(operations) -> int:
    return sum(1 << op for op in operations)


def topic_authorized_operations(requested: bool) -> int:
    return _bits(_TOPIC_OPERATIONS) if requested else OPERATIONS_NOT_REQUESTED


def cluster_authorized_operations(requested: bool) -> int:
    return _bits(_CLUSTER_OPERATIONS) if requested else OPERATIONS_NOT_REQUESTED


def group_authorized_operations(requested: bool) -> int:
    return _bits(_GROUP_OPERATIONS) if requested else OPERATIONS_NOT_REQUESTED
