"""A coordinator's internal topic (`__consumer_offsets`, `__transaction_state`,
`__share_group_state`): its partition count and its creation on first use.

The partition count is the existing topic's, or the configured count before the topic exists. The
topic is created with the configured partitions, replication factor and topic configs; when
another broker created it meanwhile, that topic is used. With fewer live brokers than the
replication factor the creation fails and the coordinator is not available; the broker then says
once, at WARN, which setting to change (each later failure is logged at DEBUG: clients retry every
few milliseconds). Each topic logs on its own module's logger.

A coordinator follows its topic's leadership: it listens to the metadata's topic changes and looks
at its topic once when it starts (`follow_topic`); it serves the partitions this broker leads
(`led_partitions`, with their leader epochs), and where it tracks the epoch it serves each at,
resigns the partitions it no longer leads and is elected for those led at another epoch
(`follow_leadership`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..protocol.errors import ErrorCode, KafkaError

if TYPE_CHECKING:
    from ..cluster.model import TopicInfo
    from ..cluster.store import MetadataStore
    from ..config.broker import BrokerConfig

_warned_failures: set[str] = set()  # creation failures already logged at WARN by this process


class TopicCreator(Protocol):
    """Creating a topic (`cluster/topic_creation.py`); KafkaError when it cannot be created."""

    def create(
        self, name: str, num_partitions: int, replication_factor: int, configs: dict[str, str] | None = None
    ) -> TopicInfo: ...


@dataclass(frozen=True, eq=False)  # one per internal topic, never compared
class InternalTopic:
    """An internal topic (`__consumer_offsets`, `__transaction_state`, `__share_group_state`):
    the broker keys of its partition count and replication factor and how it is created."""

    name: str
    partitions_key: str  # e.g. offsets.topic.num.partitions
    replication_factor_key: str  # e.g. offsets.topic.replication.factor
    topic_configs: Callable[[BrokerConfig], dict[str, str]]  # the topic's configs, from the broker's config
    serves: str  # what is not available without the topic, e.g. "consumer groups"
    single_broker_settings: str  # the settings that let one broker create it
    log: logging.Logger

    def partition_count(self, metadata: MetadataStore, config: BrokerConfig) -> int:
        info = metadata.topic(self.name)
        if info is not None and info.partitions:
            return len(info.partitions)
        return int(config[self.partitions_key])

    def ensure_created(
        self, metadata: MetadataStore, topic_creator: TopicCreator, config: BrokerConfig
    ) -> TopicInfo | None:
        """The topic's TopicInfo, creating it first if needed; None if it cannot be created."""
        info = metadata.topic(self.name)
        if info is not None:
            return info
        try:
            info = topic_creator.create(
                self.name,
                int(config[self.partitions_key]),
                int(config[self.replication_factor_key]),
                self.topic_configs(config),
            )
        except KafkaError as exc:
            if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS:  # another broker created it meanwhile
                return metadata.topic(self.name)
            self._log_creation_failure(exc, config)
            return None
        self.log.info("Created internal topic %s with %d partitions", self.name, len(info.partitions))
        return info

    def _log_creation_failure(self, exc: KafkaError, config: BrokerConfig) -> None:
        message = f"Could not create {self.name}, so {self.serves} are not available: {exc.message_or_default}"
        if exc.code == ErrorCode.INVALID_REPLICATION_FACTOR:
            message += (
                f" Set {self.replication_factor_key} (now {config[self.replication_factor_key]}) to at "
                f"most the number of brokers: {self.single_broker_settings} for a single broker, as "
                f"Kafka's example config/server.properties does."
            )
        level = logging.DEBUG if message in _warned_failures else logging.WARNING
        _warned_failures.add(message)
        self.log.log(level, message)


TopicListener = Callable[[str, "TopicInfo | None"], None]


def follow_topic(metadata: MetadataStore | None, topic: str, on_topic_changed: TopicListener) -> None:
    """`on_topic_changed` for every topic change from now on, and at once for `topic` as it is."""
    if metadata is None:
        return
    metadata.add_topic_listener(on_topic_changed)
    info = metadata.topic(topic)
    if info is not None:
        on_topic_changed(topic, info)


def led_partitions(info: TopicInfo | None, broker_id: int, is_leader: Callable[[int], bool]) -> dict[int, int]:
    """The partitions of the topic that this broker leads, as the metadata and the replica (its
    `is_leader`) both say: partition -> leader epoch."""
    if info is None:
        return {}
    return {
        index: state.leader_epoch
        for index, state in info.partitions.items()
        if state.leader == broker_id and is_leader(index)
    }


def follow_leadership(
    served: dict[int, int],
    led: dict[int, int],
    on_election: Callable[[int, int], None],
    on_resignation: Callable[[int], None],
) -> None:
    """From `served` (partition -> the epoch served at) to `led`: resign the partitions no longer
    led, then be elected for each led at an epoch not served."""
    for partition in sorted(served.keys() - led.keys()):
        on_resignation(partition)
    for partition, epoch in sorted(led.items()):
        if served.get(partition) != epoch:
            on_election(partition, epoch)
