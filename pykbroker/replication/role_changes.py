"""The partition role changes of one batch, logged as one INFO line per topic instead of one per
partition.

A topic change (creation, added partitions, new leaders) or the broker's start-up makes this
broker lead or follow many partitions at once; `RoleChanges` collects them and logs

    Topic orders: leading partitions 0-4,7 at leader epoch 3; following partitions 5-6 from broker 2 at leader epoch 3

Internal topics (`__consumer_offsets`, `__transaction_state`) are logged at DEBUG: their fifty
partitions would otherwise fill a start-up's log. At start-up the broker logs one summary line
for all topics (`log_summary`), counting the partitions whose logs are still loading (their roles
are taken as each log comes in).
"""

from __future__ import annotations

import logging
from collections import defaultdict

from ..cluster.model import INTERNAL_TOPICS


class RoleChanges:
    def __init__(self) -> None:
        # topic -> {description of the role (leader epoch, leader): [partition indexes]}
        self._roles: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        self._loading: dict[str, list[int]] = defaultdict(list)  # topic -> partitions whose log still loads

    def __bool__(self) -> bool:
        return bool(self._roles)

    def still_loading(self, topic: str, index: int) -> None:
        """A partition hosted here whose log is not loaded yet: its role comes once it is."""
        self._loading[topic].append(index)

    def lead(self, topic: str, index: int, leader_epoch: int) -> None:
        self._roles[topic][f"leading partitions %s at leader epoch {leader_epoch}"].append(index)

    def follow(self, topic: str, index: int, leader: int, leader_epoch: int) -> None:
        self._roles[topic][f"following partitions %s from broker {leader} at leader epoch {leader_epoch}"].append(index)

    def lines(self) -> list[tuple[int, str]]:
        """(log level, message) per topic, in topic order."""
        return [(_level(topic), f"Topic {topic}: {_describe(roles)}") for topic, roles in sorted(self._roles.items())]

    def log_per_topic(self, logger: logging.Logger) -> None:
        for level, message in self.lines():
            logger.log(level, message)
        self._roles.clear()
        self._loading.clear()

    def log_summary(self, logger: logging.Logger) -> None:
        """One line for everything collected (start-up): how many partitions of how many topics
        this broker leads and follows, and how many more still load; the per-topic lines at DEBUG."""
        if self._roles or self._loading:
            logger.info(self.summary())
        for _, message in self.lines():
            logger.debug(message)
        self._roles.clear()
        self._loading.clear()

    def summary(self) -> str:
        led = sum(len(p) for roles in self._roles.values() for role, p in roles.items() if role.startswith("leading"))
        followed = sum(len(p) for roles in self._roles.values() for p in roles.values()) - led
        line = f"Leading {led} and following {followed} partition(s) of {len(self._roles)} topic(s)"
        loading = sum(len(indexes) for indexes in self._loading.values())
        if loading:
            line += f"; {loading} more partition(s) of {len(self._loading)} topic(s) still loading"
        return line


def _describe(roles: dict[str, list[int]]) -> str:
    return "; ".join(role % partition_ranges(indexes) for role, indexes in roles.items())


def partition_ranges(indexes: list[int]) -> str:
    """`[0, 1, 2, 4, 6, 7]` as `0-2,4,6-7`."""
    parts = []
    ordered = sorted(indexes)
    start = previous = ordered[0]
    for index in ordered[1:] + [None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if index is not None:
            start = previous = index
    return ",".join(parts)


def _level(topic: str) -> int:
    return logging.DEBUG if topic in INTERNAL_TOPICS else logging.INFO
