"""The soak's steady load on one target (a broker or a cluster), each part a thread of its own:

- two producers, one with acks=1 and one with acks=all, at a fixed rate (their delivery
  latencies are the produce latency the soak reports);
- a transactional producer that commits and aborts in turn;
- a consumer group (read_committed, offsets auto-committed) of steady members, and one member
  that joins and leaves again and again (group churn);
- a topic that is created, written to by a short-lived producer, and deleted, over and over.

Counters and latencies are kept in `LoadStats`, which the sampler drains every few seconds.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 3
VALUE = b"x" * 200
TICK_S = 0.1
ERRORS_KEPT = 5
ACKS = ("1", "all")  # one paced producer each


@dataclass(frozen=True)
class Cadence:
    """How fast each part of the load goes (the defaults are the 60-minute run's)."""

    records_per_second: int = 40  # per plain producer
    transaction_every_s: float = 2.0
    records_per_transaction: int = 10
    steady_members: int = 2
    churn_every_s: float = 30.0  # a member joins this often ...
    churn_stay_s: float = 15.0  # ... and leaves after this long
    topic_every_s: float = 20.0  # a topic is created and deleted this often

    def scaled_to(self, duration_s: float) -> Cadence:
        """The same load with the periodic parts fast enough to happen a few times in a short run."""
        quarter = max(1.0, duration_s / 4)
        return Cadence(
            records_per_second=self.records_per_second,
            transaction_every_s=min(self.transaction_every_s, quarter),
            records_per_transaction=self.records_per_transaction,
            steady_members=self.steady_members,
            churn_every_s=min(self.churn_every_s, quarter),
            churn_stay_s=min(self.churn_stay_s, quarter / 2),
            topic_every_s=min(self.topic_every_s, quarter),
        )


@dataclass
class LoadStats:
    """What the load did, thread-safe: counters, and the produce latencies since the last drain."""

    counts: dict[str, int] = field(default_factory=dict)
    latencies_ms: dict[str, list[float]] = field(default_factory=dict)  # by acks ("1", "all")
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, name: str, amount: int = 1) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + amount

    def delivered(self, acks: str, latency_ms: float) -> None:
        with self.lock:
            self.counts["produced"] = self.counts.get("produced", 0) + 1
            self.latencies_ms.setdefault(acks, []).append(latency_ms)

    def error(self, where: str, error: object) -> None:
        with self.lock:
            self.counts["errors"] = self.counts.get("errors", 0) + 1
            self.errors = (self.errors + [f"{where}: {error}"])[-ERRORS_KEPT:]

    def drain(self) -> tuple[dict[str, int], dict[str, list[float]]]:
        """The counters so far and the latencies by acks since the last drain (then forgotten)."""
        with self.lock:
            latencies, self.latencies_ms = self.latencies_ms, {}
            return dict(self.counts), latencies


@dataclass(frozen=True)
class Target:
    """Where a load goes: a name ("single", "cluster"), its bootstrap and its replication factor."""

    name: str
    bootstrap: str
    replication_factor: int


def topic_names(target: Target) -> dict[str, str]:
    prefix = f"soak-{target.name}"
    return {"acks1": f"{prefix}-acks1", "acksall": f"{prefix}-acksall", "txn": f"{prefix}-txn"}


TOPIC_CONFIGS = {
    # small segments and a small retention, so that segments roll and are deleted during the run
    "segment.bytes": "65536",
    "retention.bytes": "262144",
}
# the transactional topic gets about a tenth of the bytes: segments an eighth as large, so that it
# too reaches its steady number of segments (and open files) within the warm-up
TRANSACTIONAL_TOPIC_CONFIGS = {"segment.bytes": "8192", "retention.bytes": "32768"}


def create_topics(
    target: Target,
    names: list[str],
    admin: AdminClient | None = None,
    timeout_s: float = 60.0,
    configs: dict[str, dict[str, str]] | None = None,
) -> None:
    """Create the topics; each with `configs[name]` when given, else `TOPIC_CONFIGS`."""
    admin = admin or AdminClient({"bootstrap.servers": target.bootstrap})
    chosen = configs or {}
    new = [
        NewTopic(name, PARTITIONS, target.replication_factor, config=chosen.get(name, TOPIC_CONFIGS)) for name in names
    ]
    for future in admin.create_topics(new, operation_timeout=timeout_s).values():
        future.result(timeout=timeout_s)


class Part(threading.Thread):
    """One part of the load: runs `step` until stopped, recording (not raising) what goes wrong."""

    def __init__(self, name: str, target: Target, stats: LoadStats, stop: threading.Event) -> None:
        super().__init__(name=f"soak-{target.name}-{name}", daemon=True)
        self.part, self.target, self.stats, self.stop_event = name, target, stats, stop

    def run(self) -> None:
        try:
            self.open()
            while not self.stop_event.is_set():
                try:
                    self.step()
                except (KafkaException, RuntimeError) as error:
                    self.stats.error(self.part, error)
                    self.stop_event.wait(1.0)
        except Exception as error:  # noqa: BLE001 - a part that dies is reported, the soak goes on
            self.stats.error(self.part, f"stopped: {error!r}")
        finally:
            self.close()

    def open(self) -> None:
        """Create the clients (in the thread)."""

    def step(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Close the clients."""


class PacedProducer(Part):
    """Writes `records_per_second` records to one topic with the given acks; every delivery's
    latency (produce() to delivery report) goes to the stats."""

    def __init__(self, acks: str, topic: str, cadence: Cadence, *args: object) -> None:
        super().__init__(f"producer-acks{acks}", *args)  # type: ignore[arg-type]
        self.acks, self.topic, self.cadence = acks, topic, cadence
        self.producer: Producer | None = None

    def open(self) -> None:
        self.producer = Producer(
            {"bootstrap.servers": self.target.bootstrap, "acks": self.acks, "linger.ms": 1, "client.id": self.name}
        )

    def step(self) -> None:
        assert self.producer is not None
        per_tick = max(1, round(self.cadence.records_per_second * TICK_S))
        for _ in range(per_tick):
            self.producer.produce(self.topic, VALUE, on_delivery=self.delivered)
        self.serve_deliveries_until(time.monotonic() + TICK_S)

    def serve_deliveries_until(self, deadline: float) -> None:
        """Poll until `deadline`, so that each delivery report is served (and timed) as it comes."""
        assert self.producer is not None
        while (left := deadline - time.monotonic()) > 0 and not self.stop_event.is_set():
            self.producer.poll(left)

    def delivered(self, error: object, message: Message) -> None:
        """librdkafka's delivery report; its latency is from produce() to the broker's answer."""
        if error is not None:
            self.stats.error(self.part, error)
        else:
            self.stats.delivered(self.acks, (message.latency() or 0.0) * 1000)

    def close(self) -> None:
        if self.producer is not None:
            self.producer.flush(10)
            self.producer = None  # destroyed now, not when the process ends


class TransactionalProducer(Part):
    """Every `transaction_every_s`: a transaction of a few records, committed and aborted in turn."""

    def __init__(self, topic: str, cadence: Cadence, *args: object) -> None:
        super().__init__("transactions", *args)  # type: ignore[arg-type]
        self.topic, self.cadence = topic, cadence
        self.producer: Producer | None = None
        self.turn = itertools.count()

    def open(self) -> None:
        self.producer = Producer(
            {
                "bootstrap.servers": self.target.bootstrap,
                "transactional.id": f"soak-{self.target.name}-txn",
                "client.id": self.name,
            }
        )
        self.producer.init_transactions(60)

    def step(self) -> None:
        assert self.producer is not None
        self.producer.begin_transaction()
        for _ in range(self.cadence.records_per_transaction):
            self.producer.produce(self.topic, VALUE)
        if next(self.turn) % 2 == 0:
            self.producer.commit_transaction(30)
            self.stats.add("transactions_committed")
        else:
            self.producer.abort_transaction(30)
            self.stats.add("transactions_aborted")
        self.stop_event.wait(self.cadence.transaction_every_s)

    def close(self) -> None:
        if self.producer is not None:
            self.producer.flush(10)
            self.producer = None


def group_consumer(target: Target, client_id: str) -> Consumer:
    return Consumer(
        {
            "bootstrap.servers": target.bootstrap,
            "group.id": f"soak-{target.name}-group",
            "client.id": client_id,
            "isolation.level": "read_committed",
            "auto.offset.reset": "latest",
            "session.timeout.ms": 10000,
            "heartbeat.interval.ms": 1000,
        }
    )


def consume_for(consumer: Consumer, stats: LoadStats, seconds: float, stop: threading.Event) -> None:
    deadline = time.monotonic() + seconds
    while not stop.is_set() and time.monotonic() < deadline:
        for message in consumer.consume(500, 0.5):
            if message.error() is None:
                stats.add("consumed")


class SteadyMember(Part):
    """A member of the group for the whole run, counting what it reads."""

    def __init__(self, index: int, topics: list[str], *args: object) -> None:
        super().__init__(f"member-{index}", *args)  # type: ignore[arg-type]
        self.topics = topics
        self.consumer: Consumer | None = None

    def open(self) -> None:
        self.consumer = group_consumer(self.target, self.name)
        self.consumer.subscribe(self.topics)

    def step(self) -> None:
        assert self.consumer is not None
        consume_for(self.consumer, self.stats, 1.0, self.stop_event)

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None


class ChurningMember(Part):
    """Joins the group every `churn_every_s`, reads for `churn_stay_s`, and leaves (LeaveGroup)."""

    def __init__(self, topics: list[str], cadence: Cadence, *args: object) -> None:
        super().__init__("churning-member", *args)  # type: ignore[arg-type]
        self.topics, self.cadence = topics, cadence

    def step(self) -> None:
        if self.stop_event.wait(self.cadence.churn_every_s - self.cadence.churn_stay_s):
            return
        consumer = group_consumer(self.target, self.name)
        try:
            consumer.subscribe(self.topics)
            self.stats.add("members_joined")
            consume_for(consumer, self.stats, self.cadence.churn_stay_s, self.stop_event)
        finally:
            consumer.close()
            self.stats.add("members_left")


class TopicChurn(Part):
    """Every `topic_every_s`: create a topic, write to it with a producer of its own, delete it."""

    def __init__(self, cadence: Cadence, *args: object) -> None:
        super().__init__("topic-churn", *args)  # type: ignore[arg-type]
        self.cadence = cadence
        self.admin: AdminClient | None = None
        self.serial = itertools.count()

    def open(self) -> None:
        self.admin = AdminClient({"bootstrap.servers": self.target.bootstrap})

    def step(self) -> None:
        assert self.admin is not None
        name = f"soak-{self.target.name}-churn-{next(self.serial)}"
        create_topics(self.target, [name], self.admin)
        self.stats.add("topics_created")
        self.write_some(name)
        for future in self.admin.delete_topics([name], operation_timeout=60).values():
            future.result(timeout=60)
        self.stats.add("topics_deleted")
        self.stop_event.wait(self.cadence.topic_every_s)

    def write_some(self, topic: str) -> None:
        producer = Producer({"bootstrap.servers": self.target.bootstrap, "client.id": self.name})
        for _ in range(20):
            producer.produce(topic, VALUE)
        if producer.flush(30) != 0:
            self.stats.error(self.part, f"records to {topic} not delivered")

    def close(self) -> None:
        self.admin = None


class Load:
    """Every part of the load on one target, started and stopped together."""

    def __init__(self, target: Target, cadence: Cadence) -> None:
        self.target, self.cadence = target, cadence
        self.stats = LoadStats()
        self.stop_event = threading.Event()
        self.parts: list[Part] = []

    def start(self) -> None:
        topics = topic_names(self.target)
        create_topics(self.target, list(topics.values()), configs={topics["txn"]: TRANSACTIONAL_TOPIC_CONFIGS})
        common = (self.target, self.stats, self.stop_event)
        read = list(topics.values())
        self.parts = [
            *[PacedProducer(acks, topics[f"acks{acks}"], self.cadence, *common) for acks in ACKS],
            TransactionalProducer(topics["txn"], self.cadence, *common),
            *[SteadyMember(index, read, *common) for index in range(self.cadence.steady_members)],
            ChurningMember(read, self.cadence, *common),
            TopicChurn(self.cadence, *common),
        ]
        for part in self.parts:
            part.start()

    def stop(self, timeout_s: float = 30.0) -> list[str]:
        """Stop every part; the names of those that did not stop in time."""
        self.stop_event.set()
        deadline = time.monotonic() + timeout_s
        for part in self.parts:
            part.join(max(0.1, deadline - time.monotonic()))
        return [part.name for part in self.parts if part.is_alive()]
