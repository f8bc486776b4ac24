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

Kafka 4's group coordinator also reports its groups as Kafka metrics (not Yammer ones), which the
JMX exporter names after the MBean and the attribute:

    kafka.server:type=group-coordinator-metrics,protocol=classic  group-count
        kafka_server_group_coordinator_metrics_group_count{protocol="classic"}
    kafka.server:type=group-coordinator-metrics,state=Stable      consumer-group-count
        kafka_server_group_coordinator_metrics_consumer_group_count{state="Stable"}

(`group-count` by protocol: classic, consumer, share; `classic-group-count`,
`consumer-group-count` and `share-group-count` by state). The old GroupMetadataManager gauges
count classic groups only, as in Kafka 4.

Consumer lag is no broker metric in Kafka; it is reported here under kafka_exporter's names
(`kafka_consumergroup_lag{consumergroup,topic,partition}`), computed when scraped, for classic
and consumer-protocol groups alike (both commit offsets). A share group commits none: its lag is
Kafka 4's share-partition lag, the partition's high watermark past the share-partition start
offset, under the same naming (`kafka_sharegroup_lag{sharegroup,topic,partition}`); the start
offsets come from the group coordinator's share group offsets (DescribeShareGroupOffsets), which
is why `collect_with_share_groups` is a coroutine.

Client quotas are Kafka metrics of MBeans `kafka.server:type=<Produce|Fetch|Request|
ControllerMutation>,user=<user>,client-id=<client>` (a tag left out when empty, as Kafka's
JmxReporter does), which the exporter's rules (`kafka_server_quota_$4` in Strimzi's
`kafka-metrics.yaml`) name after the attribute, the type, user and client id as labels:

    kafka_server_quota_byte_rate{resource="Produce",user="alice",clientId="app"}   (bytes/s)
    kafka_server_quota_throttle_time{resource="Fetch",clientId="app"}              (average ms)
    kafka_server_quota_request_time{resource="Request",user="alice"}               (% of a thread)
    kafka_server_quota_tokens{resource="ControllerMutation",user="alice"}          (tokens left)

Connection limits are Kafka's `socket-server-metrics` (ConnectionQuotas' sensors), per listener
and per IP with a `connection_creation_rate` quota, named by the exporter after the attribute:

    kafka_server_socket_server_metrics_connection_accept_rate{listener="EXTERNAL"}      (per second)
    kafka_server_socket_server_metrics_connection_accept_throttle_time{listener=...}   (average ms)
    kafka_server_socket_server_metrics_ip_connection_accept_throttle_time{listener=...}
    kafka_server_socket_server_metrics_connection_count{listener=...}
    kafka_server_socket_server_metrics_connection_creation_rate{listener=...}
    kafka_server_socket_server_metrics_broker_connection_accept_rate
    kafka_server_socket_server_metrics_connection_accept_rate{ip="10.0.0.7"}

One sample per quota sensor, while it lives (an hour after its last use, as Kafka's); a broker that
never had a quota of a type has no sensor of it.

Everything is read when `/metrics` is asked for (`collect`), from what the rooms already keep:
the replica manager's counters and partitions, the request counts, the group coordinator's groups
and committed offsets, the metadata. The rooms are reached through the narrow protocols below.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import anyio

from ..protocol.errors import ErrorCode
from .request_metrics import RequestMetrics

if TYPE_CHECKING:
    from ..cluster.model import BrokerInfo, TopicInfo
    from ..coordinator.group.model import FetchedOffset, GroupOverview
    from ..quota.client_quotas import ClientQuotas
    from ..quota.connection_quotas import ConnectionQuotas
    from ..replication.broker_topic_stats import BrokerTopicStats
    from ..replication.replica_manager import PartitionSummary

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

log = logging.getLogger(__name__)

# Kafka's GroupMetadataManager gauges: NumGroups<State> for each classic group state
GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")
# Kafka 4's GroupCoordinatorMetrics: the group types (`protocol` tag) and each type's states
GROUP_PROTOCOLS = ("classic", "consumer", "share")
GROUP_STATES_BY_PROTOCOL = {
    "classic": GROUP_STATES,
    "consumer": ("Empty", "Assigning", "Reconciling", "Stable", "Dead"),
    "share": ("Empty", "Stable", "Dead"),
}
SHARE_OFFSETS_TIMEOUT_S = 5.0  # a scrape waits at most this long for the share groups' start offsets


class ReplicaSource(Protocol):
    """What the metrics read of the replica manager."""

    topic_stats: BrokerTopicStats
    isr_shrinks: int
    isr_expands: int

    def partition_summaries(self) -> list[PartitionSummary]: ...

    def offline_replica_count(self) -> int: ...

    def offline_log_dir_count(self) -> int: ...

    def alter_log_dirs_max_lag(self) -> int: ...

    def replication_byte_rates(self) -> tuple[float, float]: ...


class GroupSource(Protocol):
    """What the metrics read of the group coordinator."""

    def handle_list_groups(
        self, states: list[str] | None = None, types: list[str] | None = None
    ) -> tuple[ErrorCode, list[GroupOverview]]: ...

    def handle_fetch_offsets(
        self, group_id: str, partitions: list[tuple[str, int]] | None, require_stable: bool = False
    ) -> tuple[ErrorCode, dict[tuple[str, int], FetchedOffset]]: ...


class SharePartitionStart(Protocol):
    """A partition of a share group's offsets: its share-partition start offset (-1: not chosen)."""

    @property
    def partition(self) -> int: ...
    @property
    def start_offset(self) -> int: ...
    @property
    def error(self) -> ErrorCode: ...


class ShareTopicStarts(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def partitions(self) -> Sequence[SharePartitionStart]: ...


class ShareGroupStarts(Protocol):
    """A share group's offsets, as the group coordinator describes them (DescribeShareGroupOffsets)."""

    @property
    def error(self) -> ErrorCode: ...
    @property
    def topics(self) -> Sequence[ShareTopicStarts]: ...


# The group coordinator's `describe_share_group_offsets(group_id, None)`: every partition of the group
ShareGroupOffsetsReader = Callable[[str, None], Awaitable[ShareGroupStarts]]
# (group id, topic, partition) -> share-partition start offset
ShareStartOffsets = dict[tuple[str, str, int], int]


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
    share_group_offsets: ShareGroupOffsetsReader | None = None  # None: no share groups served
    quotas: ClientQuotas | None = None  # None: no client quotas
    connections: ConnectionQuotas | None = None  # None: no connection counts


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


def collect(sources: MetricsSources, share_starts: ShareStartOffsets | None = None) -> list[MetricFamily]:
    """Every metric family, read now; the share groups' lag from `share_starts` (none without)."""
    summaries = sources.replicas.partition_summaries()
    return [
        *_broker_topic_metrics(sources.replicas.topic_stats),
        *_replica_manager_metrics(sources.replicas, summaries),
        *_controller_metrics(sources.metadata, sources.is_active_controller()),
        *_request_metrics(sources.requests),
        *_quota_metrics(sources.quotas),
        *_connection_metrics(sources.connections),
        *_group_metrics(sources.groups, summaries, share_starts or {}),
        _log_sizes(summaries),
    ]


async def collect_with_share_groups(sources: MetricsSources) -> list[MetricFamily]:
    """`collect`, with the start offsets of the share groups this broker coordinates read first."""
    return collect(sources, await share_start_offsets(sources))


async def share_start_offsets(sources: MetricsSources) -> ShareStartOffsets:
    """Each local share group's share-partition start offsets (those chosen); a group whose
    offsets cannot be read is left out, and a slow read ends after SHARE_OFFSETS_TIMEOUT_S."""
    reader = sources.share_group_offsets
    if reader is None:
        return {}
    _, overviews = sources.groups.handle_list_groups(types=["share"])
    starts: ShareStartOffsets = {}
    with anyio.move_on_after(SHARE_OFFSETS_TIMEOUT_S):
        for group_id in sorted(o.group_id for o in overviews if o.group_type == "share"):
            try:
                described = await reader(group_id, None)
            except Exception:  # a scrape must never fail for one group
                log.debug("Reading the share group offsets of %s failed", group_id, exc_info=True)
                continue
            if described.error != ErrorCode.NONE:
                continue
            for topic in described.topics:
                for p in topic.partitions:
                    if p.error == ErrorCode.NONE and p.start_offset >= 0:
                        starts[(group_id, topic.name, p.partition)] = p.start_offset
    return starts


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
        _gauge("kafka.server", "ReplicaManager", "OfflineReplicaCount").add(replicas.offline_replica_count()),
        _gauge("kafka.log", "LogManager", "OfflineLogDirectoryCount").add(replicas.offline_log_dir_count()),
        _gauge("kafka.server", "ReplicaAlterLogDirsManager", "MaxLag", "clientId").add(
            replicas.alter_log_dirs_max_lag(), clientid="ReplicaAlterLogDirs"
        ),
        *_replication_quota_metrics(*replicas.replication_byte_rates()),
    ]


def _replication_quota_metrics(leader_rate: float, follower_rate: float) -> list[MetricFamily]:
    """Kafka's replication quota sensors: `kafka.server:type=LeaderReplication` and
    `type=FollowerReplication`, attribute `byte-rate` (throttled replication bytes per second)."""
    return [
        MetricFamily(f"kafka_server_{side.lower()}_byte_rate", "gauge", f"kafka.server:type={side} byte-rate").add(rate)
        for side, rate in (("LeaderReplication", leader_rate), ("FollowerReplication", follower_rate))
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


# the attribute of each quota type's rate sensor (Kafka's clientRateMetricName)
_QUOTA_RATE_ATTRIBUTES = {
    "Produce": "byte-rate",
    "Fetch": "byte-rate",
    "Request": "request-time",
    "ControllerMutation": "tokens",
}


def _quota_metrics(quotas: ClientQuotas | None) -> list[MetricFamily]:
    if quotas is None:
        return []
    from ..security.sanitizer import desanitize

    families: dict[str, MetricFamily] = {}
    for manager in quotas.managers():
        for view in manager.sensors():
            labels = {"resource": view.quota_type}
            if view.user:
                labels["user"] = view.user
            if view.client_id:
                labels["clientId"] = desanitize(view.client_id)
            for attribute, value in (
                (_QUOTA_RATE_ATTRIBUTES[view.quota_type], view.value),
                ("throttle-time", view.throttle_time),
            ):
                name = "kafka_server_quota_" + attribute.replace("-", "_")
                family = families.get(name)
                if family is None:
                    help_text = f"kafka.server:type=<resource>,user=<user>,client-id=<clientId> {attribute}"
                    family = families[name] = MetricFamily(name, "gauge", help_text)
                family.add(value, **labels)
    return [families[name] for name in sorted(families)]


def _connection_metrics(connections: ConnectionQuotas | None) -> list[MetricFamily]:
    if connections is None:
        return []
    from ..common.time import now_ms

    at = now_ms()
    mbean = "socket-server-metrics"
    accept_rate = _client_gauge(mbean, "connection-accept-rate", "listener")
    creation_rate = _client_gauge(mbean, "connection-creation-rate", "listener")
    throttle = _client_gauge(mbean, "connection-accept-throttle-time", "listener")
    ip_throttle = _client_gauge(mbean, "ip-connection-accept-throttle-time", "listener")
    count = _client_gauge(mbean, "connection-count", "listener")
    for view in connections.listener_views(at):
        accept_rate.add(view.accept_rate, listener=view.name)
        creation_rate.add(view.accept_rate, listener=view.name)
        throttle.add(view.throttle_time, listener=view.name)
        ip_throttle.add(view.ip_throttle_time, listener=view.name)
        count.add(view.count, listener=view.name)
    broker_rate = MetricFamily(
        "kafka_server_socket_server_metrics_broker_connection_accept_rate",
        "gauge",
        f"kafka.server:type={mbean} broker-connection-accept-rate",
    )
    broker_rate.add(connections.broker_rate.measured(at))
    for ip, rate in connections.ip_rates_measured(at):
        accept_rate.add(rate, ip=ip)
    return [accept_rate, creation_rate, throttle, ip_throttle, count, broker_rate]


def _quantile_label(quantile: float) -> str:
    """As the JMX exporter names Kafka's percentiles: 0.50, 0.75, ..., 0.999."""
    text = f"{quantile:.3f}"
    return text[:-1] if text.endswith("0") else text


def _group_metrics(
    groups: GroupSource, summaries: list[PartitionSummary], share_starts: ShareStartOffsets
) -> list[MetricFamily]:
    error, overviews = groups.handle_list_groups()
    if error not in (ErrorCode.NONE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
        overviews = []
    classic = [g for g in overviews if g.group_type == "classic"]
    families = [_coordinator_gauge("NumGroups").add(len(classic))]
    for state in GROUP_STATES:
        families.append(_coordinator_gauge(f"NumGroups{state}").add(sum(1 for g in classic if g.state == state)))
    families.extend(_group_coordinator_metrics(overviews))
    with_offsets = sorted(g.group_id for g in overviews if g.group_type != "share")
    families.extend(_consumer_lag(groups, with_offsets, summaries))
    families.extend(_share_group_lag(share_starts, summaries))
    return families


def _group_coordinator_metrics(overviews: list[GroupOverview]) -> list[MetricFamily]:
    """Kafka 4's `group-count` by protocol and `<protocol>-group-count` by state."""
    by_protocol = _client_gauge("group-coordinator-metrics", "group-count", "protocol")
    families = [by_protocol]
    for protocol in GROUP_PROTOCOLS:
        of_protocol = [g for g in overviews if g.group_type == protocol]
        by_protocol.add(len(of_protocol), protocol=protocol)
        by_state = _client_gauge("group-coordinator-metrics", f"{protocol}-group-count", "state")
        for state in GROUP_STATES_BY_PROTOCOL[protocol]:
            by_state.add(sum(1 for g in of_protocol if g.state == state), state=state)
        families.append(by_state)
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


def _share_group_lag(starts: ShareStartOffsets, summaries: list[PartitionSummary]) -> list[MetricFamily]:
    """A share group's lag for the partitions hosted here: the high watermark past the
    share-partition start offset (the records not yet delivered for good, at most)."""
    high_watermarks = {(s.topic, s.partition): s.high_watermark for s in summaries}
    start = MetricFamily(
        "kafka_sharegroup_start_offset", "gauge", "Share-partition start offset of a share group at a topic/partition"
    )
    lag = MetricFamily("kafka_sharegroup_lag", "gauge", "Current approximate lag of a share group at a topic/partition")
    lag_sum = MetricFamily("kafka_sharegroup_lag_sum", "gauge", "Current approximate lag of a share group at a topic")
    sums: dict[tuple[str, str], int] = {}
    for (group_id, topic, partition), offset in sorted(starts.items()):
        high_watermark = high_watermarks.get((topic, partition))
        if high_watermark is None:
            continue
        behind = max(high_watermark - offset, 0)
        labels = {"sharegroup": group_id, "topic": topic, "partition": str(partition)}
        start.add(offset, **labels)
        lag.add(behind, **labels)
        sums[(group_id, topic)] = sums.get((group_id, topic), 0) + behind
    for (group_id, topic), total in sums.items():
        lag_sum.add(total, sharegroup=group_id, topic=topic)
    return [start, lag, lag_sum]


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


def _client_gauge(mbean_type: str, attribute: str, tag: str) -> MetricFamily:
    """A Kafka (client library) metric of the broker, as the JMX exporter names its MBean
    `kafka.server:type=<type>,<tag>=<value>` and attribute: `kafka_server_<type>_<attribute>`,
    dashes made underscores, the tag a label."""
    name = f"kafka_server_{mbean_type}_{attribute}".replace("-", "_").lower()
    return MetricFamily(name, "gauge", f"kafka.server:type={mbean_type},{tag}=<{tag}> {attribute}")


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
