"""When the console consumer's group is refused: what Kafka 3.9's kafka-console-consumer.sh (whose
Java consumer talks to a group coordinator only when it needs one) prints, and when.

librdkafka looks up the coordinator of its `group.id` as soon as the consumer starts, whether it
subscribes or only assigns partitions, and reports a refused lookup (GROUP_AUTHORIZATION_FAILED)
at once. Kafka's Java consumer, as its console consumer uses it:

- subscribed (`--topic`/`--include` without `--partition`): it must join the group, so the first
  poll fails: `ERROR Error processing message, terminating consumer process:  ...
  GroupAuthorizationException: Not authorized to access group: G`, then the count, status 0;
- assigned (`--partition`, a random group, `enable.auto.commit=false`): it sends no group request
  at all, so nothing is reported and the records are printed;
- assigned with `enable.auto.commit=true`: the records are printed until the first auto-commit
  (`auto.commit.interval.ms` after the start, 5 s by default) fails as above, and closing fails
  its last auto-commit: `WARN [Consumer clientId=C, groupId=G] Synchronous auto-commit of offsets
  {t-0=OffsetAndMetadata{offset=3, leaderEpoch=0, metadata=''}} failed: Not authorized to access
  group: G`.

    refusal = GroupRefusal.of(properties, assigned=args.partition is not None)
    refusal.note(error)              # a consumer error: True if it was the group's refusal
    refusal.ends_consuming()         # True once Kafka's tool would stop (the ERROR line printed)
    if refusal.fails_on_close():
        refusal.report_close(positions)  # the failed auto-commit's WARN line
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from confluent_kafka import KafkaError

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
class GroupRefusal:
    """Tracks a refused group coordinator lookup and reports it as Kafka's console consumer would."""

    group: str
    client_id: str
    assigned: bool
    auto_commit: bool
    commit_interval_s: float
    started: float = field(default_factory=time.monotonic)
    refused: bool = False
    ended: bool = False

    @classmethod
    def of(cls, properties: dict[str, str], *, assigned: bool) -> GroupRefusal:
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

    def ends_consuming(self) -> bool:
        """True once the refusal ends the consumption (the ERROR line is printed the first time)."""
        if self.ended or not (self.refused and self.uses_group_now()):
            return self.ended
        self.ended = True
        print(
            f"{TERMINATING}org.apache.kafka.common.errors.GroupAuthorizationException: {self.not_authorized()}",
            file=sys.stderr,
        )
        return True

    def fails_on_close(self) -> bool:
        """Closing an assigned consumer commits its positions when auto-commit is on: refused."""
        return self.refused and self.assigned and self.auto_commit

    def report_close(self, positions: list[Position]) -> None:
        """The failed auto-commit of `positions` when the consumer closes (none: nothing to commit)."""
        if not (self.fails_on_close() and positions):
            return
        offsets = ", ".join(position.java() for position in positions)
        print(
            f"WARN [Consumer clientId={self.client_id}, groupId={self.group}] Synchronous auto-commit of offsets "
            f"{{{offsets}}} failed: {self.not_authorized()}",
            file=sys.stderr,
        )

    def not_authorized(self) -> str:
        return NOT_AUTHORIZED.format(group=self.group)
