"""The internal topic `__share_group_state`: which partition a share-partition's state lives in,
and its creation.

The share coordinator of a key `groupId:topicId:partition` (Kafka's SharePartitionKey, topic id in
Kafka's base64 form) is the leader of partition `Utils.abs(key.hashCode()) % partitions`, with
Java's `String.hashCode` and Kafka's `Utils.abs` (Integer.MIN_VALUE gives 0, any other negative
number its absolute value). The partition count is the existing topic's, or
`share.coordinator.state.topic.num.partitions` before the topic exists.

The topic is created on first use (FindCoordinator with key type SHARE) as Kafka does:
`share.coordinator.state.topic.num.partitions` partitions of
`share.coordinator.state.topic.replication.factor` replicas, `cleanup.policy=delete` (KIP-932: the
share coordinator keeps the records it needs within retention by snapshotting cold partitions),
`compression.type=producer` and `segment.bytes` = `share.coordinator.state.topic.segment.bytes`.
With fewer live brokers than the replication factor the creation fails and the coordinator is not
available; the broker says once, at WARN, which setting to change (`../internal_topic.py`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..internal_topic import InternalTopic
from ..placement import coordinator_partition, share_key_partition

if TYPE_CHECKING:
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

SHARE_GROUP_STATE_TOPIC = "__share_group_state"


def partition_for(coordinator_key: str, partition_count: int) -> int:
    """The partition of `__share_group_state` for a SHARE coordinator key (`groupId:topicId:partition`)."""
    prefix, _, partition = coordinator_key.rpartition(":")
    if prefix and partition.isascii() and partition.isdigit() and str(int(partition)) == partition:
        return share_key_partition(prefix + ":", int(partition), partition_count)
    return coordinator_partition(coordinator_key, partition_count)


def topic_configs(config: BrokerConfig) -> dict[str, str]:
    """Kafka's ShareCoordinatorService.shareGroupStateTopicConfigs."""
    return {
        "cleanup.policy": "delete",
        "compression.type": "producer",
        "segment.bytes": str(config["share.coordinator.state.topic.segment.bytes"]),
    }


SHARE_GROUP_STATE = InternalTopic(
    name=SHARE_GROUP_STATE_TOPIC,
    partitions_key="share.coordinator.state.topic.num.partitions",
    replication_factor_key="share.coordinator.state.topic.replication.factor",
    topic_configs=topic_configs,
    serves="share groups",
    single_broker_settings=(
        "share.coordinator.state.topic.replication.factor=1 and share.coordinator.state.topic.min.isr=1"
    ),
    log=log,
)
partition_count = SHARE_GROUP_STATE.partition_count
ensure_created = SHARE_GROUP_STATE.ensure_created
