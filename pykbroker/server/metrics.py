"""The broker's metrics in Prometheus' text format (0.0.4), under the names Kafka's dashboards know.

Kafka publishes its metrics as JMX MBeans; Prometheus reads them through the JMX exporter, whose
Kafka rules (the exporter's `example_configs/kafka-2_0_0.yml`, which Strimzi's `kafka-metrics.yaml`
also follows, with `lowercaseOutputName: true`) name them:

    kafka.server:type=BrokerTopicMetrics,name=BytesInPerSec[,topic=t]    (a meter's Count)
        kafka_server_brokertopicmetrics_bytesin_total[{topic="t"}]
    kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions      (a gauge's Value)
        kafka_server_replicamanager_underreplicatedpartitions
    kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Produce   (a histogram)
        kafka_network_requestmetrics_totaltimems{request="Produce",quantile="0.99"}, _count, _sum
    kafka.coordinator.group:type=GroupMetadataManager,name=NumGroupsStable
        kafka_coordinator_group_groupmetadatamanager_numgroupsstable
    kafka.log:type=Log,name=Size,topic=t,partition=0
        kafka_log_log_size{topic="t",partition="0"}

Consumer lag is no broker metric in Kafka; it is reported here under kafka_exporter's names
(`kafka_consumergroup_lag{consumergroup,topic,partition}`), computed when scraped.

Everything is read when `/metrics` is asked for (`collect`), from what the rooms already keep:
the replica manager's counters and partitions, the request counts, the group coordinator's groups
and committed offsets, the metadata. The rooms are reached through the narrow protocols below.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..protocol.errors import ErrorCode
from .request_metrics import RequestMetrics

if TYPE_CHECKING:
    from ..cluster.model import BrokerInfo, TopicInfo
    from ..coordinator.group.model import FetchedOffset, GroupOverview
    from ..replication.broker_topic_stats import BrokerTopicStats
    from ..replication.replica_manager import PartitionSummary

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Kafka's GroupMetadataManager gauges: NumGroups<State> for each classic group state
GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")


class ReplicaSource(Protocol):
    """What the metrics read of the replica manager."""

    topic_stats: BrokerTopicStats
    isr_shrinks: int
    isr_expands: int

    def partition_summaries(self) -> list[PartitionSummary]: ...


class GroupSource(Protocol):
    """What the metrics read of the group coordinator."""

    def handle_list_groups(
        self, states: list[str] | None = None, types: list[str] | None = None
    ) -> tuple[ErrorCode, list[GroupOverview]]: ...

    def handle_fetch_offsets(
        self, group_id: str, partitions: list[tuple[str, int]] | None, require_stable: bool = False
    ) -> tuple[ErrorCode, dict[tuple[str, int], FetchedOffset]]: ...


class MetadataSource(Protocol):
    """What the metrics read of the metadata store."""

    def brokers(self) -> list[BrokerInfo]: ...

    def topics(self) -> dict[str, TopicInfo]: ...


@dataclass
class MetricsSources:
    replicas: ReplicaSource
    groups: GroupSource
    metadata: MetadataSource
    requests: RequestMetrics
    is_active_controller: Callable[[], bool]


@dataclass
class MetricFamily:
    """One metric: its name, type, help and samples (name suffix, labels, value)."""

    name: str
    type: str  # counter, gauge or summary
    help: str
    samples: list[tuple[str, dict[str, str], float]] = field(default_factory=list)

    def add(self, value: float, suffix: str = "", **labels: str) -> MetricFamily:
        self.samples.append((suffix, labels, value))
        return self


def collect(sources: MetricsSources) -> list[MetricFamily]:
    """Every metric family, read now."""
    summaries = sources.replicas.partition_summaries()
    return [
        *_broker_topic_metrics(sources.replicas.topic_stats),
        *_replica_manager_metrics(sources.replicas, summaries),
        *_controller_metrics(sources.metadata, sources.is_active_controller()),
        *_request_metrics(sources.requests),
        *_group_metrics(sources.groups, summaries),
        _log_sizes(summaries),
    ]


def render(families: Iterable[MetricFamily]) -> str:
    """Prometheus' text exposition format 0.0.4."""
    lines = []
    for family in families:
        lines.append(f"# HELP {family.name} {_escape_help(family.help)}")
        lines.append(f"# TYPE {family.name} {family.type}")
        for suffix, labels, value in family.samples:
            lines.append(f"{family.name}{suffix}{_labels(labels)} {_value(value)}")
    return "\n".join(lines) + "\n"


# -- families ---------------------------------------------------------------------------------

# (field of TopicCounters, Kafka's meter name, reported per topic too)
_TOPIC_METERS = (
    ("bytes_in", "BytesInPerSec", True),
    ("bytes_out", "BytesOutPerSec", True),
    ("messages_in", "MessagesInPerSec", True),
    ("total_produce_requests", "TotalProduceRequestsPerSec", True),
    ("total_fetch_requests", "TotalFetchRequestsPerSec", True),
    ("replication_bytes_out", "ReplicationBytesOutPerSec", False),
)


def _broker_topic_metrics(stats: BrokerTopicStats) -> list[MetricFamily]:
    all_topics, per_topic = stats.snapshot()
    families = []
    for attribute, meter, by_topic in _TOPIC_METERS:
        family = _counter("kafka.server", "BrokerTopicMetrics", meter)
        family.add(getattr(all_topics, attribute))
        if by_topic:
            for topic, counters in sorted(per_topic.items()):
                family.add(getattr(counters, attribute), topic=topic)
        families.append(family)
    return families


def _replica_manager_metrics(replicas: ReplicaSource, summaries: list[PartitionSummary]) -> list[MetricFamily]:
    return [
        _gauge("kafka.server", "ReplicaManager", "UnderReplicatedPartitions").add(
            sum(1 for s in summaries if s.under_replicated)
        ),
        _gauge("kafka.server", "ReplicaManager", "PartitionCount").add(len(summaries)),
        _gauge("kafka.server", "ReplicaManager", "LeaderCount").add(sum(1 for s in summaries if s.is_leader)),
        _counter("kafka.server", "ReplicaManager", "IsrShrinksPerSec").add(replicas.isr_shrinks),
        _counter("kafka.server", "ReplicaManager", "IsrExpandsPerSec").add(replicas.isr_expands),
    ]


def _controller_metrics(metadata: MetadataSource, active: bool) -> list[MetricFamily]:
    """Kafka reports the offline partitions on the active controller only (0 elsewhere)."""
    offline = _offline_partitions(metadata) if active else 0
    return [
        _gauge("kafka.controller", "KafkaController", "ActiveControllerCount").add(1 if active else 0),
        _gauge("kafka.controller", "KafkaController", "OfflinePartitionsCount").add(offline),
    ]


def _offline_partitions(metadata: MetadataSource) -> int:
    """Partitions without a live leader."""
    live = {broker.broker_id for broker in metadata.brokers()}
    return sum(
        1 for info in metadata.topics().values() for state in info.partitions.values() if state.leader not in live
    )


def _request_metrics(requests: RequestMetrics) -> list[MetricFamily]:
    rate = _counter("kafka.network", "RequestMetrics", "RequestsPerSec", "request, version")
    total_time = MetricFamily(
        "kafka_network_requestmetrics_totaltimems",
        "summary",
        "kafka.network:type=RequestMetrics,name=TotalTimeMs,request=<request> (milliseconds)",
    )
    for name, stats in sorted(requests.by_name.items()):
        for version, count in sorted(stats.requests_by_version.items()):
            rate.add(count, request=name, version=str(version))
        for quantile, ms in stats.latency_quantiles():
            total_time.add(ms, request=name, quantile=_quantile_label(quantile))
        total_time.add(stats.count, "_count", request=name)
        total_time.add(stats.total_time_ms, "_sum", request=name)
    return [rate, total_time]


def _quantile_label(quantile: float) -> str:
    """As the JMX exporter names Kafka's percentiles: 0.50, 0.75, ..., 0.999."""
    text = f"{quantile:.3f}"
    return text[:-1] if text.endswith("0") else text


def _group_metrics(groups: GroupSource, summaries: list[PartitionSummary]) -> list[MetricFamily]:
    error, overviews = groups.handle_list_groups()
    if error not in (ErrorCode.NONE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
        overviews = []
    families = [_coordinator_gauge("NumGroups").add(len(overviews))]
    for state in GROUP_STATES:
        families.append(_coordinator_gauge(f"NumGroups{state}").add(sum(1 for g in overviews if g.state == state)))
    families.extend(_consumer_lag(groups, sorted(g.group_id for g in overviews), summaries))
    return families


def _consumer_lag(groups: GroupSource, group_ids: list[str], summaries: list[PartitionSummary]) -> list[MetricFamily]:
    """kafka_exporter's lag figures for the partitions hosted here: each committed offset against
    the partition's high watermark (what a consumer can read up to)."""
    high_watermarks = {(s.topic, s.partition): s.high_watermark for s in summaries}
    current = MetricFamily(
        "kafka_consumergroup_current_offset", "gauge", "Current offset of a consumer group at a topic/partition"
    )
    lag = MetricFamily(
        "kafka_consumergroup_lag", "gauge", "Current approximate lag of a consumer group at a topic/partition"
    )
    lag_sum = MetricFamily(
        "kafka_consumergroup_lag_sum", "gauge", "Current approximate lag of a consumer group at a topic"
    )
    for group_id in group_ids:
        error, offsets = groups.handle_fetch_offsets(group_id, None)
        if error != ErrorCode.NONE:
            continue
        by_topic: dict[str, int] = {}
        for (topic, partition), fetched in sorted(offsets.items()):
            high_watermark = high_watermarks.get((topic, partition))
            if high_watermark is None or fetched.offset < 0:
                continue
            labels = {"consumergroup": group_id, "topic": topic, "partition": str(partition)}
            current.add(fetched.offset, **labels)
            lag.add(high_watermark - fetched.offset, **labels)
            by_topic[topic] = by_topic.get(topic, 0) + high_watermark - fetched.offset
        for topic, total in by_topic.items():
            lag_sum.add(total, consumergroup=group_id, topic=topic)
    return [current, lag, lag_sum]


def _log_sizes(summaries: list[PartitionSummary]) -> MetricFamily:
    family = _gauge("kafka.log", "Log", "Size", "topic, partition")
    for summary in sorted(summaries):
        family.add(summary.log_size, topic=summary.topic, partition=str(summary.partition))
    return family


# -- naming -----------------------------------------------------------------------------------


def _counter(domain: str, mbean_type: str, meter: str, tags: str = "") -> MetricFamily:
    """A meter's Count: `kafka_<domain>_<type>_<name without PerSec>_total`."""
    name = f"{_prometheus_prefix(domain, mbean_type)}_{meter.removesuffix('PerSec').lower()}_total"
    return MetricFamily(name, "counter", _mbean(domain, mbean_type, meter, tags))


def _gauge(domain: str, mbean_type: str, gauge: str, tags: str = "") -> MetricFamily:
    """A gauge's Value: `kafka_<domain>_<type>_<name>`."""
    name = f"{_prometheus_prefix(domain, mbean_type)}_{gauge.lower()}"
    return MetricFamily(name, "gauge", _mbean(domain, mbean_type, gauge, tags))


def _coordinator_gauge(gauge: str) -> MetricFamily:
    return _gauge("kafka.coordinator.group", "GroupMetadataManager", gauge)


def _prometheus_prefix(domain: str, mbean_type: str) -> str:
    return f"{domain.replace('.', '_')}_{mbean_type}".lower()


def _mbean(domain: str, mbean_type: str, name: str, tags: str) -> str:
    suffix = "".join(f",{tag}=<{tag}>" for tag in tags.split(", ") if tag)
    return f"{domain}:type={mbean_type},name={name}{suffix}"


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{key}="{_escape_label(value)}"' for key, value in labels.items()) + "}"


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _value(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))
