"""The console consumer's group as Kafka 3.9's kafka-console-consumer.sh uses it (its Java consumer
talks to a group coordinator only when it needs one): when a refused group is reported, and the
auto-commit of a consumer that only assigns itself a partition.

librdkafka looks up the coordinator of its `group.id` as soon as the consumer starts, whether it
subscribes or only assigns partitions, and reports a refused lookup (GROUP_AUTHORIZATION_FAILED)
at once. Kafka's Java consumer, as its console consumer uses it:

- subscribed (`--topic`/`--include` without `--partition`): it must join the group, so the first
  poll fails: `ERROR Error processing message, terminating consumer process:  ...
  GroupAuthorizationException: Not authorized to access group: G`, then the count, status 0;
- assigned (`--partition`, a random group, `enable.auto.commit=false`): it sends no group request
  at all, so nothing is reported and the records are printed;
- assigned with `enable.auto.commit=true`: it commits every `auto.commit.interval.ms` (5 s by
  default) and when it closes. Refused, the first of those commits ends the consumer as above,
  and the one at close warns: `WARN [Consumer clientId=C, groupId=G] Synchronous auto-commit of
  offsets {t-0=OffsetAndMetadata{offset=3, leaderEpoch=0, metadata=''}} failed: Not authorized
  to access group: G`.

An assigned consumer with auto-commit on therefore runs librdkafka without its own (whose last
commit, never answered by a refused coordinator, would hold up the close for most of a minute)
and commits as Java's consumer does:

    group = ConsoleGroup.of(properties, assigned=args.partition is not None)
    group.note(error)                # a consumer error: True if it was the group's refusal
    group.ends_consuming(consumer)   # each poll: commits when due; True once Kafka's tool would stop
    group.close(consumer, positions) # before closing: the last auto-commit, or its refusal's WARN
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException

DEFAULT_AUTO_COMMIT_INTERVAL_MS = 5000  # the Java consumer's auto.commit.interval.ms
TERMINATING = "ERROR Error processing message, terminating consumer process:  "
NOT_AUTHORIZED = "Not authorized to access group: {group}"


@dataclass(frozen=True)
class Position:
    """Where the consumer stands in one partition: the next offset and, when a record was read,
    the leader epoch of the last one (Java's OffsetAndMetadata)."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int | None = None

    def java(self) -> str:
        epoch = "null" if self.leader_epoch is None else self.leader_epoch
        metadata = f"offset={self.offset}, leaderEpoch={epoch}, metadata=''"
        return f"{self.topic}-{self.partition}=OffsetAndMetadata{{{metadata}}}"


@dataclass
class ConsoleGroup:
    """The console consumer's group: a refused coordinator lookup, reported as Kafka's console
    consumer would report it, and an assigned consumer's auto-commits."""

    group: str
    client_id: str
    assigned: bool
    auto_commit: bool
    commit_interval_s: float
    started: float = field(default_factory=time.monotonic)
    last_commit: float = field(default_factory=time.monotonic)
    refused: bool = False
    ended: bool = False

    @classmethod
    def of(cls, properties: dict[str, str], *, assigned: bool) -> ConsoleGroup:
        """From the consumer's Java properties (the Java consumer's defaults where unset)."""
        interval_ms = int(properties.get("auto.commit.interval.ms", DEFAULT_AUTO_COMMIT_INTERVAL_MS))
        return cls(
            group=properties["group.id"],
            client_id=properties.get("client.id", "console-consumer"),
            assigned=assigned,
            auto_commit=properties.get("enable.auto.commit", "true").strip().lower() == "true",
            commit_interval_s=interval_ms / 1000,
        )

    def note(self, error: KafkaError) -> bool:
        """True if `error` is the group's refusal (then handled here, not reported as it comes)."""
        if error.code() != KafkaError.GROUP_AUTHORIZATION_FAILED:
            return False
        self.refused = True
        return True

    def uses_group_now(self) -> bool:
        """Whether Kafka's consumer has asked for its group by now."""
        if not self.assigned:
            return True
        return self.auto_commit and time.monotonic() - self.started >= self.commit_interval_s

    def commits_itself(self) -> bool:
        """An assigned consumer with auto-commit on: the tool commits, not librdkafka."""
        return self.assigned and self.auto_commit

    def ends_consuming(self, consumer: Consumer) -> bool:
        """Called after each poll: commits when an auto-commit is due; True once the refusal ends
        the consumption (the ERROR line is printed the first time)."""
        if self.ended:
            return True
        if not self.refused:
            self.commit_when_due(consumer)
            return False
        if not self.uses_group_now():
            return False
        self.ended = True
        print(
            f"{TERMINATING}org.apache.kafka.common.errors.GroupAuthorizationException: {self.not_authorized()}",
            file=sys.stderr,
        )
        return True

    def commit_when_due(self, consumer: Consumer) -> None:
        """The periodic auto-commit of an assigned consumer (what it consumed so far)."""
        if not self.commits_itself() or time.monotonic() - self.last_commit < self.commit_interval_s:
            return
        self.last_commit = time.monotonic()
        try:
            consumer.commit(asynchronous=True)
        except KafkaException:
            pass  # nothing consumed yet (_NO_OFFSET): nothing to commit

    def close(self, consumer: Consumer, positions: Callable[[], list[Position]]) -> None:
        """Before the consumer closes: an assigned consumer's last auto-commit, or, refused, the
        WARN line of its failure (none without a position to commit)."""
        if not self.commits_itself():
            return
        if not self.refused:
            try:
                consumer.commit(asynchronous=False)
            except KafkaException:
                pass  # nothing consumed (_NO_OFFSET), or the coordinator not found yet
            return
        self.report_refused_commit(positions())

    def report_refused_commit(self, positions: list[Position]) -> None:
        if not positions:
            return
        offsets = ", ".join(position.java() for position in positions)
        print(
            f"WARN [Consumer clientId={self.client_id}, groupId={self.group}] Synchronous auto-commit of offsets "
            f"{{{offsets}}} failed: {self.not_authorized()}",
            file=sys.stderr,
        )

    def not_authorized(self) -> str:
        return NOT_AUTHORIZED.format(group=self.group)
