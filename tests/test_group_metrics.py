"""The group figures of `/metrics` for Kafka 4's group types, read from stand-ins of the group
coordinator: Kafka 4's `group-count` by protocol and `<protocol>-group-count` by state (the
GroupMetadataManager gauges keep counting classic groups only), consumer lag for classic and
consumer-protocol groups alike, and a share group's lag (the high watermark past the
share-partition start offset). The live endpoint is specified in test_metrics.py."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio
from prometheus_client.parser import text_string_to_metric_families

from pykbroker.coordinator.group.model import FetchedOffset, GroupOverview
from pykbroker.protocol.errors import ErrorCode
from pykbroker.replication.broker_topic_stats import BrokerTopicStats
from pykbroker.replication.replica_manager import PartitionSummary
from pykbroker.server.metrics import MetricsSources, collect, collect_with_share_groups, render
from pykbroker.server.request_metrics import RequestMetrics

OVERVIEWS = [
    GroupOverview("classic-stable", "consumer", "Stable"),
    GroupOverview("classic-empty", "consumer", "Empty"),
    GroupOverview("modern", "consumer", "Reconciling", "consumer"),
    GroupOverview("modern-stable", "consumer", "Stable", "consumer"),
    GroupOverview("shared", "share", "Stable", "share"),
    GroupOverview("shared-idle", "share", "Empty", "share"),
]
SUMMARIES = [
    PartitionSummary("orders", 0, True, False, 100, 10),
    PartitionSummary("orders", 1, True, False, 100, 4),
]


class Groups:
    """The group coordinator as the metrics read it."""

    def handle_list_groups(self, states=None, types=None):
        kept = [o for o in OVERVIEWS if not types or o.group_type in types]
        return ErrorCode.NONE, kept

    def handle_fetch_offsets(self, group_id, partitions, require_stable=False):
        committed = {"classic-stable": 7, "modern": 2}
        if group_id not in committed:
            return ErrorCode.NONE, {}
        return ErrorCode.NONE, {("orders", 0): FetchedOffset(committed[group_id])}


@dataclass(frozen=True)
class Partition:
    partition: int
    start_offset: int
    error: ErrorCode = ErrorCode.NONE


@dataclass(frozen=True)
class Topic:
    name: str
    partitions: list[Partition]


@dataclass(frozen=True)
class Offsets:
    error: ErrorCode = ErrorCode.NONE
    topics: list[Topic] = field(default_factory=list)


async def describe_share_group_offsets(group_id: str, topics: None) -> Offsets:
    if group_id == "shared":
        return Offsets(topics=[Topic("orders", [Partition(0, 6), Partition(1, -1), Partition(2, 0)])])
    return Offsets(ErrorCode.GROUP_ID_NOT_FOUND)


class Replicas:
    topic_stats = BrokerTopicStats()
    isr_shrinks = isr_expands = 0

    def partition_summaries(self):
        return SUMMARIES

    def offline_replica_count(self):
        return 0

    def replication_byte_rates(self):
        return 0.0, 0.0

    def offline_log_dir_count(self):
        return 0

    def alter_log_dirs_max_lag(self):
        return 0


class Metadata:
    def brokers(self):
        return []

    def topics(self):
        return {}


def sources(with_share_groups: bool = True) -> MetricsSources:
    return MetricsSources(
        replicas=Replicas(),
        groups=Groups(),
        metadata=Metadata(),
        requests=RequestMetrics(),
        is_active_controller=lambda: True,
        share_group_offsets=describe_share_group_offsets if with_share_groups else None,
    )


def scraped(families) -> dict:
    """{(sample name, sorted labels): value}, as a Prometheus parser reads the text."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(render(families))
        for s in family.samples
    }


def value(metrics: dict, name: str, **labels: str) -> float | None:
    return metrics.get((name, tuple(sorted(labels.items()))))


def test_group_count_by_protocol_and_each_types_count_by_state_are_kafka_4s() -> None:
    metrics = scraped(collect(sources()))
    prefix = "kafka_server_group_coordinator_metrics_"
    assert [value(metrics, prefix + "group_count", protocol=p) for p in ("classic", "consumer", "share")] == [2, 2, 2]
    assert value(metrics, prefix + "classic_group_count", state="Stable") == 1
    assert value(metrics, prefix + "classic_group_count", state="PreparingRebalance") == 0
    assert value(metrics, prefix + "consumer_group_count", state="Reconciling") == 1
    assert value(metrics, prefix + "consumer_group_count", state="Assigning") == 0
    assert value(metrics, prefix + "share_group_count", state="Empty") == 1
    assert value(metrics, prefix + "share_group_count", state="Dead") == 0


def test_the_group_metadata_manager_gauges_count_classic_groups_only() -> None:
    metrics = scraped(collect(sources()))
    assert value(metrics, "kafka_coordinator_group_groupmetadatamanager_numgroups") == 2
    assert value(metrics, "kafka_coordinator_group_groupmetadatamanager_numgroupsstable") == 1


def test_consumer_lag_covers_classic_and_consumer_protocol_groups() -> None:
    metrics = scraped(collect(sources()))
    for group, lag in (("classic-stable", 3), ("modern", 8)):
        labels = {"consumergroup": group, "topic": "orders", "partition": "0"}
        assert value(metrics, "kafka_consumergroup_lag", **labels) == lag
    assert not any(labels and dict(labels).get("consumergroup") == "shared" for _, labels in metrics)


def test_a_share_groups_lag_is_the_high_watermark_past_its_start_offset() -> None:
    metrics = scraped(anyio.run(collect_with_share_groups, sources()))
    labels = {"sharegroup": "shared", "topic": "orders", "partition": "0"}
    assert value(metrics, "kafka_sharegroup_start_offset", **labels) == 6
    assert value(metrics, "kafka_sharegroup_lag", **labels) == 4
    # a start offset not yet chosen, or a partition not hosted here, has no figure
    assert value(metrics, "kafka_sharegroup_lag", **{**labels, "partition": "1"}) is None
    assert value(metrics, "kafka_sharegroup_lag", **{**labels, "partition": "2"}) is None
    assert value(metrics, "kafka_sharegroup_lag_sum", sharegroup="shared", topic="orders") == 4


def test_without_share_groups_served_there_is_no_share_lag() -> None:
    metrics = scraped(anyio.run(collect_with_share_groups, sources(with_share_groups=False)))
    assert not any(name == "kafka_sharegroup_lag" for name, _ in metrics)


def test_a_live_share_groups_lag_follows_its_reset_start_offset(capsys) -> None:
    """Against a broker that serves share groups (skipped where it does not advertise
    ShareGroupDescribe): a share group reset to offset 2 of five records lags by 3."""
    import time
    import urllib.request
    import uuid

    import pytest

    from pykbroker import cli
    from pykbroker.testkit.embedded import EmbeddedBroker
    from pykbroker.testkit.wire import create_topic
    from pykbroker.tools.share_group_protocol import ShareGroupClient

    from .tools.test_share_groups_tool import SHARE_SETTINGS, heartbeat, produce

    settings = {**SHARE_SETTINGS, "pykbroker.metrics.listener": "http://127.0.0.1:0"}
    with EmbeddedBroker(settings) as broker:
        bootstrap = broker.bootstrap
        if not ShareGroupClient({"bootstrap.servers": bootstrap}, 10).serves_share_groups():
            pytest.skip("the broker does not advertise ShareGroupDescribe")
        create_topic(bootstrap, "share-lagging")
        produce(bootstrap, "share-lagging", 0, 5)
        member = str(uuid.uuid4())
        _, epoch, assigned = heartbeat(bootstrap, "share-laggards", member, 0, ["share-lagging"])
        deadline = time.monotonic() + 30
        while not assigned and time.monotonic() < deadline:
            time.sleep(0.1)
            _, epoch, assigned = heartbeat(bootstrap, "share-laggards", member, epoch, None)
        heartbeat(bootstrap, "share-laggards", member, -1, None)  # leaves: the group is empty
        status = cli.main([
            "share-groups", "--bootstrap-server", bootstrap, "--reset-offsets", "--group", "share-laggards",
            "--topic", "share-lagging", "--to-offset", "2", "--execute",
        ])  # fmt: skip
        assert status == 0, capsys.readouterr().err
        port = broker.broker.metrics_socket.getsockname()[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            families = list(text_string_to_metric_families(answer.read().decode()))
    metrics = {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}
    labels = {"sharegroup": "share-laggards", "topic": "share-lagging", "partition": "0"}
    assert value(metrics, "kafka_sharegroup_start_offset", **labels) == 2
    assert value(metrics, "kafka_sharegroup_lag", **labels) == 3
    assert value(metrics, "kafka_server_group_coordinator_metrics_share_group_count", state="Empty") == 1
