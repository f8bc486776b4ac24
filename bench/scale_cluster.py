"""The scale benchmark's three-broker session: 3,000 partitions of replication factor 3 (see
bench/scale.py), ISR stability sampled through Metadata and counted in the brokers' logs."""
from __future__ import annotations

import re
import threading
import time
from pathlib import Path

from bench import report, throughput, wire
from bench.figure import Figure, measured, not_available
from bench.scale_brokers import make_cluster
from bench.scale_common import (
    RECORD_SIZE,
    TITLES,
    TOPIC_PARTITIONS,
    TOPICS_PER_REQUEST,
    Results,
    Row,
    ScalePlan,
    admin_client,
    cpu_per_gigabyte,
    cpu_percent,
    create_topics,
    descriptors,
    megabytes_per_second,
    metadata_latency,
    resident,
    say,
    wait_led,
)

SAMPLE_INTERVAL = 1.0     # seconds between two ISR samples


def cluster_rows(plan: ScalePlan) -> list[Row]:
    brokers = (1, 2, 3)
    return [Row("start", "three brokers started, s", 1),
            Row("create", f"create {plan.cluster_partitions:,} partitions, replication factor 3, s"),
            Row("isr_full", "then until every ISR is full, s"),
            *[Row(f"rss_{b}", f"broker {b}: resident memory, MB") for b in brokers],
            *[Row(f"fds_{b}", f"broker {b}: open descriptors", 0) for b in brokers],
            *[Row(f"idle_cpu_{b}", f"broker {b}: idle CPU (follower fetching), % of a core") for b in brokers],
            Row("metadata", "Metadata for all topics, ms"),
            Row("produce_mbps", f"produce 1 KB records over {plan.active_partitions:,} of the "
                                f"{plan.cluster_partitions:,} partitions (acks=all), MB/s"),
            *[Row(f"load_cpu_{b}", f"broker {b}: CPU while producing, % of a core") for b in brokers],
            Row("produce_cpu_gb", "CPU of the three brokers per GB produced, s", 2),
            Row("isr_shrinks", "ISR shrinks seen in Metadata samples", 0),
            Row("isr_expands", "ISR expands seen in Metadata samples", 0),
            Row("isr_min_full", "lowest share of partitions with a full ISR in a sample, %"),
            Row("isr_log_shrinks", "ISR shrinks in the brokers' logs", 0),
            Row("isr_log_expands", "ISR expands in the brokers' logs", 0)]


class IsrSampler(threading.Thread):
    """Samples every partition's ISR size through Metadata and counts the shrinks and expands."""

    def __init__(self, bootstrap: str, prefix: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.prefix = bootstrap.split(",")[0], prefix
        self.sizes: dict[tuple[str, int], int] = {}
        self.shrinks = self.expands = self.samples = self.failed = 0
        self.lowest_full = 100.0
        self.finished = threading.Event()

    def run(self) -> None:
        while not self.finished.wait(SAMPLE_INTERVAL):
            view = wire.cluster_view(self.bootstrap, timeout=10.0)
            if view is None:
                self.failed += 1
            else:
                self.record(view)

    def record(self, view: wire.ClusterView) -> None:
        full = total = 0
        for topic, parts in view.topics.items():
            if not topic.startswith(self.prefix):
                continue
            for index, state in parts.items():
                before = self.sizes.get((topic, index))
                self.shrinks += before is not None and state.isr < before
                self.expands += before is not None and state.isr > before
                self.sizes[(topic, index)] = state.isr
                full, total = full + (state.isr == state.replicas), total + 1
        self.samples += 1
        if total:
            self.lowest_full = min(self.lowest_full, 100 * full / total)

    def stop(self) -> None:
        self.finished.set()
        self.join(timeout=30)


KAFKA_ISR = re.compile(r"(Shrinking|Expanding) ISR from")
PYKBROKER_ISR = re.compile(r"Proposing ISR (\[[^\]]*\]|\S+) for \S+ \(was (\[[^\]]*\]|\S+)\)")


def isr_changes_in_log(text: str) -> tuple[int, int]:
    """(shrinks, expands) logged: Kafka's Partition lines, pykbroker's ISR proposals."""
    shrinks = expands = 0
    for match in KAFKA_ISR.finditer(text):
        shrinks, expands = shrinks + (match[1] == "Shrinking"), expands + (match[1] == "Expanding")
    for match in PYKBROKER_ISR.finditer(text):
        new, old = (len(re.findall(r"\d+", group)) for group in match.groups())
        shrinks, expands = shrinks + (new < old), expands + (new > old)
    return shrinks, expands


def log_sizes(paths: dict[int, Path]) -> dict[int, int]:
    return {key: path.stat().st_size if path.exists() else 0 for key, path in paths.items()}


def log_text_since(path: Path, offset: int) -> str:
    if not path.exists():
        return ""
    with open(path, "rb") as log:
        log.seek(offset)
        return log.read().decode(errors="replace")


class ClusterRun:
    def __init__(self, cluster, plan: ScalePlan, results: Results) -> None:
        self.cluster, self.plan, self.results = cluster, plan, results
        self.name = cluster.name
        self.expected: dict[str, int] = {}

    def put(self, key: str, figure: Figure) -> None:
        self.results.cluster.put(self.name, key, figure)

    def run(self) -> None:
        begin = time.monotonic()
        self.cluster.start()
        self.put("start", measured(time.monotonic() - begin))
        if not self.create() or not self.wait_full_isr():
            return
        sampler = IsrSampler(self.cluster.bootstrap, "rf3-")
        offsets = log_sizes(self.cluster.log_paths)
        sampler.start()
        try:
            self.idle_and_footprint()
            self.put("metadata", metadata_latency(self.cluster.bootstrap, self.plan.metadata_samples))
            self.produce()
            time.sleep(self.plan.idle_seconds)  # replicas catching up after the load
        finally:
            sampler.stop()
        self.isr_figures(sampler, offsets)

    def create(self) -> bool:
        say(f"{self.name} cluster: creating {self.plan.cluster_partitions:,} partitions, RF 3")
        admin, topics = admin_client(self.cluster.bootstrap), self.plan.cluster_partitions // TOPIC_PARTITIONS
        names = [f"rf3-{index:05d}" for index in range(topics)]
        begin = time.monotonic()
        for first in range(0, topics, TOPICS_PER_REQUEST):
            created, failure = create_topics(admin, names[first:first + TOPICS_PER_REQUEST], replication=3)
            self.expected.update((name, TOPIC_PARTITIONS) for name in created)
            if failure:
                self.put("create", not_available(f"stopped at {sum(self.expected.values()):,}"))
                self.results.note(f"{self.name} cluster: {failure}")
                return False
        failure = wait_led(self.cluster.bootstrap, self.expected, self.plan.ready_limit)
        self.put("create", measured(time.monotonic() - begin) if not failure else not_available(failure))
        return not failure

    def wait_full_isr(self) -> bool:
        begin, deadline = time.monotonic(), time.monotonic() + self.plan.ready_limit
        while time.monotonic() < deadline:
            view = wire.cluster_view(self.cluster.bootstrap, timeout=30.0)
            if view is not None and view.led(self.expected) and all(
                    state.isr == 3 for topic in self.expected for state in view.topics[topic].values()):
                self.put("isr_full", measured(time.monotonic() - begin))
                return True
            time.sleep(0.5)
        self.put("isr_full", not_available(f"not within {self.plan.ready_limit:.0f} s"))
        return False

    def idle_and_footprint(self) -> None:
        say(f"{self.name} cluster: idle CPU over {self.plan.idle_seconds:.0f} s")
        pids = self.cluster.pids
        for broker_id, figure in cpu_percent(pids, self.plan.idle_seconds).items():
            self.put(f"idle_cpu_{broker_id}", figure)
        for broker_id, pid in pids.items():
            self.put(f"rss_{broker_id}", resident(pid))
            self.put(f"fds_{broker_id}", descriptors(pid))

    def produce(self) -> None:
        topics = sorted(self.expected)[:self.plan.active_partitions // TOPIC_PARTITIONS]
        say(f"{self.name} cluster: produce acks=all over {len(topics) * TOPIC_PARTITIONS:,} partitions")
        pids = self.cluster.pids
        before = {key: throughput.broker_cpu(pid) for key, pid in pids.items()}
        written = throughput.run_client(
            "produce", self.cluster.bootstrap, ",".join(topics), self.plan.phase_time_limit,
            count=self.plan.cluster_records, size=RECORD_SIZE, spread=TOPIC_PARTITIONS, acks="all")
        after = {key: throughput.broker_cpu(pid) for key, pid in pids.items()}
        seconds = written.get("seconds", 0.0)
        spent = {key: after[key] - before[key] for key in pids
                 if after[key] is not None and before[key] is not None}
        for key, cpu in spent.items():
            if seconds:
                self.put(f"load_cpu_{key}", measured(100 * cpu / seconds))
        self.put("produce_mbps", megabytes_per_second(written))
        total = sum(spent.values()) if len(spent) == len(pids) else None
        self.put("produce_cpu_gb", cpu_per_gigabyte(total, written.get("bytes", 0)))
        phase = f"produce acks=all, {len(topics) * TOPIC_PARTITIONS:,} partitions, RF 3"
        self.results.phases.append(throughput.PhaseRecord(
            f"{self.name} (3 brokers)", phase, written.get("records", 0),
            written.get("bytes", 0), seconds, total, written.get("client_cpu_seconds"),
            None, written.get("reason", "")))

    def isr_figures(self, sampler: IsrSampler, offsets: dict[int, int]) -> None:
        self.put("isr_shrinks", measured(sampler.shrinks, f"{sampler.samples} samples"))
        self.put("isr_expands", measured(sampler.expands))
        if sampler.samples:
            self.put("isr_min_full", measured(sampler.lowest_full))
        if sampler.failed:
            self.results.note(f"{self.name} cluster: {sampler.failed} ISR samples got no answer")
        shrinks = expands = 0
        for broker_id, path in self.cluster.log_paths.items():
            logged = isr_changes_in_log(log_text_since(path, offsets.get(broker_id, 0)))
            shrinks, expands = shrinks + logged[0], expands + logged[1]
        self.put("isr_log_shrinks", measured(shrinks))
        self.put("isr_log_expands", measured(expands))


def cluster_session(name: str, plan: ScalePlan, workdir: Path, nofile: int, results: Results) -> None:
    results.loads.append(f"{TITLES[name]} cluster {report.load_average()}")
    cluster = make_cluster(name, workdir, nofile)
    try:
        say(f"{name}: starting three brokers")
        ClusterRun(cluster, plan, results).run()
    except Exception as error:
        results.note(f"{name}: cluster session stopped early: {type(error).__name__}: {error}")
    finally:
        try:
            cluster.close()
        except Exception as error:
            results.note(f"{name}: stopping the cluster failed: {error}")
