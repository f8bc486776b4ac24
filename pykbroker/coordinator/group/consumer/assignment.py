"""The server-side assignors consumer groups use, behind the interface of
`coordinator/group/assignors/` (`MemberSubscription`, `TopicDescription`, `PartitionAssignor`,
`ASSIGNORS`), and the topic regular expressions of `coordinator/group/topic_regex.py`
(`compile_topic_regex`, `InvalidTopicRegex`).

When those modules are present they are used (`ASSIGNORS`, `compile_topic_regex`,
`INVALID_TOPIC_REGEX` below resolve to them); otherwise a round-robin assignor stands in under the
names "uniform" and "range", and regular expressions are Python's (full match).
"""

from __future__ import annotations

import importlib
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

# Kafka's class names of its assignors, as `group.consumer.assignors` may list them
ASSIGNOR_CLASS_NAMES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
    "org.apache.kafka.coordinator.group.api.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.api.assignor.RangeAssignor": "range",
}


@dataclass(frozen=True)
class MemberSubscription:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    subscribed_topic_ids: frozenset[uuid.UUID]
    assigned: Mapping[uuid.UUID, frozenset[int]]


@dataclass(frozen=True)
class TopicDescription:
    topic_id: uuid.UUID
    name: str
    partition_count: int
    partition_racks: Mapping[int, frozenset[str]]


class PartitionAssignor(Protocol):
    name: str

    def assign(
        self, members: Mapping[str, MemberSubscription], topics: Mapping[uuid.UUID, TopicDescription]
    ) -> dict[str, dict[uuid.UUID, frozenset[int]]]: ...


class RoundRobinAssignor:
    """Each subscribed partition in turn to the next of its subscribers (sorted by member id),
    keeping a partition with its current owner where that keeps the shares even."""

    def __init__(self, name: str) -> None:
        self.name = name

    def assign(
        self, members: Mapping[str, MemberSubscription], topics: Mapping[uuid.UUID, TopicDescription]
    ) -> dict[str, dict[uuid.UUID, frozenset[int]]]:
        result: dict[str, dict[uuid.UUID, set[int]]] = {m: {} for m in members}
        for topic_id in sorted(topics, key=str):
            subscribers = sorted(m for m, s in members.items() if topic_id in s.subscribed_topic_ids)
            if not subscribers:
                continue
            count = topics[topic_id].partition_count
            quota = -(-count // len(subscribers))
            taken: dict[str, int] = dict.fromkeys(subscribers, 0)
            unplaced = []
            for p in range(count):
                owner = next((m for m in subscribers if p in members[m].assigned.get(topic_id, ())), None)
                if owner is not None and taken[owner] < quota:
                    result[owner].setdefault(topic_id, set()).add(p)
                    taken[owner] += 1
                else:
                    unplaced.append(p)
            for p in unplaced:
                member = min(subscribers, key=lambda m: (taken[m], m))
                result[member].setdefault(topic_id, set()).add(p)
                taken[member] += 1
        return {m: {t: frozenset(ps) for t, ps in a.items()} for m, a in result.items()}


class InvalidTopicRegex(ValueError):
    pass


class TopicRegex:
    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled = re.compile(pattern)

    def matches(self, topic: str) -> bool:
        return self._compiled.fullmatch(topic) is not None


def compile_topic_regex(pattern: str) -> TopicRegex:
    try:
        return TopicRegex(pattern)
    except re.error as e:
        raise InvalidTopicRegex(f"SubscribedTopicRegex `{pattern}` is not a valid regular expression: {e}.") from None


class RegexMatcher(Protocol):
    def matches(self, topic: str) -> bool: ...


def _module(name: str) -> object | None:
    try:
        return importlib.import_module(f"pykbroker.coordinator.group.{name}")
    except ModuleNotFoundError:
        return None


_ASSIGNORS_MODULE = _module("assignors")
_REGEX_MODULE = _module("topic_regex")

ASSIGNORS: dict[str, PartitionAssignor] = getattr(
    _ASSIGNORS_MODULE,
    "ASSIGNORS",
    {"uniform": RoundRobinAssignor("uniform"), "range": RoundRobinAssignor("range")},
)
# the assignor's failure to assign (Kafka's PartitionAssignorException)
ASSIGNOR_ERROR: type[Exception] = getattr(_ASSIGNORS_MODULE, "PartitionAssignorError", RuntimeError)
compile_regex: Callable[[str], RegexMatcher] = getattr(_REGEX_MODULE, "compile_topic_regex", compile_topic_regex)
INVALID_TOPIC_REGEX: type[Exception] = getattr(_REGEX_MODULE, "InvalidTopicRegex", InvalidTopicRegex)


def assignor_names(configured: list[str]) -> list[str]:
    """The assignor names of `group.consumer.assignors` (Kafka's class names or short names)."""
    return [ASSIGNOR_CLASS_NAMES.get(name, name) for name in configured]
