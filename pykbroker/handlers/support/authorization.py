"""Which ACLs each API needs, as Kafka 3.9's `KafkaApis` asks for them: one table, one entry per API.

An entry lists the API's checks. A check names the operation and resource type asked, which
name of the request is asked about (its `role`: "topic", "group", "transactional_id", "cluster",
...), the error code Kafka answers on denial and what it does instead of serving: refuse the
whole request, refuse one resource, or filter the resource out of the answer. APIs that need no
ACL (ApiVersions, the SASL APIs) are entries too, with the reason.

Handlers consult the table instead of naming operations themselves:

    WRITE_TOPIC = check(API_KEY, "topic")
    if not WRITE_TOPIC.allows(ctx, name):
        return error(WRITE_TOPIC.denied)
    writable = WRITE_TOPIC.allowed(ctx, names)

The handler registry refuses a handler whose API has no entry (`entry_of`), so an API cannot be
served before its authorization is written down here; the compatibility suite's authorization
matrix grants exactly these ACLs to a principal and compares the answers with Kafka's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from ...security.acl import CLUSTER_NAME, AclOperation, ResourceType
from . import auth
from .context import RequestContext

READ, WRITE, CREATE, DELETE = AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE
ALTER, DESCRIBE, CLUSTER_ACTION = AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.CLUSTER_ACTION
DESCRIBE_CONFIGS, ALTER_CONFIGS = AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS
IDEMPOTENT_WRITE = AclOperation.IDEMPOTENT_WRITE
TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
TRANSACTIONAL_ID = ResourceType.TRANSACTIONAL_ID

TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED


class OnDenial(Enum):
    """What Kafka does with a request (or a resource of it) the caller may not use."""

    REFUSE_REQUEST = "refuses the whole request"
    REFUSE_RESOURCE = "refuses that resource, serves the others"
    FILTER = "leaves the resource out of the answer"
    WITHHOLD = "serves the request without that part of the answer"


@dataclass(frozen=True, eq=False)  # an entry of the table, never compared
class Check:
    """One question an API asks the authorizer."""

    role: str  # which name of the request is asked about
    operation: AclOperation
    resource_type: ResourceType
    denied: ErrorCode  # the error code answered on denial (NONE where the answer is filtered)
    on_denial: OnDenial
    note: str = ""  # when the check is made, where it is not every time

    def allows(self, ctx: RequestContext, name: str = CLUSTER_NAME, *, log_if_denied: bool = True) -> bool:
        """Whether the caller may perform this check's operation on `name` (the cluster by default)."""
        return auth.authorize(ctx, self.operation, self.resource_type, name, log_if_denied=log_if_denied)

    def allowed(self, ctx: RequestContext, names: Iterable[str | None]) -> set[str]:
        """The names of `names` the caller may perform this check's operation on."""
        return auth.filter_authorized(ctx, self.operation, self.resource_type, names)

    def allows_any(self, ctx: RequestContext) -> bool:
        """Whether the caller may perform the operation on at least one resource of the type
        (Kafka's `authorizeByResourceType`)."""
        return auth.authorize_by_resource_type(ctx, self.operation, self.resource_type)


@dataclass(frozen=True, eq=False)  # an entry of the table, never compared
class ApiAuthorization:
    """An API's checks, or why it needs none."""

    api_key: ApiKey
    checks: tuple[Check, ...] = ()
    needs_none: str = ""  # the reason, for APIs that ask nothing
    notes: str = ""
    by_role: dict[str, Check] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if bool(self.checks) == bool(self.needs_none):
            raise ValueError(f"{self.api_key.name}: either checks or the reason it needs none")
        object.__setattr__(self, "by_role", {c.role: c for c in self.checks})
        if len(self.by_role) != len(self.checks):
            raise ValueError(f"{self.api_key.name}: two checks with the same role")


def _api(api_key: ApiKey, *checks: Check, needs_none: str = "", notes: str = "") -> ApiAuthorization:
    return ApiAuthorization(api_key, checks, needs_none, notes)


REQ, RES, FILTER, WITHHOLD = OnDenial.REFUSE_REQUEST, OnDenial.REFUSE_RESOURCE, OnDenial.FILTER, OnDenial.WITHHOLD
NONE = ErrorCode.NONE
_FOLLOWER = "only for a replica's request (replica id >= 0)"
_CONFIG_NOTE = (
    "config resources: topics by name, groups by id (Kafka 4), brokers, broker loggers and client metrics on "
    "the cluster"
)


def _config_api(api_key: ApiKey, operation: AclOperation) -> ApiAuthorization:
    """A config API: the operation on the topic, or on the cluster for the other config resources."""
    return _api(
        api_key,
        Check("topic", operation, TOPIC, TOPIC_DENIED, RES),
        Check("cluster", operation, CLUSTER, CLUSTER_DENIED, RES),
        Check("group", operation, GROUP, GROUP_DENIED, RES),
        notes=_CONFIG_NOTE,
    )


TABLE: dict[ApiKey, ApiAuthorization] = {
    a.api_key: a
    for a in (
        _api(
            ApiKey.PRODUCE,
            Check("transactional_id", WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQ, "for transactional records"),
            Check("topic", WRITE, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.FETCH,
            Check("follower", CLUSTER_ACTION, CLUSTER, TOPIC_DENIED, REQ, _FOLLOWER),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(ApiKey.LIST_OFFSETS, Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, RES)),
        _api(
            ApiKey.METADATA,
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, FILTER, "named topics are refused, all-topics filtered"),
            Check("create_any", CREATE, CLUSTER, TOPIC_DENIED, RES, "auto-creation, or else CREATE on the topic"),
            Check("create", CREATE, TOPIC, TOPIC_DENIED, RES, "auto-creation"),
            Check("cluster", DESCRIBE, CLUSTER, NONE, WITHHOLD, "cluster authorized operations (v8-v10)"),
        ),
        _api(ApiKey.CONTROLLED_SHUTDOWN, Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(
            ApiKey.OFFSET_COMMIT,
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.OFFSET_FETCH,
            Check("group", DESCRIBE, GROUP, GROUP_DENIED, REQ, "per group (v8+)"),
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, RES, "all-partitions requests filter instead"),
        ),
        _api(
            ApiKey.FIND_COORDINATOR,
            Check("group", DESCRIBE, GROUP, GROUP_DENIED, RES, "key type 0"),
            Check("transactional_id", DESCRIBE, TRANSACTIONAL_ID, TXN_DENIED, RES, "key type 1"),
            Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, RES, "key type 2 (SHARE, v6+)"),
        ),
        _api(ApiKey.JOIN_GROUP, Check("group", READ, GROUP, GROUP_DENIED, REQ)),
        _api(ApiKey.HEARTBEAT, Check("group", READ, GROUP, GROUP_DENIED, REQ)),
        _api(ApiKey.LEAVE_GROUP, Check("group", READ, GROUP, GROUP_DENIED, REQ)),
        _api(ApiKey.SYNC_GROUP, Check("group", READ, GROUP, GROUP_DENIED, REQ)),
        _api(ApiKey.DESCRIBE_GROUPS, Check("group", DESCRIBE, GROUP, GROUP_DENIED, RES)),
        _api(
            ApiKey.LIST_GROUPS,
            Check("cluster", DESCRIBE, CLUSTER, NONE, FILTER, "lists every group"),
            Check("group", DESCRIBE, GROUP, NONE, FILTER, "without DESCRIBE on the cluster"),
        ),
        _api(ApiKey.SASL_HANDSHAKE, needs_none="part of authentication"),
        _api(ApiKey.API_VERSIONS, needs_none="answered before authentication"),
        _api(
            ApiKey.CREATE_TOPICS,
            Check("cluster", CREATE, CLUSTER, TOPIC_DENIED, RES, "any topic; or else CREATE on the topic"),
            Check("topic", CREATE, TOPIC, TOPIC_DENIED, RES),
            Check("configs", DESCRIBE_CONFIGS, TOPIC, TOPIC_DENIED, WITHHOLD, "the configs in the answer (v5+)"),
        ),
        _api(
            ApiKey.DELETE_TOPICS,
            Check("describe", DESCRIBE, TOPIC, TOPIC_DENIED, RES, "topics named by id"),
            Check("topic", DELETE, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(ApiKey.DELETE_RECORDS, Check("topic", DELETE, TOPIC, TOPIC_DENIED, RES)),
        _api(
            ApiKey.INIT_PRODUCER_ID,
            Check("transactional_id", WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQ, "transactional producers"),
            Check("idempotent", IDEMPOTENT_WRITE, CLUSTER, CLUSTER_DENIED, REQ, "or else WRITE on any topic"),
            Check("any_topic", WRITE, TOPIC, CLUSTER_DENIED, REQ, "idempotent producers (KIP-679)"),
        ),
        _api(
            ApiKey.OFFSET_FOR_LEADER_EPOCH,
            Check("follower", CLUSTER_ACTION, CLUSTER, TOPIC_DENIED, RES, "or else DESCRIBE on each topic"),
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.ADD_PARTITIONS_TO_TXN,
            Check("broker", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ, "v4+ (brokers verifying)"),
            Check("transactional_id", WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQ, "v0-v3"),
            Check("topic", WRITE, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.ADD_OFFSETS_TO_TXN,
            Check("transactional_id", WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQ),
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
        ),
        _api(ApiKey.END_TXN, Check("transactional_id", WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQ)),
        _api(
            ApiKey.WRITE_TXN_MARKERS,
            Check("alter", ALTER, CLUSTER, CLUSTER_DENIED, REQ, "an administrator aborting a transaction (KIP-664)"),
            Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ, "without ALTER: a transaction coordinator"),
        ),
        _api(
            ApiKey.TXN_OFFSET_COMMIT,
            Check("transactional_id", WRITE, TRANSACTIONAL_ID, TXN_DENIED, REQ),
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(ApiKey.DESCRIBE_ACLS, Check("cluster", DESCRIBE, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.CREATE_ACLS, Check("cluster", ALTER, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.DELETE_ACLS, Check("cluster", ALTER, CLUSTER, CLUSTER_DENIED, REQ)),
        _config_api(ApiKey.DESCRIBE_CONFIGS, DESCRIBE_CONFIGS),
        _config_api(ApiKey.ALTER_CONFIGS, ALTER_CONFIGS),
        _api(ApiKey.ALTER_REPLICA_LOG_DIRS, Check("cluster", ALTER, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.DESCRIBE_LOG_DIRS, Check("cluster", DESCRIBE, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.SASL_AUTHENTICATE, needs_none="part of authentication"),
        _api(ApiKey.CREATE_PARTITIONS, Check("topic", ALTER, TOPIC, TOPIC_DENIED, RES)),
        _api(ApiKey.DELETE_GROUPS, Check("group", DELETE, GROUP, GROUP_DENIED, RES)),
        _api(ApiKey.ELECT_LEADERS, Check("cluster", ALTER, CLUSTER, CLUSTER_DENIED, REQ)),
        _config_api(ApiKey.INCREMENTAL_ALTER_CONFIGS, ALTER_CONFIGS),
        _api(ApiKey.ALTER_PARTITION_REASSIGNMENTS, Check("cluster", ALTER, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.LIST_PARTITION_REASSIGNMENTS, Check("cluster", DESCRIBE, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(
            ApiKey.OFFSET_DELETE,
            Check("group", DELETE, GROUP, GROUP_DENIED, REQ),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(ApiKey.DESCRIBE_CLIENT_QUOTAS, Check("cluster", DESCRIBE_CONFIGS, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.ALTER_CLIENT_QUOTAS, Check("cluster", ALTER_CONFIGS, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, Check("cluster", DESCRIBE, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(
            ApiKey.ALTER_USER_SCRAM_CREDENTIALS,
            Check("cluster", ALTER, CLUSTER, CLUSTER_DENIED, REQ, "on the controller (NOT_CONTROLLER first elsewhere)"),
        ),
        _api(
            ApiKey.CREATE_DELEGATION_TOKEN,
            Check(
                "owner",
                AclOperation.CREATE_TOKENS,
                ResourceType.USER,
                ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
                REQ,
                "a token for another owner (KIP-373)",
            ),
        ),
        _api(ApiKey.RENEW_DELEGATION_TOKEN, needs_none="the token's owner or a renewer (the token manager checks)"),
        _api(ApiKey.EXPIRE_DELEGATION_TOKEN, needs_none="the token's owner or a renewer (the token manager checks)"),
        _api(
            ApiKey.DESCRIBE_DELEGATION_TOKEN,
            Check("token", DESCRIBE, ResourceType.DELEGATION_TOKEN, NONE, FILTER, "tokens not owned or renewable"),
            Check(
                "owner",
                AclOperation.DESCRIBE_TOKENS,
                ResourceType.USER,
                NONE,
                FILTER,
                "or else DESCRIBE_TOKENS on the token's owner",
            ),
        ),
        _api(ApiKey.UPDATE_FEATURES, Check("cluster", ALTER, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.DESCRIBE_CLUSTER, Check("cluster", DESCRIBE, CLUSTER, NONE, WITHHOLD, "authorized operations")),
        _api(ApiKey.DESCRIBE_PRODUCERS, Check("topic", READ, TOPIC, TOPIC_DENIED, RES)),
        _api(
            ApiKey.DESCRIBE_TRANSACTIONS,
            Check("transactional_id", DESCRIBE, TRANSACTIONAL_ID, TXN_DENIED, RES),
            Check("topic", DESCRIBE, TOPIC, NONE, FILTER, "the transaction's partitions"),
        ),
        _api(ApiKey.LIST_TRANSACTIONS, Check("transactional_id", DESCRIBE, TRANSACTIONAL_ID, NONE, FILTER)),
        # Consumer groups (KIP-848), as Kafka 4's KafkaApis
        _api(
            ApiKey.CONSUMER_GROUP_HEARTBEAT,
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, REQ, "subscribed names; topics a regex matches are filtered"),
        ),
        _api(
            ApiKey.CONSUMER_GROUP_DESCRIBE,
            Check("group", DESCRIBE, GROUP, GROUP_DENIED, RES),
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, RES, "the topics of the group's assignments"),
        ),
        # Share groups (KIP-932), as Kafka 4.1's KafkaApis
        _api(
            ApiKey.SHARE_GROUP_HEARTBEAT,
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, REQ, "every subscribed topic"),
        ),
        _api(
            ApiKey.SHARE_GROUP_DESCRIBE,
            Check("group", DESCRIBE, GROUP, GROUP_DENIED, RES),
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, RES, "the topics of the group's members; else the group"),
        ),
        _api(
            ApiKey.SHARE_FETCH,
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.SHARE_ACKNOWLEDGE,
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS,
            Check("group", DESCRIBE, GROUP, GROUP_DENIED, RES),
            Check("topic", DESCRIBE, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.ALTER_SHARE_GROUP_OFFSETS,
            Check("group", READ, GROUP, GROUP_DENIED, REQ),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(
            ApiKey.DELETE_SHARE_GROUP_OFFSETS,
            Check("group", DELETE, GROUP, GROUP_DENIED, REQ),
            Check("topic", READ, TOPIC, TOPIC_DENIED, RES),
        ),
        _api(ApiKey.INITIALIZE_SHARE_GROUP_STATE, Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.READ_SHARE_GROUP_STATE, Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.WRITE_SHARE_GROUP_STATE, Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.DELETE_SHARE_GROUP_STATE, Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ)),
        _api(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, Check("cluster", CLUSTER_ACTION, CLUSTER, CLUSTER_DENIED, REQ)),
    )
}


def entry_of(api_key: int) -> ApiAuthorization:
    """The API's entry; an API without one may not be served."""
    try:
        return TABLE[ApiKey(api_key)]
    except (KeyError, ValueError):
        raise LookupError(f"API key {api_key} has no entry in the authorization table") from None


def check(api_key: int, role: str) -> Check:
    """The check of `api_key` about the name in `role`, as a handler asks for it."""
    entry = entry_of(api_key)
    try:
        return entry.by_role[role]
    except KeyError:
        raise LookupError(f"{entry.api_key.name} has no authorization check {role!r}") from None
