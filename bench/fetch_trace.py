"""Where a consumer's time goes, fetch by fetch: librdkafka's own fetch log, summarised.

    python -m bench.fetch_trace --bootstrap HOST:PORT --topic T --count N            # default consumer
    python -m bench.fetch_trace --bootstrap HOST:PORT --topic T --count N --tuned --assign 0
    python -m bench.fetch_trace --compare cluster [--size 1024] [--records 300000] [--rounds 2]
    python -m bench.fetch_trace --compare single --size 100 --records 1000000

A consumer reads N records with librdkafka's `debug=fetch,protocol` log written to a file by the
client library itself (its own wall-clock timestamps, not delayed by the application): by default
the bench's default consumer (confluent-kafka's defaults, subscribe() as a fresh group's member,
consume() in a loop, as bench/clients.py), with `--tuned` the bench's tuned consumer, assigned
all partitions or those of `--assign`. `--set KEY=VALUE` adds a librdkafka property.

The summary gives, per broker connection: the fetch responses and the record bytes each brought
per partition; librdkafka's round trip (request sent to response received) and the time from the
response to its records being queued (parsing); and every pause of the partitions it fetches:
a full local queue (`queued.min.messages`, `queued.max.messages.kbytes`) stops fetching for
`fetch.queue.backoff.ms` (1 s by default). For the application: its time from the assignment
to the last record, and how much of it consume() returned nothing (idle).

`--compare single|cluster` starts pykbroker and Kafka 3.9.0 (one broker each, or three with
replication factor 3 and cluster.sh's settings, as bench/cluster_throughput.py), writes the same
number of records to a fresh 3-partition topic on each (linger.ms=5, batch.size=1 MiB; acks=1, or
acks=all on the clusters) and traces the consumer on both, alternating, `--rounds` times; every
broker it started is stopped at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPO = Path(__file__).resolve().parent.parent
TIME_LIMIT = 120.0
QUIET_STOP = 10.0   # a traced consumer stops after this long without a record
DESCRIPTORS = 20_000

LOG_LINE = re.compile(r"^%\d+\|(?P<time>\d+\.\d+)\|[^|]*\|[^|]*\| \[thrd:(?P<thread>[^\]]*)\]: (?P<text>.*)$")
RESPONSE = re.compile(r"Received FetchResponse \(v\d+, (?P<bytes>\d+) bytes, CorrId \d+, rtt (?P<rtt>[\d.]+)ms\)")
ENQUEUED = re.compile(r"Enqueue \d+ message\(s\) \((?P<bytes>\d+) bytes.* \[\d+\] fetch queue")
STOPPED = re.compile(r"\[(?P<partition>\d+)\] in state .*\) is not fetchable: (?P<reason>queued\.[a-z.]+ exceeded)")
RESUMED = re.compile(r"\[(?P<partition>\d+)\] in state .*\) is fetchable")


@dataclass
class Connection:
    """What one broker connection's thread logged."""
    responses: list[tuple[float, float]] = field(default_factory=list)  # (received, from the assignment; rtt ms)
    parse_ms: list[float] = field(default_factory=list)
    partition_bytes: list[int] = field(default_factory=list)          # record bytes per partition and fetch
    pauses: list[tuple[float, float, str]] = field(default_factory=list)  # (from, seconds, reason), from the assignment
    _received_at: float | None = None
    _paused: dict[str, tuple[float, str]] = field(default_factory=dict)

    def on_line(self, at: float, text: str, origin: float) -> None:
        if match := RESPONSE.search(text):
            self.responses.append((at - origin, float(match["rtt"])))
            self._received_at = at
        elif match := ENQUEUED.search(text):
            self.partition_bytes.append(int(match["bytes"]))
            if self._received_at is not None:
                self.parse_ms.append(1000 * (at - self._received_at))
                self._received_at = None
        elif match := STOPPED.search(text):
            self._paused.setdefault(match["partition"], (at, match["reason"]))
        elif (match := RESUMED.search(text)) and match["partition"] in self._paused:
            since, reason = self._paused.pop(match["partition"])
            self.pauses.append((since - origin, at - since, reason))


def parse_log(text: str, origin: float) -> dict[str, Connection]:
    """The connections of a librdkafka log (broker threads by name), times from `origin`."""
    connections: dict[str, Connection] = {}
    for line in text.splitlines():
        match = LOG_LINE.match(line)
        if match is None or "/" not in match["thread"] or match["thread"].startswith(("main", "app")):
            continue
        name = match["thread"].split("/")[0]
        connections.setdefault(name, Connection()).on_line(float(match["time"]), match["text"], origin)
    return {name: c for name, c in connections.items() if c.responses or c.partition_bytes}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def summary_lines(connections: dict[str, Connection], result: dict) -> list[str]:
    lines = [f"  {result.get('records', 0):,} records in {result.get('seconds', 0):.2f} s from the assignment; "
             f"consume() idle {result.get('idle', 0):.2f} s"]
    until = result.get("seconds", 0.0) + 0.001  # responses after the last record (empty long polls) left out
    for name, conn in sorted(connections.items()):
        rtts = [rtt for at, rtt in conn.responses if at <= until]
        partition_kib = statistics.mean(conn.partition_bytes) / 1024 if conn.partition_bytes else 0.0
        lines.append(
            f"  {name}: {len(rtts)} fetch responses, {partition_kib:,.0f} KiB of records per partition "
            f"and fetch; round trip median {statistics.median(rtts) if rtts else 0:.1f} ms, p90 "
            f"{percentile(rtts, 0.9):.1f} ms, sum {sum(rtts) / 1000:.2f} s; parse median "
            f"{statistics.median(conn.parse_ms) if conn.parse_ms else 0:.1f} ms")
        for since, seconds, reason, partitions in grouped_pauses(conn.pauses):
            lines.append(f"      paused at {since:6.2f} s for {seconds:.2f} s ({partitions} partition(s)): {reason}")
    return lines


def grouped_pauses(pauses: list[tuple[float, float, str]]) -> list[tuple[float, float, str, int]]:
    """The pauses of partitions that stopped together (within 50 ms) as one line each."""
    grouped: list[tuple[float, float, str, int]] = []
    for since, seconds, reason in sorted(pauses):
        if grouped and since - grouped[-1][0] < 0.05 and reason == grouped[-1][2]:
            first, longest, _, count = grouped[-1]
            grouped[-1] = (first, max(longest, seconds), reason, count + 1)
        else:
            grouped.append((since, seconds, reason, 1))
    return grouped


# -- the traced consumer (its own process) ------------------------------------------------------

def trace_consume(args: argparse.Namespace) -> dict:
    """Read `count` records with librdkafka's fetch log on stderr; the assignment time is on the
    same clock as the log (time.time())."""
    import logging

    from confluent_kafka import Consumer, TopicPartition

    from bench import clients

    extra = {"debug": "fetch,protocol", **dict(s.split("=", 1) for s in args.set)}
    make = clients.consumer_config if args.tuned else clients.default_consumer_config
    config = make(args.bootstrap, logging.getLogger("bench.fetch_trace"), extra)
    del config["logger"]  # librdkafka then writes its log to stderr itself, as it happens
    consumer = Consumer(config)
    consumer.list_topics(args.topic, timeout=10)
    assigned: list[float] = []
    if args.tuned:
        partitions = [int(p) for p in args.assign.split(",")] if args.assign else list(range(args.partitions))
        assigned.append(time.time())
        consumer.assign([TopicPartition(args.topic, p, 0) for p in partitions])
    else:
        consumer.subscribe([args.topic], on_assign=lambda _c, parts: assigned.append(time.time()) if parts else None)
    records, idle, last = read_counting_idle(consumer, args.count)
    consumer.close()
    begin = assigned[0] if assigned else last
    return {"records": records, "seconds": last - begin, "idle": idle, "assigned_at": begin}


def read_counting_idle(consumer, count: int) -> tuple[int, float, float]:
    """(records, seconds consume() returned nothing between the first and the last record, time
    of the last record)."""
    from bench import clients

    records, idle, waiting, last, errors = 0, 0.0, 0.0, time.time(), []
    deadline = time.monotonic() + TIME_LIMIT
    while records < count and time.monotonic() < deadline and time.time() - last < QUIET_STOP:
        began = time.time()
        taken, _ = clients.take_batch(consumer, count - records, errors)
        records += taken
        if taken:
            last, idle, waiting = time.time(), idle + waiting, 0.0
        elif records:
            waiting += time.time() - began
    return records, idle, last


def traced_run(bootstrap: str, topic: str, count: int, log_path: Path, options: list[str]) -> tuple[dict, str]:
    """Run the traced consumer in its own process; (its result, its librdkafka log)."""
    command = [sys.executable, "-m", "bench.fetch_trace", "--consumer", "--bootstrap", bootstrap,
               "--topic", topic, "--count", str(count), *options]
    with open(log_path, "w") as log:
        done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, stderr=log, text=True,
                              timeout=TIME_LIMIT + 60, stdin=subprocess.DEVNULL)
    lines = done.stdout.strip().splitlines()
    result = json.loads(lines[-1]) if lines else {"records": 0, "seconds": 0.0, "idle": 0.0, "assigned_at": 0.0}
    return result, log_path.read_text(errors="replace")


def trace_and_summarise(bootstrap: str, topic: str, count: int, log_path: Path, options: list[str]) -> list[str]:
    result, log = traced_run(bootstrap, topic, count, log_path, options)
    return summary_lines(parse_log(log, result["assigned_at"]), result)


# -- pykbroker beside Kafka ---------------------------------------------------------------------

def write_records(kind: str, cluster, size: int, records: int) -> str:
    """A fresh 3-partition topic holding `records` records of `size` bytes; its name."""
    from bench import throughput
    from bench.cluster_throughput import wait_full_isr

    topic = throughput.fresh_topic(f"trace-{size}b")
    replication = 3 if kind == "cluster" else 1
    created = throughput.run_client("create-topic", cluster.bootstrap, topic, 60, partitions=3,
                                    replication=replication)
    reason = "" if created.get("ok") else created.get("reason", "topic not created")
    reason = reason or (wait_full_isr(cluster.bootstrap, topic, 60) if kind == "cluster" else "")
    written = throughput.run_client("produce", cluster.bootstrap, topic, TIME_LIMIT, count=records, size=size,
                                    acks="all" if kind == "cluster" else "1") if not reason else {}
    if reason or written.get("records") != records:
        raise RuntimeError(reason or written.get("reason", "records not written"))
    return topic


def start(kind: str, name: str, workdir: Path):
    from bench.scale_brokers import make_cluster, make_single

    if kind == "cluster":
        return make_cluster(name, workdir / name, DESCRIPTORS).start()
    broker = make_single(name, workdir / name, DESCRIPTORS)
    broker.start()
    return broker


def compare(kind: str, size: int, records: int, rounds: int, options: list[str]) -> None:
    """Start pykbroker and Kafka (`kind`: single or cluster), write to each, trace both in turn."""
    with tempfile.TemporaryDirectory(prefix="bench-fetch-trace-") as directory:
        workdir, started = Path(directory), {}
        try:
            for name in ("pykbroker", "kafka"):
                started[name] = start(kind, name, workdir)
            topics = {name: write_records(kind, broker, size, records) for name, broker in started.items()}
            for index in range(rounds):
                for name in (("pykbroker", "kafka") if index % 2 == 0 else ("kafka", "pykbroker")):
                    print(f"{name}, round {index + 1}:", flush=True)
                    log_path = workdir / f"{name}-{index}.log"
                    for line in trace_and_summarise(started[name].bootstrap, topics[name], records, log_path, options):
                        print(line, flush=True)
        finally:
            for broker in started.values():
                broker.close()


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default="")
    parser.add_argument("--topic", default="")
    parser.add_argument("--count", type=int, default=0, help="records to read")
    parser.add_argument("--tuned", action="store_true", help="the bench's tuned consumer, assigned")
    parser.add_argument("--assign", default="", help="--tuned: partitions to read, e.g. 0 (default: all)")
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an extra librdkafka property for the consumer")
    parser.add_argument("--compare", choices=["single", "cluster"], help="start pykbroker and Kafka, trace both")
    parser.add_argument("--size", type=int, default=1024, help="--compare: record size")
    parser.add_argument("--records", type=int, default=300_000, help="--compare: records written and read")
    parser.add_argument("--rounds", type=int, default=2, help="--compare: rounds per broker")
    parser.add_argument("--consumer", action="store_true", help=argparse.SUPPRESS)  # the traced process
    return parser.parse_args()


def consumer_options(args: argparse.Namespace) -> list[str]:
    options = ["--tuned"] if args.tuned else []
    options += ["--assign", args.assign] if args.assign else []
    return options + [item for setting in args.set for item in ("--set", setting)]


def main() -> None:
    args = arguments()
    if args.consumer:
        print(json.dumps(trace_consume(args)), flush=True)
    elif args.compare:
        compare(args.compare, args.size, args.records, args.rounds, consumer_options(args))
    elif args.bootstrap and args.topic and args.count:
        log_path = Path(tempfile.gettempdir()) / f"fetch-trace-{os.getpid()}.log"
        for line in trace_and_summarise(args.bootstrap, args.topic, args.count, log_path, consumer_options(args)):
            print(line)
        print(f"  librdkafka's log: {log_path}")
    else:
        raise SystemExit("--bootstrap, --topic and --count, or --compare")


if __name__ == "__main__":
    main()
