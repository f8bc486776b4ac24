"""The interface every metadata store offers, and change notification.

Two stores implement it: `EmbeddedMetadataStore` (one broker, state in a local file) and, in
cluster mode, the ZooKeeper store. Readers get consistent snapshots of plain records; writers go
through the store's methods, which validate, persist and then tell the listeners.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

from .model import BrokerInfo, TopicInfo

TopicListener = Callable[[str, "TopicInfo | None"], None]  # (name, new state or None if deleted)


class MetadataStore(ABC):
    cluster_id: str
    controller_id: int

    def __init__(self) -> None:
        self._topic_listeners: list[TopicListener] = []

    # -- reading -----------------------------------------------------------------------
    @abstractmethod
    def brokers(self) -> list[BrokerInfo]:
        """The live brokers."""

    @abstractmethod
    def topics(self) -> dict[str, TopicInfo]:
        """Every topic by name."""

    def topic(self, name: str) -> TopicInfo | None:
        return self.topics().get(name)

    def topic_by_id(self, topic_id) -> TopicInfo | None:
        for info in self.topics().values():
            if info.topic_id == topic_id:
                return info
        return None

    # -- writing -----------------------------------------------------------------------
    @abstractmethod
    def create_topic(self, name: str, num_partitions: int, replication_factor: int,
                     configs: dict[str, str] | None = None,
                     assignments: dict[int, list[int]] | None = None) -> TopicInfo:
        """Create a topic; raises KafkaError (TOPIC_ALREADY_EXISTS, INVALID_*, ...)."""

    @abstractmethod
    def delete_topic(self, name: str) -> None:
        """Delete a topic; raises KafkaError UNKNOWN_TOPIC_OR_PARTITION if absent."""

    # -- change notification -----------------------------------------------------------
    def add_topic_listener(self, listener: TopicListener) -> None:
        self._topic_listeners.append(listener)

    def _notify_topic(self, name: str, info: TopicInfo | None) -> None:
        for listener in self._topic_listeners:
            listener(name, info)
