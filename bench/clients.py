"""Kafka clients (confluent-kafka) for the benchmarks, each run in its own process.

    python -m bench.clients create-topic --bootstrap HOST:PORT --topic T --partitions 3
    python -m bench.clients produce      --bootstrap HOST:PORT --topic T --count N --size BYTES
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T --count N --partitions 3
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T --assign 1 --idle-stop 1
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T --count N --default
    python -m bench.clients produce      --bootstrap HOST:PORT --topic T1,T2 --spread 10 --acks all
    python -m bench.clients consume      --bootstrap HOST:PORT --topic T1,T2 --partitions 10
    python -m bench.clients latency      --bootstrap HOST:PORT --topic T --rate 5000 --seconds 15 --acks all
    python -m bench.clients create-topic --bootstrap HOST:PORT --topic T --replication 3

`--spread P` writes round-robin to partitions 0..P-1 of every topic named (records spread over
all of them, as the scale benchmark needs); consume reads every partition of every topic named.
`--set KEY=VALUE` (repeatable) adds a librdkafka property to the producer or consumer;
`--config JSON` adds several (a JSON object), e.g. the TLS and SASL settings of a listener.

`latency` writes records at a fixed rate and reports produce latency: the time from produce() to
the delivery report, both taken in the producer process (p50, p99, max over the records after a
warm-up).

Each command stops by itself (--time-limit) and prints one JSON object on its last stdout line:
{"ok": true, ...} or {"ok": false, "reason": "..."}. Running the clients in their own processes
keeps the harness out of their way and lets it kill a client that does not stop.

`--default` runs the consumer most applications run: confluent-kafka's defaults apart from
bootstrap.servers, group.id, auto.offset.reset=earliest and enable.auto.commit=false, joining a
group with subscribe() and calling consume() in a loop; its time runs from the assignment of the
partitions (the end of the group join, reported apart as join_seconds) until the last record.
Without it the consumer is tuned (consumer_config) and assigned its partitions.

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
import struct
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
    """confluent-kafka's defaults, apart from what any consumer of a whole topic sets."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-default-{os.getpid()}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
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
                 errors: list[str], first_wait: float = STALL_SECONDS) -> tuple[int, int, float]:
    """(records, value bytes, time of the last record) once `count` are read, the consumer has
    been idle for `idle_stop` seconds after a first record (0: never), stalled (no first record
    within `first_wait` seconds, or none for STALL_SECONDS since), or time is up."""
    records = value_bytes = 0
    last_record_at = time.monotonic()
    while records < count and time.monotonic() < deadline:
        taken, taken_bytes = take_batch(consumer, count - records, errors)
        records, value_bytes = records + taken, value_bytes + taken_bytes
        last_record_at = time.monotonic() if taken else last_record_at
        quiet = time.monotonic() - last_record_at
        if quiet > (STALL_SECONDS if records else first_wait) or (
                idle_stop and records and quiet > idle_stop):
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


def consume_subscribed(bootstrap: str, topics: list[str], count: int, time_limit: float,
                       extra: dict | None = None) -> dict:
    """Read `count` records as a group member with the client's default settings; `seconds`
    runs from the assignment of the partitions (the end of the group join) until the last
    record, `join_seconds` from subscribe() until that assignment."""
    logger, recent = client_logger("consumer")
    consumer = Consumer(default_consumer_config(bootstrap, logger, extra))
    consumer.list_topics(topics[0], timeout=min(10.0, time_limit))
    errors: list[str] = []
    assigned: list[float] = []

    def on_assign(_consumer, partitions) -> None:
        if partitions and not assigned:
            assigned.append(time.monotonic())

    cpu_before, subscribed = process_cpu_seconds(), time.monotonic()
    consumer.subscribe(topics, on_assign=on_assign)
    deadline = subscribed + time_limit
    # A group join may take a while (a broker's rebalance delay): wait for the first record
    # as long as the time limit allows.
    records, value_bytes, last_record_at = read_records(consumer, count, deadline, 0.0, errors,
                                                        first_wait=time_limit)
    begin = assigned[0] if assigned else subscribed
    seconds = (last_record_at if records else time.monotonic()) - begin
    cpu = process_cpu_seconds() - cpu_before
    consumer.close()
    result = {"ok": records > 0, "records": records, "bytes": value_bytes, "seconds": seconds,
              "begin": begin, "join_seconds": begin - subscribed, "client_cpu_seconds": cpu,
              "errors": len(errors)}
    reason = read_stop_reason(records, count, errors, deadline)
    if reason:
        result["reason"] = explain(reason, recent)
    return result


class DeliveryTimes:
    """Produce latency of every record sent after the warm-up: delivery report time minus the
    produce() time the record carries in its first 8 bytes."""

    def __init__(self, measure_from: float) -> None:
        self.measure_from = measure_from
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self.delivered = 0

    def on_delivery(self, error, message) -> None:
        now = time.monotonic()
        if error is not None:
            self.failures.append(str(error))
            return
        self.delivered += 1
        sent_at = struct.unpack_from("!d", message.value())[0]
        if sent_at >= self.measure_from:
            self.latencies.append(now - sent_at)


def percentile(ordered: list[float], share: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    return ordered[min(len(ordered) - 1, max(0, int(round(share * len(ordered))) - 1))]


def send_paced(producer: Producer, topic: str, filler: bytes, rate: float, total: int) -> float:
    """Write `total` records at `rate` per second (each carrying its produce() time); the records
    due are written every millisecond, and delivery reports are served in between. Returns the
    moment the last record was written."""
    begin, sent = time.monotonic(), 0
    now = begin
    while sent < total:
        now = time.monotonic()
        due = min(total, int((now - begin) * rate) + 1)
        while sent < due:
            now = time.monotonic()
            try:
                producer.produce(topic, struct.pack("!d", now) + filler)
            except BufferError:
                break
            sent += 1
        producer.poll(max(0.001, begin + sent / rate - time.monotonic()))
    return now


def latency(bootstrap: str, topic: str, rate: float, seconds: float, warmup: float, size: int,
            acks: str, time_limit: float, extra: dict | None = None) -> dict:
    """Write records of `size` bytes at `rate` per second for `warmup` + `seconds`; the latency
    figures (ms) cover the records written after the warm-up."""
    logger, recent = client_logger("latency")
    producer_failures: list[str] = []
    config = producer_config(bootstrap, time_limit, logger, producer_failures, acks, extra)
    times = DeliveryTimes(measure_from=float("inf"))  # set once the metadata is in
    config.update({"delivery.report.only.error": False, "on_delivery": times.on_delivery})
    producer = Producer(config)
    producer.list_topics(topic, timeout=min(10.0, time_limit))
    filler = os.urandom(max(0, size - 8))
    # One record acknowledged first: connections to the leaders are up before the clock starts.
    producer.produce(topic, struct.pack("!d", time.monotonic()) + filler)
    producer.flush(min(10.0, time_limit))
    cpu_before, begin = process_cpu_seconds(), time.monotonic()
    times.measure_from = begin + warmup
    total = int(rate * (warmup + seconds))
    last_sent = send_paced(producer, topic, filler, rate, total)
    unacknowledged = producer.flush(max(0.1, begin + time_limit - time.monotonic()))
    cpu = process_cpu_seconds() - cpu_before
    ordered = sorted(times.latencies)
    result = {"ok": bool(ordered), "records": len(ordered), "bytes": len(ordered) * size,
              "seconds": max(1e-9, last_sent - times.measure_from), "sent": total,
              "delivered": times.delivered, "failed": len(times.failures),
              "rate": (total - 1) / max(1e-9, last_sent - begin), "client_cpu_seconds": cpu}
    if ordered:
        result.update({"p50_ms": 1000 * percentile(ordered, 0.50),
                       "p99_ms": 1000 * percentile(ordered, 0.99),
                       "max_ms": 1000 * ordered[-1],
                       "mean_ms": 1000 * sum(ordered) / len(ordered)})
    if times.failures or unacknowledged:
        why = times.failures[0] if times.failures else f"{unacknowledged} records unacknowledged"
        result["reason"] = explain(f"{len(times.failures) + unacknowledged} of {total} records "
                                   f"not delivered: {why}", recent)
    producer.purge()
    producer.flush(1)
    return result


def topic_partitions(client, topic: str, timeout: float) -> int:
    metadata = client.list_topics(topic, timeout=timeout).topics.get(topic)
    if metadata is None or metadata.error is not None:
        return 0
    return len(metadata.partitions)


def create_with_admin(bootstrap: str, topic: str, partitions: int, timeout: float,
                      replication: int = 1) -> str:
    """'' when created (or already there), else why CreateTopics did not work."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.create_topics([NewTopic(topic, partitions, replication)],
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
                 replication: int = 1) -> dict:
    """CreateTopics when the broker serves it, else auto-creation through a Metadata request."""
    deadline = time.monotonic() + time_limit
    admin_failure = create_with_admin(bootstrap, topic, partitions, min(10.0, time_limit / 2),
                                      replication)
    method = "CreateTopics" if not admin_failure else "auto-creation"
    producer = Producer({"bootstrap.servers": bootstrap, "allow.auto.create.topics": True,
                         "logger": client_logger("creator")[0]})
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
    parser.add_argument("--default", action="store_true",
                        help="consume: the client's default settings, subscribe() to the topic")
    parser.add_argument("--acks", default="1", help="produce: acks (1 or all)")
    parser.add_argument("--spread", type=int, default=0,
                        help="produce: round-robin over this many partitions of every topic")
    parser.add_argument("--replication", type=int, default=1,
                        help="create-topic: replication factor")
    parser.add_argument("--config", default="{}",
                        help="extra librdkafka properties as a JSON object (TLS and SASL settings)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an extra librdkafka property for the producer or consumer")
    parser.add_argument("--rate", type=float, default=5000.0, help="latency: records per second")
    parser.add_argument("--seconds", type=float, default=15.0, help="latency: measured seconds")
    parser.add_argument("--warmup", type=float, default=1.0,
                        help="latency: seconds written before the measured ones")
    return parser.parse_args()


def extra_properties(settings: list[str]) -> dict:
    return dict(setting.split("=", 1) for setting in settings)


def run(args: argparse.Namespace) -> dict:
    if args.command == "create-topic":
        return create_topic(args.bootstrap, args.topic, args.partitions, args.time_limit,
                            args.replication)
    topics, extra = args.topic.split(","), {**json.loads(args.config), **extra_properties(args.set)}
    if args.command == "produce":
        return produce(args.bootstrap, topics, args.count, args.size, args.time_limit, args.acks,
                       args.spread, extra)
    if args.command == "latency":
        return latency(args.bootstrap, topics[0], args.rate, args.seconds, args.warmup, args.size,
                       args.acks, args.time_limit, extra)
    if args.default:
        return consume_subscribed(args.bootstrap, topics, args.count, args.time_limit, extra)
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
