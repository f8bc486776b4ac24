"""What the scale benchmark's parts share: the plan, the result tables, and the measurements of a
running broker (resident memory, descriptors, CPU, Metadata round trips, topics created and led).
See bench/scale.py for what is measured and how."""
from __future__ import annotations

import logging
import statistics
import struct
import time
from dataclasses import dataclass, field

from bench import proc, report, throughput, wire
from bench.figure import Figure, measured, not_available, ratio_text

TITLES = {"pykbroker": "pykbroker", "kafka": "Kafka 3.9.0"}
TOPIC_PARTITIONS = 10
TOPICS_PER_REQUEST = 50
RECORD_SIZE = 1024
MIB, GIB = 2**20, 2**30
CREATE_LIMIT = 120.0      # seconds for one CreateTopics request, and for Metadata to show its topics


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
    ready_limit: float            # seconds for Metadata to list everything after a restart, or after
                                  # the cluster's CreateTopics requests


FULL = ScalePlan("full", (1000, 5000, 10000), records=262_144, active_partitions=1000,
                 cluster_partitions=3000, cluster_records=65_536, metadata_samples=7,
                 idle_seconds=20.0, phase_time_limit=120.0, ready_limit=900.0)
QUICK = ScalePlan("quick", (100, 300), records=20_000, active_partitions=100,
                  cluster_partitions=150, cluster_records=10_000, metadata_samples=5,
                  idle_seconds=5.0, phase_time_limit=30.0, ready_limit=120.0)


def say(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# -- the tables ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    key: str
    label: str
    digits: int = 1


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
    return f"Metadata incomplete after {limit:.0f} s ({what_is_missing(view, expected)})"


def what_is_missing(view: wire.ClusterView | None, expected: dict[str, int]) -> str:
    if view is None:
        return "no answer"
    listed = [topic for topic in expected if topic in view.topics]
    states = [state for topic in listed for state in view.topics[topic].values()]
    leaderless = sum(1 for state in states if state.leader < 0)
    errors = sorted({state.error_code for state in states if state.error_code})
    return (f"{len(listed):,} of {len(expected):,} topics listed, {len(states):,} partitions, "
            f"{leaderless:,} without a leader" + (f", partition errors {errors}" if errors else ""))


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


def report_logger() -> logging.Logger:
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
