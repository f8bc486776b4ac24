"""Acceptance: the cluster scenarios (compat/cluster_scenarios.py: three brokers, replication
factor 3, acks=all, a killed leader under an idempotent producer) pass on three pykbrokers and on
three Kafka 3.9.0 brokers with the same settings, and docs/compatibility.md shows the results."""
from __future__ import annotations

from compat.cluster_scenarios import CLUSTER_SCENARIOS
from compat.drivers import PASS
from compat.realkafka import CLUSTER_SETTINGS

from .test_client_scenarios import documented_tables


def test_every_cluster_scenario_passes_on_pykbroker(cluster_rows):
    assert cluster_rows.statuses(0) == {("confluent-kafka", s): PASS for s in CLUSTER_SCENARIOS}, \
        cluster_rows.details()


def test_every_cluster_scenario_holds_on_kafka_itself(cluster_rows):
    assert cluster_rows.statuses(1) == {("confluent-kafka", s): PASS for s in CLUSTER_SCENARIOS}, \
        cluster_rows.details()


def test_the_documented_cluster_table_is_the_suite_result(cluster_rows):
    assert documented_tables()[1] == cluster_rows.markdown()


def test_pykbrokers_run_with_the_settings_cluster_sh_gives_kafka(real_kafka_cluster):
    for broker_id in real_kafka_cluster.ids:
        text = real_kafka_cluster.server_properties(broker_id).read_text()
        written = dict(line.split("=", 1) for line in text.split("\n")
                       if "=" in line and not line.startswith("#"))
        set_up = {"broker.id", "listeners", "advertised.listeners", "log.dirs",
                  "zookeeper.connect"}
        assert {k: v for k, v in written.items() if k not in set_up} == CLUSTER_SETTINGS
