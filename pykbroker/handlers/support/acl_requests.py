"""What CreateAcls, DescribeAcls and DeleteAcls share: reading their bindings and filters as
Kafka's request classes do (each asks its own check of the authorization table).

Kafka parses these requests strictly: a field holding the UNKNOWN code (0) of a resource type,
pattern type, operation or permission type, or a version 0 request naming a pattern type other
than LITERAL (ANY is read as LITERAL by DescribeAcls and DeleteAcls v0), fails the request's
parsing, and the broker closes the connection. An unknown code other than 0 reads as UNKNOWN and
matches nothing.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TypeVar

from ...protocol.message_types import CreateAclsRequest, DeleteAclsRequest, DescribeAclsRequest
from ...security.acl import AclOperation, AclPermissionType, PatternType, ResourceType
from ...security.acl_bindings import (
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    ResourcePattern,
    ResourcePatternFilter,
)
from .context import CloseConnection

NO_AUTHORIZER = "No Authorizer is configured."

_Code = TypeVar("_Code", bound=IntEnum)  # one of the ACL enums, each with an UNKNOWN member (0)

# The fields of an ACL filter: a DescribeAcls request, or a filter of a DeleteAcls request.
AclFilterFields = DescribeAclsRequest | DeleteAclsRequest.DeleteAclsFilter


def _enum(enum: type[_Code], code: int) -> _Code:
    try:
        return enum(code)
    except ValueError:
        return enum["UNKNOWN"]


def _refuse_unknown(what: str, codes: tuple[int, int, int, int]) -> None:
    if 0 in codes:
        raise CloseConnection(f"{what} contains UNKNOWN elements")


def pattern_type_of(code: int, version: int, *, any_reads_as_literal: bool) -> PatternType:
    if version == 0 and code != PatternType.LITERAL:
        if any_reads_as_literal and code == PatternType.ANY:
            return PatternType.LITERAL
        raise CloseConnection("Version 0 only supports literal resource pattern types")
    return _enum(PatternType, code)


def binding_of(creation: CreateAclsRequest.AclCreation, version: int) -> AclBinding:
    codes = (creation.resource_type, creation.resource_pattern_type, creation.operation, creation.permission_type)
    pattern_type = pattern_type_of(creation.resource_pattern_type, version, any_reads_as_literal=False)
    _refuse_unknown("CreatableAcls", codes)
    return AclBinding(
        ResourcePattern(_enum(ResourceType, creation.resource_type), creation.resource_name, pattern_type),
        AccessControlEntry(
            creation.principal,
            creation.host,
            _enum(AclOperation, creation.operation),
            _enum(AclPermissionType, creation.permission_type),
        ),
    )


def filter_of(entry: AclFilterFields, version: int) -> AclBindingFilter:
    """A DescribeAcls request's or DeleteAcls filter's fields as an AclBindingFilter."""
    pattern_type = pattern_type_of(entry.pattern_type_filter, version, any_reads_as_literal=True)
    codes = (entry.resource_type_filter, pattern_type, entry.operation, entry.permission_type)
    _refuse_unknown("The filter", codes)
    return AclBindingFilter(
        ResourcePatternFilter(
            _enum(ResourceType, entry.resource_type_filter), entry.resource_name_filter, pattern_type
        ),
        AccessControlEntryFilter(
            entry.principal_filter,
            entry.host_filter,
            _enum(AclOperation, entry.operation),
            _enum(AclPermissionType, entry.permission_type),
        ),
    )
