"""Recording workloads over real clients (confluent-kafka): each runs on its own thread between
`start()` and `stop()`, writes unique values `<workload>-<n>` so that every record is traceable,
keeps going through errors (retriable errors are part of a fault test) and records everything
it does and sees in a `History`.

    history = History()
    workloads = queue_workloads(history, bootstrap, "events")
    with running(*workloads):
        wait_for_progress(workloads)
        history.note("cut the leader from its followers")
        ...
    verdict = check(history, final_read(bootstrap, "events", READ_COMMITTED),
                    final_read(bootstrap, "events", READ_UNCOMMITTED))
    assert verdict.ok, verdict.summary()
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from .events import READ_COMMITTED, History

# errors after which librdkafka never sent the record (the rest may have been written)
_NEVER_WRITTEN = frozenset(
    {
        KafkaError._PURGE_QUEUE,
        KafkaError.MSG_SIZE_TOO_LARGE,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.INVALID_RECORD,
    }
)


class Workload:
    """One client on a thread of its own, recording into `history`. `start()` returns at once;
    `stop()` asks it to finish (flush, end the open transaction, commit and close) and waits;
    it raises when the workload itself crashed (a bug, not a fault: client errors are recorded)."""

    def __init__(self, history: History, bootstrap: str, name: str) -> None:
        self.history = history
        self.bootstrap = bootstrap
        self.name = name
        self.errors: list[str] = []
        self.crash: BaseException | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._progress = 0
        self._lock = threading.Lock()
        self._last_client_error: str | None = None
        self._last_client_code: str | None = None

    def start(self) -> Workload:
        self._stopping.clear()
        self._thread = threading.Thread(target=self._guarded_run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def request_stop(self) -> None:
        """Ask the workload to finish without waiting (`stop()` then waits)."""
        self._stopping.set()

    def stop(self, timeout: float = 90.0) -> None:
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise AssertionError(f"{self.name} did not stop within {timeout} s: {self.errors[-3:]}")
        if self.crash is not None:
            raise RuntimeError(f"workload {self.name} crashed: {self.crash!r}") from self.crash

    def progress(self) -> int:
        """A count that grows while the workload gets through: records acknowledged (idempotent
        producer), transactions ended (transactional producer), records polled (consumers)."""
        with self._lock:
            return self._progress

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> Workload:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- for subclasses ---------------------------------------------------------------------
    def _run(self) -> None:
        raise NotImplementedError

    def _guarded_run(self) -> None:
        try:
            self._run()
        except BaseException as crash:  # noqa: BLE001 - kept and raised again by stop()
            self.crash = crash
            self.history.note(f"{self.name} crashed: {crash!r}")

    def _advance(self, by: int = 1) -> None:
        with self._lock:
            self._progress += by

    def _error(self, text: str) -> None:
        """Keep a client error and note it in the history (once per change of error)."""
        self.errors.append(text)
        if text != self._last_client_error:
            self._last_client_error = text
            self.history.note(f"{self.name}: {text}")

    def _client_error(self, error: KafkaError) -> None:
        """librdkafka's error_cb: connection-level errors, noted once per change of error code
        (a broker down repeats the same one with different timings)."""
        self.errors.append(f"client error {error.name()}: {error.str()}")
        if error.name() != self._last_client_code:
            self._last_client_code = error.name()
            self.history.note(f"{self.name}: client error {error.name()}: {error.str()}")

    def _sleep(self, seconds: float) -> bool:
        """Sleep unless asked to stop; True when stopping."""
        return self._stopping.wait(seconds)


class IdempotentProducerWorkload(Workload):
    """An idempotent producer (acks=all, enable.idempotence=true) sending `<name>-<n>` to `topic`
    with a `pause` between sends; records invocations, acknowledgements (partition, offset) and
    failures (with whether the value is definitely not written). After a fatal error (an
    idempotence failure) it starts a new producer and carries on.

    message.timeout.ms stays librdkafka's (5 minutes): when records time out in flight,
    librdkafka bumps the producer epoch and sends the others again under new sequence numbers,
    so a write persisted but not acknowledged can then be written twice, on Kafka 3.9.0 too (seen
    with a 30 s timeout across a 43 s broker restart). Keep outages shorter than
    message.timeout.ms where a scenario expects no duplicate."""

    def __init__(
        self,
        history: History,
        bootstrap: str,
        topic: str,
        *,
        name: str = "idempotent",
        pause: float = 0.005,
        config: dict[str, object] | None = None,
    ) -> None:
        super().__init__(history, bootstrap, name)
        self.topic = topic
        self.pause = pause
        self.config = dict(config or {})
        self._fatal = False

    def _producer(self) -> Producer:
        return Producer(
            {
                "bootstrap.servers": self.bootstrap,
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
                "error_cb": self._client_error,
                **self.config,
            }
        )

    def _run(self) -> None:
        producer = self._producer()
        sent = 0
        while not self._stopping.is_set():
            if self._fatal:
                producer = self._replace(producer)
            value = f"{self.name}-{sent}"
            sent += 1
            self.history.send_invoked(self.name, self.topic, value)
            try:
                _produce(producer, self.topic, value, self._on_delivery(value))
            except KafkaException as failure:  # refused before it was queued
                self._refused(value, failure)
            producer.poll(0)
            self._sleep(self.pause)
        _drain(producer, self._error)

    def _refused(self, value: str, failure: KafkaException) -> None:
        error = _error_of(failure)
        self._fatal = self._fatal or error.fatal()
        self.history.send_failed(self.name, self.topic, value, error=_text(failure), definitely_not_written=True)

    def _client_error(self, error: KafkaError) -> None:
        self._fatal = self._fatal or error.fatal()
        super()._client_error(error)

    def _replace(self, producer: Producer) -> Producer:
        self.history.note(f"{self.name}: fatal producer error, starting a new producer")
        _drain(producer, self._error, timeout=5)
        self._fatal = False
        return self._producer()

    def _on_delivery(self, value: str) -> Callable[[KafkaError | None, Message], None]:
        def delivered(error: KafkaError | None, message: Message) -> None:
            if error is None:
                self.history.send_acknowledged(
                    self.name, self.topic, value, partition=message.partition(), offset=message.offset()
                )
                self._advance()
                return
            self._fatal = self._fatal or error.fatal()
            self.history.send_failed(
                self.name,
                self.topic,
                value,
                error=f"{error.name()}: {error.str()}",
                definitely_not_written=error.code() in _NEVER_WRITTEN,
            )

        return delivered


class TransactionalProducerWorkload(Workload):
    """A transactional producer: transactions of `records_per_txn` values `<name>-<n>`, every
    `abort_every`-th aborted on purpose; records begin, each send and acknowledgement, and the
    commit, abort or unknown outcome with the values in it. After a fatal error (fenced, ...) it
    starts a new producer with the same transactional.id and carries on."""

    def __init__(
        self,
        history: History,
        bootstrap: str,
        topic: str,
        *,
        name: str = "transactional",
        transactional_id: str | None = None,
        records_per_txn: int = 3,
        abort_every: int = 3,
        pause: float = 0.01,
        call_timeout: float = 10.0,
        config: dict[str, object] | None = None,
    ) -> None:
        super().__init__(history, bootstrap, name)
        self.topic = topic
        self.transactional_id = transactional_id or f"{name}-txn"
        self.records_per_txn = records_per_txn
        self.abort_every = abort_every
        self.pause = pause
        self.call_timeout = call_timeout
        self.config = dict(config or {})
        self._sent = 0
        self._txn = 0
        self._stop_asked = 0.0

    def _producer(self) -> Producer | None:
        """A producer whose transactions are initialised (None when asked to stop first)."""
        while not self._stopping.is_set():
            producer = Producer(
                {
                    "bootstrap.servers": self.bootstrap,
                    "transactional.id": self.transactional_id,
                    "transaction.timeout.ms": 60000,
                    "linger.ms": 5,
                    "error_cb": self._client_error,
                    **self.config,
                }
            )
            try:
                producer.init_transactions(self.call_timeout)
                return producer
            except KafkaException as failure:
                self._error(f"init_transactions: {_text(failure)}")
                if not _error_of(failure).retriable():
                    self._sleep(0.5)
        return None

    def _run(self) -> None:
        producer = self._producer()
        while producer is not None and not self._stopping.is_set():
            if not self._one_transaction(producer):
                _drain(producer, self._error, timeout=5)
                producer = self._producer()
        if producer is not None:
            _drain(producer, self._error)

    def _one_transaction(self, producer: Producer) -> bool:
        """Begin, send, then commit or abort; False when this producer is unusable."""
        self._txn += 1
        txn, values = self._txn, []
        try:
            producer.begin_transaction()
        except KafkaException as failure:
            self._error(f"begin_transaction: {_text(failure)}")
            return False
        self.history.txn_begun(self.name, txn)
        for _ in range(self.records_per_txn):
            value = f"{self.name}-{self._sent}"
            self._sent += 1
            values.append(value)
            self.history.send_invoked(self.name, self.topic, value, transactional=True)
            try:
                _produce(producer, self.topic, value, self._on_delivery(value))
            except KafkaException as failure:  # refused before it was queued
                self._error(f"produce: {_text(failure)}")
                self.history.send_failed(
                    self.name, self.topic, value, error=_text(failure), definitely_not_written=True
                )
                break
            producer.poll(0)
            self._sleep(self.pause)
        self._await_deliveries(producer)
        abort = self.abort_every > 0 and txn % self.abort_every == 0
        usable = self._abort(producer, txn, values) if abort else self._commit(producer, txn, values)
        self._advance()
        return usable

    def _await_deliveries(self, producer: Producer) -> None:
        """Wait for the transaction's records to be acknowledged before ending it: an abort
        while librdkafka still adds the partitions (the coordinator busy completing the previous
        transaction) fails with INVALID_TXN_STATE, on Kafka as on pykbroker."""
        try:
            producer.flush(self.call_timeout)
        except KafkaException as failure:
            self._error(f"flush: {_text(failure)}")

    def _commit(self, producer: Producer, txn: int, values: list[str]) -> bool:
        deadline = time.monotonic() + 60
        while True:
            try:
                producer.commit_transaction(self.call_timeout)
                self.history.txn_committed(self.name, txn, values)
                return True
            except KafkaException as failure:
                error = _error_of(failure)
                self._error(f"commit_transaction: {_text(failure)}")
                if error.txn_requires_abort():
                    return self._abort(producer, txn, values, error=_text(failure))
                if not error.retriable() or self._given_up(deadline):
                    self.history.txn_indeterminate(self.name, txn, values, error=_text(failure))
                    return False

    def _abort(self, producer: Producer, txn: int, values: list[str], error: str = "") -> bool:
        deadline = time.monotonic() + 60
        while True:
            try:
                producer.abort_transaction(self.call_timeout)
                self.history.txn_aborted(self.name, txn, values, deliberate=not error, error=error)
                return True
            except KafkaException as failure:
                self._error(f"abort_transaction: {_text(failure)}")
                if not _error_of(failure).retriable() or self._given_up(deadline):
                    self.history.txn_indeterminate(self.name, txn, values, error=_text(failure))
                    return False

    def _given_up(self, deadline: float) -> bool:
        """Retrying to end a transaction stops at `deadline`, or 20 s after `stop()` was asked."""
        if time.monotonic() > deadline:
            return True
        return self._stopping.is_set() and time.monotonic() - self._stop_asked > 20

    def request_stop(self) -> None:
        self._stop_asked = time.monotonic()
        super().request_stop()

    def _on_delivery(self, value: str) -> Callable[[KafkaError | None, Message], None]:
        def delivered(error: KafkaError | None, message: Message) -> None:
            if error is None:
                self.history.send_acknowledged(
                    self.name, self.topic, value, partition=message.partition(), offset=message.offset()
                )
            else:
                self.history.send_failed(
                    self.name,
                    self.topic,
                    value,
                    error=f"{error.name()}: {error.str()}",
                    definitely_not_written=error.code() in _NEVER_WRITTEN,
                )

        return delivered


class ConsumerMember(Workload):
    """One consumer of `group` subscribed to `topics` at `isolation`, committing offsets
    synchronously after each batch; records every poll and commit, and notes its assignments."""

    def __init__(
        self,
        history: History,
        bootstrap: str,
        topics: Sequence[str],
        *,
        group: str,
        name: str,
        isolation: str = READ_COMMITTED,
        config: dict[str, object] | None = None,
    ) -> None:
        super().__init__(history, bootstrap, name)
        self.topics = list(topics)
        self.group = group
        self.isolation = isolation
        self.config = dict(config or {})

    def _consumer(self) -> Consumer:
        return Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": self.group,
                "client.id": self.name,
                "isolation.level": self.isolation,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 10000,
                "heartbeat.interval.ms": 1000,
                "error_cb": self._client_error,
                **self.config,
            }
        )

    def _run(self) -> None:
        consumer = self._consumer()
        consumer.subscribe(self.topics, on_assign=self._assigned, on_revoke=self._revoked)
        try:
            while not self._stopping.is_set():
                if self._record(consumer.consume(num_messages=200, timeout=0.2)):
                    self._commit(consumer)
        finally:
            self._close(consumer)

    def _record(self, messages: list[Message]) -> int:
        polled = 0
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    self._error(f"consume: {error.name()}: {error.str()}")
                continue
            self.history.polled(
                self.name,
                message.topic(),
                _decoded(message.value()),
                partition=message.partition(),
                offset=message.offset(),
                isolation=self.isolation,
            )
            polled += 1
        self._advance(polled)
        return polled

    def _commit(self, consumer: Consumer) -> None:
        try:
            committed = consumer.commit(asynchronous=False) or []
        except KafkaException as failure:
            if _error_of(failure).code() != KafkaError._NO_OFFSET:  # nothing new to commit
                self._error(f"commit: {_text(failure)}")
            return
        for position in committed:
            if position.error is None and position.offset >= 0:
                self.history.committed(
                    self.group, self.name, position.topic, partition=position.partition, offset=position.offset
                )

    def _close(self, consumer: Consumer) -> None:
        try:
            self._commit(consumer)
            consumer.close()
        except (KafkaException, RuntimeError) as failure:
            self._error(f"close: {failure}")

    def _assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.history.note(f"{self.name} assigned {_partition_list(partitions)}")

    def _revoked(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self.history.note(f"{self.name} revoked {_partition_list(partitions)}")


class ConsumerGroupWorkload(Workload):
    """A consumer group of `members` read_committed consumers (`<name>-<k>`); with `churn_every`
    seconds set, one member leaves and a fresh one joins that often (group churn)."""

    def __init__(
        self,
        history: History,
        bootstrap: str,
        topics: str | Sequence[str],
        *,
        group: str = "history-group",
        name: str = "consumer",
        members: int = 3,
        churn_every: float | None = 2.0,
        isolation: str = READ_COMMITTED,
        config: dict[str, object] | None = None,
    ) -> None:
        super().__init__(history, bootstrap, name)
        self.topics = [topics] if isinstance(topics, str) else list(topics)
        self.group = group
        self.members = members
        self.churn_every = churn_every
        self.isolation = isolation
        self.config = dict(config or {})
        self.all_members: list[ConsumerMember] = []
        self._active: list[ConsumerMember] = []

    def progress(self) -> int:
        return sum(member.progress() for member in list(self.all_members))

    def _member(self) -> ConsumerMember:
        member = ConsumerMember(
            self.history,
            self.bootstrap,
            self.topics,
            group=self.group,
            name=f"{self.name}-{len(self.all_members)}",
            isolation=self.isolation,
            config=self.config,
        )
        self.all_members.append(member)
        return member.start()  # type: ignore[return-value]

    def _run(self) -> None:
        self._active = [self._member() for _ in range(self.members)]
        try:
            while not self._sleep(self.churn_every or 0.2):
                if self.churn_every and self._active:
                    leaving = self._active.pop(0)
                    self.history.note(f"{leaving.name} leaves the group (churn)")
                    leaving.stop()
                    self._active.append(self._member())
        finally:
            for member in self._active:
                member.request_stop()  # all leave together, then each is waited for
            for member in self._active:
                member.stop()
        self.errors = [error for member in self.all_members for error in member.errors]


def queue_workloads(
    history: History,
    bootstrap: str,
    topic: str,
    *,
    group: str = "history-group",
    consumers: int = 3,
    churn_every: float | None = 2.0,
    producer_config: dict[str, object] | None = None,
    consumer_config: dict[str, object] | None = None,
) -> list[Workload]:
    """The standard set on one topic: an idempotent producer, a transactional producer and a
    churning read_committed consumer group (not started)."""
    return [
        IdempotentProducerWorkload(history, bootstrap, topic, config=producer_config),
        TransactionalProducerWorkload(history, bootstrap, topic, config=producer_config),
        ConsumerGroupWorkload(
            history,
            bootstrap,
            topic,
            group=group,
            members=consumers,
            churn_every=churn_every,
            config=consumer_config,
        ),
    ]


@contextlib.contextmanager
def running(*workloads: Workload) -> Iterator[Sequence[Workload]]:
    """Start `workloads`, yield them, then stop them all in order (producers before consumers
    when given so) even on failure; the first stop failure is raised after all stopped."""
    started: list[Workload] = []
    try:
        for workload in workloads:
            started.append(workload.start())
        yield workloads
    finally:
        failures: list[BaseException] = []
        for workload in started:
            try:
                workload.stop()
            except (AssertionError, RuntimeError) as failure:
                failures.append(failure)
        if failures:
            raise failures[0]


def wait_for_progress(workloads: Sequence[Workload], at_least: int = 1, timeout: float = 60.0) -> None:
    """Wait until each workload's `progress()` grew by `at_least` from now; AssertionError
    naming the stalled ones (with their last errors) after `timeout`."""
    baseline = {id(workload): workload.progress() for workload in workloads}
    deadline = time.monotonic() + timeout
    while True:
        stalled = [w for w in workloads if w.progress() - baseline[id(w)] < at_least]
        if not stalled:
            return
        crashed = [w for w in stalled if w.crash is not None]
        if crashed or time.monotonic() > deadline:
            details = "; ".join(f"{w.name} (crash {w.crash!r}, errors {w.errors[-3:]})" for w in stalled)
            raise AssertionError(f"no progress within {timeout} s: {details}")
        time.sleep(0.05)


def create_topic(
    bootstrap: str,
    topic: str,
    *,
    partitions: int = 3,
    replication_factor: int = 1,
    config: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> None:
    """Create `topic` (retrying while the cluster is not ready) and wait until it has leaders."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout
    while True:
        future = admin.create_topics([NewTopic(topic, partitions, replication_factor, config=config or {})])[topic]
        try:
            future.result(timeout=max(1.0, deadline - time.monotonic()))
            break
        except KafkaException as failure:
            if _error_of(failure).code() == KafkaError.TOPIC_ALREADY_EXISTS:
                break
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    while not _has_leaders(admin, topic, partitions):
        if time.monotonic() > deadline:
            raise AssertionError(f"topic {topic} has no leader for every partition within {timeout} s")
        time.sleep(0.1)


def _has_leaders(admin: AdminClient, topic: str, partitions: int) -> bool:
    try:
        metadata = admin.list_topics(topic, timeout=5).topics.get(topic)
    except KafkaException:
        return False
    if metadata is None or metadata.error is not None or len(metadata.partitions) < partitions:
        return False
    return all(partition.leader >= 0 for partition in metadata.partitions.values())


def _produce(
    producer: Producer,
    topic: str,
    value: str,
    on_delivery: Callable[[KafkaError | None, Message], None],
) -> None:
    """produce(), waiting while the client's queue is full."""
    while True:
        try:
            producer.produce(topic, value.encode(), on_delivery=on_delivery)
            return
        except BufferError:
            producer.poll(0.1)


def _drain(producer: Producer, error: Callable[[str], None], timeout: float = 30.0) -> None:
    """Deliver what is in flight; purge what never left the queue (reported never written)."""
    try:
        left = producer.flush(timeout)
        if left:
            error(f"{left} records undelivered after {timeout} s, purging the queue")
            producer.purge(in_queue=True, in_flight=False)
            producer.flush(5)
    except KafkaException as failure:  # a fatal error of the producer: nothing more to deliver
        error(f"flush: {_text(failure)}")


def _error_of(failure: KafkaException) -> KafkaError:
    error = failure.args[0] if failure.args else None
    return error if isinstance(error, KafkaError) else KafkaError(KafkaError._FAIL, str(failure))


def _text(failure: KafkaException) -> str:
    error = _error_of(failure)
    return f"{error.name()}: {error.str()}"


def _decoded(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _partition_list(partitions: list[TopicPartition]) -> str:
    return "[" + ", ".join(f"{p.topic}[{p.partition}]" for p in partitions) + "]"
