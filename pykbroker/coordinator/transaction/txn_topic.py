"""The internal topic `__transaction_state`: which partition a transactional id lives in, and its
creation.

A transactional id's coordinator is the leader of partition `abs(hash(id)) % partitions`, with
Java's `String.hashCode` as for groups (`group/offsets_topic.py`). The partition count is the
existing topic's, or `transaction.state.log.num.partitions` before the topic exists.

The topic is created on first use (FindCoordinator with key type TRANSACTION) as Kafka does:
`transaction.state.log.num.partitions` partitions of `transaction.state.log.replication.factor`
replicas, compacted, uncompressed, unclean leader election off, `min.insync.replicas` =
`transaction.state.log.min.isr` and `segment.bytes` = `transaction.state.log.segment.bytes`. With
fewer live brokers than the replication factor the creation fails and the coordinator is not
available; the broker says once, at WARN, which setting to change.
"""

from __future__ import annotations

import logging

from ...protocol.errors import ErrorCode, KafkaError
from ..group.offsets_topic import partition_for as _hash_partition

log = logging.getLogger(__name__)

TRANSACTION_STATE_TOPIC = "__transaction_state"

_warned_failures: set[str] = set()  # creation failures already logged at WARN by this process


def partition_for(transactional_id: str, partition_count: int) -> int:
    return _hash_partition(transactional_id, partition_count)


def topic_configs(config) -> dict[str, str]:
    """Kafka's TransactionStateManager.transactionTopicConfigs."""
    return {
        "unclean.leader.election.enable": "false",
        "compression.type": "uncompressed",
        "cleanup.policy": "compact",
        "min.insync.replicas": str(config["transaction.state.log.min.isr"]),
        "segment.bytes": str(config["transaction.state.log.segment.bytes"]),
    }


def partition_count(metadata, config) -> int:
    info = metadata.topic(TRANSACTION_STATE_TOPIC)
    if info is not None and info.partitions:
        return len(info.partitions)
    return int(config["transaction.state.log.num.partitions"])


def ensure_created(metadata, topic_creator, config):
    """The topic's TopicInfo, creating it first if needed; None if it cannot be created."""
    info = metadata.topic(TRANSACTION_STATE_TOPIC)
    if info is not None:
        return info
    try:
        info = topic_creator.create(
            TRANSACTION_STATE_TOPIC,
            int(config["transaction.state.log.num.partitions"]),
            int(config["transaction.state.log.replication.factor"]),
            topic_configs(config),
        )
    except KafkaError as exc:
        if exc.code == ErrorCode.TOPIC_ALREADY_EXISTS:  # another broker created it meanwhile
            return metadata.topic(TRANSACTION_STATE_TOPIC)
        _log_creation_failure(exc, config)
        return None
    log.info("Created internal topic %s with %d partitions", TRANSACTION_STATE_TOPIC, len(info.partitions))
    return info


def _log_creation_failure(exc: KafkaError, config) -> None:
    message = f"Could not create {TRANSACTION_STATE_TOPIC}, so transactions are not available: {exc.message_or_default}"
    if exc.code == ErrorCode.INVALID_REPLICATION_FACTOR:
        message += (
            f" Set transaction.state.log.replication.factor (now "
            f"{config['transaction.state.log.replication.factor']}) to at most the number of "
            f"brokers: transaction.state.log.replication.factor=1 and transaction.state.log.min.isr=1 "
            f"for a single broker, as Kafka's example config/server.properties does."
        )
    level = logging.DEBUG if message in _warned_failures else logging.WARNING
    _warned_failures.add(message)
    log.log(level, message)
