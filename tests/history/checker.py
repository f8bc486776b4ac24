"""The history checker: the anomalies of Jepsen's Kafka "queue" workload, found by comparing what
clients did and saw (the `History`) with what the log holds at the end (the `FinalLog`).

    verdict = check(history, final_read(bootstrap, topic, READ_COMMITTED),
                    final_read(bootstrap, topic, READ_UNCOMMITTED))
    assert verdict.ok, verdict.summary()

The anomalies (`Verdict.anomalies` is keyed by these names):

- lost: a write that must be in the log is absent from the final read_committed log (a
  non-transactional write acknowledged, or a write of a committed transaction).
- duplicated: one value at two offsets of the final log (or acknowledged at two places).
- reordered: one producer's acknowledged values in a partition at offsets out of send order.
- aborted_read: a read_committed consumer (or the final read_committed log) saw a value of an
  aborted transaction.
- uncommitted_read: a read_committed consumer saw a value whose transaction never committed (in
  the final read_uncommitted log but not in the read_committed one, and not known aborted).
- disagreeing_offsets: a poll whose (partition, offset) holds another value in the final log, or
  whose value is nowhere in it (a read of a write later truncated), or two consumers that read
  different values at one offset.
- acked_but_truncated: an acknowledgement whose (partition, offset) holds another value (or
  nothing) in the final log.
- written_after_failure: a send the client reported definitely not written is in the log.
- commit_beyond_end: a committed offset beyond the partition's end offset.

An acknowledgement without an offset (librdkafka's implicit ack, see `SendAcknowledged`) counts
for `lost` only; the checks that place a value at its acknowledged offset pass it by.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .events import (
    READ_COMMITTED,
    Committed,
    Event,
    History,
    Polled,
    SendAcknowledged,
    SendFailed,
    SendInvoked,
    TxnAborted,
    TxnCommitted,
    TxnIndeterminate,
    format_event,
    offset_text,
)
from .final import FinalLog

LOST = "lost"
DUPLICATED = "duplicated"
REORDERED = "reordered"
ABORTED_READ = "aborted_read"
UNCOMMITTED_READ = "uncommitted_read"
DISAGREEING_OFFSETS = "disagreeing_offsets"
ACKED_BUT_TRUNCATED = "acked_but_truncated"
WRITTEN_AFTER_FAILURE = "written_after_failure"
COMMIT_BEYOND_END = "commit_beyond_end"

_NOTES_SHOWN = 60

ANOMALY_KINDS = (
    LOST,
    DUPLICATED,
    REORDERED,
    ABORTED_READ,
    UNCOMMITTED_READ,
    DISAGREEING_OFFSETS,
    ACKED_BUT_TRUNCATED,
    WRITTEN_AFTER_FAILURE,
    COMMIT_BEYOND_END,
)


@dataclass(frozen=True)
class Anomaly:
    """One instance of an anomaly: what is wrong, and the history events that show it."""

    kind: str
    description: str
    events: tuple[Event, ...] = ()


@dataclass
class Verdict:
    """The checker's answer: `ok` when no anomaly was found; `summary()` for assertion messages."""

    anomalies: dict[str, list[Anomaly]] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=dict)
    history: History | None = None

    @property
    def ok(self) -> bool:
        return not any(self.anomalies.values())

    def of_kind(self, kind: str) -> list[Anomaly]:
        """The anomalies of one kind (empty when none)."""
        return self.anomalies.get(kind, [])

    @property
    def kinds(self) -> set[str]:
        """The names of the anomalies found."""
        return {kind for kind, found in self.anomalies.items() if found}

    def summary(self, examples: int = 3, context: int = 3) -> str:
        """Readable: the counts (writes acknowledged, reads...), each anomaly kind found with up
        to `examples` instances and the history events around each (`context` either side)."""
        counts = ", ".join(f"{name} {count}" for name, count in self.stats.items())
        found = ", ".join(f"{kind} x{len(self.of_kind(kind))}" for kind in ANOMALY_KINDS if self.of_kind(kind))
        lines = [f"history check: {'OK' if self.ok else 'ANOMALIES: ' + found}", f"  ({counts})"]
        for kind in ANOMALY_KINDS:
            for anomaly in self.of_kind(kind)[:examples]:
                lines.append(f"{kind}: {anomaly.description}")
                lines.extend("    " + line for line in self._context_lines(anomaly, context))
            hidden = len(self.of_kind(kind)) - examples
            if hidden > 0:
                lines.append(f"{kind}: ... and {hidden} more")
        notes = [] if self.history is None else self.history.notes()
        if notes and not self.ok:
            lines.append(f"notes (the last {min(len(notes), _NOTES_SHOWN)} of {len(notes)}):")
            lines.extend("    " + format_event(note) for note in notes[-_NOTES_SHOWN:])
        return "\n".join(lines)

    def _context_lines(self, anomaly: Anomaly, context: int) -> list[str]:
        seqs = [event.seq for event in anomaly.events if event.seq >= 0]
        if self.history is None or not seqs:
            return [format_event(event) for event in anomaly.events]
        marked = set(seqs)
        return [
            ("> " if event.seq in marked else "  ") + format_event(event)
            for event in self.history.around(seqs, context)
        ]


def check(
    history: History,
    final: FinalLog,
    uncommitted: FinalLog | None = None,
) -> Verdict:
    """Check `history` against `final` (the read_committed final log, the truth) and, when given,
    `uncommitted` (the read_uncommitted final log: aborted and open transactions' records, used to
    tell uncommitted reads and to place polls and acknowledgements of transactional writes)."""
    facts = _Facts(history.events(), final, uncommitted)
    verdict = Verdict(history=history, stats=facts.stats())
    for kind, finder in _FINDERS.items():
        verdict.anomalies[kind] = list(finder(facts))
    return verdict


class _Facts:
    """What the history and the final logs say, indexed for the anomaly finders."""

    def __init__(self, events: list[Event], final: FinalLog, uncommitted: FinalLog | None) -> None:
        self.events = events
        self.final = final
        self.uncommitted = uncommitted
        self.invoked = [e for e in events if isinstance(e, SendInvoked)]
        self.acks = [e for e in events if isinstance(e, SendAcknowledged)]
        self.failures = [e for e in events if isinstance(e, SendFailed)]
        self.polls = [e for e in events if isinstance(e, Polled)]
        self.commits = [e for e in events if isinstance(e, Committed)]
        self.txn_commits = [e for e in events if isinstance(e, TxnCommitted)]
        self.txn_aborts = [e for e in events if isinstance(e, TxnAborted)]
        self.txn_unknown = [e for e in events if isinstance(e, TxnIndeterminate)]
        self.transactional = {e.value for e in self.invoked if e.transactional}
        self.committed_values = {v: e for e in self.txn_commits for v in e.values}
        self.aborted_values = {v: e for e in self.txn_aborts for v in e.values}
        self.unknown_values = {v: e for e in self.txn_unknown for v in e.values}
        self.final_positions = final.positions()
        self.uncommitted_positions = {} if uncommitted is None else uncommitted.positions()
        self.send_of = {e.value: e for e in self.invoked}
        self.acks_of: dict[str, list[SendAcknowledged]] = {}
        for ack in self.acks:
            self.acks_of.setdefault(ack.value, []).append(ack)

    def must_exist(self, value: str) -> bool:
        """Acknowledged outside a transaction, or written in a committed one."""
        if value in self.transactional:
            return value in self.committed_values
        return True

    def value_at(self, topic: str, partition: int, offset: int) -> str | None:
        """The value at an offset: read_uncommitted log first (it also has aborted records)."""
        if self.uncommitted is not None:
            found = self.uncommitted.value_at(topic, partition, offset)
            if found is not None:
                return found
        return self.final.value_at(topic, partition, offset)

    def in_any_log(self, value: str) -> bool:
        return value in self.final_positions or value in self.uncommitted_positions

    def stats(self) -> dict[str, int]:
        return {
            "sends": len(self.invoked),
            "acknowledged": len(self.acks),
            "failed": len(self.failures),
            "txn committed": len(self.txn_commits),
            "txn aborted": len(self.txn_aborts),
            "txn unknown": len(self.txn_unknown),
            "polls": len(self.polls),
            "commits": len(self.commits),
            "final records": len(self.final),
        }


def _lost(facts: _Facts) -> Iterator[Anomaly]:
    seen: set[str] = set()
    for ack in facts.acks:
        value = ack.value
        if value in seen or value in facts.final_positions or not facts.must_exist(value):
            continue
        seen.add(value)
        evidence = _present([facts.send_of.get(value), ack, facts.committed_values.get(value)])
        yield Anomaly(LOST, f"{value!r} acknowledged at {_where(ack)} is not in the final log", evidence)
    for commit in facts.txn_commits:
        for value in commit.values:
            if value not in seen and value not in facts.final_positions:
                seen.add(value)
                yield Anomaly(
                    LOST,
                    f"{value!r} of committed {commit.workload} txn {commit.txn} is not in the final log",
                    _present([facts.send_of.get(value), commit]),
                )


def _duplicated(facts: _Facts) -> Iterator[Anomaly]:
    reported: set[str] = set()
    for positions in (facts.final_positions, facts.uncommitted_positions):
        for value, places in sorted(positions.items()):
            if len(set(places)) > 1 and value not in reported:
                reported.add(value)
                where = ", ".join(f"{t}[{p}]@{o}" for t, p, o in sorted(set(places)))
                evidence = facts.acks_of.get(value, [])
                yield Anomaly(
                    DUPLICATED,
                    f"{value!r} is in the final log at {where}",
                    _present([facts.send_of.get(value), *evidence]),
                )
    acked_at: dict[str, set[tuple[str, int, int]]] = {}
    for ack in _placed(facts.acks):
        acked_at.setdefault(ack.value, set()).add((ack.topic, ack.partition, ack.offset))
    for value, places in sorted(acked_at.items()):
        if len(places) > 1 and value not in reported:
            reported.add(value)
            yield Anomaly(
                DUPLICATED,
                f"{value!r} acknowledged at {len(places)} places",
                tuple(facts.acks_of[value]),
            )


def _reordered(facts: _Facts) -> Iterator[Anomaly]:
    order = {e.value: index for index, e in enumerate(facts.invoked)}
    streams: dict[tuple[str, str, int], list[SendAcknowledged]] = {}
    for ack in _placed(facts.acks):
        if ack.value in order:
            streams.setdefault((ack.workload, ack.topic, ack.partition), []).append(ack)
    for (workload, topic, partition), acks in sorted(streams.items()):
        by_send = sorted(acks, key=lambda ack: order[ack.value])
        for earlier, later in zip(by_send, by_send[1:]):
            if later.offset <= earlier.offset:
                yield Anomaly(
                    REORDERED,
                    f"{workload} sent {earlier.value!r} before {later.value!r} but they are at"
                    f" offsets {earlier.offset} and {later.offset} of {topic}[{partition}]",
                    (facts.send_of[earlier.value], facts.send_of[later.value], earlier, later),
                )


def _aborted_read(facts: _Facts) -> Iterator[Anomaly]:
    for poll in facts.polls:
        aborted = facts.aborted_values.get(poll.value)
        if poll.isolation == READ_COMMITTED and aborted is not None:
            yield Anomaly(
                ABORTED_READ,
                f"{poll.consumer} read {poll.value!r} of aborted {aborted.workload} txn {aborted.txn}",
                (aborted, poll),
            )
    for value, aborted in sorted(facts.aborted_values.items()):
        if value in facts.final_positions:
            yield Anomaly(
                ABORTED_READ,
                f"the final read_committed log has {value!r} of aborted {aborted.workload} txn {aborted.txn}",
                (aborted,),
            )


def _uncommitted_read(facts: _Facts) -> Iterator[Anomaly]:
    if facts.uncommitted is None:
        return
    for poll in facts.polls:
        value = poll.value
        if (
            poll.isolation == READ_COMMITTED
            and value not in facts.aborted_values
            and value not in facts.final_positions
            and value in facts.uncommitted_positions
        ):
            yield Anomaly(
                UNCOMMITTED_READ,
                f"{poll.consumer} read {value!r}, which never committed (only in the read_uncommitted log)",
                _present([facts.send_of.get(value), facts.unknown_values.get(value), poll]),
            )


def _disagreeing_offsets(facts: _Facts) -> Iterator[Anomaly]:
    read_at: dict[tuple[str, int, int], Polled] = {}
    for poll in facts.polls:
        place = (poll.topic, poll.partition, poll.offset)
        first = read_at.setdefault(place, poll)
        if first.value != poll.value:
            yield Anomaly(
                DISAGREEING_OFFSETS,
                f"{first.consumer} read {first.value!r} and {poll.consumer} read {poll.value!r} at {_where(poll)}",
                (first, poll),
            )
        if poll.value in facts.aborted_values and facts.uncommitted is None:
            continue  # an aborted read, reported as such; no log to place it in
        holds = facts.value_at(*place)
        if holds is not None and holds != poll.value:
            yield Anomaly(
                DISAGREEING_OFFSETS,
                f"{poll.consumer} read {poll.value!r} at {_where(poll)}, which holds {holds!r} in the final log",
                (poll,),
            )
        elif holds is None and not facts.in_any_log(poll.value):
            yield Anomaly(
                DISAGREEING_OFFSETS,
                f"{poll.consumer} read {poll.value!r} at {_where(poll)}; it is not in the final log (truncated)",
                (poll,),
            )


def _acked_but_truncated(facts: _Facts) -> Iterator[Anomaly]:
    for ack in _placed(facts.acks):
        holds = facts.value_at(ack.topic, ack.partition, ack.offset)
        if holds == ack.value or (holds is None and not facts.in_any_log(ack.value)):
            continue  # in place, or nowhere at all (a lost write when it had to be there)
        shown = "nothing" if holds is None else repr(holds)
        yield Anomaly(
            ACKED_BUT_TRUNCATED,
            f"{ack.value!r} acknowledged at {_where(ack)}, which holds {shown} in the final log",
            _present([facts.send_of.get(ack.value), ack]),
        )


def _written_after_failure(facts: _Facts) -> Iterator[Anomaly]:
    for failure in facts.failures:
        if failure.definitely_not_written and facts.in_any_log(failure.value):
            places = facts.final_positions.get(failure.value) or facts.uncommitted_positions.get(failure.value, [])
            where = ", ".join(f"{t}[{p}]@{o}" for t, p, o in places)
            yield Anomaly(
                WRITTEN_AFTER_FAILURE, f"{failure.value!r} reported not written is in the log at {where}", (failure,)
            )


def _commit_beyond_end(facts: _Facts) -> Iterator[Anomaly]:
    for commit in facts.commits:
        key = (commit.topic, commit.partition)
        ends = [facts.final.end_offsets.get(key, 0)]
        if facts.uncommitted is not None:
            ends.append(facts.uncommitted.end_offsets.get(key, 0))
        end = max(ends)
        if commit.offset > end:
            yield Anomaly(
                COMMIT_BEYOND_END,
                f"{commit.consumer} committed offset {commit.offset}"
                f" of {commit.topic}[{commit.partition}], whose log ends at {end}",
                (commit,),
            )


_FINDERS: dict[str, Callable[[_Facts], Iterable[Anomaly]]] = {
    LOST: _lost,
    DUPLICATED: _duplicated,
    REORDERED: _reordered,
    ABORTED_READ: _aborted_read,
    UNCOMMITTED_READ: _uncommitted_read,
    DISAGREEING_OFFSETS: _disagreeing_offsets,
    ACKED_BUT_TRUNCATED: _acked_but_truncated,
    WRITTEN_AFTER_FAILURE: _written_after_failure,
    COMMIT_BEYOND_END: _commit_beyond_end,
}


def _placed(acks: Iterable[SendAcknowledged]) -> Iterator[SendAcknowledged]:
    """The acknowledgements that name an offset."""
    return (ack for ack in acks if ack.offset is not None)


def _where(event: SendAcknowledged | Polled) -> str:
    return f"{event.topic}[{event.partition}]@{offset_text(event.offset)}"


def _present(events: Sequence[Event | None]) -> tuple[Event, ...]:
    return tuple(sorted((e for e in events if e is not None), key=lambda e: e.seq))
