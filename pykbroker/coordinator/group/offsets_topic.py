"""The internal topic `__consumer_offsets`: which partition a group lives in, and its creation.

A group's coordinator is the leader of partition `abs(hash(group_id)) % partitions`, where the
hash is Java's `String.hashCode` (over UTF-16 code units) and `abs` maps Integer.MIN_VALUE to 0
(Kafka's `Utils.abs`: `hash & 0x7fffffff`). The partition count is the existing topic's, or
`offsets.topic.num.partitions` before the topic exists.

The topic is created on first use (FindCoordinator) as Kafka does: compacted, with
`offsets.topic.num.partitions` partitions, `offsets.topic.replication.factor` replicas and
`offsets.topic.segment.bytes` segments. With fewer live brokers than the replication factor the
creation fails and the coordinator is not available; the broker then says once, at WARN, which
setting to change (each later failure is logged at DEBUG: clients retry every few milliseconds).
"""

from __future__ import annotations

import logging

from ...protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"

_warned_failures: set[str] = set()  # creation failures already logged at WARN by this process


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode()`: 31-based over UTF-16 code units, as a signed 32-bit int."""
    data = text.encode("utf-16-be")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for(group_id: str, partition_count: int) -> int:
    return (java_string_hash(group_id) & 0x7FFFFFFF) % partition_count


def topic_configs(config) -> dict[str, str]:
    return {
        "cleanup.policy": "compact",
        "segment.bytes": str(config["offsets.topic.segment.bytes"]),
        "compression.type": "producer",
    }


def partition_count(metadata, config) -> int:
    info = metadata.topic(OFFSETS_TOPIC)
    if info is not None and info.partitions:
        return len(info.partitions)
    return int(config["offsets.topic.num.partitions"])


def ensure_created(metadata, topic_creator, config):
    """The topic's TopicInfo, creating it first if needed; None if it cannot be created."""
    info = metadata.topic(OFFSETS_TOPIC)
    if info is not None:
        return info
    try:
        info = topic_creator.create(
            OFFSETS_TOPIC,
            int(config["offsets.topic.num.partitions"]),
            int(config["offsets.topic.replication.factor"]),
            topic_configs(config),
        )
    except KafkaError as exc:
        if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS:  # another broker created it meanwhile
            return metadata.topic(OFFSETS_TOPIC)
        _log_creation_failure(exc, config)
        return None
    log.info("Created internal topic %s with %d partitions", OFFSETS_TOPIC, len(info.partitions))
    return info


def _log_creation_failure(exc: KafkaError, config) -> None:
    message = f"Could not create {OFFSETS_TOPIC}, so consumer groups are not available: {exc.message_or_default}"
    if exc.code == ErrorCode.INVALID_REPLICATION_FACTOR:
        message += (
            f" Set offsets.topic.replication.factor (now "
            f"{config['offsets.topic.replication.factor']}) to at most the number of "
            f"brokers: offsets.topic.replication.factor=1 for a single broker, as Kafka's "
            f"example config/server.properties does."
        )
    level = logging.DEBUG if message in _warned_failures else logging.WARNING
    _warned_failures.add(message)
    log.log(level, message)
