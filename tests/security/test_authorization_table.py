"""The authorization table (`pykbroker/handlers/support/authorization.py`) is the one place that says which
ACLs an API needs: every API the broker serves has an entry, no entry is left without its API, and
the broker refuses to serve an API whose entry is missing."""
from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import pytest

from pykbroker.handlers.support import registry
from pykbroker.handlers.support.authorization import TABLE, OnDenial, check, entry_of
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.security.acl import AclOperation, ResourceType


def served_api_keys() -> set[int]:
    return set(registry.build_registry(registry.default_modules()))


def test_every_api_the_broker_serves_has_an_authorization_entry():
    missing = [ApiKey(key).name for key in served_api_keys() if key not in TABLE]
    assert missing == []


def test_every_authorization_entry_belongs_to_an_api_the_broker_serves():
    stale = [api.name for api in TABLE if api not in served_api_keys()]
    assert stale == []


def test_an_api_without_an_entry_cannot_be_served(monkeypatch):
    handler = types.ModuleType("pykbroker.handlers.new_api")
    handler.API_KEY, handler.MIN_VERSION, handler.MAX_VERSION = ApiKey.DESCRIBE_QUORUM, 0, 0

    async def handle(request, ctx):
        return None

    handler.handle = handle
    with pytest.raises(LookupError, match="no entry in the authorization table"):
        registry.build_registry([handler])


def test_only_apis_of_authentication_and_of_ones_own_tokens_need_no_acl():
    """Renewing and expiring a delegation token ask no ACL in Kafka either: the token's owner or
    one of its renewers may, anybody else gets DELEGATION_TOKEN_OWNER_MISMATCH."""
    needing_none = sorted(api.name for api, entry in TABLE.items() if not entry.checks)
    assert needing_none == [
        "API_VERSIONS", "EXPIRE_DELEGATION_TOKEN", "RENEW_DELEGATION_TOKEN", "SASL_AUTHENTICATE", "SASL_HANDSHAKE",
    ]


def test_a_handler_asks_for_checks_by_role_and_an_unknown_role_is_an_error():
    produce_topic = check(ApiKey.PRODUCE, "topic")
    assert (produce_topic.operation, produce_topic.resource_type) == (AclOperation.WRITE, ResourceType.TOPIC)
    assert produce_topic.on_denial is OnDenial.REFUSE_RESOURCE
    with pytest.raises(LookupError, match="PRODUCE has no authorization check 'group'"):
        check(ApiKey.PRODUCE, "group")


def test_scram_credentials_need_alter_and_describe_on_the_cluster():
    alter = entry_of(ApiKey.ALTER_USER_SCRAM_CREDENTIALS).checks
    describe = entry_of(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS).checks
    assert [(c.operation, c.resource_type, c.denied.name) for c in alter] == [
        (AclOperation.ALTER, ResourceType.CLUSTER, "CLUSTER_AUTHORIZATION_FAILED")]
    assert [(c.operation, c.resource_type, c.denied.name) for c in describe] == [
        (AclOperation.DESCRIBE, ResourceType.CLUSTER, "CLUSTER_AUTHORIZATION_FAILED")]


HANDLERS_DIR = Path(registry.__file__).parent
AUTH_CALLS = {"authorize", "authorize_cluster", "filter_authorized", "authorize_by_resource_type"}
# the table itself (its checks call auth.py) and auth.py, which asks the authorizer
ASKING_THE_AUTHORIZER = {"authorization.py", "auth.py"}


def direct_authorizer_questions(source: str) -> list[str]:
    """The places where `source` imports or calls auth.py's questions itself: `from .auth import
    authorize`, `authorize(...)` and `auth.authorize(...)`, and so on for each of AUTH_CALLS."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "auth":
            found += [f"line {node.lineno}: imports {a.name}" for a in node.names if a.name in AUTH_CALLS]
        elif isinstance(node, ast.Call):
            called = node.func
            if isinstance(called, ast.Name) and called.id in AUTH_CALLS:
                found.append(f"line {node.lineno}: calls {called.id}")
            elif (
                isinstance(called, ast.Attribute)
                and called.attr in AUTH_CALLS
                and isinstance(called.value, ast.Name)
                and called.value.id == "auth"
            ):
                found.append(f"line {node.lineno}: calls auth.{called.attr}")
    return found


def test_the_scan_finds_direct_questions_to_the_authorizer():
    source = (
        "from .auth import READ, authorize_cluster\n"
        "from . import auth\n"
        "authorize(ctx, READ, GROUP, g)\n"
        "auth.filter_authorized(ctx, READ, TOPIC, names)\n"
        "READ_GROUP.allows(ctx, g)\n"
    )
    assert direct_authorizer_questions(source) == [
        "line 1: imports authorize_cluster",
        "line 3: calls authorize",
        "line 4: calls auth.filter_authorized",
    ]


def test_handlers_ask_the_authorizer_only_through_the_authorization_table():
    asking = {
        path.name: found
        for path in sorted(HANDLERS_DIR.glob("*.py"))
        if path.name not in ASKING_THE_AUTHORIZER
        and (found := direct_authorizer_questions(path.read_text(encoding="utf-8")))
    }
    assert asking == {}


def roles_asked_by(source: str) -> set[str]:
    return set(re.findall(r"""\bcheck\(\s*API_KEY\s*,\s*["']([a-z_]+)["']\s*\)""", source))


def test_each_handler_asks_every_check_of_its_entry_by_role():
    # No role is exempt: helpers shared by several handlers (offset_requests.split_known_partitions,
    # config_admin.config_authorization_error) are given the handler's own checks.
    missing, unknown = {}, {}
    for module in registry.default_modules():
        entry = entry_of(module.API_KEY)
        asked = roles_asked_by(Path(module.__file__).read_text(encoding="utf-8"))
        if set(entry.by_role) - asked:
            missing[module.__name__] = sorted(set(entry.by_role) - asked)
        if asked - set(entry.by_role):
            unknown[module.__name__] = sorted(asked - set(entry.by_role))
    assert missing == {}
    assert unknown == {}
