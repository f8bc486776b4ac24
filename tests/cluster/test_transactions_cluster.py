"""Acceptance (issue 12): transactions in a three-broker cluster survive the death of their
coordinator. The broker that coordinates a transactional id (FindCoordinator, key type 1: the
leader of its `__transaction_state` partition) is killed with kill -9 while a transaction is open;
a surviving broker takes over the coordination when it becomes that partition's leader and loads
its log. An open transaction whose producer lives on is then committed on every partition,
markers reaching partition leaders that moved; one whose producer died is aborted when a new
producer with the same transactional id re-initialises, which then commits. No read_committed
consumer ever sees part of a transaction.

`__transaction_state` is replicated to all three brokers with min.insync.replicas 2, as on
Kafka's cluster.sh. Every test needs pykbroker's transaction support (marker `transactions`);
`TXN_TARGETS=pykbroker,kafka` runs them on three Kafka 3.9.0 brokers as well (cluster.sh), which
is how they were validated.
"""
from __future__ import annotations

import pytest

from compat import realkafka
from compat.scenarios import create_topic
from tests.ci import skip_or_fail_in_ci
from tests.txn_support import (
    READ_COMMITTED, READ_UNCOMMITTED, OpenTransaction, commit_in_transaction, read_values,
    send, target_names, transaction_coordinator, transactional_producer, wait_for_committed,
)

pytestmark = pytest.mark.transactions

CLUSTER_OPTIONS = {"overrides": {
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": "5",
    "min.insync.replicas": "2",
}}
FAILOVER_SECONDS = 120  # the killed broker's ZooKeeper session expires, then leaders move
PARTITIONS = 3


@pytest.fixture(scope="module", params=target_names())
def txn_cluster(request, tmp_path_factory):
    """Three brokers: pykbroker's (tests/cluster fixtures) or Kafka's (cluster.sh)."""
    if request.param != "kafka":
        yield request.getfixturevalue("cluster")
        return
    reason = realkafka.unavailable()
    if reason:
        skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
    with realkafka.KafkaCluster(tmp_path_factory.mktemp("kafka-cluster")) as running:
        yield running


def broker_ids(cluster) -> list[int]:
    return list(getattr(cluster, "ids", None) or sorted(cluster.brokers))


@pytest.fixture
def topic(request, txn_cluster) -> str:
    """A 3-partition topic of the test's own, replicated to all three brokers."""
    name = request.node.name.replace("[", "-").replace("]", "")[:100]
    create_topic(txn_cluster.bootstrap, name, PARTITIONS, replication_factor=3)
    return name


def everywhere(tag: str) -> list[tuple[int, bytes]]:
    """One record per partition: (partition, b"<tag>-<partition>")."""
    return [(p, f"{tag}-{p}".encode()) for p in range(PARTITIONS)]


def by_partition(*tags: str) -> dict[int, list[bytes]]:
    return {p: [f"{tag}-{p}".encode() for tag in tags] for p in range(PARTITIONS)}


def test_a_transaction_open_when_its_coordinator_dies_commits_on_every_partition(
        txn_cluster, topic):
    """The producer has sent a record to each partition; its coordinator is killed (-9). The
    producer's commitTransaction reaches the new coordinator, which commits the transaction on
    all three partitions: read_committed consumers see every record of it, and a re-initialised
    producer with the same transactional id commits after it once the broker is back."""
    transactional_id = f"{topic}-txn"
    commit_in_transaction(txn_cluster.bootstrap, transactional_id, topic, everywhere("before"))
    producer = transactional_producer(txn_cluster.bootstrap, transactional_id)
    producer.begin_transaction()
    send(producer, topic, everywhere("open"))
    coordinator = transaction_coordinator(txn_cluster.bootstrap, transactional_id)

    txn_cluster.kill(coordinator)
    try:
        producer.commit_transaction(FAILOVER_SECONDS)
        wait_for_committed(txn_cluster.bootstrap, topic, PARTITIONS,
                           by_partition("before", "open"), before=by_partition("before"))
    finally:
        txn_cluster.restart(coordinator)

    commit_in_transaction(txn_cluster.bootstrap, transactional_id, topic, everywhere("after"))
    wait_for_committed(txn_cluster.bootstrap, topic, PARTITIONS,
                       by_partition("before", "open", "after"),
                       before=by_partition("before", "open"))


def test_a_transaction_whose_producer_and_coordinator_die_is_aborted_on_reinitialisation(
        txn_cluster, topic):
    """The producer has sent a record to each partition and is killed; so is its coordinator.
    Read_committed consumers see only what was committed before; a new producer with the same
    transactional id re-initialises with the new coordinator, which aborts the open transaction
    on every partition, and commits: read_committed consumers see the records before and after,
    never the aborted ones, which read_uncommitted consumers do see."""
    transactional_id = f"{topic}-txn"
    commit_in_transaction(txn_cluster.bootstrap, transactional_id, topic, everywhere("before"))
    OpenTransaction(txn_cluster.bootstrap, transactional_id, topic, everywhere("partial"),
                    transaction_timeout_ms=300_000).kill()
    coordinator = transaction_coordinator(txn_cluster.bootstrap, transactional_id)

    txn_cluster.kill(coordinator)
    try:
        assert read_values(txn_cluster.bootstrap, topic, READ_COMMITTED, PARTITIONS) == \
            by_partition("before")
        commit_in_transaction(txn_cluster.bootstrap, transactional_id, topic,
                              everywhere("after"))
        wait_for_committed(txn_cluster.bootstrap, topic, PARTITIONS,
                           by_partition("before", "after"), before=by_partition("before"))
    finally:
        txn_cluster.restart(coordinator)

    assert read_values(txn_cluster.bootstrap, topic, READ_UNCOMMITTED, PARTITIONS) == \
        by_partition("before", "partial", "after")
    assert read_values(txn_cluster.bootstrap, topic, READ_COMMITTED, PARTITIONS) == \
        by_partition("before", "after")
