"""The internal topic `__transaction_state`: which partition a transactional id lives in, and its
creation.

A transactional id's coordinator is the leader of partition `Utils.abs(id.hashCode()) % partitions`,
as for every coordinator (`../placement.py`). The partition count is the
existing topic's, or `transaction.state.log.num.partitions` before the topic exists.

The topic is created on first use (FindCoordinator with key type TRANSACTION) as Kafka does:
`transaction.state.log.num.partitions` partitions of `transaction.state.log.replication.factor`
replicas, compacted, uncompressed, unclean leader election off, `min.insync.replicas` =
`transaction.state.log.min.isr` and `segment.bytes` = `transaction.state.log.segment.bytes`. With
fewer live brokers than the replication factor the creation fails and the coordinator is not
available; the broker says once, at WARN, which setting to change (`../internal_topic.py`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..internal_topic import InternalTopic
from ..placement import coordinator_partition

if TYPE_CHECKING:
    from ...config.broker import BrokerConfig

log = logging.getLogger(__name__)

TRANSACTION_STATE_TOPIC = "__transaction_state"


def partition_for(transactional_id: str, partition_count: int) -> int:
    return coordinator_partition(transactional_id, partition_count)


def topic_configs(config: BrokerConfig) -> dict[str, str]:
    """Kafka's TransactionStateManager.transactionTopicConfigs."""
    return {
        "unclean.leader.election.enable": "false",
        "compression.type": "uncompressed",
        "cleanup.policy": "compact",
        "min.insync.replicas": str(config["transaction.state.log.min.isr"]),
        "segment.bytes": str(config["transaction.state.log.segment.bytes"]),
    }


TRANSACTION_STATE = InternalTopic(
    name=TRANSACTION_STATE_TOPIC,
    partitions_key="transaction.state.log.num.partitions",
    replication_factor_key="transaction.state.log.replication.factor",
    topic_configs=topic_configs,
    serves="transactions",
    single_broker_settings="transaction.state.log.replication.factor=1 and transaction.state.log.min.isr=1",
    log=log,
)
partition_count = TRANSACTION_STATE.partition_count
ensure_created = TRANSACTION_STATE.ensure_created
