"""Acceptance: every API pykbroker advertises authorizes as Kafka 3.9.0 does. The authorization
matrix (`compat/authorization_matrix.py`) sends each API's requests to both secured brokers as a
caller with no ACLs, with exactly the ACLs pykbroker's authorization table names (as ALLOW, as
DENY beside an ALLOW of everything, as a prefixed and as a wildcard ALLOW), as the super user and
before authentication; the answers (error codes, messages, what is listed or revealed) must be
Kafka's but for the differences accepted in compat/differences.py's MATRIX_ACCEPTED. The table
of outcomes is docs/security.md's."""
from __future__ import annotations

import re
import uuid
from pathlib import Path

from compat import authorization_matrix
from compat.authorization_matrix import MODES, Setup, cells, outcome
from compat.differences import MATRIX_ACCEPTED, accepted_reason
from pykbroker.cluster.features import SHARE_API_KEYS
from pykbroker.handlers.support import registry
from pykbroker.handlers.support.authorization import TABLE
from pykbroker.protocol.api_keys import ApiKey

SECURITY_DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
ALL_CELLS = cells(Setup(0, uuid.UUID(int=0)))
# Kafka 4's, off by default and unknown to Kafka 3.9.0 (the share group APIs, served with share.version;
# the GROUP config resource): tests/test_share_groups.py covers their authorization.
CONFIG_APIS = (ApiKey.DESCRIBE_CONFIGS, ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS)
KAFKA_4_ONLY = {(ApiKey(key), role) for key in SHARE_API_KEYS for role in ("group", "topic")} | {
    (api, "group") for api in CONFIG_APIS}


def test_every_api_pykbroker_advertises_is_in_the_matrix():
    served = set(registry.build_registry(registry.default_modules())) - SHARE_API_KEYS
    assert sorted(ApiKey(k).name for k in served - {c.api_key for c in ALL_CELLS}) == []


def test_every_check_of_the_authorization_table_is_granted_by_some_request():
    granted = {(cell.api_key, role) for cell in ALL_CELLS for role in cell.roles}
    missing = [f"{api.name} {role}" for api, entry in TABLE.items() for role in entry.by_role
               if (api, role) not in granted and (api, role) not in KAFKA_4_ONLY]
    assert missing == []


def test_pykbroker_authorizes_every_api_as_kafka_does_but_for_accepted_differences(authorization_matrix_run):
    unaccepted = [str(d) for d in authorization_matrix_run.found if accepted_reason(d, MATRIX_ACCEPTED) is None]
    assert unaccepted == [], "authorization differences from Kafka 3.9.0 not accepted in " \
        "compat/differences.py's MATRIX_ACCEPTED:\n" + "\n".join(unaccepted)


def test_every_accepted_difference_of_the_matrix_is_still_seen(authorization_matrix_run):
    stale = [entry.pattern for entry in MATRIX_ACCEPTED
             if not any(accepted_reason(d, [entry]) for d in authorization_matrix_run.found)]
    assert stale == [], "accepted matrix differences no longer found (remove them): " + repr(stale)


def test_before_authentication_only_api_versions_and_the_sasl_handshake_are_answered(authorization_matrix_run):
    answered = {label for label, answers in authorization_matrix_run.pykbroker.items()
                if answers["anonymous"] != authorization_matrix.CLOSED}
    assert answered == {"api versions", "sasl handshake"}


def test_a_super_user_is_refused_nothing(authorization_matrix_run):
    refused = {label: outcome(answers["super"]) for label, answers in authorization_matrix_run.pykbroker.items()
               if "denied" in outcome(answers["super"])}
    assert refused == {}


def test_the_matrix_in_the_security_guide_is_the_one_measured(authorization_matrix_run):
    documented = re.search(r"<!-- authorization-matrix -->\n(.*?)\n<!-- /authorization-matrix -->",
                           SECURITY_DOC.read_text(), re.S)
    assert documented, "docs/security.md has no authorization matrix"
    measured = authorization_matrix.markdown(authorization_matrix_run.pykbroker, authorization_matrix_run.kafka)
    assert documented.group(1) == measured


def test_a_caller_holds_exactly_the_acls_of_its_mode():
    produce = next(cell for cell in ALL_CELLS if cell.label == "produce")
    exact, deny = authorization_matrix.acls_for(produce, "exact"), authorization_matrix.acls_for(produce, "deny")
    assert [(a.name, a.pattern.name, a.operation.name, a.permission.name) for a in exact] == [
        ("mx-topic", "LITERAL", "WRITE", "ALLOW")]
    assert ("mx-topic", "LITERAL", "WRITE", "DENY") in [
        (a.name, a.pattern.name, a.operation.name, a.permission.name) for a in deny]
    assert authorization_matrix.acls_for(produce, "none") == [] and MODES[-1] == "anonymous"
