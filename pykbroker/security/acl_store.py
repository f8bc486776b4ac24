"""Where ACLs persist: Kafka's JSON of one resource's ACLs, and the single-broker file store.

One resource's ACLs are stored as Kafka stores them in ZooKeeper:

    {"acls":[{"principal":"User:alice","permissionType":"Allow","host":"*","operation":"Read"}],"version":1}

On a single broker (no ZooKeeper) they live in `pykbroker-acls.json` in the first log dir, next to
the embedded metadata store's state: a map from "<ResourceType>:<PATTERN>:<name>" to that JSON,
replaced atomically (write, fsync, rename) on every change, and only then. `zk_acl_store.py` keeps them in
ZooKeeper's layout in a cluster.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from ..cluster.meta_properties import write_atomically
from .acl import (
    PatternType,
    operation_name,
    parse_operation,
    parse_permission_type,
    parse_resource_type,
    permission_type_name,
    resource_type_name,
)
from .acl_bindings import AccessControlEntry, ResourcePattern
from .authorizer import AclChangeListener, Acls

ACL_FILE = "pykbroker-acls.json"


def encode_acls(acls: Acls) -> bytes:
    """Kafka's znode data for one resource (key order as Kafka writes it)."""
    entries = [
        {
            "principal": acl.principal,
            "permissionType": permission_type_name(acl.permission_type),
            "host": acl.host,
            "operation": operation_name(acl.operation),
        }
        for acl in sorted(acls, key=lambda a: (a.principal, a.host, int(a.operation), int(a.permission_type)))
    ]
    return json.dumps({"acls": entries, "version": 1}, separators=(",", ":")).encode()


def decode_acls(data: bytes | None) -> Acls:
    if not data:
        return frozenset()
    raw = json.loads(data)
    return frozenset(
        AccessControlEntry(
            entry["principal"],
            entry["host"],
            parse_operation(entry["operation"]),
            parse_permission_type(entry["permissionType"]),
        )
        for entry in raw.get("acls", [])
    )


def resource_key(resource: ResourcePattern) -> str:
    return f"{resource_type_name(resource.resource_type)}:{resource.pattern_type.name}:{resource.name}"


def parse_resource_key(key: str) -> ResourcePattern:
    type_name, pattern_name, name = key.split(":", 2)
    return ResourcePattern(parse_resource_type(type_name), name, PatternType[pattern_name])


class FileAclStore:
    """The ACLs of a single broker, in one JSON file (blocking calls: run them off the loop)."""

    def __init__(self, log_dir: str | Path) -> None:
        self.path = Path(log_dir) / ACL_FILE
        self._lock = threading.Lock()
        self._acls: dict[ResourcePattern, Acls] = {}

    def load_all(self) -> dict[ResourcePattern, Acls]:
        with self._lock:
            if self.path.exists():
                raw = json.loads(self.path.read_text())
                self._acls = {
                    parse_resource_key(key): decode_acls(json.dumps(value).encode())
                    for key, value in raw.get("resources", {}).items()
                }
            return dict(self._acls)

    def update(self, resource: ResourcePattern, change: Callable[[Acls], Acls]) -> Acls:
        """Apply `change` to the resource's ACLs and store the file again, unless nothing changed
        (a DeleteAcls filter matches every resource it may apply to)."""
        with self._lock:
            acls = self._acls.copy()
            current = acls.get(resource, frozenset())
            new = frozenset(change(current))
            if new == current:
                return new
            if new:
                acls[resource] = new
            else:
                acls.pop(resource, None)
            raw = {
                "version": 1,
                "resources": {resource_key(r): json.loads(encode_acls(a)) for r, a in sorted(acls.items())},
            }
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.path, json.dumps(raw, indent=1))
            self._acls = acls
            return new

    def watch(self, on_change: AclChangeListener) -> None:
        """A single broker is the only writer: nothing to follow."""

    def close(self) -> None:
        pass
