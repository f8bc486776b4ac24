"""The metrics of a cluster: one active controller, and once a broker dies, the ISR shrinks, the
under-replicated partitions and the offline partitions its leader and the controller report."""

from __future__ import annotations

import re
import urllib.request

from confluent_kafka.admin import AdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

CLUSTER_OPTIONS = {"size": 2, "overrides": {"pykbroker.metrics.listener": "http://127.0.0.1:0"}}
_SERVED = re.compile(r"Metrics and health served on (http://[\d.]+:\d+)")


def scrape(cluster, broker_id: int) -> dict[str, float]:
    """{sample name: value} of the samples without labels that a broker serves."""
    endpoint = _SERVED.findall(cluster.brokers[broker_id].log_text())[-1]
    with urllib.request.urlopen(f"{endpoint}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples if not s.labels}


def test_only_the_active_controller_counts_itself(cluster):
    controller = cluster.controller_id()
    counts = {b: scrape(cluster, b)["kafka_controller_kafkacontroller_activecontrollercount"] for b in cluster.brokers}
    assert counts == {b: (1 if b == controller else 0) for b in cluster.brokers}


def test_a_dead_follower_shrinks_the_isr_and_a_dead_sole_replica_takes_its_partition_offline(cluster):
    controller = cluster.controller_id()
    other = next(b for b in cluster.brokers if b != controller)
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    futures = admin.create_topics(
        [
            NewTopic("mirrored", 1, replica_assignment=[[controller, other]]),
            NewTopic("alone", 1, replica_assignment=[[other]]),
        ]
    )
    for future in futures.values():
        future.result(timeout=15)
    cluster.wait_until(lambda: cluster.isr("mirrored", 0) == [controller, other], what="a full ISR")

    def settled():
        """Every partition fully replicated in the controller's own view, which follows the
        metadata a moment after ZooKeeper's."""
        metrics = scrape(cluster, controller)
        return (
            metrics["kafka_server_replicamanager_underreplicatedpartitions"] == 0
            and metrics["kafka_controller_kafkacontroller_offlinepartitionscount"] == 0
        )

    cluster.wait_until(settled, what="no under-replicated or offline partition reported")
    before = scrape(cluster, controller)

    cluster.kill(other)

    def reported():
        metrics = scrape(cluster, controller)
        return (
            metrics["kafka_server_replicamanager_isrshrinks_total"]
            > before["kafka_server_replicamanager_isrshrinks_total"]
            and metrics["kafka_server_replicamanager_underreplicatedpartitions"] >= 1
            and metrics["kafka_controller_kafkacontroller_offlinepartitionscount"] >= 1
        ) or None

    cluster.wait_until(reported, what="the shrink and the offline partition reported")
