"""`pykbroker.metrics.listener`: a broker serving `/metrics` (Prometheus text, Kafka's metric names
as the JMX exporter gives them) and `/health`, checked over HTTP with a Prometheus parser."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request

import pytest
from confluent_kafka import Consumer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.records.records import build_batch
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.wire import WireClient

from .client_helpers import create_topic, fetch, produce_batch

Metadata = messages.request(ApiKey.METADATA).cls
_SERVED = re.compile(r"Metrics and health served on (http://[\d.]+:\d+)")

FAMILIES = [
    "kafka_server_brokertopicmetrics_bytesin",
    "kafka_server_brokertopicmetrics_bytesout",
    "kafka_server_brokertopicmetrics_messagesin",
    "kafka_server_brokertopicmetrics_totalproducerequests",
    "kafka_server_brokertopicmetrics_totalfetchrequests",
    "kafka_network_requestmetrics_requests",
    "kafka_network_requestmetrics_totaltimems",
    "kafka_server_replicamanager_underreplicatedpartitions",
    "kafka_server_replicamanager_isrshrinks",
    "kafka_server_replicamanager_isrexpands",
    "kafka_controller_kafkacontroller_offlinepartitionscount",
    "kafka_controller_kafkacontroller_activecontrollercount",
    "kafka_coordinator_group_groupmetadatamanager_numgroups",
    "kafka_coordinator_group_groupmetadatamanager_numgroupsstable",
    "kafka_coordinator_group_groupmetadatamanager_numgroupsempty",
    "kafka_coordinator_group_groupmetadatamanager_numgroupspreparingrebalance",
    "kafka_coordinator_group_groupmetadatamanager_numgroupscompletingrebalance",
    "kafka_coordinator_group_groupmetadatamanager_numgroupsdead",
    "kafka_server_group_coordinator_metrics_group_count",
    "kafka_server_group_coordinator_metrics_consumer_group_count",
    "kafka_server_group_coordinator_metrics_share_group_count",
    "kafka_log_log_size",
    "kafka_consumergroup_lag",
    "kafka_consumergroup_current_offset",
]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    overrides = {"pykbroker.metrics.listener": "http://127.0.0.1:0"}
    with BrokerProcess(tmp_path_factory.mktemp("metrics"), overrides) as running:
        yield running


@pytest.fixture(scope="module")
def endpoint(broker) -> str:
    match = _SERVED.search(broker.log_text())
    assert match, broker.log_text()
    return match.group(1)


def get(url: str) -> tuple[int, str, str]:
    """(status, content type, body) of a GET, error statuses included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.headers["Content-Type"], answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["Content-Type"], error.read().decode()


def scrape(endpoint: str) -> dict:
    """{(sample name, sorted labels): value} as a Prometheus parser reads /metrics."""
    status, _, text = get(f"{endpoint}/metrics")
    assert status == 200
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def sample(metrics: dict, name: str, **labels) -> float:
    """A sample's value (0 when absent: a counter not counted yet)."""
    return metrics.get((name, tuple(sorted(labels.items()))), 0)


def test_metrics_are_prometheus_text_that_a_prometheus_parser_accepts(endpoint):
    status, content_type, text = get(f"{endpoint}/metrics")
    assert status == 200
    assert content_type == "text/plain; version=0.0.4; charset=utf-8"
    parsed = {family.name for family in text_string_to_metric_families(text)}
    assert set(FAMILIES) <= parsed


def test_bytes_in_grows_by_exactly_the_batch_bytes_produced(broker, endpoint):
    create_topic(broker.bootstrap, "metered")
    batch = build_batch([(b"k", b"v" * 100), (None, b"second"), (b"k3", None)])
    before = scrape(endpoint)
    with WireClient(broker.bootstrap) as client:
        assert produce_batch(client, "metered", batch).error_code == 0
    after = scrape(endpoint)
    for labels in ({"topic": "metered"}, {}):
        grew = sample(after, "kafka_server_brokertopicmetrics_bytesin_total", **labels) - sample(
            before, "kafka_server_brokertopicmetrics_bytesin_total", **labels
        )
        assert grew == len(batch)
        messages_grew = sample(after, "kafka_server_brokertopicmetrics_messagesin_total", **labels) - sample(
            before, "kafka_server_brokertopicmetrics_messagesin_total", **labels
        )
        assert messages_grew == 3
    assert sample(after, "kafka_log_log_size", topic="metered", partition="0") == len(batch)


def test_bytes_out_counts_the_record_bytes_a_consumer_fetched(broker, endpoint):
    create_topic(broker.bootstrap, "read-out")
    with WireClient(broker.bootstrap) as client:
        produce_batch(client, "read-out", build_batch([(b"a", b"1"), (b"b", b"2")]))
    before = scrape(endpoint)
    fetched = fetch(broker.bootstrap, "read-out", 0)
    after = scrape(endpoint)
    name = "kafka_server_brokertopicmetrics_bytesout_total"
    assert len(fetched.records) > 0
    assert sample(after, name, topic="read-out") - sample(before, name, topic="read-out") == len(fetched.records)


def test_each_answered_request_counts_once_with_its_latency(broker, endpoint):
    before = scrape(endpoint)
    with WireClient(broker.bootstrap) as client:
        client.request(ApiKey.METADATA, 9, Metadata(topics=[], allow_auto_topic_creation=False))
    after = scrape(endpoint)
    count = "kafka_network_requestmetrics_totaltimems_count"
    assert sample(after, count, request="Metadata") - sample(before, count, request="Metadata") == 1
    requests = "kafka_network_requestmetrics_requests_total"
    grew = sample(after, requests, request="Metadata", version="9") - sample(
        before, requests, request="Metadata", version="9"
    )
    assert grew == 1
    assert sample(after, "kafka_network_requestmetrics_totaltimems_sum", request="Metadata") > 0
    quantiles = {
        labels
        for name, labels in after
        if name == "kafka_network_requestmetrics_totaltimems" and ("request", "Metadata") in labels
    }
    assert {dict(labels)["quantile"] for labels in quantiles} == {"0.50", "0.75", "0.95", "0.98", "0.99", "0.999"}


def test_a_fetch_counts_as_fetch_and_as_fetch_consumer(broker, endpoint):
    create_topic(broker.bootstrap, "fetched-names")
    before = scrape(endpoint)
    fetch(broker.bootstrap, "fetched-names", 0)
    after = scrape(endpoint)
    count = "kafka_network_requestmetrics_totaltimems_count"
    for name in ("Fetch", "FetchConsumer"):
        assert sample(after, count, request=name) - sample(before, count, request=name) == 1
    assert sample(after, count, request="FetchFollower") == 0


def test_consumer_lag_per_group_and_partition_is_the_high_watermark_minus_the_committed_offset(broker, endpoint):
    create_topic(broker.bootstrap, "lagging", partitions=2)
    with WireClient(broker.bootstrap) as client:
        produce_batch(client, "lagging", build_batch([(None, str(i)) for i in range(5)]), partition=0)
        produce_batch(client, "lagging", build_batch([(None, str(i)) for i in range(4)]), partition=1)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "laggards", "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition("lagging", 0, 2), TopicPartition("lagging", 1, 4)], asynchronous=False)
    finally:
        consumer.close()
    metrics = scrape(endpoint)
    group = {"consumergroup": "laggards", "topic": "lagging"}
    assert sample(metrics, "kafka_consumergroup_lag", partition="0", **group) == 3
    assert sample(metrics, "kafka_consumergroup_lag", partition="1", **group) == 0
    assert sample(metrics, "kafka_consumergroup_current_offset", partition="0", **group) == 2
    assert sample(metrics, "kafka_consumergroup_lag_sum", **group) == 3
    assert sample(metrics, "kafka_coordinator_group_groupmetadatamanager_numgroupsempty") >= 1
    assert sample(metrics, "kafka_coordinator_group_groupmetadatamanager_numgroups") >= 1


def test_a_single_broker_is_the_active_controller_with_every_partition_in_sync(endpoint):
    metrics = scrape(endpoint)
    assert sample(metrics, "kafka_controller_kafkacontroller_activecontrollercount") == 1
    assert sample(metrics, "kafka_controller_kafkacontroller_offlinepartitionscount") == 0
    assert sample(metrics, "kafka_server_replicamanager_underreplicatedpartitions") == 0


def test_health_answers_200_with_its_status_once_the_broker_serves(broker, endpoint):
    status, content_type, body = get(f"{endpoint}/health")
    assert (status, content_type) == (200, "application/json")
    health = json.loads(body)
    assert health["status"] == "UP"
    assert f"PLAINTEXT://{broker.bootstrap}" in health["listeners"]


def test_other_paths_are_not_found(endpoint):
    assert get(f"{endpoint}/")[0] == 404


def test_an_invalid_metrics_listener_stops_the_broker_at_start_naming_the_key(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pykbroker",
            "--override",
            f"log.dirs={tmp_path}",
            "--override",
            "listeners=PLAINTEXT://127.0.0.1:0",
            "--override",
            "pykbroker.metrics.listener=9404",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "Invalid value 9404 for configuration pykbroker.metrics.listener" in result.stderr
    assert "http://host:port" in result.stderr
