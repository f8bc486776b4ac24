"""Kafka's ACL vocabulary: resource types, pattern types, operations and permission types with
their wire codes and names, the operations each resource type supports and those an ALLOW implies.
The resource patterns, access control entries, bindings and binding filters made of them are in
`acl_bindings` (imported where ACLs are stored or asked about, not by every handler's table).

Names follow Kafka's `org.apache.kafka.common.acl` and `...resource` classes, and the names in
ZooKeeper's JSON are `SecurityUtils`' ("Topic", "Read", "Allow", "IdempotentWrite").
"""

from __future__ import annotations

from enum import IntEnum
from typing import TypeVar

from .principal import KafkaPrincipal

WILDCARD_RESOURCE = "*"  # ResourcePattern.WILDCARD_RESOURCE
WILDCARD_HOST = "*"
WILDCARD_PRINCIPAL = "User:*"
CLUSTER_NAME = "kafka-cluster"  # Resource.CLUSTER_NAME


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


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


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def resource_type_name(resource_type: ResourceType) -> str:
    """SecurityUtils.resourceTypeName: "Topic", "TransactionalId" (ZooKeeper paths)."""
    return _camel(resource_type.name)


def operation_name(operation: AclOperation) -> str:
    """SecurityUtils.operationName: "Read", "IdempotentWrite" (ZooKeeper's JSON)."""
    return _camel(operation.name)


def permission_type_name(permission: AclPermissionType) -> str:
    return _camel(permission.name)


AclEnum = TypeVar("AclEnum", bound=IntEnum)


def _from_camel(enum: type[AclEnum], text: str) -> AclEnum:
    """Kafka's `fromString`s: case-insensitive, with or without underscores; UNKNOWN otherwise."""
    wanted = text.replace("_", "").upper()
    for member in enum:
        if member.name.replace("_", "") == wanted:
            return member
    return enum["UNKNOWN"]


def parse_resource_type(text: str) -> ResourceType:
    return _from_camel(ResourceType, text)


def parse_operation(text: str) -> AclOperation:
    return _from_camel(AclOperation, text)


def parse_permission_type(text: str) -> AclPermissionType:
    return _from_camel(AclPermissionType, text)


def parse_principal(text: str) -> KafkaPrincipal:
    """SecurityUtils.parseKafkaPrincipal: "<type>:<name>", split at the first colon."""
    principal_type, sep, name = (text or "").partition(":")
    if not sep:
        raise ValueError(f"expected a string in format principalType:principalName but got {text}")
    return KafkaPrincipal(principal_type, name)


# AclEntry.supportedOperations: what `*_authorized_operations` report per resource type.
SUPPORTED_OPERATIONS: dict[ResourceType, tuple[AclOperation, ...]] = {
    ResourceType.TOPIC: (
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.CREATE,
        AclOperation.DESCRIBE,
        AclOperation.DELETE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    ),
    ResourceType.GROUP: (AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE),
    ResourceType.CLUSTER: (
        AclOperation.CREATE,
        AclOperation.CLUSTER_ACTION,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
        AclOperation.IDEMPOTENT_WRITE,
        AclOperation.ALTER,
        AclOperation.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (AclOperation.DESCRIBE, AclOperation.WRITE),
    ResourceType.DELEGATION_TOKEN: (AclOperation.DESCRIBE,),
    ResourceType.USER: (AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS),
}

# The operations whose ALLOW also allows another (AclAuthorizer.authorizeAction).
IMPLIED_BY: dict[AclOperation, tuple[AclOperation, ...]] = {
    AclOperation.DESCRIBE: (
        AclOperation.DESCRIBE,
        AclOperation.READ,
        AclOperation.WRITE,
        AclOperation.DELETE,
        AclOperation.ALTER,
    ),
    AclOperation.DESCRIBE_CONFIGS: (AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS),
}
