"""A broker restarted on the data of an older pykbroker, which placed group ids and transactional
ids with negative hash codes in other partitions of `__consumer_offsets` and
`__transaction_state` than Kafka does (`(hashCode & 0x7fffffff) % partitions`): the restarted
broker places them as Kafka does and answers for them as before. Committed offsets (plain and
transactional) and a transactional id's producer come back; a second restart finds them again.

The older version is this broker with its placement rule replaced by the old one; its data is
written by real clients (confluent-kafka)."""
from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from pykbroker.coordinator.group import manager
from pykbroker.coordinator.placement import coordinator_partition, legacy_partition
from pykbroker.coordinator.transaction import state_manager
from pykbroker.testkit.embedded import EmbeddedBroker

from .client_helpers import create_topic
from .txn_support import describe_transaction

PARTITIONS = 7
SETTINGS = {"offsets.topic.num.partitions": PARTITIONS, "transaction.state.log.num.partitions": PARTITIONS}
TOPIC = "upgraded"
WAIT = 30


def misplaced(prefix: str) -> str:
    """A key the old rule placed in another partition than Kafka's rule does."""
    return next(key for key in (f"{prefix}-{index}" for index in range(10_000))
                if coordinator_partition(key, PARTITIONS) != legacy_partition(key, PARTITIONS))


GROUP, TXN_GROUP, TRANSACTIONAL_ID = misplaced("app"), misplaced("txn-app"), misplaced("producer")


def committed(bootstrap: str, group: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3})
    try:
        [found] = consumer.committed([TopicPartition(TOPIC, 0)], timeout=WAIT)
        return found.offset
    finally:
        consumer.close()


def write_as_an_older_version(bootstrap: str) -> int:
    """A plain commit of GROUP, a transaction of TRANSACTIONAL_ID committing TXN_GROUP's offset;
    the transactional id's producer id."""
    create_topic(bootstrap, TOPIC)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "log_level": 3})
    consumer.commit(offsets=[TopicPartition(TOPIC, 0, 42)], asynchronous=False)
    consumer.close()
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": TRANSACTIONAL_ID,
                         "log_level": 3})
    producer.init_transactions(WAIT)
    producer.begin_transaction()
    producer.produce(TOPIC, b"value", partition=0)
    group = Consumer({"bootstrap.servers": bootstrap, "group.id": TXN_GROUP, "log_level": 3})
    producer.send_offsets_to_transaction([TopicPartition(TOPIC, 0, 7)], group.consumer_group_metadata(), WAIT)
    producer.commit_transaction(WAIT)
    group.close()
    return describe_transaction(bootstrap, TRANSACTIONAL_ID).producer_id


def test_a_restart_answers_for_what_an_older_version_placed_by_the_old_rule(tmp_path, monkeypatch):
    monkeypatch.setattr(manager, "partition_for", legacy_partition)
    monkeypatch.setattr(state_manager, "partition_for", legacy_partition)
    with EmbeddedBroker(SETTINGS, directory=tmp_path) as older:
        producer_id = write_as_an_older_version(older.bootstrap)
    monkeypatch.undo()

    for _restart in range(2):
        with EmbeddedBroker(SETTINGS, directory=tmp_path) as broker:
            assert committed(broker.bootstrap, GROUP) == 42
            assert committed(broker.bootstrap, TXN_GROUP) == 7
            state = describe_transaction(broker.bootstrap, TRANSACTIONAL_ID)
            assert (state.error_code, state.transaction_state, state.producer_id) == (
                0, "CompleteCommit", producer_id)


@pytest.fixture(autouse=True)
def _keys_are_misplaced():
    assert all(coordinator_partition(k, PARTITIONS) != legacy_partition(k, PARTITIONS)
               for k in (GROUP, TXN_GROUP, TRANSACTIONAL_ID))
