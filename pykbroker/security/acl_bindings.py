"""Kafka's ACLs as values: resource patterns, access control entries, bindings and binding filters,
with the matching rules of Kafka's filters (`ResourcePatternFilter.matches`,
`AccessControlEntryFilter.matches`). Their vocabulary (types, operations, names) is `acl`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .acl import WILDCARD_RESOURCE, AclOperation, AclPermissionType, PatternType, ResourceType, resource_type_name


@dataclass(frozen=True, order=True)
class ResourcePattern:
    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __str__(self) -> str:
        return f"{resource_type_name(self.resource_type)}:{self.pattern_type.name}:{self.name}"


@dataclass(frozen=True)
class AccessControlEntry:
    principal: str  # "User:alice", kept as given (Kafka compares the parsed principal)
    host: str
    operation: AclOperation
    permission_type: AclPermissionType


@dataclass(frozen=True)
class AclBinding:
    pattern: ResourcePattern
    entry: AccessControlEntry

    def is_unknown(self) -> bool:
        return UNKNOWN_CODE in (
            self.pattern.resource_type,
            self.pattern.pattern_type,
            self.entry.operation,
            self.entry.permission_type,
        )


UNKNOWN_CODE = 0


@dataclass(frozen=True)
class ResourcePatternFilter:
    resource_type: ResourceType
    name: str | None  # None matches any name
    pattern_type: PatternType

    def matches(self, pattern: ResourcePattern) -> bool:
        """Kafka's ResourcePatternFilter.matches."""
        if self.resource_type != ResourceType.ANY and self.resource_type != pattern.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type != pattern.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        # MATCH: the literal name, the literal wildcard, or a prefix of the filter's name
        if pattern.pattern_type == PatternType.LITERAL:
            return pattern.name in (self.name, WILDCARD_RESOURCE)
        return self.name.startswith(pattern.name)

    def matches_at_most_one(self) -> bool:
        return (
            self.resource_type != ResourceType.ANY
            and self.name is not None
            and self.pattern_type in (PatternType.LITERAL, PatternType.PREFIXED, PatternType.ANY)
        )


@dataclass(frozen=True)
class AccessControlEntryFilter:
    principal: str | None
    host: str | None
    operation: AclOperation
    permission_type: AclPermissionType

    def matches(self, entry: AccessControlEntry) -> bool:
        """Kafka's AccessControlEntryFilter.matches: None and ANY match everything."""
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != entry.operation:
            return False
        return self.permission_type == AclPermissionType.ANY or self.permission_type == entry.permission_type


@dataclass(frozen=True)
class AclBindingFilter:
    pattern: ResourcePatternFilter
    entry: AccessControlEntryFilter

    def matches(self, binding: AclBinding) -> bool:
        return self.pattern.matches(binding.pattern) and self.entry.matches(binding.entry)

    def is_unknown(self) -> bool:
        return UNKNOWN_CODE in (
            self.pattern.resource_type,
            self.pattern.pattern_type,
            self.entry.operation,
            self.entry.permission_type,
        )
