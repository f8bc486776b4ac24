"""The authorization table (`pykbroker/handlers/authorization.py`) is the one place that says which
ACLs an API needs: every API the broker serves has an entry, no entry is left without its API, and
the broker refuses to serve an API whose entry is missing."""
from __future__ import annotations

import types

import pytest

from pykbroker.handlers import registry
from pykbroker.handlers.authorization import TABLE, OnDenial, check, entry_of
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


def test_only_apis_of_authentication_need_no_acl():
    needing_none = sorted(api.name for api, entry in TABLE.items() if not entry.checks)
    assert needing_none == ["API_VERSIONS", "SASL_AUTHENTICATE", "SASL_HANDSHAKE"]


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

