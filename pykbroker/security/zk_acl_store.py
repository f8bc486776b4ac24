"""ACLs in ZooKeeper, in Kafka's layout (AclAuthorizer's `ZkAclStore` and `ZkAclChangeStore`):

    /kafka-acl/<ResourceType>/<name>                     literal patterns ("Topic", "Group", ...)
    /kafka-acl-extended/prefixed/<ResourceType>/<name>   prefixed patterns
    /kafka-acl-changes/acl_changes_<seq>                 "TOPIC:orders" after a literal change
    /kafka-acl-extended-changes/acl_changes_<seq>        {"version":1,"resourceType":"TOPIC",
                                                          "name":"pre-","patternType":"PREFIXED"}

A write is a compare-and-set on the resource znode's version (create when absent, delete when no
ACL is left), retried after re-reading when another broker won, then a sequential change
notification. Every broker watches both change paths and reads the named resource again, so an
ACL made on one broker reaches the others. Notifications older than 15 minutes are deleted, as
Kafka's `ZkNodeChangeNotificationListener` does.

Every call blocks on ZooKeeper: the authorizer runs them on worker threads (and at start); the
watches run on kazoo's threads.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError, NotEmptyError
from kazoo.recipe.watchers import ChildrenWatch

from .acl import PatternType, ResourcePattern, ResourceType, parse_resource_type, resource_type_name
from .acl_store import decode_acls, encode_acls
from .authorizer import AclChangeListener, Acls, AclStoreError

log = logging.getLogger(__name__)

LITERAL_ACL_PATH = "/kafka-acl"
EXTENDED_ACL_PATH = "/kafka-acl-extended"
LITERAL_CHANGES = "/kafka-acl-changes"
EXTENDED_CHANGES = "/kafka-acl-extended-changes"
CHANGE_PREFIX = "acl_changes_"
CHANGE_EXPIRATION_MS = 15 * 60 * 1000
MAX_UPDATE_RETRIES = 10

STORED_TYPES = (
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
    ResourceType.DELEGATION_TOKEN,
    ResourceType.USER,
)


def type_path(resource_type: ResourceType, pattern_type: PatternType) -> str:
    base = LITERAL_ACL_PATH if pattern_type == PatternType.LITERAL else f"{EXTENDED_ACL_PATH}/prefixed"
    return f"{base}/{resource_type_name(resource_type)}"


def resource_path(resource: ResourcePattern) -> str:
    return f"{type_path(resource.resource_type, resource.pattern_type)}/{resource.name}"


def encode_change(resource: ResourcePattern) -> tuple[str, bytes]:
    """The notification's parent path and payload for a change of `resource`."""
    if resource.pattern_type == PatternType.LITERAL:
        return LITERAL_CHANGES, f"{resource.resource_type.name}:{resource.name}".encode()
    payload = {
        "version": 1,
        "resourceType": resource.resource_type.name,
        "name": resource.name,
        "patternType": resource.pattern_type.name,
    }
    return EXTENDED_CHANGES, json.dumps(payload, separators=(",", ":")).encode()


def decode_change(parent: str, data: bytes) -> ResourcePattern:
    text = data.decode()
    if parent == LITERAL_CHANGES:
        type_name, _, name = text.partition(":")
        return ResourcePattern(parse_resource_type(type_name), name, PatternType.LITERAL)
    raw = json.loads(text)
    return ResourcePattern(parse_resource_type(raw["resourceType"]), raw["name"], PatternType[raw["patternType"]])


class ZkAclStore:
    def __init__(self, client, *, request_timeout_s: float = 5.0) -> None:
        self.client = client
        self.request_timeout_s = request_timeout_s
        self._last_seen: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self._stopped = False

    # -- reading -----------------------------------------------------------------------
    def create_paths(self) -> None:
        """Kafka's `createAclPaths`: every type's parent and both change paths."""
        for pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
            for resource_type in STORED_TYPES:
                self.client.ensure_path(type_path(resource_type, pattern_type))
        self.client.ensure_path(LITERAL_CHANGES)
        self.client.ensure_path(EXTENDED_CHANGES)

    def load_all(self) -> dict[ResourcePattern, Acls]:
        self.create_paths()
        loaded: dict[ResourcePattern, Acls] = {}
        for pattern_type in (PatternType.LITERAL, PatternType.PREFIXED):
            for resource_type in STORED_TYPES:
                for name in self._children(type_path(resource_type, pattern_type)):
                    resource = ResourcePattern(resource_type, name, pattern_type)
                    acls, _ = self._read(resource)
                    if acls:
                        loaded[resource] = acls
        return loaded

    def _read(self, resource: ResourcePattern) -> tuple[Acls, int]:
        """The resource's ACLs and znode version (-1 when absent)."""
        try:
            data, stat = self.client.get(resource_path(resource))
        except NoNodeError:
            return frozenset(), -1
        return decode_acls(data), stat.version

    def _children(self, path: str) -> list[str]:
        try:
            return self.client.get_children(path)
        except NoNodeError:
            return []

    # -- writing -----------------------------------------------------------------------
    def update(self, resource: ResourcePattern, change: Callable[[Acls], Acls]) -> Acls:
        if not self.client.connected:
            raise AclStoreError("ZooKeeper is not connected")
        path = resource_path(resource)
        for _ in range(MAX_UPDATE_RETRIES):
            current, version = self._read(resource)
            new = frozenset(change(current))
            try:
                if new == current:
                    return new
                if not new:
                    self.client.delete(path, version=version)
                elif version < 0:
                    self.client.create(path, encode_acls(new), makepath=True)
                else:
                    self.client.set(path, encode_acls(new), version=version)
            except (BadVersionError, NodeExistsError, NoNodeError, NotEmptyError):
                time.sleep(0.05)  # another broker wrote first: read again
                continue
            parent, payload = encode_change(resource)
            self.client.create(f"{parent}/{CHANGE_PREFIX}", payload, sequence=True, makepath=True)
            log.info("Updated ACLs for %s with new version %d", resource, version + 1)
            return new
        raise AclStoreError(f"Failed to update ACLs for {resource} after {MAX_UPDATE_RETRIES} tries")

    # -- following other brokers --------------------------------------------------------
    def watch(self, on_change: AclChangeListener) -> None:
        self.create_paths()
        for parent in (LITERAL_CHANGES, EXTENDED_CHANGES):
            existing = sorted(self._children(parent))
            self._last_seen[parent] = existing[-1] if existing else None  # load_all reads them all
            ChildrenWatch(
                self.client, parent, lambda children, parent=parent: self._on_changes(parent, children, on_change)
            )

    def _on_changes(self, parent: str, children: list[str], on_change: AclChangeListener):
        if self._stopped:
            return False
        with self._lock:
            for child in sorted(children):
                last = self._last_seen[parent]
                if last is not None and child <= last:
                    continue
                self._last_seen[parent] = child
                self._process(parent, f"{parent}/{child}", on_change)
        return None

    def _process(self, parent: str, path: str, on_change: AclChangeListener) -> None:
        try:
            data, stat = self.client.get(path)
            resource = decode_change(parent, data)
            acls, _ = self._read(resource)
        except NoNodeError:
            return
        except Exception:  # noqa: BLE001 - one bad notification must not stop the watch
            log.warning("Could not process the ACL change notification %s", path, exc_info=True)
            return
        log.info("Processing ACL change notification for %s: %d ACLs", resource, len(acls))
        on_change(resource, acls)
        if time.time() * 1000 - stat.ctime > CHANGE_EXPIRATION_MS:
            try:
                self.client.delete(path)
            except Exception:  # noqa: BLE001 - another broker may have purged it
                pass

    def close(self) -> None:
        self._stopped = True
