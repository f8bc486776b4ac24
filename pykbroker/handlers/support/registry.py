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

import importlib
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, Generic, TypeVar

from ...protocol import messages
from .authorization import entry_of
from .context import RequestContext

_Request = TypeVar("_Request")
_Response = TypeVar("_Response")

# A handler: the request (as its message class) and its context in, the response out (None: none is due).
Handler = Callable[[_Request, RequestContext], Awaitable[_Response | None]]


class HandlerEntry(Generic[_Request, _Response]):
    """One API's handler, with the versions it serves and the codecs of its messages.

    An entry made by `deferred` names its module instead of holding its handler: the module (and
    the classes of its messages) is imported when the first request of that API arrives. That
    import runs on the event loop, once, and takes milliseconds; a broker that imported every
    API's module at start would hold megabytes of code that most clients never call.
    """

    def __init__(
        self,
        api_key: int,
        min_version: int,
        max_version: int,
        handle: Handler[_Request, _Response] | None,
        request_type: messages.MessageType[_Request] | None = None,
        response_type: messages.MessageType[_Response] | None = None,
        module_name: str = "",
    ) -> None:
        self.api_key = api_key
        self.min_version = min_version
        self.max_version = max_version
        self._handle = handle
        self._request_type = request_type
        self._response_type = response_type
        self.module_name = module_name

    @classmethod
    def deferred(cls, api_key: int, min_version: int, max_version: int, module_name: str) -> HandlerEntry[Any, Any]:
        entry_of(api_key)  # raises LookupError: no API is served before its ACLs are written down
        return HandlerEntry(api_key, min_version, max_version, None, module_name=module_name)

    @property
    def handle(self) -> Handler[_Request, _Response]:
        if self._handle is None:
            handle: Handler[_Request, _Response] = importlib.import_module(self.module_name).handle
            self._handle = handle
        return self._handle

    @property
    def request_type(self) -> messages.MessageType[_Request]:
        if self._request_type is None:
            self._request_type = messages.request(self.api_key)
        return self._request_type

    @property
    def response_type(self) -> messages.MessageType[_Response]:
        if self._response_type is None:
            self._response_type = messages.response(self.api_key)
        return self._response_type

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


# What each API module declares (API_KEY, MIN_VERSION, MAX_VERSION), written down so that a broker
# advertises its APIs without importing their modules (tests/test_handlers_room.py checks that
# this table and the modules agree).
API_VERSIONS: dict[str, tuple[int, int, int]] = {
    "produce": (0, 0, 11),
    "fetch": (1, 0, 17),
    "list_offsets": (2, 0, 9),
    "metadata": (3, 0, 12),
    "controlled_shutdown": (7, 0, 3),
    "offset_commit": (8, 0, 9),
    "offset_fetch": (9, 0, 9),
    "find_coordinator": (10, 0, 6),
    "join_group": (11, 0, 9),
    "heartbeat": (12, 0, 4),
    "leave_group": (13, 0, 5),
    "sync_group": (14, 0, 5),
    "describe_groups": (15, 0, 5),
    "list_groups": (16, 0, 5),
    "sasl_handshake": (17, 0, 1),
    "api_versions": (18, 0, 4),
    "create_topics": (19, 0, 7),
    "delete_topics": (20, 0, 6),
    "delete_records": (21, 0, 2),
    "init_producer_id": (22, 0, 5),
    "offset_for_leader_epoch": (23, 0, 4),
    "add_partitions_to_txn": (24, 0, 5),
    "add_offsets_to_txn": (25, 0, 4),
    "end_txn": (26, 0, 4),
    "write_txn_markers": (27, 0, 1),
    "txn_offset_commit": (28, 0, 4),
    "describe_acls": (29, 0, 3),
    "create_acls": (30, 0, 3),
    "delete_acls": (31, 0, 3),
    "describe_configs": (32, 0, 4),
    "alter_configs": (33, 0, 2),
    "alter_replica_log_dirs": (34, 0, 2),
    "describe_log_dirs": (35, 0, 4),
    "sasl_authenticate": (36, 0, 2),
    "create_partitions": (37, 0, 3),
    "create_delegation_token": (38, 0, 3),
    "renew_delegation_token": (39, 0, 2),
    "expire_delegation_token": (40, 0, 2),
    "describe_delegation_token": (41, 0, 3),
    "delete_groups": (42, 0, 2),
    "elect_leaders": (43, 0, 2),
    "incremental_alter_configs": (44, 0, 1),
    "alter_partition_reassignments": (45, 0, 0),
    "list_partition_reassignments": (46, 0, 0),
    "offset_delete": (47, 0, 0),
    "describe_client_quotas": (48, 0, 1),
    "alter_client_quotas": (49, 0, 1),
    "describe_user_scram_credentials": (50, 0, 0),
    "alter_user_scram_credentials": (51, 0, 0),
    "update_features": (57, 0, 1),
    "describe_cluster": (60, 0, 1),
    "describe_producers": (61, 0, 0),
    "describe_transactions": (65, 0, 0),
    "list_transactions": (66, 0, 1),
    "consumer_group_heartbeat": (68, 0, 1),
    "consumer_group_describe": (69, 0, 1),
    "share_group_heartbeat": (76, 1, 1),
    "share_group_describe": (77, 1, 1),
    "share_fetch": (78, 1, 1),
    "share_acknowledge": (79, 1, 1),
    "initialize_share_group_state": (83, 0, 0),
    "read_share_group_state": (84, 0, 0),
    "write_share_group_state": (85, 0, 0),
    "delete_share_group_state": (86, 0, 0),
    "read_share_group_state_summary": (87, 0, 0),
    "describe_share_group_offsets": (90, 0, 0),
    "alter_share_group_offsets": (91, 0, 0),
    "delete_share_group_offsets": (92, 0, 0),
}


def deferred_registry() -> dict[int, HandlerEntry[Any, Any]]:
    """The registry a broker serves from: every API of `API_MODULES`, its module imported on the
    first request of that API."""
    entries = (HandlerEntry.deferred(*API_VERSIONS[name], f"pykbroker.handlers.{name}") for name in API_MODULES)
    return {entry.api_key: entry for entry in entries}


def default_modules() -> list[ModuleType]:
    """The handler module of every API this broker serves (`API_MODULES`), imported."""
    return [importlib.import_module(f"pykbroker.handlers.{name}") for name in API_MODULES]
