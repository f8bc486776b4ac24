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
Three brokers with ZooKeeper (pykbroker.testkit for pykbroker, ../shared/realkafka/cluster.sh for
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
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import report, throughput  # noqa: E402
from bench.brokers import condensed, pykbroker_version  # noqa: E402
from bench.figure import Figure, measured, not_available  # noqa: E402
from bench.scale_brokers import make_single  # noqa: E402
from bench.scale_cluster import cluster_rows, cluster_session  # noqa: E402
from bench.scale_common import (  # noqa: E402
    CREATE_LIMIT,
    FULL,
    QUICK,
    RECORD_SIZE,
    TITLES,
    TOPIC_PARTITIONS,
    TOPICS_PER_REQUEST,
    Results,
    Row,
    ScalePlan,
    Table,
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

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DOCS = REPO / "docs" / "benchmarks.md"
DOCS_START = "<!-- bench:scale:start -->"
DOCS_END = "<!-- bench:scale:end -->"
BROKERS = ("pykbroker", "kafka")


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
            return 0.0, f"did not start: {condensed(error)[:300]}"
        failure = wait_led(self.broker.bootstrap, expected, self.plan.ready_limit, self.broker.alive)
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
    parser = argparse.ArgumentParser(prog="python -m bench.scale",
                                     description="Scale benchmark: pykbroker beside Kafka 3.9.0.")
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
    parser.add_argument("--output", type=Path, help="results file (default bench/results/scale.md, "
                                                     "or scale-quick.md with --quick)")
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
    path = args.output or BENCH / "results" / ("scale-quick.md" if args.quick else "scale.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(level=1, **content))
    if not args.quick and not args.no_docs:
        report.update_docs(DOCS, render(level=3, **content), DOCS_START, DOCS_END)
    print()
    print(path.read_text())
    say(f"written to {path}" + ("" if args.quick or args.no_docs else " and docs/benchmarks.md"))


if __name__ == "__main__":
    main()
