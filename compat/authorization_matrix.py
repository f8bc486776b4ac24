"""The authorization matrix: every API pykbroker advertises, sent raw by seven kinds of caller to
pykbroker and to Kafka 3.9.0 secured alike (`compat/security_setup.py`: SASL listeners, the ACL
authorizer, `User:admin` the super user), and the answers compared.

A cell is one request of one API in one version; it names the checks of pykbroker's authorization
table (`pykbroker/handlers/support/authorization.py`) it exercises. Each cell is sent once per caller:

    none        User:matrix, with no ACL at all
    exact       User:matrix with exactly the cell's checks as literal ALLOW ACLs on the names used
    deny        those ACLs as DENY, beside an ALLOW of every operation on every resource ("*")
    prefixed    the ACLs as PREFIXED ALLOWs on the first three characters of each name
    wildcard    the ACLs as ALLOWs on the wildcard name "*"
    super       User:admin (super.users)
    anonymous   a connection to the SASL listener that never authenticates

Every send is a fresh connection (a SaslHandshake on an authenticated connection begins a
re-authentication). Both brokers get the same requests in the same order, so whatever a request
changes (an offset committed, an ACL created) it changes on both. Answers are normalised as the
wire comparison normalises them (`compat/wire_probes.py`), but error messages are kept: they are
compared too. Lists that reach beyond the matrix's own resources (groups, transactions) keep
only the matrix's names ("mx-...").

    found = differences(run(pykbroker), run(kafka))     # compat/differences.py
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from pykbroker.handlers.support.authorization import TABLE, Check
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.records.records import build_batch
from pykbroker.security.acl import AclOperation, AclPermissionType, PatternType, ResourceType

from . import wire_probes
from .scenarios import WAIT_SECONDS, wait_until
from .security_setup import PLAIN_USERS, SUPER_USER

USER = "matrix"
PRINCIPAL = f"User:{USER}"
TOPIC, ABSENT, GROUP, TXN = "mx-topic", "mx-absent", "mx-group", "mx-txn"
DOOMED = "mx-doomed"  # deleted by id by the first caller allowed to
CLUSTER_NAME = "kafka-cluster"
NAMES = {ResourceType.TOPIC: TOPIC, ResourceType.GROUP: GROUP, ResourceType.TRANSACTIONAL_ID: TXN,
         ResourceType.CLUSTER: CLUSTER_NAME}
MODES = ("none", "exact", "deny", "prefixed", "wildcard", "super", "anonymous")
ACL_MODES = ("exact", "deny", "prefixed", "wildcard")
CLOSED = "connection closed"
DROPPED = (wire_probes.DROPPED - {"error_message"}) | {
    "log_dir", "total_bytes", "usable_bytes", "transaction_start_time_ms", "last_timestamp"}
BOGUS_PRODUCER_ID = 4_000_000
MATRIX_PREFIX = "mx-"
TOKEN_OWNER = "mx-owner"  # the owner of the delegation tokens asked for
# How long a caller waits for its answer before taking the silence as a closed connection: Kafka
# 3.9.0 leaves some refused requests unanswered (a DescribeUserScramCredentials for every user:
# the connection stays open and silent); its other answers come within a second, even on a
# loaded machine.
ANSWER_SECONDS = 10
# The wait of a cell whose refusal is such a silence on Kafka (each refused caller waits it out);
# its answers to the callers it serves come from memory, at once.
SILENCE_SECONDS = 3


@dataclass(frozen=True)
class Cell:
    """One request: `data` builds it (snake_case fields, nested dicts for structs); `roles` are the
    table checks it exercises; `names` overrides the resource names the ACLs are granted on."""

    label: str
    api_key: ApiKey
    version: int
    roles: tuple[str, ...]
    data: Callable[[], dict]
    names: dict[ResourceType, str] = field(default_factory=dict)
    creates_topic: str | None = None  # a topic the request may create: waited for until it is ready
    answer_seconds: float = ANSWER_SECONDS  # how long an answer is waited for (then: CLOSED)

    def checks(self) -> list[Check]:
        entry = TABLE[self.api_key]
        return [entry.by_role[role] for role in self.roles]

    def name_of(self, resource_type: ResourceType) -> str:
        return self.names[resource_type] if resource_type in self.names else NAMES[resource_type]


def _batch(**options) -> bytes:
    """One record stamped now (an old timestamp would let retention delete it meanwhile)."""
    return build_batch([(b"k", b"v")], base_timestamp=int(time.time() * 1000), **options)


def _one_partition(topic: str = TOPIC, **fields) -> list[dict]:
    return [{"name": topic, "partition_indexes": [0], **fields}]


def _produce(transactional: bool) -> dict:
    options = {"producer_id": BOGUS_PRODUCER_ID, "producer_epoch": 0, "base_sequence": 0,
               "is_transactional": True} if transactional else {}
    return {"transactional_id": TXN if transactional else None, "acks": 1, "timeout_ms": 10000,
            "topic_data": [{"name": TOPIC, "partition_data": [{"index": 0, "records": _batch(**options)}]}]}


def _fetch(replica_id: int) -> dict:
    return {"replica_id": replica_id, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "rack_id": "",
            "forgotten_topics_data": [], "topics": [{"topic": TOPIC, "partitions": [
                {"partition": 0, "fetch_offset": 0, "log_start_offset": -1, "partition_max_bytes": 1 << 20,
                 "current_leader_epoch": -1}]}]}


def _metadata(topics, *, auto_create: bool = False, cluster_ops: bool = False) -> dict:
    return {"topics": None if topics is None else [{"name": t} for t in topics],
            "allow_auto_topic_creation": auto_create, "include_cluster_authorized_operations": cluster_ops,
            "include_topic_authorized_operations": True}


def _offset_commit(group: str = GROUP) -> dict:
    return {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
            "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                       "committed_leader_epoch": -1, "committed_metadata": ""}]}]}


def _config_resource(resource_type: int, name: str, keys=None) -> dict:
    return {"resource_type": resource_type, "resource_name": name, "configuration_keys": keys}


def _alter_config(resource_type: int, name: str, key: str, value: str) -> dict:
    return {"resources": [{"resource_type": resource_type, "resource_name": name,
                           "configs": [{"name": key, "value": value}]}], "validate_only": True}


def _incremental_config(resource_type: int, name: str, key: str, value: str) -> dict:
    return {"resources": [{"resource_type": resource_type, "resource_name": name,
                           "configs": [{"name": key, "config_operation": 0, "value": value}]}],
            "validate_only": True}


def _markers() -> dict:
    return {"markers": [{"producer_id": BOGUS_PRODUCER_ID, "producer_epoch": 0, "transaction_result": False,
                         "coordinator_epoch": 0, "topics": [{"name": ABSENT, "partition_indexes": [0]}]}]}


def _alter_config_cells(label: str, api_key: ApiKey, version: int, body, node: str) -> list[Cell]:
    """A config change (validate only) of a topic, a broker and a group; `body(type, name, key, value)`."""
    changes = (("topic", ("topic",), TOPIC_CONFIG, TOPIC, "retention.ms", "3600000"),
               ("broker", ("cluster",), BROKER_CONFIG, node, "log.cleaner.threads", "2"),
               ("group", (), GROUP_CONFIG, GROUP, "consumer.session.timeout.ms", "45000"))
    return [Cell(f"{label} {kind} configs", api_key, version, roles,
                 lambda kind_=kind_code, name_=name, key_=key, value_=value: body(kind_, name_, key_, value_))
            for kind, roles, kind_code, name, key, value in changes]


def _txn(**fields) -> dict:
    return {"transactional_id": TXN, "producer_id": BOGUS_PRODUCER_ID, "producer_epoch": 0, **fields}


def _acl_filter(name: str, principal: str | None) -> dict:
    return {"resource_type_filter": ResourceType.ANY, "resource_name_filter": name,
            "pattern_type_filter": PatternType.LITERAL, "principal_filter": principal, "host_filter": None,
            "operation": AclOperation.ANY, "permission_type": AclPermissionType.ANY}


TOPIC_CONFIG, BROKER_CONFIG, BROKER_LOGGER_CONFIG, GROUP_CONFIG = 2, 4, 8, 32
TOPIC_ONLY = {ResourceType.TOPIC: TOPIC}


@dataclass(frozen=True)
class Setup:
    """What the requests name on one broker: its node id (broker configs) and the id of the topic
    that a DeleteTopics by id may delete."""

    node_id: int
    doomed_topic_id: uuid.UUID
    topic_id: uuid.UUID = uuid.UUID(int=0)  # mx-topic's, for the requests that name topics by id


def cells(setup: Setup) -> list[Cell]:
    """The matrix's requests, in the order they are sent."""
    node = str(setup.node_id)
    return [
        Cell("produce", ApiKey.PRODUCE, 9, ("topic",), lambda: _produce(False)),
        Cell("produce transactional", ApiKey.PRODUCE, 9, ("transactional_id", "topic"), lambda: _produce(True)),
        Cell("fetch", ApiKey.FETCH, 11, ("topic",), lambda: _fetch(-1)),
        Cell("fetch as a replica", ApiKey.FETCH, 11, ("follower",), lambda: _fetch(1)),
        Cell("list offsets", ApiKey.LIST_OFFSETS, 7, ("topic",), lambda: {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": TOPIC, "partitions": [
                {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -1}]}]}),
        Cell("metadata named topics", ApiKey.METADATA, 12, ("topic",), lambda: _metadata([TOPIC, ABSENT])),
        Cell("metadata all topics", ApiKey.METADATA, 12, ("topic",), lambda: _metadata(None)),
        Cell("metadata cluster operations", ApiKey.METADATA, 10, ("cluster", "topic"),
             lambda: _metadata([TOPIC], cluster_ops=True)),
        Cell("metadata auto-creation", ApiKey.METADATA, 12, ("topic", "create"),
             lambda: _metadata(["mx-auto"], auto_create=True), {ResourceType.TOPIC: "mx-auto"}, "mx-auto"),
        Cell("metadata auto-creation with create on the cluster", ApiKey.METADATA, 12, ("topic", "create_any"),
             lambda: _metadata(["mx-auto-any"], auto_create=True), {ResourceType.TOPIC: "mx-auto-any"},
             "mx-auto-any"),
        Cell("controlled shutdown", ApiKey.CONTROLLED_SHUTDOWN, 3, ("cluster",),
             lambda: {"broker_id": 9999, "broker_epoch": -1}),
        Cell("offset commit", ApiKey.OFFSET_COMMIT, 8, ("group", "topic"), _offset_commit),
        Cell("offset fetch v7", ApiKey.OFFSET_FETCH, 7, ("group", "topic"), lambda: {
            "group_id": GROUP, "topics": [{"name": TOPIC, "partition_indexes": [0]}], "require_stable": False}),
        Cell("offset fetch all partitions", ApiKey.OFFSET_FETCH, 8, ("group", "topic"), lambda: {
            "groups": [{"group_id": GROUP, "topics": None}], "require_stable": False}),
        Cell("find group coordinator", ApiKey.FIND_COORDINATOR, 4, ("group",),
             lambda: {"key_type": 0, "coordinator_keys": [GROUP]}),
        Cell("find transaction coordinator", ApiKey.FIND_COORDINATOR, 4, ("transactional_id",),
             lambda: {"key_type": 1, "coordinator_keys": [TXN]}),
        Cell("join group", ApiKey.JOIN_GROUP, 9, ("group",), lambda: {
            "group_id": GROUP, "session_timeout_ms": 10000, "rebalance_timeout_ms": 10000, "member_id": "",
            "group_instance_id": None, "protocol_type": "consumer", "reason": None,
            "protocols": [{"name": "range", "metadata": b""}]}),
        Cell("heartbeat", ApiKey.HEARTBEAT, 4, ("group",), lambda: {
            "group_id": GROUP, "generation_id": 1, "member_id": "nobody", "group_instance_id": None}),
        Cell("sync group", ApiKey.SYNC_GROUP, 5, ("group",), lambda: {
            "group_id": GROUP, "generation_id": 1, "member_id": "nobody", "group_instance_id": None,
            "protocol_type": "consumer", "protocol_name": "range", "assignments": []}),
        Cell("leave group", ApiKey.LEAVE_GROUP, 5, ("group",), lambda: {
            "group_id": GROUP, "members": [{"member_id": "nobody", "group_instance_id": None, "reason": None}]}),
        Cell("describe groups", ApiKey.DESCRIBE_GROUPS, 5, ("group",), lambda: {
            "groups": [GROUP], "include_authorized_operations": True}),
        Cell("list groups", ApiKey.LIST_GROUPS, 4, ("group",), lambda: {"states_filter": []}),
        Cell("list groups with describe on the cluster", ApiKey.LIST_GROUPS, 4, ("cluster",),
             lambda: {"states_filter": []}),
        Cell("sasl handshake", ApiKey.SASL_HANDSHAKE, 1, (), lambda: {"mechanism": "PLAIN"}),
        Cell("api versions", ApiKey.API_VERSIONS, 3, (), lambda: {
            "client_software_name": "matrix", "client_software_version": "1.0"}),
        Cell("sasl authenticate", ApiKey.SASL_AUTHENTICATE, 2, (), lambda: {"auth_bytes": b"\0matrix\0x"}),
        Cell("create topics with create on the topic", ApiKey.CREATE_TOPICS, 7, ("topic", "configs"), lambda: {
            "topics": [{"name": "mx-new", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                        "configs": []}], "timeout_ms": 10000, "validate_only": True},
             {ResourceType.TOPIC: "mx-new"}),
        Cell("create topics with create on the cluster", ApiKey.CREATE_TOPICS, 7, ("cluster",), lambda: {
            "topics": [{"name": "mx-new", "num_partitions": 1, "replication_factor": 1, "assignments": [],
                        "configs": []}], "timeout_ms": 10000, "validate_only": True}),
        Cell("delete topics", ApiKey.DELETE_TOPICS, 6, ("topic",), lambda: {
            "topics": [{"name": ABSENT, "topic_id": uuid.UUID(int=0)}], "timeout_ms": 10000},
             {ResourceType.TOPIC: ABSENT}),
        Cell("delete topics by id", ApiKey.DELETE_TOPICS, 6, ("describe",), lambda: {
            "topics": [{"name": None, "topic_id": setup.doomed_topic_id}], "timeout_ms": 10000},
             {ResourceType.TOPIC: DOOMED}),
        Cell("delete records", ApiKey.DELETE_RECORDS, 2, ("topic",), lambda: {
            "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "offset": 0}]}],
            "timeout_ms": 10000}),
        Cell("list earliest offsets", ApiKey.LIST_OFFSETS, 7, ("topic",), lambda: {
            "replica_id": -1, "isolation_level": 0, "topics": [{"name": TOPIC, "partitions": [
                {"partition_index": 0, "current_leader_epoch": -1, "timestamp": -2}]}]}),
        Cell("init producer id transactional", ApiKey.INIT_PRODUCER_ID, 4, ("transactional_id",), lambda: {
            "transactional_id": TXN, "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}),
        Cell("init producer id idempotent", ApiKey.INIT_PRODUCER_ID, 4, ("idempotent",), lambda: {
            "transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}),
        Cell("init producer id with write on a topic", ApiKey.INIT_PRODUCER_ID, 4, ("any_topic",), lambda: {
            "transactional_id": None, "transaction_timeout_ms": 60000, "producer_id": -1, "producer_epoch": -1}),
        Cell("offset for leader epoch", ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, ("topic",), lambda: {
            "replica_id": -1, "topics": [{"topic": TOPIC, "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}),
        Cell("offset for leader epoch as a replica", ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, ("follower",), lambda: {
            "replica_id": 1, "topics": [{"topic": TOPIC, "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "leader_epoch": 0}]}]}),
        Cell("add partitions to txn v3", ApiKey.ADD_PARTITIONS_TO_TXN, 3, ("transactional_id", "topic"), lambda: {
            "v3_and_below_transactional_id": TXN, "v3_and_below_producer_id": BOGUS_PRODUCER_ID,
            "v3_and_below_producer_epoch": 0,
            "v3_and_below_topics": [{"name": TOPIC, "partitions": [0]}]}),
        Cell("add partitions to txn v4", ApiKey.ADD_PARTITIONS_TO_TXN, 4, ("broker",), lambda: {
            "transactions": [{"transactional_id": TXN, "producer_id": BOGUS_PRODUCER_ID, "producer_epoch": 0,
                              "verify_only": True, "topics": [{"name": TOPIC, "partitions": [0]}]}]}),
        Cell("add offsets to txn", ApiKey.ADD_OFFSETS_TO_TXN, 3, ("transactional_id", "group"),
             lambda: _txn(group_id=GROUP)),
        Cell("end txn", ApiKey.END_TXN, 3, ("transactional_id",), lambda: _txn(committed=False)),
        Cell("write txn markers", ApiKey.WRITE_TXN_MARKERS, 1, ("cluster",), _markers),
        Cell("write txn markers as an administrator", ApiKey.WRITE_TXN_MARKERS, 1, ("alter",), _markers),
        Cell("txn offset commit", ApiKey.TXN_OFFSET_COMMIT, 3, ("transactional_id", "group", "topic"), lambda: _txn(
            group_id=GROUP, generation_id=-1, member_id="", group_instance_id=None,
            topics=[{"name": TOPIC, "partitions": [{"partition_index": 0, "committed_offset": 0,
                                                   "committed_leader_epoch": -1, "committed_metadata": ""}]}])),
        Cell("create acls", ApiKey.CREATE_ACLS, 3, ("cluster",), lambda: {"creations": [
            {"resource_type": ResourceType.TOPIC, "resource_name": "mx-other", "resource_pattern_type":
             PatternType.LITERAL, "principal": "User:mx-other", "host": "*", "operation": AclOperation.READ,
             "permission_type": AclPermissionType.ALLOW}]}),
        Cell("describe acls", ApiKey.DESCRIBE_ACLS, 3, ("cluster",), lambda: _acl_filter("mx-other", None)),
        Cell("delete acls", ApiKey.DELETE_ACLS, 3, ("cluster",), lambda: {
            "filters": [_acl_filter("mx-other", "User:mx-other")]}),
        Cell("describe topic configs", ApiKey.DESCRIBE_CONFIGS, 4, ("topic",), lambda: {
            "resources": [_config_resource(TOPIC_CONFIG, TOPIC, ["retention.ms"])],
            "include_synonyms": False, "include_documentation": False}),
        Cell("describe broker configs", ApiKey.DESCRIBE_CONFIGS, 4, ("cluster",), lambda: {
            "resources": [_config_resource(BROKER_CONFIG, node, ["log.retention.hours"])],
            "include_synonyms": False, "include_documentation": False}),
        Cell("describe broker loggers", ApiKey.DESCRIBE_CONFIGS, 4, ("cluster",), lambda: {
            "resources": [_config_resource(BROKER_LOGGER_CONFIG, node, ["kafka.nonexistent.logger"])],
            "include_synonyms": False, "include_documentation": False}),
        Cell("describe group configs", ApiKey.DESCRIBE_CONFIGS, 4, (), lambda: {
            "resources": [_config_resource(GROUP_CONFIG, GROUP, None)],
            "include_synonyms": False, "include_documentation": False}),
        *_alter_config_cells("alter", ApiKey.ALTER_CONFIGS, 2, _alter_config, node),
        Cell("alter replica log dirs", ApiKey.ALTER_REPLICA_LOG_DIRS, 2, ("cluster",), lambda: {
            "dirs": [{"path": "/mx-not-a-log-dir", "topics": [{"name": TOPIC, "partitions": [0]}]}]}),
        Cell("describe log dirs", ApiKey.DESCRIBE_LOG_DIRS, 4, ("cluster",), lambda: {
            "topics": [{"topic": TOPIC, "partitions": [0]}]}),
        Cell("create partitions", ApiKey.CREATE_PARTITIONS, 3, ("topic",), lambda: {
            "topics": [{"name": TOPIC, "count": 2, "assignments": None}], "timeout_ms": 10000,
            "validate_only": True}),
        Cell("delete groups", ApiKey.DELETE_GROUPS, 2, ("group",), lambda: {"groups_names": ["mx-gone"]},
             {ResourceType.GROUP: "mx-gone"}),
        Cell("elect leaders", ApiKey.ELECT_LEADERS, 2, ("cluster",), lambda: {
            "election_type": 0, "timeout_ms": 10000, "topic_partitions": [{"topic": TOPIC, "partitions": [0]}]}),
        Cell("cancel partition reassignments", ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, ("cluster",), lambda: {
            "timeout_ms": 10000, "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0, "replicas": None}]}]}),
        Cell("list partition reassignments", ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, ("cluster",), lambda: {
            "timeout_ms": 10000, "topics": None}),
        *_alter_config_cells("incremental alter", ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, _incremental_config, node),
        Cell("offset delete", ApiKey.OFFSET_DELETE, 0, ("group", "topic"), lambda: {
            "group_id": GROUP, "topics": [{"name": TOPIC, "partitions": [{"partition_index": 0}]}]}),
        Cell("describe client quotas", ApiKey.DESCRIBE_CLIENT_QUOTAS, 1, ("cluster",), lambda: {
            "components": [{"entity_type": "user", "match_type": 0, "match": "mx-nobody"}], "strict": False}),
        Cell("alter client quotas", ApiKey.ALTER_CLIENT_QUOTAS, 1, ("cluster",), lambda: {
            "entries": [{"entity": [{"entity_type": "user", "entity_name": "mx-nobody"}],
                         "ops": [{"key": "producer_byte_rate", "value": 0.0, "remove": True}]}],
            "validate_only": True}),
        Cell("describe user scram credentials", ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, ("cluster",),
             lambda: {"users": [{"name": "mx-nobody"}]}),
        Cell("describe every user's scram credentials", ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, ("cluster",),
             lambda: {"users": None}, answer_seconds=SILENCE_SECONDS),
        Cell("alter user scram credentials", ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, ("cluster",), lambda: {
            "deletions": [{"name": "mx-nobody", "mechanism": 1}], "upsertions": []}),
        # delegation tokens: the secured brokers have no delegation.token.secret.key, so past its
        # ACL check each request answers DELEGATION_TOKEN_AUTH_DISABLED (the tokens themselves:
        # tests/security/test_delegation_tokens.py)
        Cell("create delegation token for another owner", ApiKey.CREATE_DELEGATION_TOKEN, 3, ("owner",), lambda: {
            "owner_principal_type": "User", "owner_principal_name": TOKEN_OWNER, "renewers": [],
            "max_lifetime_ms": -1}, {ResourceType.USER: f"User:{TOKEN_OWNER}"}),
        Cell("renew delegation token", ApiKey.RENEW_DELEGATION_TOKEN, 2, (), lambda: {
            "hmac": b"mx-no-such-token", "renew_period_ms": -1}),
        Cell("expire delegation token", ApiKey.EXPIRE_DELEGATION_TOKEN, 2, (), lambda: {
            "hmac": b"mx-no-such-token", "expiry_time_period_ms": -1}),
        Cell("describe delegation tokens", ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, ("token", "owner"),
             lambda: {"owners": None},
             {ResourceType.DELEGATION_TOKEN: "mx-token", ResourceType.USER: f"User:{TOKEN_OWNER}"}),
        Cell("update features", ApiKey.UPDATE_FEATURES, 1, ("cluster",), lambda: {
            "timeout_ms": 10000, "validate_only": False,
            "feature_updates": [{"feature": "mx-feature", "max_version_level": 1, "upgrade_type": 1}]}),
        Cell("describe cluster", ApiKey.DESCRIBE_CLUSTER, 1, ("cluster",), lambda: {
            "include_cluster_authorized_operations": True, "endpoint_type": 1}),
        Cell("describe producers", ApiKey.DESCRIBE_PRODUCERS, 0, ("topic",), lambda: {
            "topics": _one_partition()}),
        Cell("describe transactions", ApiKey.DESCRIBE_TRANSACTIONS, 0, ("transactional_id", "topic"),
             lambda: {"transactional_ids": [TXN]}),
        Cell("list transactions", ApiKey.LIST_TRANSACTIONS, 1, ("transactional_id",), lambda: {
            "state_filters": [], "producer_id_filters": [], "duration_filter": -1}),
        Cell("consumer group heartbeat", ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, ("group", "topic"), lambda: {
            "group_id": GROUP, "member_id": "mx-member", "member_epoch": 0, "rebalance_timeout_ms": 30000,
            "subscribed_topic_names": [TOPIC], "topic_partitions": []}),
        Cell("consumer group describe", ApiKey.CONSUMER_GROUP_DESCRIBE, 1, ("group", "topic"), lambda: {
            "group_ids": [GROUP], "include_authorized_operations": False}),
        Cell("share fetch", ApiKey.SHARE_FETCH, 1, ("group", "topic"), lambda: {
            "group_id": GROUP, "member_id": "mx-member", "share_session_epoch": 0, "max_wait_ms": 0,
            "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 10, "batch_size": 10, "forgotten_topics_data": [],
            "topics": [{"topic_id": setup.topic_id, "partitions": [
                {"partition_index": 0, "acknowledgement_batches": []}]}]}),
        Cell("share acknowledge", ApiKey.SHARE_ACKNOWLEDGE, 1, ("group", "topic"), lambda: {
            "group_id": GROUP, "member_id": "mx-member", "share_session_epoch": 1,
            "topics": [{"topic_id": setup.topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}]}]}]}),
        # KIP-932's share coordinator, between brokers: before any SHARE lookup creates its topic
        Cell("initialize share group state", ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, ("cluster",),
             lambda: _share_state({"state_epoch": 0, "start_offset": -1})),
        Cell("read share group state", ApiKey.READ_SHARE_GROUP_STATE, 0, ("cluster",),
             lambda: _share_state({"leader_epoch": 0})),
        Cell("write share group state", ApiKey.WRITE_SHARE_GROUP_STATE, 0, ("cluster",),
             lambda: _share_state({"state_epoch": 0, "leader_epoch": 0, "start_offset": -1, "state_batches": []})),
        Cell("delete share group state", ApiKey.DELETE_SHARE_GROUP_STATE, 0, ("cluster",),
             lambda: _share_state({})),
        Cell("read share group state summary", ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 0, ("cluster",),
             lambda: _share_state({"leader_epoch": 0})),
        Cell("find share coordinator", ApiKey.FIND_COORDINATOR, 6, ("cluster",),
             lambda: {"key_type": 2, "coordinator_keys": [f"{GROUP}:{SHARE_TOPIC_ID}:0"]},
             creates_topic="__share_group_state"),
    ]


SHARE_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAABw"  # Kafka's base64 of the topic id the share-state requests name


def _share_state(partition: dict) -> dict:
    """A share-group state request (KIP-932) for partition 0 of a topic id no topic has."""
    return {"group_id": GROUP, "topics": [
        {"topic_id": uuid.UUID(int=7), "partitions": [{"partition": 0, **partition}]}]}


# -- the callers' ACLs ------------------------------------------------------------------------

@dataclass(frozen=True)
class Acl:
    resource_type: ResourceType
    name: str
    pattern: PatternType
    operation: AclOperation
    permission: AclPermissionType


def acls_for(cell: Cell, mode: str) -> list[Acl]:
    """The ACLs User:matrix holds while `cell` is sent in `mode`. The cluster resource takes only
    its literal name (Kafka refuses "*" and prefixes for it)."""
    allow, deny = AclPermissionType.ALLOW, AclPermissionType.DENY
    wanted = [(c.operation, c.resource_type, cell.name_of(c.resource_type)) for c in cell.checks()]
    if mode == "exact":
        return [Acl(t, name, PatternType.LITERAL, op, allow) for op, t, name in wanted]
    if mode == "prefixed":
        return [_on(t, name, name[:3], PatternType.PREFIXED, op, allow) for op, t, name in wanted]
    if mode == "wildcard":
        return [_on(t, name, "*", PatternType.LITERAL, op, allow) for op, t, name in wanted]
    if mode == "deny":
        everything = [_on(t, "", "*", PatternType.LITERAL, AclOperation.ALL, allow) for t in NAMES]
        return everything + [Acl(t, name, PatternType.LITERAL, op, deny) for op, t, name in wanted]
    return []


def _on(resource_type, name, pattern_name, pattern, operation, permission) -> Acl:
    if resource_type == ResourceType.CLUSTER:
        return Acl(resource_type, CLUSTER_NAME, PatternType.LITERAL, operation, permission)
    return Acl(resource_type, pattern_name, pattern, operation, permission)


# -- talking to a broker ----------------------------------------------------------------------

class Connection:
    """A fresh raw connection to the broker's SASL_PLAINTEXT listener, logged in or not."""

    def __init__(self, bootstrap: str, user: str | None, timeout: float = WAIT_SECONDS) -> None:
        from tests.security.support import log_in_plain
        from pykbroker.testkit.wire import WireClient

        self.client = WireClient(bootstrap, timeout=timeout)
        if user is not None:
            log_in_plain(self.client, user, PLAIN_USERS[user])

    def ask(self, cell: Cell):
        """The normalised answer, or CLOSED when the broker closes the connection instead (or
        leaves it silent for the cell's `answer_seconds`)."""
        request = wire_probes.build(messages.request(cell.api_key), cell.data())
        self.client.sock.settimeout(cell.answer_seconds)
        try:
            answer = self.client.request(cell.api_key, cell.version, request)
        except (EOFError, ConnectionError, socket.timeout):
            return CLOSED
        if cell.api_key == ApiKey.API_VERSIONS:  # its ranges are the wire comparison's: here, whether it answers
            return {"error_code": answer.error_code}
        return only_matrix_resources(normalise(answer))

    def close(self) -> None:
        self.client.close()


def normalise(value):
    """wire_probes.normalise, but keeping error messages: an empty one is no message, and Kafka's
    description of its own request object (processor, connection id, buffers) is REQUEST_DUMP."""
    return _messages(wire_probes.normalise(value, dropped=DROPPED))


REQUEST_DUMP = "Request <Kafka's request object> is not authorized."


def _messages(value):
    if isinstance(value, dict):
        return {k: _message(v) if k == "error_message" else _messages(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_messages(v) for v in value]
    return value


def _message(message):
    if not message:
        return None
    return REQUEST_DUMP if message.startswith("Request Request(") else message


def only_matrix_resources(value):
    """Keyed lists reaching beyond the matrix (all groups, all transactions, all topics) keep only
    the matrix's entries."""
    if isinstance(value, dict):
        if value and all(isinstance(v, dict) for v in value.values()) and _keys_are_names(value):
            value = {k: v for k, v in value.items() if k.startswith(MATRIX_PREFIX)}
        return {k: only_matrix_resources(v) for k, v in value.items()}
    if isinstance(value, list):
        return [only_matrix_resources(v) for v in value]
    return value


def _keys_are_names(value: dict) -> bool:
    """A dict made by wire_probes.keyed from a list of groups, transactions or topics."""
    first = next(iter(value.values()))
    return any(key in first for key in ("group_id", "transactional_id", "name")) and not any(
        key.isdigit() for key in value)


def ask(bootstrap: str, cell: Cell, mode: str):
    """The broker's answer to `cell` sent by `mode`'s caller; asked again, as clients do, while a
    coordinator is not ready yet (Kafka's first InitProducerId waits for a block of producer ids)."""
    user = None if mode == "anonymous" else SUPER_USER if mode == "super" else USER

    def once():
        connection = Connection(bootstrap, user, timeout=ANSWER_SECONDS)
        try:
            return connection.ask(cell)
        finally:
            connection.close()

    return wire_probes.retried(once, error_of=_top_level_error)


def _top_level_error(answer):
    return answer.get("error_code") if isinstance(answer, dict) else None


def set_acls(admin, acls: list[Acl]) -> None:
    """User:matrix's ACLs become exactly `acls`, set through `admin` (a raw client logged in as
    the super user: `_admin`): those it holds and should not are deleted, each by a filter of its
    own (a broker looks at no other resource for such a filter: its ACLs may be many, those of the
    other secured-broker tests), and those it lacks are created; when it holds exactly `acls`,
    nothing is changed."""
    held = held_acls(admin)
    stale = [a for a in held if a not in acls]
    if stale:
        deleted = admin.request(ApiKey.DELETE_ACLS, 3, _request(ApiKey.DELETE_ACLS, {
            "filters": [_exact_filter(a) for a in stale]}))
        assert all(r.error_code == 0 and r.matching_acls for r in deleted.filter_results), deleted
    missing = [a for a in acls if a not in held]
    if missing:
        created = admin.request(ApiKey.CREATE_ACLS, 3, _request(ApiKey.CREATE_ACLS, {"creations": [
            {"resource_type": a.resource_type, "resource_name": a.name, "resource_pattern_type": a.pattern,
             "principal": PRINCIPAL, "host": "*", "operation": a.operation, "permission_type": a.permission}
            for a in missing]}))
        assert all(r.error_code == 0 for r in created.results), created


def held_acls(admin) -> list[Acl]:
    """The ACLs of User:matrix (all on host "*": the only ones set_acls creates)."""
    described = admin.request(ApiKey.DESCRIBE_ACLS, 3, _request(ApiKey.DESCRIBE_ACLS, {
        **_acl_filter(None, PRINCIPAL), "pattern_type_filter": PatternType.ANY}))
    assert described.error_code == 0, described
    assert all(e.host == "*" for r in described.resources for e in r.acls), described
    return [Acl(ResourceType(r.resource_type), r.resource_name, PatternType(r.pattern_type),
                AclOperation(e.operation), AclPermissionType(e.permission_type))
            for r in described.resources for e in r.acls]


def _exact_filter(acl: Acl) -> dict:
    """A DeleteAcls filter that matches `acl` of User:matrix and nothing else."""
    return {"resource_type_filter": acl.resource_type, "resource_name_filter": acl.name,
            "pattern_type_filter": acl.pattern, "principal_filter": PRINCIPAL, "host_filter": "*",
            "operation": acl.operation, "permission_type": acl.permission}


@contextmanager
def _admin(bootstrap: str) -> Iterator:
    """A raw client logged in as the super user."""
    connection = Connection(bootstrap, SUPER_USER)
    try:
        yield connection.client
    finally:
        connection.close()


def _request(api_key: ApiKey, data: dict):
    return wire_probes.build(messages.request(api_key), data)


# -- the run ----------------------------------------------------------------------------------

def prepare(bootstrap: str) -> Setup:
    """The matrix's topics (one partition each), the coordinators ready."""
    with _admin(bootstrap) as admin:
        created = admin.request(ApiKey.CREATE_TOPICS, 7, _request(ApiKey.CREATE_TOPICS, {
            "topics": [{"name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                        "configs": []} for name in (TOPIC, DOOMED)], "timeout_ms": 30000, "validate_only": False}))
        assert all(t.error_code == 0 for t in created.topics), created
    for key_type, key in ((0, GROUP), (1, TXN)):
        wait_until(lambda: _coordinator_ready(bootstrap, key_type, key), f"the coordinator of {key}",
                   timeout=WAIT_SECONDS)
    wait_until(lambda: _absent_or_ready(bootstrap, DOOMED) and _absent_or_ready(bootstrap, TOPIC), "the topics",
               timeout=WAIT_SECONDS)
    with _admin(bootstrap) as admin:
        metadata = admin.request(ApiKey.METADATA, 12, _request(ApiKey.METADATA, _metadata([TOPIC, DOOMED])))
    ids = {t.name: t.topic_id for t in metadata.topics}
    return Setup(node_id=metadata.brokers[0].node_id, doomed_topic_id=ids[DOOMED], topic_id=ids[TOPIC])


def _coordinator_ready(bootstrap: str, key_type: int, key: str) -> bool:
    with _admin(bootstrap) as admin:
        answer = admin.request(ApiKey.FIND_COORDINATOR, 4, _request(
            ApiKey.FIND_COORDINATOR, {"key_type": key_type, "coordinator_keys": [key]}))
    return answer.coordinators[0].error_code == 0


def run(broker) -> dict:
    """{cell label: {mode: normalised answer}} from one secured broker (SecurePykBroker or
    SecureKafkaBroker), each cell sent by every caller in MODES order."""
    bootstrap = broker.bootstrap_of("PLAIN")
    results: dict[str, dict] = {}
    setup = prepare(bootstrap)
    with _admin(bootstrap) as admin:  # one connection sets the ACLs of every cell
        for cell in cells(setup):
            results[cell.label] = dict(_answers(bootstrap, admin, cell))
        set_acls(admin, [])
    return results


def _answers(bootstrap: str, admin, cell: Cell) -> Iterator[tuple[str, object]]:
    for mode in MODES:
        set_acls(admin, acls_for(cell, mode))
        yield mode, ask(bootstrap, cell, mode)
        if cell.creates_topic:
            wait_until(lambda: _absent_or_ready(bootstrap, cell.creates_topic), f"{cell.creates_topic} ready",
                       timeout=WAIT_SECONDS)


def _absent_or_ready(bootstrap: str, topic: str) -> bool:
    """Whether `topic` does not exist, or exists with a leader for every partition."""
    with _admin(bootstrap) as admin:
        [answer] = admin.request(ApiKey.METADATA, 12, _request(ApiKey.METADATA, _metadata([topic]))).topics
    unknown = answer.error_code == 3
    ready = answer.error_code == 0 and all(p.error_code == 0 and p.leader_id >= 0 for p in answer.partitions)
    return unknown or ready


# -- the table of results -----------------------------------------------------------------------

DENIALS = {29: "denied: topic", 30: "denied: group", 31: "denied: cluster", 53: "denied: transactional id"}


def outcome(answer) -> str:
    """An answer in a few words: "ok", "closed", or the error codes it carries (denials first)."""
    if answer == CLOSED:
        return "closed"
    codes = sorted(_error_codes(answer, set()), key=lambda code: (code not in DENIALS, code))
    return ", ".join(DENIALS.get(code) or _error_name(code) for code in codes) or "ok"


def _error_codes(value, found: set[int]) -> set[int]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "error_code" and isinstance(item, int) and item != 0:
                found.add(item)
            else:
                _error_codes(item, found)
    elif isinstance(value, list):
        for item in value:
            _error_codes(item, found)
    return found


def _error_name(code: int) -> str:
    from pykbroker.protocol.errors import ErrorCode

    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def markdown(ours: dict, theirs: dict) -> str:
    """The matrix as a Markdown table: pykbroker's outcome per request and caller, and Kafka's where
    it differs."""
    lines = [f"| request | {' | '.join(MODES)} |", "|---|" + "---|" * len(MODES)]
    by_label = {cell.label: cell for cell in cells(Setup(0, uuid.UUID(int=0)))}
    for label, answers in ours.items():
        cell = by_label[label]
        shown = []
        for mode in MODES:
            mine, kafkas = outcome(answers[mode]), outcome(theirs.get(label, {}).get(mode))
            shown.append(mine if mine == kafkas else f"{mine} (Kafka: {kafkas})")
        lines.append(f"| {cell.api_key.name} v{cell.version}: {label} | {' | '.join(shown)} |")
    return "\n".join(lines)
