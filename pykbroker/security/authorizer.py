"""Kafka's ACL authorizer (`kafka.security.authorizer.AclAuthorizer`, ZooKeeper mode).

    authorizer = create_authorizer(config, store)     # None when authorizer.class.name is empty
    authorizer.open()                                 # loads every ACL, then follows changes
    authorizer.authorize(principal, "10.0.0.1", AclOperation.READ, ResourceType.TOPIC, "orders")

The rules are AclAuthorizer's:

- a principal of `super.users` (semicolon-separated "User:alice;User:bob") may do everything;
- the ACLs of a resource are those of its literal name, of the literal wildcard `*` and of every
  prefixed pattern that is a prefix of the name;
- no ACL at all on a resource: allowed only with `allow.everyone.if.no.acl.found=true`;
- otherwise a matching DENY wins; then a matching ALLOW is needed. An entry matches when its
  principal is the caller's or `User:*`, its host the caller's address or `*`, and its operation
  the one asked or ALL. An ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, and one
  of ALTER_CONFIGS also DESCRIBE_CONFIGS (a DENY denies only what it names).

The ACLs live in an `AclStore` (ZooKeeper in Kafka's layout in a cluster, a file in the first log
dir on a single broker). The cache here is an immutable mapping replaced as a whole, so readers on
the event loop never lock; the store's watch thread (ZooKeeper's change notifications) and the
writers (worker threads, from CreateAcls/DeleteAcls) replace it under a lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypedDict

import anyio

from ..protocol.errors import ErrorCode
from .acl import (
    CLUSTER_NAME,
    IMPLIED_BY,
    SUPPORTED_OPERATIONS,
    WILDCARD_HOST,
    WILDCARD_PRINCIPAL,
    WILDCARD_RESOURCE,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    parse_principal,
)
from .acl_bindings import AccessControlEntry, AclBinding, AclBindingFilter, ResourcePattern
from .principal import KafkaPrincipal

log = logging.getLogger(__name__)
audit = logging.getLogger("kafka.authorizer.logger")

ACL_AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"

Acls = frozenset[AccessControlEntry]
AclChangeListener = Callable[[ResourcePattern, Acls], None]


class AclStoreError(Exception):
    """The store could not write (ZooKeeper unreachable, a file not written)."""


class AclStore(Protocol):
    """Where ACLs persist. Every call blocks (run off the event loop)."""

    def load_all(self) -> dict[ResourcePattern, Acls]: ...

    def update(self, resource: ResourcePattern, change: Callable[[Acls], Acls]) -> Acls:
        """Apply `change` to the resource's stored ACLs (retrying on concurrent writers), tell
        other brokers, and return the ACLs now stored."""
        ...

    def watch(self, on_change: AclChangeListener) -> None:
        """Call `on_change(resource, acls)` (on any thread) when another broker changes them."""
        ...

    def close(self) -> None: ...


class AuthorizerConfigError(ValueError):
    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class Settings(Protocol):
    """The broker's configuration as the authorizer reads it (a `BrokerConfig`)."""

    def get(self, key: str, default: Any = None) -> Any: ...


class AuthorizerSettings(TypedDict):
    super_users: frozenset[KafkaPrincipal]
    allow_everyone_if_no_acl_found: bool


def authorizer_settings(config: Settings) -> AuthorizerSettings | None:
    """The AclAuthorizer's settings (None when `authorizer.class.name` is empty); raises
    AuthorizerConfigError for a class this broker does not implement and for settings AclAuthorizer
    would refuse. Pure: the broker checks it before touching anything."""
    class_name = (config.get("authorizer.class.name") or "").strip()
    if not class_name:
        return None
    if class_name != ACL_AUTHORIZER:
        raise AuthorizerConfigError(
            "authorizer.class.name",
            f"authorizer.class.name={class_name} is not available in this broker (only {ACL_AUTHORIZER})",
        )
    return {
        "super_users": parse_super_users(config.get("super.users") or ""),
        "allow_everyone_if_no_acl_found": _parse_boolean(
            "allow.everyone.if.no.acl.found", config.get("allow.everyone.if.no.acl.found")
        ),
    }


def create_authorizer(config: Settings, store_factory: Callable[[], AclStore]) -> AclAuthorizer | None:
    """The authorizer `authorizer.class.name` names, on the store `store_factory` opens (None when
    the name is empty)."""
    settings = authorizer_settings(config)
    if settings is None:
        return None
    return AclAuthorizer(store_factory(), **settings)


def parse_super_users(text: str) -> frozenset[KafkaPrincipal]:
    try:
        return frozenset(parse_principal(part.strip()) for part in text.split(";") if part.strip())
    except ValueError as error:
        raise AuthorizerConfigError("super.users", f"Invalid super.users={text}: {error}") from None


def _parse_boolean(key: str, value: object) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise AuthorizerConfigError(key, f"Invalid value {value} for {key}: expected true or false")
    return text == "true"


class AclAuthorizer:
    def __init__(
        self,
        store: AclStore,
        *,
        super_users: frozenset[KafkaPrincipal] = frozenset(),
        allow_everyone_if_no_acl_found: bool = False,
    ) -> None:
        self.store = store
        self.super_users = super_users
        self.allow_everyone_if_no_acl_found = allow_everyone_if_no_acl_found
        self._cache: dict[ResourcePattern, Acls] = {}
        self._lock = threading.Lock()  # writers of the cache (readers take the current mapping)
        self._write_lock = threading.Lock()  # one ACL update of this broker at a time

    # -- lifecycle ---------------------------------------------------------------------
    def open(self) -> None:
        """Load every ACL and follow other brokers' changes (blocks: before serving)."""
        self.store.watch(self._apply)  # first, so that no change falls between load and watch
        loaded = self.store.load_all()
        with self._lock:
            self._cache = {resource: acls for resource, acls in loaded.items() if acls}
        log.info("ACL authorizer loaded %d ACLs on %d resources", sum(map(len, loaded.values())), len(self._cache))

    def close(self) -> None:
        self.store.close()

    def _apply(self, resource: ResourcePattern, acls: Acls) -> None:
        with self._lock:
            cache = dict(self._cache)
            if acls:
                cache[resource] = acls
            else:
                cache.pop(resource, None)
            self._cache = cache

    # -- authorizing -------------------------------------------------------------------
    def is_super_user(self, principal: KafkaPrincipal) -> bool:
        return principal in self.super_users

    def authorize(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: str,
        *,
        log_if_denied: bool = True,
    ) -> bool:
        """May `principal`, connected from `host`, perform `operation` on this (literal) resource?"""
        allowed = self.is_super_user(principal) or self._acls_allow(
            principal, host, operation, self._matching_acls(resource_type, resource_name)
        )
        if not allowed and log_if_denied:
            audit.info(
                "Principal = %s is Denied Operation = %s from host = %s on resource = %s:LITERAL:%s",
                principal,
                operation.name,
                host,
                resource_type.name,
                resource_name,
            )
        return allowed

    def _acls_allow(self, principal: KafkaPrincipal, host: str, operation: AclOperation, acls: list) -> bool:
        if not acls:
            return self.allow_everyone_if_no_acl_found
        who = str(principal)
        if _any_match(acls, who, host, (operation,), AclPermissionType.DENY):
            return False
        return _any_match(acls, who, host, IMPLIED_BY.get(operation, (operation,)), AclPermissionType.ALLOW)

    def _matching_acls(self, resource_type: ResourceType, name: str) -> list[AccessControlEntry]:
        cache = self._cache
        found: list[AccessControlEntry] = []
        for pattern_name in (WILDCARD_RESOURCE, name):
            found.extend(cache.get(ResourcePattern(resource_type, pattern_name, PatternType.LITERAL), ()))
        for resource, acls in cache.items():
            if (
                resource.pattern_type == PatternType.PREFIXED
                and resource.resource_type == resource_type
                and name.startswith(resource.name)
            ):
                found.extend(acls)
        return found

    def authorized_operations(
        self, principal: KafkaPrincipal, host: str, resource_type: ResourceType, resource_name: str
    ) -> int:
        """The bit field of `*_authorized_operations`: bit `code` set for each allowed operation
        among those the resource type supports (AuthHelper.authorizedOperations)."""
        bits = 0
        for operation in SUPPORTED_OPERATIONS[resource_type]:
            if self.authorize(principal, host, operation, resource_type, resource_name, log_if_denied=False):
                bits |= 1 << operation
        return bits

    def authorize_by_resource_type(
        self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """May `principal` perform `operation` on at least one resource of the type?
        (AclAuthorizer.authorizeByResourceType: any ALLOW not dominated by a DENY.)"""
        if self.is_super_user(principal):
            return True
        who = str(principal)

        def names(permission: AclPermissionType, pattern_type: PatternType) -> set[str]:
            return {
                resource.name
                for resource, acls in self._cache.items()
                if resource.resource_type == resource_type
                and resource.pattern_type == pattern_type
                and _any_match(list(acls), who, host, (operation,), permission)
            }

        deny_literals = names(AclPermissionType.DENY, PatternType.LITERAL)
        if WILDCARD_RESOURCE in deny_literals:
            return False
        if self.allow_everyone_if_no_acl_found:
            return True
        deny_prefixes = names(AclPermissionType.DENY, PatternType.PREFIXED)

        def dominated(name: str) -> bool:
            return any(name[:length] in deny_prefixes for length in range(len(name) + 1))

        if any(not dominated(prefix) for prefix in names(AclPermissionType.ALLOW, PatternType.PREFIXED)):
            return True
        return any(
            literal == WILDCARD_RESOURCE or (literal not in deny_literals and not dominated(literal))
            for literal in names(AclPermissionType.ALLOW, PatternType.LITERAL)
        )

    # -- administering -----------------------------------------------------------------
    def acls(self, binding_filter: AclBindingFilter) -> list[AclBinding]:
        """The ACLs a DescribeAcls filter matches."""
        return [
            AclBinding(resource, entry)
            for resource, acls in sorted(self._cache.items())
            for entry in sorted(acls, key=_entry_order)
            if binding_filter.pattern.matches(resource) and binding_filter.entry.matches(entry)
        ]

    async def create_acls(self, bindings: list[AclBinding]) -> list[tuple[ErrorCode, str | None]]:
        """CreateAcls: one (error, message) per binding, in order."""
        return await anyio.to_thread.run_sync(self._create_acls, bindings)

    def _create_acls(self, bindings: list[AclBinding]) -> list[tuple[ErrorCode, str | None]]:
        results: list[tuple[ErrorCode, str | None]] = [(ErrorCode.NONE, None)] * len(bindings)
        by_resource: dict[ResourcePattern, list[int]] = {}
        for index, binding in enumerate(bindings):
            problem = _invalid_binding(binding)
            if problem:
                results[index] = (ErrorCode.INVALID_REQUEST, problem)
            else:
                by_resource.setdefault(binding.pattern, []).append(index)
        with self._write_lock:
            for resource, indexes in by_resource.items():
                new = frozenset(bindings[i].entry for i in indexes)
                try:
                    for entry in new:  # Kafka parses them while updating: the resource's group fails
                        parse_principal(entry.principal)
                    self._apply(resource, self.store.update(resource, _adding(new)))
                except Exception as error:  # noqa: BLE001 - reported per binding, as Kafka does
                    log.warning("Failed to add ACLs to %s: %s", resource, error)
                    for i in indexes:  # Kafka does not disclose the cause of an unknown server error
                        results[i] = (ErrorCode.UNKNOWN_SERVER_ERROR, None)
        return results

    async def delete_acls(
        self, filters: list[AclBindingFilter]
    ) -> list[list[tuple[AclBinding, ErrorCode, str | None]]]:
        """DeleteAcls: per filter, the bindings it deleted (with an error when the write failed)."""
        return await anyio.to_thread.run_sync(self._delete_acls, filters)

    def _delete_acls(self, filters: list[AclBindingFilter]) -> list[list[tuple[AclBinding, ErrorCode, str | None]]]:
        results: list[list[tuple[AclBinding, ErrorCode, str | None]]] = [[] for _ in filters]
        with self._write_lock:
            resources = set(self._cache)
            for binding_filter in filters:
                resources.update(_filter_resources(binding_filter))
            for resource in sorted(resources):
                matching = [(i, f) for i, f in enumerate(filters) if f.pattern.matches(resource)]
                if not matching:
                    continue
                deleted: dict[AccessControlEntry, int] = {}

                def remove(
                    current: Acls,
                    matching: list[tuple[int, AclBindingFilter]] = matching,
                    deleted: dict[AccessControlEntry, int] = deleted,
                ) -> Acls:
                    deleted.clear()
                    for entry in current:
                        for index, binding_filter in matching:
                            if binding_filter.entry.matches(entry):
                                deleted.setdefault(entry, index)
                    return current - deleted.keys()

                error, message = ErrorCode.NONE, None
                try:
                    self._apply(resource, self.store.update(resource, remove))
                except Exception as exc:  # noqa: BLE001 - reported per binding, as Kafka does
                    log.warning("Failed to delete ACLs of %s: %s", resource, exc)
                    error, message = ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)
                for entry, index in sorted(deleted.items(), key=lambda item: _entry_order(item[0])):
                    results[index].append((AclBinding(resource, entry), error, message))
        return results


def _adding(new: Acls) -> Callable[[Acls], Acls]:
    return lambda current: current | new


def _any_match(
    acls: Iterable[AccessControlEntry],
    principal: str,
    host: str,
    operations: tuple[AclOperation, ...],
    permission: AclPermissionType,
) -> bool:
    return any(
        acl.permission_type == permission
        and acl.principal in (principal, WILDCARD_PRINCIPAL)
        and (acl.operation in operations or acl.operation == AclOperation.ALL)
        and acl.host in (host, WILDCARD_HOST)
        for acl in acls
    )


def _invalid_binding(binding: AclBinding) -> str | None:
    """Why CreateAcls refuses a binding with INVALID_REQUEST (AclApis and AclAuthorizer's checks)."""
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type == ResourceType.CLUSTER and pattern.name != CLUSTER_NAME:
        return f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
    if not pattern.name:
        return "Invalid empty resource name"
    if (
        pattern.resource_type in (ResourceType.ANY, ResourceType.UNKNOWN)
        or pattern.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED)
        or entry.operation in (AclOperation.ANY, AclOperation.UNKNOWN)
        or entry.permission_type not in (AclPermissionType.ALLOW, AclPermissionType.DENY)
        or "/" in pattern.name
    ):
        return "Failed to create ACL"
    return None


def _filter_resources(binding_filter: AclBindingFilter) -> list[ResourcePattern]:
    """The resources a filter names exactly (deleted even if this broker's cache lags)."""
    pattern = binding_filter.pattern
    if not pattern.matches_at_most_one() or pattern.name is None:
        return []
    if pattern.pattern_type == PatternType.ANY:
        return [
            ResourcePattern(pattern.resource_type, pattern.name, t) for t in (PatternType.LITERAL, PatternType.PREFIXED)
        ]
    return [ResourcePattern(pattern.resource_type, pattern.name, pattern.pattern_type)]


def _entry_order(entry: AccessControlEntry) -> tuple:
    return (entry.principal, entry.host, int(entry.operation), int(entry.permission_type))
