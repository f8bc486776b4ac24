"""The history of a test run: an append-only, thread-safe log of what clients did and saw.

Every event carries `seq` (its place in the history, from 0) and `time` (seconds since the history
began, from the monotonic clock). Workloads record sends, acknowledgements, failures, polls,
commits and transactions; the test records free-form notes (a link cut, a broker killed) so that a
failure message shows what happened around an anomaly.

    history = History()
    history.note("cut broker 1 from ZooKeeper")
    history.send_acknowledged("idempotent", "topic", "idempotent-7", partition=0, offset=41)
    print(history.dump())
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

READ_COMMITTED = "read_committed"
READ_UNCOMMITTED = "read_uncommitted"


@dataclass(frozen=True)
class Event:
    """Base of every event: its place in the history and when it happened."""

    seq: int = field(default=-1, kw_only=True)
    time: float = field(default=0.0, kw_only=True)

    def describe(self) -> str:
        """One line for a failure message."""
        return type(self).__name__


@dataclass(frozen=True)
class SendInvoked(Event):
    """A producer handed `value` to the client (before any answer)."""

    workload: str
    topic: str
    value: str
    transactional: bool = False

    def describe(self) -> str:
        return f"{self.workload} send {self.value!r} to {self.topic}"


@dataclass(frozen=True)
class SendAcknowledged(Event):
    """The broker acknowledged `value` at (topic, partition, offset). The offset is None when the
    client acknowledged the value without one: librdkafka's idempotent producer does so for a batch
    whose own response was lost once the broker acknowledges a later batch of the partition (an
    "implicit ack"; the later batch's sequence number proves the earlier one was written)."""

    workload: str
    topic: str
    value: str
    partition: int
    offset: int | None

    def describe(self) -> str:
        return f"{self.workload} ack {self.value!r} at {self.topic}[{self.partition}]@{offset_text(self.offset)}"


@dataclass(frozen=True)
class SendFailed(Event):
    """The client gave up on `value`; `definitely_not_written` when it reports it never persisted
    (librdkafka's NOT_PERSISTED) - otherwise the write may or may not be in the log."""

    workload: str
    topic: str
    value: str
    error: str
    definitely_not_written: bool = False

    def describe(self) -> str:
        certainty = "not written" if self.definitely_not_written else "maybe written"
        return f"{self.workload} send {self.value!r} FAILED ({certainty}): {self.error}"


@dataclass(frozen=True)
class Polled(Event):
    """A consumer received `value` from (topic, partition, offset) at the isolation level."""

    consumer: str
    topic: str
    partition: int
    offset: int
    value: str
    isolation: str = READ_COMMITTED

    def describe(self) -> str:
        return (
            f"{self.consumer} polled {self.value!r} at {self.topic}[{self.partition}]@{self.offset} ({self.isolation})"
        )


@dataclass(frozen=True)
class Committed(Event):
    """A consumer of `group` committed `offset` (the next offset to read) for the partition."""

    group: str
    consumer: str
    topic: str
    partition: int
    offset: int

    def describe(self) -> str:
        return f"{self.consumer} ({self.group}) committed {self.topic}[{self.partition}] offset {self.offset}"


@dataclass(frozen=True)
class TxnBegun(Event):
    """A transactional producer began transaction number `txn` of its own."""

    workload: str
    txn: int

    def describe(self) -> str:
        return f"{self.workload} begin txn {self.txn}"


@dataclass(frozen=True)
class TxnCommitted(Event):
    """Transaction `txn` committed: its `values` must be read by read_committed consumers."""

    workload: str
    txn: int
    values: tuple[str, ...]

    def describe(self) -> str:
        return f"{self.workload} COMMIT txn {self.txn} {list(self.values)}"


@dataclass(frozen=True)
class TxnAborted(Event):
    """Transaction `txn` aborted (`deliberate` when the workload chose to, not after an error):
    no read_committed consumer may see its `values`."""

    workload: str
    txn: int
    values: tuple[str, ...]
    deliberate: bool = True
    error: str = ""

    def describe(self) -> str:
        why = "deliberately" if self.deliberate else f"after {self.error}"
        return f"{self.workload} ABORT txn {self.txn} {why} {list(self.values)}"


@dataclass(frozen=True)
class TxnIndeterminate(Event):
    """The outcome of transaction `txn` is unknown (commit failed without saying how, producer
    fenced or closed mid-transaction): its values may end up committed or aborted."""

    workload: str
    txn: int
    values: tuple[str, ...]
    error: str

    def describe(self) -> str:
        return f"{self.workload} txn {self.txn} UNKNOWN outcome ({self.error}) {list(self.values)}"


@dataclass(frozen=True)
class Note(Event):
    """Free text from the test or a workload: a fault cut or healed, a rebalance, an error."""

    text: str

    def describe(self) -> str:
        return f"-- {self.text}"


_EventType = TypeVar("_EventType", bound=Event)


class History:
    """A thread-safe, append-only log of events with monotonic timestamps."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[Event] = []
        self._started = time.monotonic()

    # -- recording --------------------------------------------------------------------------
    def record(self, event: Event) -> Event:
        """Append `event`, stamped with its `seq` and `time`; returns the stamped event."""
        with self._lock:
            stamped = _stamped(event, len(self._events), time.monotonic() - self._started)
            self._events.append(stamped)
            return stamped

    def send_invoked(self, workload: str, topic: str, value: str, *, transactional: bool = False) -> Event:
        return self.record(SendInvoked(workload, topic, value, transactional))

    def send_acknowledged(
        self, workload: str, topic: str, value: str, *, partition: int, offset: int | None
    ) -> Event:
        return self.record(SendAcknowledged(workload, topic, value, partition, offset))

    def send_failed(
        self,
        workload: str,
        topic: str,
        value: str,
        *,
        error: str,
        definitely_not_written: bool = False,
    ) -> Event:
        return self.record(SendFailed(workload, topic, value, error, definitely_not_written))

    def polled(
        self,
        consumer: str,
        topic: str,
        value: str,
        *,
        partition: int,
        offset: int,
        isolation: str = READ_COMMITTED,
    ) -> Event:
        return self.record(Polled(consumer, topic, partition, offset, value, isolation))

    def committed(self, group: str, consumer: str, topic: str, *, partition: int, offset: int) -> Event:
        return self.record(Committed(group, consumer, topic, partition, offset))

    def txn_begun(self, workload: str, txn: int) -> Event:
        return self.record(TxnBegun(workload, txn))

    def txn_committed(self, workload: str, txn: int, values: Sequence[str]) -> Event:
        return self.record(TxnCommitted(workload, txn, tuple(values)))

    def txn_aborted(
        self,
        workload: str,
        txn: int,
        values: Sequence[str],
        *,
        deliberate: bool = True,
        error: str = "",
    ) -> Event:
        return self.record(TxnAborted(workload, txn, tuple(values), deliberate, error))

    def txn_indeterminate(self, workload: str, txn: int, values: Sequence[str], *, error: str) -> Event:
        return self.record(TxnIndeterminate(workload, txn, tuple(values), error))

    def note(self, text: str) -> Event:
        """A free-form line (fault cut/healed, broker killed) shown among the events."""
        return self.record(Note(text))

    # -- reading ----------------------------------------------------------------------------
    def events(self) -> list[Event]:
        """A snapshot of every event so far, in order."""
        with self._lock:
            return list(self._events)

    def of_type(self, kind: type[_EventType]) -> list[_EventType]:
        """The events of one kind, in order."""
        return [event for event in self.events() if isinstance(event, kind)]

    def around(self, seqs: Sequence[int], context: int = 3) -> list[Event]:
        """The events at `seqs` with `context` events either side of each (notes always kept
        when they fall in the window), in order, without repeats."""
        events = self.events()
        wanted: set[int] = set()
        for seq in seqs:
            wanted.update(range(max(0, seq - context), min(len(events), seq + context + 1)))
        return [events[index] for index in sorted(wanted)]

    def notes(self) -> list[Note]:
        return self.of_type(Note)

    def dump(self, events: Sequence[Event] | None = None) -> str:
        """Lines `#seq +time description` for `events` (default: all)."""
        return "\n".join(format_event(event) for event in (self.events() if events is None else events))

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events())


def format_event(event: Event) -> str:
    """`#seq +seconds description`, one line."""
    return f"#{event.seq:<6} +{event.time:8.3f}s  {event.describe()}"


def _stamped(event: Event, seq: int, at: float) -> Event:
    return replace(event, seq=seq, time=at)


def offset_text(offset: int | None) -> str:
    """An offset as events show it: "?" for an acknowledgement that named none."""
    return "?" if offset is None else str(offset)
