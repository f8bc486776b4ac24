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

The znodes are read and written through the cluster's `KafkaZkClient` (paths in `zk_data`).
Every call blocks on ZooKeeper: the authorizer runs them on worker threads (and at start); the
watches run on ZooKeeper's threads.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Callable

from ..cluster import zk_data
from ..cluster.zk_client import KafkaZkClient, WatchResult
from ..common.time import SYSTEM_CLOCK, Clock
from .acl import PatternType, ResourceType, parse_resource_type, resource_type_name
from .acl_bindings import ResourcePattern
from .acl_store import decode_acls, encode_acls
from .authorizer import AclChangeListener, Acls, AclStoreError

log = logging.getLogger(__name__)

LITERAL_CHANGES = zk_data.LITERAL_ACL_CHANGES
EXTENDED_CHANGES = zk_data.EXTENDED_ACL_CHANGES
CHANGE_EXPIRATION_MS = 15 * 60 * 1000
MAX_UPDATE_RETRIES = 10
PATTERN_TYPES = (PatternType.LITERAL, PatternType.PREFIXED)

STORED_TYPES = (
    ResourceType.TOPIC,
    ResourceType.GROUP,
    ResourceType.CLUSTER,
    ResourceType.TRANSACTIONAL_ID,
    ResourceType.DELEGATION_TOKEN,
    ResourceType.USER,
)


def type_path(resource_type: ResourceType, pattern_type: PatternType) -> str:
    return zk_data.acl_type_path(pattern_type.name, resource_type_name(resource_type))


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
    def __init__(
        self, zk_client: KafkaZkClient, *, request_timeout_s: float = 5.0, clock: Clock = SYSTEM_CLOCK
    ) -> None:
        self.zk_client = zk_client
        self.request_timeout_s = request_timeout_s
        self.clock = clock
        self._last_seen: dict[str, str | None] = {}
        self._lock = threading.Lock()
        self._stopped = False

    # -- reading -----------------------------------------------------------------------
    def create_paths(self) -> None:
        """Kafka's `createAclPaths`: every type's parent and both change paths."""
        self.zk_client.create_acl_paths([p.name for p in PATTERN_TYPES], [resource_type_name(t) for t in STORED_TYPES])

    def load_all(self) -> dict[ResourcePattern, Acls]:
        self.create_paths()
        loaded: dict[ResourcePattern, Acls] = {}
        for pattern_type in PATTERN_TYPES:
            for resource_type in STORED_TYPES:
                names = self.zk_client.get_acl_resource_names(pattern_type.name, resource_type_name(resource_type))
                for name in names:
                    resource = ResourcePattern(resource_type, name, pattern_type)
                    acls, _ = self._read(resource)
                    if acls:
                        loaded[resource] = acls
        return loaded

    def _read(self, resource: ResourcePattern) -> tuple[Acls, int]:
        """The resource's ACLs and znode version (-1 when absent)."""
        data, version = self.zk_client.get_versioned_acls(*_znode_of(resource))
        if data is None:
            return frozenset(), -1
        return decode_acls(data), version

    # -- writing -----------------------------------------------------------------------
    def update(self, resource: ResourcePattern, change: Callable[[Acls], Acls]) -> Acls:
        if not self.zk_client.connected:
            raise AclStoreError("ZooKeeper is not connected")
        for _ in range(MAX_UPDATE_RETRIES):
            current, version = self._read(resource)
            new = frozenset(change(current))
            if new == current:
                return new
            data = encode_acls(new) if new else None
            if not self.zk_client.conditional_set_acls(*_znode_of(resource), data, version):
                time.sleep(0.05)  # another broker wrote first: read again
                continue
            parent, payload = encode_change(resource)
            self.zk_client.create_acl_change_notification(parent, payload)
            log.info("Updated ACLs for %s with new version %d", resource, version + 1)
            return new
        raise AclStoreError(f"Failed to update ACLs for {resource} after {MAX_UPDATE_RETRIES} tries")

    # -- following other brokers --------------------------------------------------------
    def watch(self, on_change: AclChangeListener) -> None:
        self.create_paths()
        for parent in (LITERAL_CHANGES, EXTENDED_CHANGES):
            existing = sorted(self.zk_client.get_acl_change_notifications(parent))
            self._last_seen[parent] = existing[-1] if existing else None  # load_all reads them all
            self.zk_client.watch_acl_change_notifications(
                parent, functools.partial(self._on_changes, parent, on_change=on_change)
            )

    def _on_changes(self, parent: str, children: list[str], *, on_change: AclChangeListener) -> WatchResult:
        if self._stopped:
            return False
        with self._lock:
            for child in sorted(children):
                last = self._last_seen[parent]
                if last is not None and child <= last:
                    continue
                self._last_seen[parent] = child
                self._process(parent, child, on_change)
        return None

    def _process(self, parent: str, child: str, on_change: AclChangeListener) -> None:
        try:
            notification = self.zk_client.get_acl_change_notification(parent, child)
            if notification is None:
                return
            resource = decode_change(parent, notification.data)
            acls, _ = self._read(resource)
        except Exception:  # noqa: BLE001 - one bad notification must not stop the watch
            log.warning("Could not process the ACL change notification %s/%s", parent, child, exc_info=True)
            return
        log.info("Processing ACL change notification for %s: %d ACLs", resource, len(acls))
        on_change(resource, acls)
        if self.clock.now_ms() - notification.ctime_ms > CHANGE_EXPIRATION_MS:
            self.zk_client.delete_acl_change_notification(parent, child)

    def close(self) -> None:
        self._stopped = True


def _znode_of(resource: ResourcePattern) -> tuple[str, str, str]:
    """(pattern type, resource type, name): how `KafkaZkClient` names a resource's ACL znode."""
    return resource.pattern_type.name, resource_type_name(resource.resource_type), resource.name
