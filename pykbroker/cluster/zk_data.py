"""ZooKeeper paths and the JSON kept in each znode, in Kafka's ZooKeeper-mode layout.

Kafka's tools and a Kafka broker read these znodes, so paths, field names and value types
(numbers versus strings) are Kafka's own:

| znode | data |
|---|---|
| `/cluster/id` | `{"version":"1","id":"<cluster id>"}` |
| `/controller` (ephemeral) | `{"version":2,"brokerid":1,"timestamp":"<ms>","kraftControllerEpoch":-1}` |
| `/controller_epoch` | `"<epoch>"` as text |
| `/brokers/ids/<id>` (ephemeral) | version 5 registration: endpoints, listener map, host, port, rack, jmx_port, timestamp, features |
| `/brokers/topics/<t>` | `{"version":3,"topic_id":"<base64 id>","partitions":{"0":[1,2]},"adding_replicas":{},"removing_replicas":{}}` (a partition being reassigned: `"partitions":{"0":[2,3,1]},"adding_replicas":{"0":[3]},"removing_replicas":{"0":[1]}`) |
| `/admin/reassign_partitions` | `{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,3]}]}`: reassignments asked the old way (before KIP-455) |
| `/brokers/topics/<t>/partitions/<p>/state` | `{"version":1,"leader":1,"leader_epoch":0,"isr":[1,2],"controller_epoch":1}` |
| `/config/topics/<t>`, `/config/brokers/<id>`, `/config/users/<user>`, `/config/groups/<group>` (pykbroker's) | `{"version":1,"config":{"k":"v"}}` |
| `/config/users/<user>/clients/<client>`, `/config/clients/<client>`, `/config/ips/<ip>` (client quotas; `<default>` for defaults) | `{"version":1,"config":{"producer_byte_rate":"1048576"}}` |
| `/config/changes/config_change_<seq>` | `{"version":2,"entity_path":"topics/<t>"}` (or `users/<user>`, `users/<user>/clients/<client>`, `clients/<client>`, ...) |
| `/isr_change_notification/isr_change_<seq>` | `{"version":1,"partitions":[{"topic":"t","partition":0}]}` |
| `/log_dir_event_notification/log_dir_event_<seq>` | `{"version":1,"broker":3,"event":1}`: a log dir of broker 3 failed (event 1) |
| `/brokers/offline_replicas/<id>` (ephemeral, pykbroker's) | `{"version":1,"broker":3,"log_dirs":["/data/a"],"partitions":[{"topic":"t","partition":0}]}` |
| `/admin/delete_topics/<t>` | no data: a request to delete the topic |
| `/feature` | `{"features":{},"version":2,"status":1}`: feature versioning enabled, nothing finalized (created by the controller) |
| `/latest_producer_id_block` | `{"version":1,"broker":1,"block_start":"0","block_end":"999"}` |
| `/kafka-acl/<ResourceType>/<name>` | literal ACLs (`security.acl_store` encodes them) |
| `/kafka-acl-extended/prefixed/<ResourceType>/<name>` | prefixed ACLs |
| `/kafka-acl-changes/acl_changes_<seq>` | `TOPIC:orders` after a change of a literal pattern's ACLs |
| `/kafka-acl-extended-changes/acl_changes_<seq>` | `{"version":1,"resourceType":"TOPIC","name":"pre-","patternType":"PREFIXED"}` |
| `/delegation_token/tokens/<token id>` | `{"version":3,"owner":"User%3Aalice","tokenRequester":"User%3Aalice","renewers":["User%3Abob"],"issueTimestamp":..,"maxTimestamp":..,"expiryTimestamp":..,"tokenId":"<id>"}` (`security.delegation_tokens` encodes it) |
| `/delegation_token/token_changes/token_change_<seq>` | the token id, as text: the token was created, renewed, expired or removed |

A broker whose log directory fails writes the list of its replicas on offline directories to
`/brokers/offline_replicas/<id>` (ephemeral: it goes with the broker's session, so a broker that
registers again starts with none), then Kafka's `/log_dir_event_notification`. Kafka's controller
learns which replicas are offline from the KAFKA_STORAGE_ERROR answers to its LeaderAndIsr
requests; pykbroker's controller sends none (the state znodes tell the brokers), so it reads them
from that znode instead, and so does every broker for Metadata's `offline_replicas`.

A partition state's znode version is its "partition epoch": every writer (the controller, or the
leader changing the ISR) writes with a compare-and-set on it.
"""  # noqa: E501 (the table's rows are Kafka's znode contents, kept whole)

from __future__ import annotations

import base64
import json
import uuid
from dataclasses import dataclass, field

from ..common.time import now_ms
from .model import NO_LEADER as NO_LEADER
from .model import uuid_to_base64

CLUSTER_ID = "/cluster/id"
CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
BROKER_IDS = "/brokers/ids"
TOPICS = "/brokers/topics"
CONFIG = "/config"
CONFIG_CHANGES = "/config/changes"
CONFIG_CHANGE_PREFIX = "config_change_"
ISR_CHANGES = "/isr_change_notification"
ISR_CHANGE_PREFIX = "isr_change_"
LOG_DIR_EVENTS = "/log_dir_event_notification"
LOG_DIR_EVENT_PREFIX = "log_dir_event_"
LOG_DIR_FAILURE_EVENT = 1
OFFLINE_REPLICAS = "/brokers/offline_replicas"  # pykbroker's own: see the table above
DELEGATION_TOKENS = "/delegation_token/tokens"
DELEGATION_TOKEN_CHANGES = "/delegation_token/token_changes"
DELEGATION_TOKEN_CHANGE_PREFIX = "token_change_"
DELETE_TOPICS = "/admin/delete_topics"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PRODUCER_ID_BLOCK = "/latest_producer_id_block"
FEATURE = "/feature"
FEATURE_ZNODE_VERSION = 2
FEATURE_ENABLED = 1
LITERAL_ACLS = "/kafka-acl"
EXTENDED_ACLS = "/kafka-acl-extended"
LITERAL_ACL_CHANGES = "/kafka-acl-changes"
EXTENDED_ACL_CHANGES = "/kafka-acl-extended-changes"
ACL_CHANGE_PREFIX = "acl_changes_"
LITERAL_PATTERN = "LITERAL"  # the pattern type whose ACLs live under `/kafka-acl`
TOPIC_CONFIG_TYPE = "topics"
BROKER_CONFIG_TYPE = "brokers"
USER_CONFIG_TYPE = "users"
CLIENT_CONFIG_TYPE = "clients"
IP_CONFIG_TYPE = "ips"
GROUP_CONFIG_TYPE = "groups"  # pykbroker's own: Kafka keeps group configs in KRaft only
DEFAULT_BROKER_ENTITY = "<default>"

# The znodes a Kafka broker makes sure exist when it starts (Kafka's PersistentZkPaths).
PERSISTENT_PATHS = (
    "/consumers",
    BROKER_IDS,
    TOPICS,
    CONFIG_CHANGES,
    DELETE_TOPICS,
    "/brokers/seqid",
    ISR_CHANGES,
    PRODUCER_ID_BLOCK,
    LOG_DIR_EVENTS,
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/config/ips",
)

INITIAL_CONTROLLER_EPOCH = 0


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def partitions_path(topic: str) -> str:
    return f"{topic_path(topic)}/partitions"


def partition_path(topic: str, partition: int) -> str:
    return f"{partitions_path(topic)}/{partition}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{partition_path(topic, partition)}/state"


def offline_replicas_path(broker_id: int) -> str:
    return f"{OFFLINE_REPLICAS}/{broker_id}"


def config_path(entity_type: str, entity: str) -> str:
    return f"{CONFIG}/{entity_type}/{entity}"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS}/{topic}"


def acl_type_path(pattern_type: str, resource_type: str) -> str:
    """The parent of a resource type's ACL znodes: `pattern_type` is "LITERAL" or "PREFIXED",
    `resource_type` Kafka's name of the type ("Topic", "Group", ...)."""
    base = LITERAL_ACLS if pattern_type == LITERAL_PATTERN else f"{EXTENDED_ACLS}/{pattern_type.lower()}"
    return f"{base}/{resource_type}"


def acl_path(pattern_type: str, resource_type: str, name: str) -> str:
    return f"{acl_type_path(pattern_type, resource_type)}/{name}"


def acl_changes_path(pattern_type: str) -> str:
    """Where changes of a pattern type's ACLs are announced."""
    return LITERAL_ACL_CHANGES if pattern_type == LITERAL_PATTERN else EXTENDED_ACL_CHANGES


def _encode(value: dict) -> bytes:
    """Compact JSON, as Kafka's Jackson writes it."""
    return json.dumps(value, separators=(",", ":")).encode()


def _decode(data: bytes | None) -> dict | None:
    if not data:
        return None
    return json.loads(data.decode())


def _decode_object(data: bytes | None) -> dict:
    """A znode's JSON object, where one must be: ValueError when the znode is empty."""
    value = _decode(data)
    if value is None:
        raise ValueError("the znode is empty where a JSON object was expected")
    return value


def _now_ms_text() -> str:
    return str(now_ms())


# -- cluster id --------------------------------------------------------------------------


def encode_cluster_id(cluster_id: str) -> bytes:
    return _encode({"version": "1", "id": cluster_id})


def decode_cluster_id(data: bytes) -> str:
    return _decode_object(data)["id"]


# -- controller --------------------------------------------------------------------------


def encode_controller(broker_id: int) -> bytes:
    return _encode({"version": 2, "brokerid": broker_id, "timestamp": _now_ms_text(), "kraftControllerEpoch": -1})


def decode_controller(data: bytes | None) -> int:
    """The controller's broker id, or -1 when there is none."""
    value = _decode(data)
    return -1 if value is None else int(value["brokerid"])


def encode_controller_epoch(epoch: int) -> bytes:
    return str(epoch).encode()


def decode_controller_epoch(data: bytes) -> int:
    return int(data.decode())


# -- broker registration -----------------------------------------------------------------


@dataclass(frozen=True)
class Endpoint:
    listener: str
    host: str
    port: int
    security_protocol: str = "PLAINTEXT"

    @property
    def connection_string(self) -> str:
        return f"{self.listener}://{self.host}:{self.port}"


@dataclass(frozen=True)
class BrokerRegistration:
    """What a broker writes to `/brokers/ids/<id>`; `epoch` is the znode's creation zxid."""

    broker_id: int
    endpoints: tuple[Endpoint, ...]
    rack: str | None = None
    epoch: int = -1

    def endpoint(self, listener: str | None) -> Endpoint | None:
        for endpoint in self.endpoints:
            if listener is None or endpoint.listener == listener:
                return endpoint
        return None


def encode_broker(registration: BrokerRegistration) -> bytes:
    plaintext = next((e for e in registration.endpoints if e.security_protocol == "PLAINTEXT"), None)
    value = {
        "features": {},
        "listener_security_protocol_map": {e.listener: e.security_protocol for e in registration.endpoints},
        "endpoints": [e.connection_string for e in registration.endpoints],
        "jmx_port": -1,
        "port": plaintext.port if plaintext else -1,
        "host": plaintext.host if plaintext else None,
        "version": 5,
        "timestamp": _now_ms_text(),
    }
    if registration.rack is not None:
        value["rack"] = registration.rack
    return _encode(value)


def decode_broker(broker_id: int, data: bytes, epoch: int = -1) -> BrokerRegistration:
    value = _decode_object(data)
    protocols = value.get("listener_security_protocol_map") or {}
    endpoints = []
    for text in value.get("endpoints") or []:
        listener, _, address = text.partition("://")
        host, _, port = address.rpartition(":")
        endpoints.append(Endpoint(listener, host.strip("[]"), int(port), protocols.get(listener, listener)))
    if not endpoints and value.get("host"):
        endpoints.append(Endpoint("PLAINTEXT", value["host"], int(value["port"])))
    return BrokerRegistration(broker_id, tuple(endpoints), value.get("rack"), epoch)


# -- topics ------------------------------------------------------------------------------


def uuid_from_text(text: str) -> uuid.UUID:
    return uuid.UUID(bytes=base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))


@dataclass(frozen=True)
class TopicAssignment:
    """`/brokers/topics/<t>`: the topic's id and each partition's replicas; a partition being
    reassigned (KIP-455) lists all of them, the original and the target ones, with the replicas
    being added and those being removed besides."""

    topic_id: uuid.UUID | None
    partitions: dict[int, list[int]]
    adding: dict[int, list[int]] = field(default_factory=dict)
    removing: dict[int, list[int]] = field(default_factory=dict)


def encode_topic(assignment: TopicAssignment) -> bytes:
    value = {
        "version": 3,
        "partitions": _partition_lists(assignment.partitions),
        "adding_replicas": _partition_lists(assignment.adding),
        "removing_replicas": _partition_lists(assignment.removing),
    }
    if assignment.topic_id is not None:
        value["topic_id"] = uuid_to_base64(assignment.topic_id)
    return _encode(value)


def _partition_lists(lists: dict[int, list[int]]) -> dict[str, list[int]]:
    return {str(p): list(r) for p, r in sorted(lists.items()) if r}


def decode_topic(data: bytes | None) -> TopicAssignment:
    value = _decode(data) or {}
    topic_id = value.get("topic_id")
    return TopicAssignment(
        uuid_from_text(topic_id) if topic_id else None,
        _decode_partition_lists(value.get("partitions")),
        _decode_partition_lists(value.get("adding_replicas")),
        _decode_partition_lists(value.get("removing_replicas")),
    )


def _decode_partition_lists(value: dict | None) -> dict[int, list[int]]:
    return {int(p): [int(r) for r in replicas] for p, replicas in (value or {}).items()}


# -- reassignments asked through ZooKeeper (`/admin/reassign_partitions`) ----------------


def encode_reassignments(reassignments: dict[tuple[str, int], list[int]]) -> bytes:
    partitions = [{"topic": t, "partition": p, "replicas": list(r)} for (t, p), r in sorted(reassignments.items())]
    return _encode({"version": 1, "partitions": partitions})


def decode_reassignments(data: bytes | None) -> dict[tuple[str, int], list[int]]:
    """The reassignments asked (ValueError when the znode is not Kafka's JSON)."""
    value = _decode_object(data)
    return {
        (str(entry["topic"]), int(entry["partition"])): [int(r) for r in entry["replicas"]]
        for entry in value.get("partitions", [])
    }


# -- partition state ---------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderAndIsr:
    """`/brokers/topics/<t>/partitions/<p>/state`, with the znode's version and last-write zxid."""

    leader: int
    leader_epoch: int
    isr: list[int] = field(default_factory=list)
    controller_epoch: int = INITIAL_CONTROLLER_EPOCH
    zk_version: int = -1  # the partition epoch: compare-and-set on it
    mzxid: int = -1  # when it was last written, to compare with a broker's epoch

    def with_changes(
        self,
        *,
        leader: int | None = None,
        isr: list[int] | None = None,
        bump_epoch: bool,
        controller_epoch: int | None = None,
    ) -> LeaderAndIsr:
        return LeaderAndIsr(
            self.leader if leader is None else leader,
            self.leader_epoch + 1 if bump_epoch else self.leader_epoch,
            list(self.isr if isr is None else isr),
            self.controller_epoch if controller_epoch is None else controller_epoch,
            self.zk_version,
            self.mzxid,
        )


def encode_state(state: LeaderAndIsr) -> bytes:
    return _encode(
        {
            "controller_epoch": state.controller_epoch,
            "leader": state.leader,
            "version": 1,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        }
    )


def decode_state(data: bytes | None, zk_version: int = -1, mzxid: int = -1) -> LeaderAndIsr | None:
    value = _decode(data)
    if value is None:
        return None
    return LeaderAndIsr(
        int(value["leader"]),
        int(value["leader_epoch"]),
        [int(r) for r in value["isr"]],
        int(value["controller_epoch"]),
        zk_version,
        mzxid,
    )


# -- configs and change notifications ----------------------------------------------------


def encode_config(configs: dict[str, str]) -> bytes:
    return _encode({"version": 1, "config": dict(configs)})


def decode_config(data: bytes | None) -> dict[str, str]:
    value = _decode(data) or {}
    return {k: str(v) for k, v in (value.get("config") or {}).items()}


def java_properties_order(keys: list[str]) -> list[str]:
    """The order in which Kafka writes a `java.util.Properties` (a ConcurrentHashMap of 16 or more
    buckets, iterated bucket by bucket; in a bucket, in insertion order), as user configs are
    written (`{"SCRAM-SHA-512":...,"SCRAM-SHA-256":...}`)."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    buckets: dict[int, list[str]] = {}
    for key in keys:
        h = 0
        data = key.encode("utf-16-be")
        for i in range(0, len(data), 2):
            h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
        buckets.setdefault((h ^ (h >> 16)) & 0x7FFFFFFF & (capacity - 1), []).append(key)
    return [key for index in sorted(buckets) for key in buckets[index]]


def encode_user_config(configs: dict[str, str]) -> bytes:
    """A `/config/users/<user>` znode, its keys in Kafka's order."""
    return encode_config({key: configs[key] for key in java_properties_order(list(configs))})


def encode_broker_config(configs: dict[str, str]) -> bytes:
    """A `/config/brokers/<id>` (or `<default>`) znode, its keys in Kafka's order: Kafka writes the
    broker's dynamic configs as a `java.util.Properties` too (checked against Kafka 3.9.0)."""
    return encode_user_config(configs)


def encode_config_change(entity_type: str, entity: str) -> bytes:
    return _encode({"version": 2, "entity_path": f"{entity_type}/{entity}"})


def decode_config_change(data: bytes | None) -> tuple[str, str] | None:
    """(entity type, entity name) of a change notification."""
    value = _decode(data) or {}
    if value.get("version") == 2 and "entity_path" in value:
        entity_type, _, entity = value["entity_path"].partition("/")
        return entity_type, entity
    if "entity_type" in value:  # version 1
        return value["entity_type"], value["entity_name"]
    return None


def encode_isr_change(partitions: list[tuple[str, int]]) -> bytes:
    return _encode({"version": 1, "partitions": [{"topic": t, "partition": p} for t, p in partitions]})


def decode_isr_change(data: bytes | None) -> list[tuple[str, int]]:
    value = _decode(data) or {}
    return [(entry["topic"], int(entry["partition"])) for entry in value.get("partitions", [])]


# -- log directory failures -------------------------------------------------------------


def encode_log_dir_event(broker_id: int) -> bytes:
    """Kafka's notification that a log directory of `broker_id` failed."""
    return _encode({"version": 1, "broker": broker_id, "event": LOG_DIR_FAILURE_EVENT})


def decode_log_dir_event(data: bytes | None) -> int | None:
    """The broker a log dir event names; None when the notification is empty or unreadable."""
    try:
        value = _decode(data)
        return None if value is None else int(value["broker"])
    except (ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class OfflineReplicas:
    """`/brokers/offline_replicas/<id>`: the broker's failed log dirs and the partitions it hosted there."""

    broker_id: int
    log_dirs: tuple[str, ...] = ()
    partitions: frozenset[tuple[str, int]] = frozenset()


def encode_offline_replicas(offline: OfflineReplicas) -> bytes:
    return _encode(
        {
            "version": 1,
            "broker": offline.broker_id,
            "log_dirs": list(offline.log_dirs),
            "partitions": [{"topic": t, "partition": p} for t, p in sorted(offline.partitions)],
        }
    )


def decode_offline_replicas(broker_id: int, data: bytes | None) -> OfflineReplicas:
    """What the znode of `broker_id` says; nothing offline when it is empty or unreadable."""
    try:
        value = _decode(data) or {}
        partitions = frozenset((entry["topic"], int(entry["partition"])) for entry in value.get("partitions", []))
        return OfflineReplicas(broker_id, tuple(str(d) for d in value.get("log_dirs", [])), partitions)
    except (ValueError, KeyError, TypeError):
        return OfflineReplicas(broker_id)


# -- producer ids ------------------------------------------------------------------------


def encode_feature_znode() -> bytes:
    """Kafka's FeatureZNode (version 2) as Kafka 3.9's ZooKeeper-mode controller writes it: feature
    versioning enabled, no feature finalized (it supports none)."""
    return _encode({"features": {}, "version": FEATURE_ZNODE_VERSION, "status": FEATURE_ENABLED})


def encode_producer_id_block(broker_id: int, block_start: int, block_end: int) -> bytes:
    return _encode({"version": 1, "broker": broker_id, "block_start": str(block_start), "block_end": str(block_end)})


def decode_producer_id_block_end(data: bytes | None) -> int | None:
    """The last producer id of the latest block handed out, or None before the first."""
    value = _decode(data)
    return None if value is None else int(value["block_end"])
