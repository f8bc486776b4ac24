"""Acceptance (issue 12): transactions in a three-broker cluster survive the death of their
coordinator. The broker that coordinates a transactional id (FindCoordinator, key type 1: the
leader of its `__transaction_state` partition) is killed with kill -9 while a transaction is open;
a surviving broker takes over the coordination when it becomes that partition's leader and loads
its log. An open transaction whose producer lives on is then committed on every partition,
markers reaching partition leaders that moved; one whose producer died is aborted when a new
producer with the same transactional id re-initialises, which then commits. A commit whose
coordinator is killed after writing PrepareCommit and before any of its markers is delivered is
completed on every partition by the successor, from the log. No read_committed consumer ever
sees part of a transaction.

`__transaction_state` is replicated to all three brokers with min.insync.replicas 2, as on
Kafka's cluster.sh. Every test needs pykbroker's transaction support (marker `transactions`);
`TXN_TARGETS=pykbroker,kafka` runs them on three Kafka 3.9.0 brokers as well (cluster.sh), which
is how they were validated; the one that stops a broker with SIGSTOP and reads ISRs in ZooKeeper
runs on pykbroker's brokers only.
"""
from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from compat import realkafka
from compat.scenarios import create_topic
from pykbroker.coordinator.transaction.txn_topic import TRANSACTION_STATE_TOPIC, partition_for
from pykbroker.protocol.errors import ErrorCode
from tests.ci import skip_or_fail_in_ci
from tests.txn_support import (
    READ_COMMITTED, READ_UNCOMMITTED, WAIT_SECONDS, OpenTransaction, commit_in_transaction,
    describe_transaction, read_values, send, target_names, transaction_coordinator,
    transactional_producer, wait_for_committed,
)

from .harness import Cluster

pytestmark = pytest.mark.transactions

TXN_STATE_PARTITIONS = "5"
CLUSTER_OPTIONS = {"overrides": {
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "transaction.state.log.num.partitions": TXN_STATE_PARTITIONS,
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


def test_a_commit_whose_coordinator_dies_before_its_markers_is_completed_by_its_successor(
        txn_cluster, request):
    """The topic's partitions have one replica, on a broker L that is not the transaction's
    coordinator C (S is the third broker): L alone can write their markers. L is stopped
    (SIGSTOP) once the producer's records are in; when C has dropped L from the ISR of the
    transactional id's `__transaction_state` partition, the producer commits: C writes
    PrepareCommit (C and S acknowledge it), answers, and its markers wait on L. C is killed (-9),
    then L continued (SIGCONT): no marker was written before C died. S, the only other in-sync
    replica, leads the partition, loads its log, finds PrepareCommit and completes the commit:
    read_committed consumers see every record of the transaction once on every partition, never
    part of it on one, and S describes the transaction as CompleteCommit, with the producer's id
    and epoch."""
    cluster = txn_cluster
    if not isinstance(cluster, Cluster):
        pytest.skip("stops a broker with SIGSTOP and reads ISRs in ZooKeeper: pykbroker's only")
    transactional_id = f"{request.node.name}-txn"
    topic = request.node.name.replace("[", "-").replace("]", "")[:100]
    producer = transactional_producer(cluster.bootstrap, transactional_id)
    coordinator = transaction_coordinator(cluster.bootstrap, transactional_id)
    leader, successor = [b for b in broker_ids(cluster) if b != coordinator]
    txn_partition = partition_for(transactional_id, int(TXN_STATE_PARTITIONS))
    assert cluster.leader(TRANSACTION_STATE_TOPIC, txn_partition) == coordinator
    cluster.wait_until(lambda: cluster.isr(TRANSACTION_STATE_TOPIC, txn_partition) == [1, 2, 3],
                       what="the transaction log in sync on every broker")
    create_topic_on(cluster, topic, leader)  # no other broker can lead, even if L's session expires

    committed = {p: [f"commit-{p}-{i}".encode() for i in range(3)] for p in range(PARTITIONS)}
    producer.begin_transaction()
    send(producer, topic, [(p, value) for p, values in committed.items() for value in values])
    ongoing = describe_transaction(cluster.brokers[coordinator].bootstrap, transactional_id)
    assert (ongoing.error_code, ongoing.transaction_state) == (ErrorCode.NONE, "Ongoing")
    assert [(t.topic, sorted(t.partitions)) for t in ongoing.topics] == \
        [(topic, list(range(PARTITIONS)))]

    try:
        cluster.brokers[leader].pause()
        try:
            cluster.wait_until(
                lambda: leader not in cluster.isr(TRANSACTION_STATE_TOPIC, txn_partition),
                what=f"broker {leader} out of the ISR of the transaction log")
            producer.commit_transaction(WAIT_SECONDS)  # answered once PrepareCommit is written
            cluster.kill(coordinator)
        finally:
            cluster.brokers[leader].resume()

        wait_for_committed(cluster.bootstrap, topic, PARTITIONS, committed,
                           before={p: [] for p in range(PARTITIONS)})
        completed = cluster.wait_until(
            lambda: completed_by(cluster.brokers[successor].bootstrap, transactional_id),
            what="the successor to complete the transaction")
        assert (completed.producer_id, completed.producer_epoch) == \
            (ongoing.producer_id, ongoing.producer_epoch)
        assert cluster.leader(TRANSACTION_STATE_TOPIC, txn_partition) == successor
        assert read_values(cluster.bootstrap, topic, READ_UNCOMMITTED, PARTITIONS) == committed
    finally:
        cluster.ensure_all_running()


def create_topic_on(cluster: Cluster, topic: str, broker_id: int) -> None:
    """A topic whose partitions have a single replica, on the broker, which leads them."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 4})
    new_topic = NewTopic(topic, PARTITIONS, replica_assignment=[[broker_id]] * PARTITIONS,
                         config={"min.insync.replicas": "1"})
    admin.create_topics([new_topic])[topic].result(WAIT_SECONDS)
    assert cluster.wait_for_leaders(topic, PARTITIONS) == dict.fromkeys(range(PARTITIONS),
                                                                        broker_id)


def completed_by(bootstrap: str, transactional_id: str):
    """The broker's DescribeTransactions answer once it coordinates the transactional id and
    the transaction is in CompleteCommit; None before."""
    state = describe_transaction(bootstrap, transactional_id)
    if state.error_code in (ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS):
        return None
    assert state.error_code == ErrorCode.NONE, state
    assert state.transaction_state in ("PrepareCommit", "CompleteCommit"), state
    return state if state.transaction_state == "CompleteCommit" else None
