"""Kafka clients (confluent-kafka) for the benchmarks, each run in its own process.

    python -m bench.clients create-topic --bootstrap HOST:PORT --topic T --partitions 3
    python -m bench.clients produce      --bootstrap HOST:PORT --topic T --count N --size BYTES
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T --count N --partitions 3
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T --assign 1 --idle-stop 1
    python -m bench.clients produce      --bootstrap HOST:PORT --topic T1,T2 --spread 10 --acks all
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T1,T2 --partitions 10
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T --count N --default-consumer
    python -m bench.clients latency      --bootstrap HOST:PORT --topic T --rate 5000 --seconds 10
    python -m bench.clients produce      ... --config '{"security.protocol": "SSL", ...}'

`--spread P` writes round-robin to partitions 0..P-1 of every topic named (records spread over
all of them, as the scale benchmark needs); consume reads every partition of every topic named.
`--default-consumer` reads with librdkafka's default settings instead of the tuned ones (group
subscribe, as most applications run it). `latency` writes records at a fixed rate and reports the
time from produce() to the delivery report. `--config` adds client settings (a JSON object) to
every client of the command, e.g. the TLS and SASL settings of a secured listener.

Each command stops by itself (--time-limit) and prints one JSON object on its last stdout line:
{"ok": true, ...} or {"ok": false, "reason": "..."}. Running the clients in their own processes
keeps the harness out of their way and lets it kill a client that does not stop.

The consumer counts records rather than comparing positions with end offsets, so it does not
depend on the broker's watermarks being right.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import resource
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

PRODUCE_CHUNK = 10_000
CONSUME_BATCH = 10_000
CONSUME_TIMEOUT = 0.01
STALL_SECONDS = 10.0
MIB = 1024 * 1024
LOG_PREFIX = re.compile(r"^\S+ \[[^\]]*\] \[thrd:[^\]]*\]: ")


class RecentLogs(logging.Handler):
    """Keeps librdkafka's last log lines, to explain a failure."""

    def __init__(self, keep: int = 5) -> None:
        super().__init__(logging.WARNING)
        self.keep = keep
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        line = LOG_PREFIX.sub("", record.getMessage())
        self.lines = (self.lines + [line])[-self.keep:]

    def last(self) -> str:
        return self.lines[-1] if self.lines else ""


def client_logger(name: str) -> tuple[logging.Logger, RecentLogs]:
    logger = logging.getLogger(f"bench.{name}")
    logger.propagate = False
    recent = RecentLogs()
    logger.addHandler(recent)
    return logger, recent


def explain(reason: str, recent: RecentLogs) -> str:
    last = recent.last()
    return f"{reason}; client log: {last}" if last else reason


def process_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def producer_config(bootstrap: str, time_limit: float, logger: logging.Logger,
                    failures: list[str], acks: str = "1", extra: dict | None = None) -> dict:
    def on_delivery(error, _message):
        if error is not None:
            failures.append(str(error))

    return {
        "bootstrap.servers": bootstrap,
        "acks": acks,
        "linger.ms": 5,
        "batch.size": MIB,
        # librdkafka caps a batch at min(batch.size, message.max.bytes): lift the latter to 1 MiB.
        "message.max.bytes": MIB,
        "batch.num.messages": 1_000_000,
        "compression.type": "none",
        "enable.idempotence": False,
        "queue.buffering.max.messages": 10_000_000,
        "queue.buffering.max.kbytes": 2 * MIB,
        "message.timeout.ms": max(1000, int(time_limit * 1000)),
        "delivery.report.only.error": True,
        "on_delivery": on_delivery,
        "logger": logger,
        **(extra or {}),
    }


def consumer_config(bootstrap: str, logger: logging.Logger, extra: dict | None = None) -> dict:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{os.getpid()}",
        "enable.auto.commit": False,
        "enable.partition.eof": False,
        "auto.offset.reset": "earliest",
        "fetch.max.bytes": 64 * MIB,
        "max.partition.fetch.bytes": 16 * MIB,
        "receive.message.max.bytes": 65 * MIB,
        # A full local queue pauses fetching for fetch.queue.backoff.ms (1 s by default): with
        # 100 B records the default 100,000 queued messages fill in one fetch.
        "queued.max.messages.kbytes": 256 * 1024,
        "queued.min.messages": 2_000_000,
        "fetch.queue.backoff.ms": 10,
        "check.crcs": False,
        "logger": logger,
        **(extra or {}),
    }


def default_consumer_config(bootstrap: str, logger: logging.Logger, extra: dict | None = None) -> dict:
    """librdkafka's defaults: only what a group consumer reading from the start must name."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-default-{os.getpid()}",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "logger": logger,
        **(extra or {}),
    }


def produce_chunk(produce, topic: str, payload: bytes, chunk: int) -> int:
    """Queue up to `chunk` records; fewer when the client's queue is full."""
    for index in range(chunk):
        try:
            produce(topic, payload)
        except BufferError:
            return index
    return chunk


def produce_spread_chunk(produce, destinations: list[tuple[str, int]], first: int, payload: bytes,
                         chunk: int) -> int:
    """Queue up to `chunk` records round-robin over (topic, partition), the first at index
    `first`; fewer when the client's queue is full."""
    for index in range(chunk):
        topic, partition = destinations[(first + index) % len(destinations)]
        try:
            produce(topic, payload, partition=partition)
        except BufferError:
            return index
    return chunk


def queue_records(producer: Producer, topics: list[str], payload: bytes, count: int, deadline: float,
                  failures: list[str], spread: int = 0) -> int:
    sent = 0
    destinations = [(topic, partition) for partition in range(spread) for topic in topics]
    while sent < count and not failures and time.monotonic() < deadline:
        chunk = min(PRODUCE_CHUNK, count - sent)
        queued = (produce_spread_chunk(producer.produce, destinations, sent, payload, chunk)
                  if destinations else produce_chunk(producer.produce, topics[0], payload, chunk))
        sent += queued
        producer.poll(0 if queued else 0.005)
    return sent


def write_reason(delivered: int, count: int, failures: list[str], time_limit: float) -> str:
    if failures:
        return f"{len(failures)} records failed: {failures[0]}"
    if delivered == 0:
        return f"no record acknowledged within {time_limit:.0f} s"
    return f"time limit: {delivered} of {count} records written" if delivered < count else ""


def produce(bootstrap: str, topics: list[str], count: int, size: int, time_limit: float,
            acks: str = "1", spread: int = 0, extra: dict | None = None) -> dict:
    """Write `count` records of `size` bytes (to the first topic, or with `spread` round-robin
    over that many partitions of every topic); `seconds` runs from the first produce() until
    every record is acknowledged."""
    logger, recent = client_logger("producer")
    failures: list[str] = []
    producer = Producer(producer_config(bootstrap, time_limit, logger, failures, acks, extra))
    producer.list_topics(topics[0], timeout=min(10.0, time_limit))
    payload = os.urandom(size)
    cpu_before, begin = process_cpu_seconds(), time.monotonic()
    deadline = begin + time_limit
    sent = queue_records(producer, topics, payload, count, deadline, failures, spread)
    unacknowledged = producer.flush(max(0.1, deadline - time.monotonic()))
    seconds, cpu = time.monotonic() - begin, process_cpu_seconds() - cpu_before
    delivered = sent - len(failures) - unacknowledged
    reason = write_reason(delivered, count, failures, time_limit)
    producer.purge()
    producer.flush(1)
    result = {"ok": delivered > 0, "records": delivered, "bytes": delivered * size,
              "seconds": seconds, "client_cpu_seconds": cpu, "failed": len(failures)}
    if reason:
        result["reason"] = explain(reason, recent)
    return result


def take_batch(consumer: Consumer, wanted: int, errors: list[str]) -> tuple[int, int]:
    """(records, value bytes) of one consume() call; errors are collected, not counted.

    consume() returns when it has `wanted` records or after its timeout: asking for no more than
    the records still missing, with a short timeout, keeps that wait out of the measurement.
    """
    batch = consumer.consume(max(1, min(CONSUME_BATCH, wanted)), timeout=CONSUME_TIMEOUT)
    good = [message for message in batch if message.error() is None]
    if len(good) != len(batch):
        errors.extend(str(message.error()) for message in batch if message.error() is not None)
    return len(good), sum(map(len, good))


def wait_until(moment: float) -> None:
    """Sleep until a time.monotonic() moment (CLOCK_MONOTONIC: the same in every process)."""
    delay = moment - time.monotonic()
    if delay > 0:
        time.sleep(delay)


def read_stop_reason(records: int, count: int, errors: list[str], deadline: float) -> str:
    if records >= count:
        return ""
    why = errors[0] if errors else f"{records} of {count} records read"
    return f"{'stalled' if time.monotonic() < deadline else 'time limit'}: {why}"


def read_records(consumer: Consumer, count: int, deadline: float, idle_stop: float,
                 errors: list[str]) -> tuple[int, int, float]:
    """(records, value bytes, time of the last record) once `count` are read, the consumer has
    been idle for `idle_stop` seconds after a first record (0: never), stalled, or time is up."""
    records = value_bytes = 0
    last_record_at = time.monotonic()
    while records < count and time.monotonic() < deadline:
        taken, taken_bytes = take_batch(consumer, count - records, errors)
        records, value_bytes = records + taken, value_bytes + taken_bytes
        last_record_at = time.monotonic() if taken else last_record_at
        quiet = time.monotonic() - last_record_at
        if quiet > STALL_SECONDS or (idle_stop and records and quiet > idle_stop):
            break
    return records, value_bytes, last_record_at


def consume(bootstrap: str, topics: list[str], count: int, partitions: list[int], time_limit: float,
            idle_stop: float = 0.0, start_at: float = 0.0, extra: dict | None = None) -> dict:
    """Read `partitions` of every topic from offset 0 (see read_records for when it stops).
    `seconds` runs from assign() to the arrival of the last record; `begin` is when assign()
    was called."""
    logger, recent = client_logger("consumer")
    consumer = Consumer(consumer_config(bootstrap, logger, extra))
    consumer.list_topics(topics[0], timeout=min(10.0, time_limit))
    wait_until(start_at)
    errors: list[str] = []
    cpu_before, begin = process_cpu_seconds(), time.monotonic()
    consumer.assign([TopicPartition(topic, partition, 0)
                     for topic in topics for partition in partitions])
    deadline = begin + time_limit
    records, value_bytes, last_record_at = read_records(consumer, count, deadline, idle_stop, errors)
    seconds = (last_record_at if records else time.monotonic()) - begin
    cpu = process_cpu_seconds() - cpu_before
    consumer.close()
    result = {"ok": records > 0, "records": records, "bytes": value_bytes, "seconds": seconds,
              "begin": begin, "client_cpu_seconds": cpu, "errors": len(errors)}
    # Side by side (idle_stop), a consumer cannot know its share: only reading nothing is a failure.
    reason = "" if idle_stop and records else read_stop_reason(records, count, errors, deadline)
    if reason:
        result["reason"] = explain(reason, recent)
    return result


def consume_with_defaults(bootstrap: str, topics: list[str], count: int, time_limit: float,
                          extra: dict | None = None) -> dict:
    """Subscribe with librdkafka's default settings and read `count` records; `seconds` runs from
    the group's assignment to the arrival of the last record."""
    logger, recent = client_logger("consumer")
    consumer = Consumer(default_consumer_config(bootstrap, logger, extra))
    assigned: list[float] = []
    cpu_before, begin = process_cpu_seconds(), time.monotonic()
    consumer.subscribe(topics, on_assign=lambda *_: assigned.append(time.monotonic()))
    errors: list[str] = []
    records, value_bytes, last_record_at = read_records(consumer, count, begin + time_limit, 0.0, errors)
    start = assigned[0] if assigned else begin
    seconds = (last_record_at if records else time.monotonic()) - start
    cpu = process_cpu_seconds() - cpu_before
    consumer.close()
    result = {"ok": records > 0, "records": records, "bytes": value_bytes, "seconds": seconds,
              "begin": start, "client_cpu_seconds": cpu, "errors": len(errors)}
    reason = read_stop_reason(records, count, errors, begin + time_limit)
    if reason:
        result["reason"] = explain(reason, recent)
    return result


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def produce_at_rate(bootstrap: str, topic: str, size: int, rate: int, seconds: float, time_limit: float,
                    acks: str = "1", extra: dict | None = None) -> dict:
    """Write `rate` records of `size` bytes a second for `seconds` (one produce() every 1/rate s,
    batching as producer_config); each record's latency is its delivery report's time minus the
    time of its produce() call. Figures in milliseconds."""
    logger, recent = client_logger("producer")
    failures: list[str] = []
    latencies: list[float] = []

    def on_delivery(error, _message, sent_at: float) -> None:
        if error is not None:
            failures.append(str(error))
        else:
            latencies.append(time.monotonic() - sent_at)

    config = producer_config(bootstrap, time_limit, logger, failures, acks, extra)
    config["delivery.report.only.error"] = False
    del config["on_delivery"]
    producer = Producer(config)
    producer.list_topics(topic, timeout=min(10.0, time_limit))
    payload, total = os.urandom(size), int(rate * seconds)
    begin = time.monotonic()
    for index in range(total):
        wait_until(begin + index / rate)
        sent_at = time.monotonic()
        producer.produce(topic, payload, on_delivery=lambda e, m, t=sent_at: on_delivery(e, m, t))
        producer.poll(0)
    producer.flush(max(1.0, begin + time_limit - time.monotonic()))
    ordered = sorted(latencies)
    result = {"ok": bool(ordered) and not failures, "records": len(ordered), "bytes": len(ordered) * size,
              "seconds": time.monotonic() - begin, "failed": len(failures)}
    if ordered:
        result.update({"p50_ms": percentile(ordered, 0.50) * 1000, "p99_ms": percentile(ordered, 0.99) * 1000,
                       "max_ms": ordered[-1] * 1000})
    if failures or len(ordered) < total:
        why = failures[0] if failures else f"{len(ordered)} of {total} records acknowledged"
        result["reason"] = explain(why, recent)
    return result


def topic_partitions(client, topic: str, timeout: float) -> int:
    metadata = client.list_topics(topic, timeout=timeout).topics.get(topic)
    if metadata is None or metadata.error is not None:
        return 0
    return len(metadata.partitions)


def create_with_admin(bootstrap: str, topic: str, partitions: int, timeout: float,
                      extra: dict | None = None) -> str:
    """'' when created (or already there), else why CreateTopics did not work."""
    admin = AdminClient({"bootstrap.servers": bootstrap, **(extra or {})})
    future = admin.create_topics([NewTopic(topic, partitions, 1)],
                                 operation_timeout=timeout, request_timeout=timeout)[topic]
    try:
        future.result(timeout + 1)
    except KafkaException as error:
        if error.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            return str(error.args[0])
    except Exception as error:  # the admin client gave no answer in time
        return repr(error)
    return ""


def create_topic(bootstrap: str, topic: str, partitions: int, time_limit: float,
                 extra: dict | None = None) -> dict:
    """CreateTopics when the broker serves it, else auto-creation through a Metadata request."""
    deadline = time.monotonic() + time_limit
    admin_failure = create_with_admin(bootstrap, topic, partitions, min(10.0, time_limit / 2), extra)
    method = "CreateTopics" if not admin_failure else "auto-creation"
    producer = Producer({"bootstrap.servers": bootstrap, "allow.auto.create.topics": True,
                         "logger": client_logger("creator")[0], **(extra or {})})
    found = 0
    while not found and time.monotonic() < deadline:
        found = topic_partitions(producer, topic, timeout=max(0.5, deadline - time.monotonic()))
        if not found:
            time.sleep(0.1)
    if not found:
        return {"ok": False, "reason": f"topic not created (CreateTopics: {admin_failure})"}
    return {"ok": True, "partitions": found, "method": method, "admin_failure": admin_failure}


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["create-topic", "produce", "consume", "latency"])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--assign", default="", help="partitions to read, e.g. 0,2 (default: all)")
    parser.add_argument("--idle-stop", type=float, default=0.0,
                        help="consume: stop this many seconds after the last record (0: count only)")
    parser.add_argument("--start-at", type=float, default=0.0,
                        help="consume: begin at this time.monotonic() moment, to start together")
    parser.add_argument("--time-limit", type=float, default=30.0)
    parser.add_argument("--acks", default="1", help="produce: acks (1 or all)")
    parser.add_argument("--spread", type=int, default=0,
                        help="produce: round-robin over this many partitions of every topic")
    parser.add_argument("--default-consumer", action="store_true",
                        help="consume: librdkafka's default settings, group subscribe")
    parser.add_argument("--rate", type=int, default=5000, help="latency: records a second")
    parser.add_argument("--seconds", type=float, default=10.0, help="latency: how long to write")
    parser.add_argument("--config", default="{}", help="extra client settings, a JSON object")
    return parser.parse_args()


def run(args: argparse.Namespace) -> dict:
    extra = json.loads(args.config)
    if args.command == "create-topic":
        return create_topic(args.bootstrap, args.topic, args.partitions, args.time_limit, extra)
    topics = args.topic.split(",")
    if args.command == "produce":
        return produce(args.bootstrap, topics, args.count, args.size, args.time_limit, args.acks,
                       args.spread, extra)
    if args.command == "latency":
        return produce_at_rate(args.bootstrap, topics[0], args.size, args.rate, args.seconds,
                               args.time_limit, args.acks, extra)
    if args.default_consumer:
        return consume_with_defaults(args.bootstrap, topics, args.count, args.time_limit, extra)
    partitions = ([int(p) for p in args.assign.split(",")] if args.assign
                  else list(range(args.partitions)))
    return consume(args.bootstrap, topics, args.count, partitions, args.time_limit,
                   args.idle_stop, args.start_at, extra)


def main() -> None:
    args = arguments()
    try:
        result = run(args)
    except Exception as error:  # report, never a traceback instead of a result
        result = {"ok": False, "reason": f"{type(error).__name__}: {error}"}
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
