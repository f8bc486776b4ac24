"""The tools reach a secured cluster through `--command-config`, Kafka's client properties file:
SCRAM-SHA-512 over SASL_SSL with the test CA as a PEM trust store."""

from __future__ import annotations

import pytest

from tests.security.certs import Pki
from tests.security.sasl_support import java_properties, sasl_broker

from .conftest import fresh


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("tools-pki"))
    with sasl_broker(tmp_path_factory.mktemp("tools-sasl"), pki=pki) as running:
        yield running


def properties(tmp_path, name: str, lines: list[str]) -> str:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_a_scram_user_made_with_configs_then_uses_topics_over_sasl_ssl(secured, pykbroker, tmp_path):
    admin = properties(
        tmp_path, "admin.properties", java_properties(secured.sasl_bootstrap, "PLAIN", "admin", "admin-secret")
    )
    user = fresh("tools-user")
    made = pykbroker(
        "configs",
        "--bootstrap-server",
        secured.sasl_bootstrap,
        "--command-config",
        admin,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        user,
        "--add-config",
        "SCRAM-SHA-512=[iterations=8192,password=tool-secret]",
    )
    assert (made.status, made.out, made.err) == (0, f"Completed updating config for user {user}.\n", "")

    scram = properties(
        tmp_path,
        "scram.properties",
        java_properties(secured.bootstrap_of("SASL_SSL"), "SCRAM-SHA-512", user, "tool-secret", "SASL_SSL", secured.ca),
    )
    topic = fresh("secured")
    common = ("topics", "--bootstrap-server", secured.bootstrap_of("SASL_SSL"), "--command-config", scram)
    assert pykbroker(*common, "--create", "--topic", topic, "--partitions", "2").out == f"Created topic {topic}.\n"
    described = pykbroker(*common, "--describe", "--topic", topic)
    assert described.status == 0
    assert described.out.splitlines()[0].startswith(f"Topic: {topic}\tTopicId: ")
    assert len(described.out.splitlines()) == 3


def test_a_wrong_password_fails_at_once_in_one_line_with_exit_status_1(secured, pykbroker, tmp_path):
    lines = java_properties(
        secured.bootstrap_of("SASL_SSL"), "SCRAM-SHA-512", "nobody", "wrong", "SASL_SSL", secured.ca
    )
    wrong = properties(tmp_path, "wrong.properties", [*lines, "default.api.timeout.ms=20000"])
    refused = pykbroker(
        "topics", "--bootstrap-server", secured.bootstrap_of("SASL_SSL"), "--command-config", wrong, "--list"
    )
    assert refused.status == 1
    assert refused.err.startswith("Error while executing topic command : ")
    assert "SASL authentication error: Authentication failed" in refused.err
    assert len(refused.err.splitlines()) == 1
