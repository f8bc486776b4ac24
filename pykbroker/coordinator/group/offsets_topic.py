"""The internal topic `__consumer_offsets`: which partition a group lives in, and its creation.

A group's coordinator is the leader of partition `Utils.abs(group_id.hashCode()) % partitions`,
as for every coordinator (`../placement.py`). The partition count is the existing topic's, or
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

from ..internal_topic import InternalTopic
from ..placement import coordinator_partition

if TYPE_CHECKING:
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

OFFSETS_TOPIC = "__consumer_offsets"


def partition_for(group_id: str, partition_count: int) -> int:
    return coordinator_partition(group_id, partition_count)


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
