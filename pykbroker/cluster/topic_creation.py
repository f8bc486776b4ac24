"""Creating topics on request or automatically, with the broker's defaults.

Shared by the Metadata handler (auto-creation), CreateTopics and the coordinators' internal topics.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..protocol.errors import ErrorCode, KafkaError
from .model import TopicInfo, validate_topic_name
from .store import MetadataStore

if TYPE_CHECKING:
    from ..config.broker import BrokerConfig

log = logging.getLogger(__name__)


class TopicCreator:
    def __init__(self, store: MetadataStore, config: BrokerConfig) -> None:
        self.store = store
        self.config = config
        self._internal: dict[str, Callable[[], TopicInfo | None]] = {}

    def register_internal_topic(self, name: str, create: Callable[[], TopicInfo | None]) -> None:
        """Internal topics (e.g. `__consumer_offsets`) are auto-created by their owner, with
        their own partition count and configs, as Kafka does."""
        self._internal[name] = create

    @property
    def auto_create_enabled(self) -> bool:
        return bool(self.config["auto.create.topics.enable"])

    def auto_create(self, name: str) -> TopicInfo:
        """Create `name` with num.partitions and default.replication.factor (Kafka's auto-creation)."""
        validate_topic_name(name)
        existing = self.store.topic(name)
        if existing is not None:
            return existing
        if name in self._internal:
            info = self._internal[name]()
            if info is None:
                raise KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE)
            return info
        try:
            info = self.create(name, self.config["num.partitions"], self.config["default.replication.factor"])
        except KafkaError as exc:
            # Another broker of the cluster created it first: use theirs.
            theirs = self.store.topic(name) if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS else None
            if theirs is not None:
                return theirs
            raise
        log.info("Auto-created topic %s with %d partition(s)", name, len(info.partitions))
        return info

    def create(
        self,
        name: str,
        num_partitions: int,
        replication_factor: int,
        configs: dict[str, str] | None = None,
        assignments: dict[int, list[int]] | None = None,
    ) -> TopicInfo:
        if num_partitions == -1:
            num_partitions = self.config["num.partitions"]
        if replication_factor == -1:
            replication_factor = self.config["default.replication.factor"]
        if num_partitions <= 0 and not assignments:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
        if replication_factor <= 0 and not assignments:
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0.",
            )
        return self.store.create_topic(name, num_partitions, replication_factor, configs, assignments)
