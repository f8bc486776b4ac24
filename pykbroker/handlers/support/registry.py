"""The table of request handlers: which module serves which API, in which versions.

Every module of `pykbroker/handlers/` (outside this `support/` sub-room) serves one Kafka API and
is named after it; `API_MODULES` lists them, in API key order, and nothing else is registered.
A handler module declares `API_KEY`, `MIN_VERSION`, `MAX_VERSION` (the versions it fully handles;
only these are advertised in ApiVersions) and `async def handle(request: XRequest, ctx: RequestContext)
-> XResponse` (`XResponse | None` when no response may be due), with the message classes of
`protocol/message_types`.
An API is served only when the authorization table (`authorization.py`) has its entry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Generic, TypeVar

from ...protocol import messages
from .authorization import entry_of
from .context import RequestContext

_Request = TypeVar("_Request")
_Response = TypeVar("_Response")

# A handler: the request (as its message class) and its context in, the response out (None: none is due).
Handler = Callable[[_Request, RequestContext], Awaitable[_Response | None]]


@dataclass(frozen=True)
class HandlerEntry(Generic[_Request, _Response]):
    """One API's handler, with the versions it serves and the codecs of its messages."""

    api_key: int
    min_version: int
    max_version: int
    handle: Handler[_Request, _Response]
    request_type: messages.MessageType[_Request]
    response_type: messages.MessageType[_Response]

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


def entry_for(module: ModuleType) -> HandlerEntry[Any, Any]:
    entry_of(module.API_KEY)  # raises LookupError: no API is served before its ACLs are written down
    request_type = messages.request(module.API_KEY)
    response_type = messages.response(module.API_KEY)
    for version in (module.MIN_VERSION, module.MAX_VERSION):
        if version not in request_type.versions:
            raise ValueError(
                f"{module.__name__} claims {request_type.name} v{version}, which the schema does not define"
            )
    return HandlerEntry(
        module.API_KEY, module.MIN_VERSION, module.MAX_VERSION, module.handle, request_type, response_type
    )


def build_registry(modules: list[ModuleType]) -> dict[int, HandlerEntry[Any, Any]]:
    return {int(module.API_KEY): entry_for(module) for module in modules}


# The API modules of `pykbroker/handlers/`, by API key.
API_MODULES = (
    "produce",  # 0
    "fetch",  # 1
    "list_offsets",  # 2
    "metadata",  # 3
    "controlled_shutdown",  # 7
    "offset_commit",  # 8
    "offset_fetch",  # 9
    "find_coordinator",  # 10
    "join_group",  # 11
    "heartbeat",  # 12
    "leave_group",  # 13
    "sync_group",  # 14
    "describe_groups",  # 15
    "list_groups",  # 16
    "sasl_handshake",  # 17
    "api_versions",  # 18
    "create_topics",  # 19
    "delete_topics",  # 20
    "delete_records",  # 21
    "init_producer_id",  # 22
    "offset_for_leader_epoch",  # 23
    "add_partitions_to_txn",  # 24
    "add_offsets_to_txn",  # 25
    "end_txn",  # 26
    "write_txn_markers",  # 27
    "txn_offset_commit",  # 28
    "describe_acls",  # 29
    "create_acls",  # 30
    "delete_acls",  # 31
    "describe_configs",  # 32
    "alter_configs",  # 33
    "alter_replica_log_dirs",  # 34
    "describe_log_dirs",  # 35
    "sasl_authenticate",  # 36
    "create_partitions",  # 37
    "create_delegation_token",  # 38
    "renew_delegation_token",  # 39
    "expire_delegation_token",  # 40
    "describe_delegation_token",  # 41
    "delete_groups",  # 42
    "elect_leaders",  # 43
    "incremental_alter_configs",  # 44
    "alter_partition_reassignments",  # 45
    "list_partition_reassignments",  # 46
    "offset_delete",  # 47
    "describe_client_quotas",  # 48
    "alter_client_quotas",  # 49
    "describe_user_scram_credentials",  # 50
    "alter_user_scram_credentials",  # 51
    "update_features",  # 57
    "describe_cluster",  # 60
    "describe_producers",  # 61
    "describe_transactions",  # 65
    "list_transactions",  # 66
    "consumer_group_heartbeat",  # 68
    "consumer_group_describe",  # 69
    "share_group_heartbeat",  # 76
    "share_group_describe",  # 77
    "share_fetch",  # 78
    "share_acknowledge",  # 79
    "initialize_share_group_state",  # 83
    "read_share_group_state",  # 84
    "write_share_group_state",  # 85
    "delete_share_group_state",  # 86
    "read_share_group_state_summary",  # 87
    "describe_share_group_offsets",  # 90
    "alter_share_group_offsets",  # 91
    "delete_share_group_offsets",  # 92
)


def default_modules() -> list[ModuleType]:
    """The handler module of every API this broker serves (`API_MODULES`), imported."""
    import importlib

    return [importlib.import_module(f"pykbroker.handlers.{name}") for name in API_MODULES]
