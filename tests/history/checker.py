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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .events import Event, History, format_event
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
        raise NotImplementedError


def check(
    history: History,
    final: FinalLog,
    uncommitted: FinalLog | None = None,
) -> Verdict:
    """Check `history` against `final` (the read_committed final log, the truth) and, when given,
    `uncommitted` (the read_uncommitted final log: aborted and open transactions' records, used to
    tell uncommitted reads and to place polls and acknowledgements of transactional writes)."""
    raise NotImplementedError


def _events_text(events: Sequence[Event]) -> str:
    return "\n".join(format_event(event) for event in events)
