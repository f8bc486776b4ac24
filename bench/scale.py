"""The scale benchmark: pykbroker beside Apache Kafka 3.9.0 with thousands of partitions.

    python -m bench.scale              full run: 1,000, 5,000, 10,000 partitions; a cluster with 3,000
    python -m bench.scale --quick      smoke run with a few hundred partitions (a few minutes)
    python -m bench.scale --sizes 1000,2000 --broker pykbroker --no-cluster
    make bench-scale                   the full run, results in docs/benchmarks.md

One broker, for each broker in turn (never both at once: the machine has 2 cores), every process
under the same RLIMIT_NOFILE (20,000 by default):
  - topics of 10 partitions are created 50 per CreateTopics request with confluent-kafka's
    AdminClient until each size is reached; the time to reach it runs until a Metadata request
    lists every partition with a leader. At each size: resident memory (VmRSS) and open
    descriptors (/proc/<pid>/fd), in total and per partition over the broker's idle baseline, and
    the round trip of a Metadata v1 request for all topics (median). A broker that fails to reach
    a size (e.g. "Too many open files") is a result, not a crash of the benchmark.
  - at the largest size reached: idle CPU; 1 KB records written round-robin over 1,000 of the
    partitions (100 topics), acks=1, then read back by one consumer, with the broker's CPU seconds
    per GB moved; then kill -9 and a restart, then a clean stop and a restart, each timed from
    launching the broker until Metadata lists every topic with a leader for every partition.
Three brokers with ZooKeeper (pykbroker.testing for pykbroker, ../shared/realkafka/cluster.sh for
Kafka, both with cluster.sh's settings): 3,000 partitions of replication factor 3 created, the time
until every ISR is full, each broker's idle CPU (follower fetching) and memory, acks=all
throughput over 1,000 of the partitions with each broker's CPU, and ISR stability over the whole session:
shrinks and expands seen by sampling Metadata every second, and counted in the brokers' logs.

Every figure is a number or "n/a (reason)"; every phase has a time limit.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import proc, report, throughput, wire  # noqa: E402
from bench.brokers import pykbroker_version  # noqa: E402
from bench.figure import Figure, measured, not_available, ratio_text  # noqa: E402
from bench.scale_brokers import make_cluster, make_single  # noqa: E402

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DOCS = REPO / "docs" / "benchmarks.md"
DOCS_START = "<!-- bench:scale:start -->"
DOCS_END = "<!-- bench:scale:end -->"
BROKERS = ("pykbroker", "kafka")
TITLES = {"pykbroker": "pykbroker", "kafka": "Kafka 3.9.0"}
TOPIC_PARTITIONS = 10
TOPICS_PER_REQUEST = 50
RECORD_SIZE = 1024
MIB, GIB = 2**20, 2**30
CREATE_LIMIT = 120.0      # seconds for one CreateTopics request, and for Metadata to show its topics
SAMPLE_INTERVAL = 1.0     # seconds between two ISR samples in the cluster


@dataclass(frozen=True)
class ScalePlan:
    name: str
    sizes: tuple[int, ...]        # partitions on one broker, reached one after the other
    records: int                  # 1 KB records written then read over the active partitions
    active_partitions: int        # partitions written to, on one broker and in the cluster
    cluster_partitions: int       # partitions of replication factor 3 in the cluster
    cluster_records: int
    metadata_samples: int
    idle_seconds: float
    phase_time_limit: float
    restart_limit: float


FULL = ScalePlan("full", (1000, 5000, 10000), records=262_144, active_partitions=1000,
                 cluster_partitions=3000, cluster_records=65_536, metadata_samples=7,
                 idle_seconds=20.0, phase_time_limit=120.0, restart_limit=900.0)
QUICK = ScalePlan("quick", (100, 300), records=20_000, active_partitions=100,
                  cluster_partitions=150, cluster_records=10_000, metadata_samples=5,
                  idle_seconds=5.0, phase_time_limit=30.0, restart_limit=120.0)


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- the tables ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    key: str
    label: str
    digits: int = 1


def single_rows(plan: ScalePlan) -> list[Row]:
    rows = [Row("reached", "partitions reached", 0),
            Row("rss_base", "resident memory before any topic, MB"),
            Row("fds_base", "open descriptors before any topic", 0)]
    for size in plan.sizes:
        at = f"{size:,} partitions"
        rows += [Row(f"create_{size}", f"create {at} (from none), s", 1),
                 Row(f"rss_{size}", f"resident memory at {at}, MB"),
                 Row(f"rss_per_{size}", f"resident memory per partition at {at}, KB"),
                 Row(f"fds_{size}", f"open descriptors at {at}", 0),
                 Row(f"fds_per_{size}", f"descriptors per partition at {at}", 2),
                 Row(f"metadata_{size}", f"Metadata for all topics at {at}, ms")]
    active = f"1 KB records over {plan.active_partitions:,} partitions"
    return rows + [
        Row("idle_cpu", "idle CPU at the largest size, % of a core"),
        Row("produce_mbps", f"produce {active} (acks=1), MB/s"),
        Row("produce_cpu_gb", "broker CPU per GB produced, s", 2),
        Row("consume_mbps", f"consume {active}, 1 consumer, MB/s"),
        Row("consume_cpu_gb", "broker CPU per GB consumed, s", 2),
        Row("kill_restart", "restart after kill -9 until Metadata lists every topic, s", 2),
        Row("fds_after_restart", "open descriptors after that restart", 0),
        Row("rss_after_restart", "resident memory after that restart, MB"),
        Row("shutdown", "clean shutdown (SIGTERM until exit), s", 2),
        Row("clean_restart", "restart after the clean shutdown until Metadata lists every topic, s", 2)]


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


@dataclass
class Table:
    rows: list[Row]
    values: dict[str, dict[str, Figure]] = field(default_factory=dict)

    def put(self, broker: str, key: str, figure: Figure) -> None:
        self.values.setdefault(broker, {})[key] = figure

    def get(self, broker: str, key: str) -> Figure:
        return self.values.get(broker, {}).get(key, not_available("not reached"))

    def markdown(self, names: list[str]) -> str:
        header = "| metric | " + " | ".join(TITLES[n] for n in names)
        lines = [header + (" | pykbroker/Kafka |" if len(names) == 2 else " |"),
                 "|---|" + "---:|" * (len(names) + (len(names) == 2))]
        for row in self.rows:
            figures = [self.get(name, row.key) for name in names]
            cells = [report.cell(figure.text(row.digits)) for figure in figures]
            ratio = [ratio_text(*figures)] if len(names) == 2 else []
            lines.append(f"| {row.label} | " + " | ".join(cells + ratio) + " |")
        return "\n".join(lines)


@dataclass
class Results:
    single: Table
    cluster: Table
    notes: list[str] = field(default_factory=list)
    phases: list = field(default_factory=list)
    loads: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        say(f"note: {text}")
        self.notes.append(text)


# -- measuring a running broker ------------------------------------------------------------

def resident(pid: int) -> Figure:
    try:
        return measured(proc.resident_mib(pid))
    except OSError:
        return not_available("broker process is gone")


def descriptors(pid: int) -> Figure:
    try:
        return measured(proc.open_descriptors(pid))
    except OSError:
        return not_available("broker process is gone")


def cpu_percent(pids: dict[int, int], seconds: float) -> dict[int, Figure]:
    """Each process's CPU over the same `seconds`, in % of one core."""
    before = {key: throughput.broker_cpu(pid) for key, pid in pids.items()}
    time.sleep(seconds)
    after = {key: throughput.broker_cpu(pid) for key, pid in pids.items()}
    return {key: measured(100 * (after[key] - before[key]) / seconds)
            if before[key] is not None and after[key] is not None
            else not_available("broker process is gone") for key in pids}


def metadata_latency(bootstrap: str, samples: int) -> Figure:
    """Median round trip of a Metadata v1 request for all topics, on one open connection."""
    try:
        with wire.MetadataConnection(bootstrap, timeout=30.0) as connection:
            _, response = connection.round_trip()  # warm-up
            times = [connection.round_trip()[0] for _ in range(samples)]
    except (OSError, EOFError, struct.error) as error:
        return not_available(f"Metadata failed: {error}")
    return measured(1000 * statistics.median(times),
                    f"median of {samples}, {len(response) / 1024:,.0f} KB")


def wait_led(bootstrap: str, expected: dict[str, int], limit: float, alive=lambda: True) -> str:
    """'' once Metadata lists every expected topic with a leader for each partition, else why not."""
    deadline = time.monotonic() + limit
    view = None
    while time.monotonic() < deadline:
        view = wire.cluster_view(bootstrap, timeout=min(30.0, limit))
        if view is not None and view.led(expected):
            return ""
        if not alive():
            return "broker process died"
        time.sleep(0.1)
    seen = "no answer" if view is None else f"{sum(1 for t in expected if t in view.topics):,} " \
                                            f"of {len(expected):,} topics listed"
    return f"Metadata incomplete after {limit:.0f} s ({seen})"


def create_topics(admin, names: list[str], replication: int) -> tuple[list[str], str]:
    """One CreateTopics request: the topics created, and '' or what failed."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic

    futures = admin.create_topics([NewTopic(name, TOPIC_PARTITIONS, replication) for name in names],
                                  operation_timeout=CREATE_LIMIT, request_timeout=CREATE_LIMIT)
    created, failures = [], []
    for name, future in futures.items():
        try:
            future.result(timeout=CREATE_LIMIT + 10)
            created.append(name)
        except KafkaException as error:
            failures.append(f"{name}: {error.args[0].str()}")
        except Exception as error:  # no answer in time, a dropped connection
            failures.append(f"{name}: {type(error).__name__}: {error}")
    if not failures:
        return created, ""
    return created, f"{len(failures)} of {len(names)} topics failed, first {failures[0]}"


def admin_client(bootstrap: str):
    from confluent_kafka.admin import AdminClient

    return AdminClient({"bootstrap.servers": bootstrap, "logger": report_logger()})


def report_logger():
    import logging

    logger = logging.getLogger("bench.scale.admin")
    logger.propagate = False
    logger.addHandler(logging.NullHandler())
    return logger


def megabytes_per_second(run: dict) -> Figure:
    if not throughput.usable(run):
        return not_available(run.get("reason", "failed"))
    note = f"partial: {run['reason']}" if run.get("reason") else ""
    return measured(run["bytes"] / MIB / run["seconds"], note)


def cpu_per_gigabyte(cpu_seconds: float | None, data_bytes: int) -> Figure:
    if cpu_seconds is None or not data_bytes:
        return not_available("nothing moved" if not data_bytes else "broker process is gone")
    return measured(cpu_seconds / (data_bytes / GIB))


# -- one broker ------------------------------------------------------------------------------

class SingleRun:
    """The size ladder, throughput and restarts on one broker (see the module docstring)."""

    def __init__(self, broker, plan: ScalePlan, results: Results) -> None:
        self.broker, self.plan, self.results = broker, plan, results
        self.name = broker.name
        self.expected: dict[str, int] = {}
        self.creating_seconds = 0.0
        self.next_topic = 0
        self.admin = None
        self.base_rss = self.base_fds = 0.0

    def put(self, key: str, figure: Figure) -> None:
        self.results.single.put(self.name, key, figure)

    @property
    def partitions(self) -> int:
        return sum(self.expected.values())

    def run(self) -> None:
        self.baseline()
        self.ladder()
        self.put("reached", measured(self.partitions))
        if self.partitions and self.broker.alive():
            self.put("idle_cpu", cpu_percent({0: self.broker.pid}, self.plan.idle_seconds)[0])
            self.throughput()
            self.restarts()

    def baseline(self) -> None:
        time.sleep(2.0)
        rss, fds = resident(self.broker.pid), descriptors(self.broker.pid)
        self.put("rss_base", rss)
        self.put("fds_base", fds)
        self.base_rss, self.base_fds = rss.value or 0.0, fds.value or 0.0

    def ladder(self) -> None:
        self.admin = admin_client(self.broker.bootstrap)
        for size in self.plan.sizes:
            say(f"{self.name}: creating topics up to {size:,} partitions")
            failure = self.grow_to(size)
            if failure:
                self.put(f"create_{size}", not_available(f"stopped at {self.partitions:,}"))
                self.results.note(f"{self.name}: stopped at {self.partitions:,} of {size:,} "
                                  f"partitions: {failure}")
                return
            self.measure_at(size)

    def grow_to(self, size: int) -> str:
        while self.partitions < size:
            count = max(1, min(TOPICS_PER_REQUEST, (size - self.partitions) // TOPIC_PARTITIONS))
            names = [f"scale-{self.next_topic + index:05d}" for index in range(count)]
            self.next_topic += count
            begin = time.monotonic()
            created, failure = create_topics(self.admin, names, replication=1)
            self.creating_seconds += time.monotonic() - begin
            self.expected.update((name, TOPIC_PARTITIONS) for name in created)
            if not self.broker.alive():
                return f"broker process died: {self.broker.log_tail()}"
            if failure:
                return failure
        begin = time.monotonic()
        failure = wait_led(self.broker.bootstrap, self.expected, CREATE_LIMIT, self.broker.alive)
        self.creating_seconds += time.monotonic() - begin
        return failure

    def measure_at(self, size: int) -> None:
        pid = self.broker.pid
        self.put(f"create_{size}", measured(self.creating_seconds))
        rss, fds = resident(pid), descriptors(pid)
        self.put(f"rss_{size}", rss)
        self.put(f"fds_{size}", fds)
        if rss.measured:
            self.put(f"rss_per_{size}", measured((rss.value - self.base_rss) * 1024 / size))
        if fds.measured:
            self.put(f"fds_per_{size}", measured((fds.value - self.base_fds) / size))
        self.put(f"metadata_{size}", metadata_latency(self.broker.bootstrap, self.plan.metadata_samples))
        say(f"{self.name}: {size:,} partitions in {self.creating_seconds:.1f} s, "
            f"{rss.text()} MB, {fds.text(0)} descriptors")

    def active_topics(self) -> list[str]:
        return sorted(self.expected)[:self.plan.active_partitions // TOPIC_PARTITIONS]

    def throughput(self) -> None:
        topics, limit = self.active_topics(), self.plan.phase_time_limit
        if sum(self.expected[t] for t in topics) < self.plan.active_partitions:
            self.results.note(f"{self.name}: throughput over only {len(topics) * TOPIC_PARTITIONS} partitions")
        say(f"{self.name}: produce and consume over {len(topics) * TOPIC_PARTITIONS:,} partitions")
        bootstrap, joined = self.broker.bootstrap, ",".join(topics)
        label = f"{len(topics) * TOPIC_PARTITIONS:,} partitions"
        written, record = throughput.run_phase(self.broker, f"produce, {label}", lambda: throughput.run_client(
            "produce", bootstrap, joined, limit, count=self.plan.records, size=RECORD_SIZE,
            spread=TOPIC_PARTITIONS))
        self.results.phases.append(record)
        self.put("produce_mbps", megabytes_per_second(written))
        self.put("produce_cpu_gb", cpu_per_gigabyte(record.broker_cpu_seconds, record.data_bytes))
        if not throughput.usable(written):
            return
        read, record = throughput.run_phase(self.broker, f"consume, {label}", lambda: throughput.run_client(
            "consume", bootstrap, joined, limit, count=written["records"], partitions=TOPIC_PARTITIONS))
        self.results.phases.append(record)
        self.put("consume_mbps", megabytes_per_second(read))
        self.put("consume_cpu_gb", cpu_per_gigabyte(record.broker_cpu_seconds, record.data_bytes))

    def restarts(self) -> None:
        expected = dict(self.expected)
        say(f"{self.name}: kill -9 and restart with {len(expected):,} topics")
        self.broker.kill()
        waited = self.broker.await_restartable()
        seconds, failure = self.timed_launch(expected)
        note = f"{self.partitions:,} partitions"
        if waited:
            note += f"; after waiting {waited:.0f} s for ZooKeeper to expire the old session"
        self.put("kill_restart", measured(seconds, note) if not failure else not_available(failure))
        if failure:
            return
        self.put("fds_after_restart", descriptors(self.broker.pid))
        self.put("rss_after_restart", resident(self.broker.pid))
        say(f"{self.name}: clean shutdown and restart")
        begin = time.monotonic()
        try:
            self.broker.shut_down()
        except Exception as error:
            self.put("shutdown", not_available(str(error)))
            return
        self.put("shutdown", measured(time.monotonic() - begin))
        seconds, failure = self.timed_launch(expected)
        self.put("clean_restart", measured(seconds) if not failure else not_available(failure))

    def timed_launch(self, expected: dict[str, int]) -> tuple[float, str]:
        begin = time.monotonic()
        try:
            self.broker.launch()
        except Exception as error:
            return 0.0, f"did not start: {str(error).strip().splitlines()[0][:200]}"
        failure = wait_led(self.broker.bootstrap, expected, self.plan.restart_limit, self.broker.alive)
        return time.monotonic() - begin, failure


def single_session(name: str, plan: ScalePlan, workdir: Path, nofile: int, results: Results) -> None:
    results.loads.append(f"{TITLES[name]} alone {report.load_average()}")
    broker = make_single(name, workdir, nofile)
    try:
        say(f"{name}: starting one broker")
        broker.start()
        SingleRun(broker, plan, results).run()
    except Exception as error:  # a harness bug or a dead broker must not lose the other broker
        results.note(f"{name}: one-broker session stopped early: {type(error).__name__}: {error}")
    finally:
        if not broker.alive():
            results.note(f"{name}: broker not running at the end; log tail: {broker.log_tail()}")
        try:
            broker.close()
        except Exception as error:
            results.note(f"{name}: stopping failed: {error}")


# -- three brokers ---------------------------------------------------------------------------

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
        failure = wait_led(self.cluster.bootstrap, self.expected, CREATE_LIMIT)
        self.put("create", measured(time.monotonic() - begin) if not failure else not_available(failure))
        return not failure

    def wait_full_isr(self) -> bool:
        begin, deadline = time.monotonic(), time.monotonic() + self.plan.restart_limit
        while time.monotonic() < deadline:
            view = wire.cluster_view(self.cluster.bootstrap, timeout=30.0)
            if view is not None and view.led(self.expected) and all(
                    state.isr == 3 for topic in self.expected for state in view.topics[topic].values()):
                self.put("isr_full", measured(time.monotonic() - begin))
                return True
            time.sleep(0.5)
        self.put("isr_full", not_available(f"not within {self.plan.restart_limit:.0f} s"))
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


# -- the run ---------------------------------------------------------------------------------

def discard(directory: Path) -> None:
    """Delete a session's data and flush the disk, so its write-back does not slow the next one."""
    shutil.rmtree(directory, ignore_errors=True)
    os.sync()


def kafka_version() -> str:
    jars = sorted((REPO.parent / "shared" / "realkafka" / "libs").glob("kafka_*.jar"))
    return jars[0].stem if jars else "Kafka 3.9.0"


def machine_lines(plan: ScalePlan, nofile: int, results: Results, load_before: str) -> list[str]:
    return [f"- CPU: {report.cpu_model()}, {os.cpu_count()} cores; RAM {report.memory_gib()}; "
            f"load average {load_before} before the run, {report.load_average()} after; before each "
            f"session: {', '.join(results.loads)}",
            f"- OS: {platform.system()} {platform.release()}; Python {platform.python_version()}",
            f"- client: {report.client_versions()}",
            f"- pykbroker: {pykbroker_version()}; Kafka: {kafka_version()} from ../shared/realkafka "
            "(ZooKeeper mode, heap 1 GiB per broker)",
            f"- every broker process under RLIMIT_NOFILE {nofile:,}; plan `{plan.name}`: sizes "
            f"{', '.join(f'{s:,}' for s in plan.sizes)}; {plan.records:,} × 1 KB records over "
            f"{plan.active_partitions:,} partitions; cluster {plan.cluster_partitions:,} partitions, "
            f"{plan.cluster_records:,} × 1 KB records; phases limited to {plan.phase_time_limit:.0f} s"]


def render(results: Results, names: list[str], plan: ScalePlan, nofile: int, seconds: float,
           load_before: str, level: int, single: bool, cluster: bool) -> str:
    heading = "#" * level
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts = [f"{heading} Scale ({plan.name} run, {stamp}, {seconds:.0f} s)", "",
             *machine_lines(plan, nofile, results, load_before), "",
             "Ratio below 1 is better for time, memory, descriptors and CPU, above 1 for MB/s.", ""]
    if single:
        parts += [f"{heading}# One broker", "", results.single.markdown(names), ""]
    if cluster:
        parts += [f"{heading}# Three brokers, replication factor 3", "", results.cluster.markdown(names), ""]
    if results.notes:
        parts += ["Notes:", "", *[f"- {report.cell(note, 1000)}" for note in results.notes], ""]
    if results.phases:
        parts += [f"{heading}# Throughput phases", "", "CPU is a percentage of one core over the phase.", "",
                  report.phase_table(results.phases), ""]
    return "\n".join(parts)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Scale benchmark: pykbroker beside Kafka 3.9.0.")
    parser.add_argument("--quick", action="store_true", help="a few hundred partitions; no docs update")
    parser.add_argument("--sizes", help="partitions on one broker, e.g. 1000,5000,10000")
    parser.add_argument("--cluster-partitions", type=int, help="partitions of RF 3 in the cluster")
    parser.add_argument("--records", type=int, help="1 KB records per throughput phase")
    parser.add_argument("--broker", action="append", choices=list(BROKERS), help="repeatable")
    parser.add_argument("--no-single", action="store_true", help="skip the one-broker sessions")
    parser.add_argument("--no-cluster", action="store_true", help="skip the three-broker sessions")
    parser.add_argument("--nofile", type=int, default=20_000, help="RLIMIT_NOFILE of every broker")
    parser.add_argument("--no-docs", action="store_true", help="do not update docs/benchmarks.md")
    parser.add_argument("--workdir", type=Path, help="where the brokers keep their data")
    return parser.parse_args()


def chosen_plan(args: argparse.Namespace) -> ScalePlan:
    plan = QUICK if args.quick else FULL
    if args.sizes:
        plan = replace(plan, sizes=tuple(sorted(int(size) for size in args.sizes.split(","))))
    if args.cluster_partitions:
        plan = replace(plan, cluster_partitions=args.cluster_partitions)
    if args.records:
        plan = replace(plan, records=args.records, cluster_records=args.records)
    return plan


def run_sessions(names: list[str], plan: ScalePlan, args: argparse.Namespace, results: Results) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="pykbroker-scale-", dir=args.workdir))
    try:
        for session, skip in ((single_session, args.no_single), (cluster_session, args.no_cluster)):
            for name in [] if skip else names:
                session(name, plan, workdir / f"{session.__name__}-{name}", args.nofile, results)
                discard(workdir / f"{session.__name__}-{name}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    args = arguments()
    plan, names = chosen_plan(args), [n for n in BROKERS if n in (args.broker or BROKERS)]
    # The brokers run this checkout's pykbroker, whatever the interpreter has installed.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    results = Results(Table(single_rows(plan)), Table(cluster_rows(plan)))
    begin, load_before = time.monotonic(), report.load_average()
    run_sessions(names, plan, args, results)
    content = dict(results=results, names=names, plan=plan, nofile=args.nofile,
                   seconds=time.monotonic() - begin, load_before=load_before,
                   single=not args.no_single, cluster=not args.no_cluster)
    path = BENCH / "results" / ("scale-quick.md" if args.quick else "scale.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(level=1, **content))
    if not args.quick and not args.no_docs:
        report.update_docs(DOCS, render(level=3, **content), DOCS_START, DOCS_END)
    print()
    print(path.read_text())
    say(f"written to {path.relative_to(REPO)}" + ("" if args.quick or args.no_docs else " and docs/benchmarks.md"))


if __name__ == "__main__":
    main()
