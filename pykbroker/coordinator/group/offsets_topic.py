"""The internal topic `__consumer_offsets`: which partition a group lives in, and its creation.

A group's coordinator is the leader of partition `abs(hash(group_id)) % partitions`, where the
hash is Java's `String.hashCode` (over UTF-16 code units) and `abs` maps Integer.MIN_VALUE to 0
(Kafka's `Utils.abs`: `hash & 0x7fffffff`). The partition count is the existing topic's, or
`offsets.topic.num.partitions` before the topic exists.

The topic is created on first use (FindCoordinator) as Kafka does: compacted, with
`offsets.topic.num.partitions` partitions, `offsets.topic.replication.factor` replicas and
`offsets.topic.segment.bytes` segments. With fewer live brokers than the replication factor the
creation fails and the coordinator is not available; the broker then says once, at WARN, which
setting to change (`../internal_topic.py`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ...common.java_order import signed_string_hash
from ..internal_topic import InternalTopic

if TYPE_CHECKING:
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"


def partition_for(group_id: str, partition_count: int) -> int:
    return (signed_string_hash(group_id) & 0x7FFFFFFF) % partition_count


def topic_configs(config: BrokerConfig) -> dict[str, str]:
    return {
        "cleanup.policy": "compact",
        "segment.bytes": str(config["offsets.topic.segment.bytes"]),
        "compression.type": "producer",
    }


OFFSETS = InternalTopic(
    name=OFFSETS_TOPIC,
    partitions_key="offsets.topic.num.partitions",
    replication_factor_key="offsets.topic.replication.factor",
    topic_configs=topic_configs,
    serves="consumer groups",
    single_broker_settings="offsets.topic.replication.factor=1",
    log=log,
)
partition_count = OFFSETS.partition_count
ensure_created = OFFSETS.ensure_created
