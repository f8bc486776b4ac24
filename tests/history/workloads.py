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
from collections.abc import Iterator, Sequence

from .events import READ_COMMITTED, History


class Workload:
    """One client on a thread of its own, recording into `history`. `start()` returns at once;
    `stop()` asks it to finish (flush, end the open transaction, commit and close) and waits."""

    def __init__(self, history: History, bootstrap: str, name: str) -> None:
        self.history = history
        self.bootstrap = bootstrap
        self.name = name
        self.errors: list[str] = []
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._progress = 0
        self._lock = threading.Lock()

    def start(self) -> Workload:
        raise NotImplementedError

    def stop(self, timeout: float = 60.0) -> None:
        raise NotImplementedError

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


class IdempotentProducerWorkload(Workload):
    """An idempotent producer (acks=all, enable.idempotence=true) sending `<name>-<n>` to `topic`
    with a `pause` between sends; records invocations, acknowledgements (partition, offset) and
    failures (with whether the value is definitely not written)."""

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
        config: dict[str, object] | None = None,
    ) -> None:
        super().__init__(history, bootstrap, name)
        self.topic = topic
        self.transactional_id = transactional_id or f"{name}-txn"
        self.records_per_txn = records_per_txn
        self.abort_every = abort_every
        self.pause = pause
        self.config = dict(config or {})


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
    raise NotImplementedError


@contextlib.contextmanager
def running(*workloads: Workload) -> Iterator[Sequence[Workload]]:
    """Start `workloads`, yield them, stop them all (in reverse order) even on failure."""
    raise NotImplementedError
    yield workloads


def wait_for_progress(
    workloads: Sequence[Workload], at_least: int = 1, timeout: float = 60.0
) -> None:
    """Wait until each workload's `progress()` grew by `at_least` from now; AssertionError
    naming the stalled ones (with their last errors) after `timeout`."""
    raise NotImplementedError


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
    raise NotImplementedError


def _sleep_unless(stopping: threading.Event, seconds: float) -> bool:
    """Sleep `seconds` unless asked to stop; True when stopping."""
    return stopping.wait(seconds)
