"""The transaction APIs on the wire, answered as Kafka 3.9 answers them: FindCoordinator (key type
1), InitProducerId with a transactional id, AddPartitionsToTxn v0-5 (v4+ batched, verify-only),
AddOffsetsToTxn, EndTxn, DescribeTransactions and ListTransactions, against an in-process broker
whose partition side for markers is a fake that acknowledges every marker."""
from __future__ import annotations

import threading
from functools import partial

import anyio
import pytest

from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

TOPIC = "txn-orders"
NONE = ErrorCode.NONE


def request_cls(api: ApiKey):
    return messages.request(api).cls


FindCoordinator = request_cls(ApiKey.FIND_COORDINATOR)
InitProducerId = request_cls(ApiKey.INIT_PRODUCER_ID)
AddPartitions = request_cls(ApiKey.ADD_PARTITIONS_TO_TXN)
AddOffsets = request_cls(ApiKey.ADD_OFFSETS_TO_TXN)
EndTxn = request_cls(ApiKey.END_TXN)
DescribeTransactions = request_cls(ApiKey.DESCRIBE_TRANSACTIONS)
ListTransactions = request_cls(ApiKey.LIST_TRANSACTIONS)


class AcknowledgingMarkers:
    """Stands for the partition side (WriteTxnMarkers): every marker is written at once."""

    def __init__(self) -> None:
        self.written: list = []

    async def write_txn_markers(self, markers):
        self.written += markers
        return [dict.fromkeys(m.partitions, NONE) for m in markers]


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    broker = Broker(BrokerConfig({
        "log.dirs": str(tmp_path_factory.mktemp("txn-wire")),
        "listeners": "PLAINTEXT://127.0.0.1:0",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "5",
        "transaction.max.timeout.ms": "120000",
    }))
    broker.open()
    broker.txn_coordinator.markers.local_writer = AcknowledgingMarkers()
    broker.topic_creator.create(TOPIC, 2, 1)
    started, stop = threading.Event(), threading.Event()

    async def main():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(partial(broker.run, handle_signals=False))
            started.set()
            await anyio.to_thread.run_sync(stop.wait)
            broker.shutdown()

    thread = threading.Thread(target=anyio.run, args=(main,), daemon=True)
    thread.start()
    started.wait(10)
    broker.bootstrap = f"127.0.0.1:{broker.listeners[0].port}"
    yield broker
    stop.set()
    thread.join(30)


@pytest.fixture
def client(broker):
    with WireClient(broker.bootstrap, timeout=30) as connection:
        connection.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(key="any", key_type=1))
        yield connection


def init(client, tid, version=4, producer_id=-1, epoch=-1, timeout_ms=60000):
    return client.request(ApiKey.INIT_PRODUCER_ID, version, InitProducerId(
        transactional_id=tid, transaction_timeout_ms=timeout_ms, producer_id=producer_id, producer_epoch=epoch))


def add(client, tid, producer_id, epoch, partitions=(0,), version=3, topic=TOPIC):
    response = client.request(ApiKey.ADD_PARTITIONS_TO_TXN, version, AddPartitions(
        v3_and_below_transactional_id=tid, v3_and_below_producer_id=producer_id,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[AddPartitions.AddPartitionsToTxnTopic(name=topic, partitions=list(partitions))]))
    return {(t.name, p.partition_index): p.partition_error_code
            for t in response.results_by_topic_v3_and_below for p in t.results_by_partition}


def end(client, tid, producer_id, epoch, committed=True, version=3):
    return client.request(ApiKey.END_TXN, version, EndTxn(
        transactional_id=tid, producer_id=producer_id, producer_epoch=epoch, committed=committed)).error_code


def describe(client, *tids):
    return client.request(ApiKey.DESCRIBE_TRANSACTIONS, 0,
                          DescribeTransactions(transactional_ids=list(tids))).transaction_states


def test_find_coordinator_names_this_broker_and_creates_the_transaction_state_topic(broker, client):
    response = client.request(ApiKey.FIND_COORDINATOR, 4,
                              FindCoordinator(key_type=1, coordinator_keys=["a", "b"]))
    assert [(c.key, c.error_code, c.node_id, c.port) for c in response.coordinators] == [
        ("a", NONE, 0, broker.listeners[0].port), ("b", NONE, 0, broker.listeners[0].port)]
    info = broker.metadata.topic("__transaction_state")
    assert len(info.partitions) == 5
    assert info.configs["cleanup.policy"] == "compact" and info.configs["min.insync.replicas"] == "1"


@pytest.mark.parametrize("version", range(0, 6))
def test_init_producer_id_gives_a_transactional_id_its_producer_id_and_bumps_its_epoch(client, version):
    tid = f"init-v{version}"
    first = init(client, tid, version)
    assert (first.error_code, first.producer_epoch) == (NONE, 0) and first.producer_id >= 0
    second = init(client, tid, version)
    assert (second.error_code, second.producer_id, second.producer_epoch) == (NONE, first.producer_id, 1)


def test_init_producer_id_checks_its_arguments(client):
    assert init(client, "timeout", timeout_ms=120001).error_code == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    assert init(client, "half", producer_id=5).error_code == ErrorCode.INVALID_REQUEST
    assert init(client, "").error_code == ErrorCode.INVALID_REQUEST


def test_a_fenced_producer_gets_producer_fenced_or_invalid_producer_epoch_by_version(client):
    first = init(client, "fence")
    init(client, "fence")
    assert init(client, "fence", version=3, producer_id=first.producer_id, epoch=5).error_code == (
        ErrorCode.INVALID_PRODUCER_EPOCH)
    assert init(client, "fence", version=4, producer_id=first.producer_id, epoch=5).error_code == (
        ErrorCode.PRODUCER_FENCED)
    assert add(client, "fence", first.producer_id, 0, version=1) == {(TOPIC, 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    assert add(client, "fence", first.producer_id, 0, version=2) == {(TOPIC, 0): ErrorCode.PRODUCER_FENCED}
    assert end(client, "fence", first.producer_id, 0, version=1) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert end(client, "fence", first.producer_id, 0, version=2) == ErrorCode.PRODUCER_FENCED


@pytest.mark.parametrize("version", range(0, 4))
def test_a_transaction_commits_and_a_retried_end_txn_is_answered_the_same(broker, client, version):
    tid = f"commit-v{version}"
    producer = init(client, tid)
    pid, epoch = producer.producer_id, producer.producer_epoch
    assert add(client, tid, pid, epoch, (0, 1), version=version) == {(TOPIC, 0): NONE, (TOPIC, 1): NONE}
    [state] = describe(client, tid)
    assert (state.transaction_state, [(t.topic, t.partitions) for t in state.topics]) == ("Ongoing", [(TOPIC, [0, 1])])
    assert end(client, tid, pid, epoch, version=version) == NONE  # answered once PrepareCommit is written
    wait_until(lambda: describe(client, tid)[0].transaction_state == "CompleteCommit", "the markers written")
    assert describe(client, tid)[0].topics == []
    assert end(client, tid, pid, epoch, version=version) == NONE
    assert end(client, tid, pid, epoch, committed=False, version=version) == ErrorCode.INVALID_TXN_STATE


def test_unknown_partitions_fail_the_whole_transaction(client):
    producer = init(client, "unknown-partition")
    assert add(client, "unknown-partition", producer.producer_id, 0, (0, 7)) == {
        (TOPIC, 0): ErrorCode.OPERATION_NOT_ATTEMPTED, (TOPIC, 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert describe(client, "unknown-partition")[0].transaction_state == "Empty"


@pytest.mark.parametrize("version", [4, 5])
def test_brokers_verify_and_add_partitions_in_batches(client, version):
    producer = init(client, "batched")
    pid, epoch = producer.producer_id, producer.producer_epoch
    topics = [AddPartitions.AddPartitionsToTxnTopic(name=TOPIC, partitions=[0])]
    response = client.request(ApiKey.ADD_PARTITIONS_TO_TXN, version, AddPartitions(transactions=[
        AddPartitions.AddPartitionsToTxnTransaction(transactional_id="batched", producer_id=pid,
                                                    producer_epoch=epoch, verify_only=True, topics=topics),
        AddPartitions.AddPartitionsToTxnTransaction(transactional_id="nobody", producer_id=pid,
                                                    producer_epoch=epoch, verify_only=False, topics=topics)]))
    assert response.error_code == NONE
    assert [(r.transactional_id, [(t.name, [(p.partition_index, p.partition_error_code)
                                            for p in t.results_by_partition]) for t in r.topic_results])
            for r in response.results_by_transaction] == [
        ("batched", [(TOPIC, [(0, ErrorCode.TRANSACTION_ABORTABLE)])]),
        ("nobody", [(TOPIC, [(0, ErrorCode.INVALID_PRODUCER_ID_MAPPING)])])]
    add(client, "batched", pid, epoch)
    end(client, "batched", pid, epoch, committed=False)


@pytest.mark.parametrize("version", range(0, 5))
def test_add_offsets_adds_the_groups_offsets_partition(broker, client, version):
    tid = f"offsets-v{version}"
    producer = init(client, tid)
    response = client.request(ApiKey.ADD_OFFSETS_TO_TXN, version, AddOffsets(
        transactional_id=tid, producer_id=producer.producer_id, producer_epoch=0, group_id="group"))
    assert response.error_code == NONE
    [state] = describe(client, tid)
    group_partition = broker.group_coordinator.partition_for("group")
    assert [(t.topic, t.partitions) for t in state.topics] == [("__consumer_offsets", [group_partition])]


def test_describe_answers_unknown_ids_with_transactional_id_not_found(client):
    [state] = describe(client, "never-seen")
    assert (state.error_code, state.transactional_id, state.transaction_state, state.producer_id) == (
        ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, "never-seen", "", 0)


@pytest.mark.parametrize("version", [0, 1])
def test_list_transactions_filters_by_state_and_producer_id(client, version):
    producer = init(client, f"listed-v{version}")
    add(client, f"listed-v{version}", producer.producer_id, 0)
    response = client.request(ApiKey.LIST_TRANSACTIONS, version, ListTransactions(
        state_filters=["Ongoing", "Bogus"], producer_id_filters=[producer.producer_id], duration_filter=-1))
    assert (response.error_code, response.unknown_state_filters) == (NONE, ["Bogus"])
    assert [(t.transactional_id, t.producer_id, t.transaction_state) for t in response.transaction_states] == [
        (f"listed-v{version}", producer.producer_id, "Ongoing")]
    end(client, f"listed-v{version}", producer.producer_id, 0, committed=False)


def test_list_transactions_v1_filters_by_duration(client):
    producer = init(client, "young")
    add(client, "young", producer.producer_id, 0)
    response = client.request(ApiKey.LIST_TRANSACTIONS, 1, ListTransactions(
        state_filters=["Ongoing"], producer_id_filters=[producer.producer_id], duration_filter=60_000))
    assert response.transaction_states == []
