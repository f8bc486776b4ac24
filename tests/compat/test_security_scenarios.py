"""Acceptance: the compatibility suite's security scenarios (compat/security_scenarios.py: SASL
with SCRAM-SHA-512 over SASL_SSL and PLAIN over SASL_PLAINTEXT, mutual TLS with mapped
principals, the ACL authorizer) pass with every client on a secured pykbroker and on a Kafka
3.9.0 with the same settings, and docs/compatibility.md shows the results."""

from __future__ import annotations

from compat.drivers import PASS
from compat.security_clients import SECURITY_CLIENTS
from compat.security_scenarios import SECURITY_SCENARIOS
from compat.security_setup import secure_settings

from .test_client_scenarios import documented_tables

EVERY_ROW = {(client, scenario): PASS for client in SECURITY_CLIENTS for scenario in SECURITY_SCENARIOS}


def test_every_client_passes_every_security_scenario_on_pykbroker(security_rows):
    assert security_rows.statuses(0) == EVERY_ROW, security_rows.details()


def test_every_security_scenario_holds_on_kafka_itself(security_rows):
    assert security_rows.statuses(1) == EVERY_ROW, security_rows.details()


def test_no_security_scenario_that_passes_on_kafka_fails_on_pykbroker(security_rows):
    assert security_rows.regressions() == {}, security_rows.details()


def test_the_documented_security_table_is_the_suite_result(security_rows):
    assert documented_tables()[2] == security_rows.markdown()


def test_both_secured_brokers_run_with_the_same_security_settings(secure_pykbroker, secure_kafka):
    written = dict(
        line.split("=", 1)
        for line in secure_kafka.server_properties.read_text().split("\n")
        if "=" in line and not line.startswith("#")
    )
    kafka_settings = secure_settings(secure_kafka.ports, secure_kafka.pki)
    assert {key: written[key] for key in kafka_settings} == kafka_settings
    pykbroker_settings = secure_settings(secure_pykbroker.ports, secure_pykbroker.pki)
    assert {key: secure_pykbroker.overrides[key] for key in pykbroker_settings} == pykbroker_settings
