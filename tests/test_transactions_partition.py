"""The partition side of transactions on the wire: transactional batches (Produce), COMMIT and
ABORT markers (WriteTxnMarkers, as a transaction coordinator sends them), the last stable offset
that read_committed Fetch and ListOffsets stop at, the aborted transactions a read_committed
fetch is given, DescribeProducers, and all of it after a kill -9.

The transaction coordinator is played by the test: it writes the markers itself, and a fake
verifier answers the broker's KIP-890 verification.
"""
import dataclasses
from functools import partial

import anyio
import pytest

from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch, iter_batches
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.wire import WireClient

Produce = messages.request(ApiKey.PRODUCE).cls
Fetch = messages.request(ApiKey.FETCH).cls
ListOffsets = messages.request(ApiKey.LIST_OFFSETS).cls
WriteTxnMarkers = messages.request(ApiKey.WRITE_TXN_MARKERS).cls
DescribeProducers = messages.request(ApiKey.DESCRIBE_PRODUCERS).cls
CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls

TOPIC, PID, EPOCH, TXN_ID = "payments", 4242, 0, "payments-txn"
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


class FakeVerifier:
    """The transaction coordinator's verification: every partition is in the transaction."""

    def __init__(self) -> None:
        self.asked = []

    async def verify(self, transactional_id, producer_id, producer_epoch, partitions):
        self.asked.append((transactional_id, producer_id, producer_epoch, sorted(partitions)))
        return {tp: ErrorCode.NONE for tp in partitions}


# -- requests ----------------------------------------------------------------------------

def create_topic(client: WireClient, name: str = TOPIC) -> None:
    response = client.request(ApiKey.CREATE_TOPICS, 5, CreateTopics(topics=[
        CreateTopics.CreatableTopic(name=name, num_partitions=1, replication_factor=1)]))
    assert response.topics[0].error_code == ErrorCode.NONE


def produce(client: WireClient, records, *, sequence: int, transactional: bool = True, pid: int = PID):
    """A produce of one batch of `records` (keys) by the producer; its partition response."""
    batch = build_batch([(key, b"v") for key in records], producer_id=pid, producer_epoch=EPOCH,
                        base_sequence=sequence, is_transactional=transactional)
    response = client.request(ApiKey.PRODUCE, 11, Produce(
        transactional_id=TXN_ID if transactional else None, acks=-1, timeout_ms=30_000,
        topic_data=[Produce.TopicProduceData(name=TOPIC, partition_data=[
            Produce.PartitionProduceData(index=0, records=batch)])]))
    return response.responses[0].partition_responses[0]


def write_marker(client: WireClient, *, committed: bool, coordinator_epoch: int = 1, topic: str = TOPIC,
                 version: int = 1):
    response = client.request(ApiKey.WRITE_TXN_MARKERS, version, WriteTxnMarkers(markers=[
        WriteTxnMarkers.WritableTxnMarker(
            producer_id=PID, producer_epoch=EPOCH, transaction_result=committed, coordinator_epoch=coordinator_epoch,
            topics=[WriteTxnMarkers.WritableTxnMarkerTopic(name=topic, partition_indexes=[0])])]))
    [result] = response.markers
    assert result.producer_id == PID
    return result.topics[0].partitions[0].error_code


def fetch(client: WireClient, isolation: int, offset: int = 0):
    response = client.request(ApiKey.FETCH, 11, Fetch(
        max_wait_ms=0, min_bytes=1, isolation_level=isolation, topics=[Fetch.FetchTopic(topic=TOPIC, partitions=[
            Fetch.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20)])]))
    return response.responses[0].partitions[0]


def keys_of(partition) -> list[bytes]:
    """The keys of the data records a fetch returned (control batches left out)."""
    return [record.key for header, records in iter_batches(bytes(partition.records)) if not header.is_control
            for record in records]


def latest_offset(client: WireClient, isolation: int) -> int:
    response = client.request(ApiKey.LIST_OFFSETS, 5, ListOffsets(replica_id=-1, isolation_level=isolation, topics=[
        ListOffsets.ListOffsetsTopic(name=TOPIC, partitions=[
            ListOffsets.ListOffsetsPartition(partition_index=0, timestamp=-1)])]))
    partition = response.topics[0].partitions[0]
    assert partition.error_code == ErrorCode.NONE
    return partition.offset


def aborted(partition) -> list[tuple[int, int]]:
    return [(t.producer_id, t.first_offset) for t in partition.aborted_transactions]


# -- the broker in this process ----------------------------------------------------------

@pytest.fixture
def broker_in_process(tmp_path):
    """Serves a broker in this process (with the fake verifier) while a test script runs in a
    worker thread: `run(script)` calls `script(client)`."""
    verifier = FakeVerifier()

    def run(script) -> None:
        broker = Broker(BrokerConfig({"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0"}))
        broker.open()
        services = broker.services
        broker.services = lambda: dataclasses.replace(services(), txn_verifier=verifier)  # type: ignore[method-assign]

        def client_script():
            with WireClient(f"127.0.0.1:{broker.listeners[0].port}") as client:
                script(client)

        async def main():
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(partial(broker.run, handle_signals=False))
                try:
                    await anyio.to_thread.run_sync(client_script)
                finally:
                    broker.shutdown()
        anyio.run(main)

    run.verifier = verifier
    return run


def test_read_committed_stops_at_the_first_open_transaction(broker_in_process):
    def script(client):
        create_topic(client)
        assert produce(client, [b"t0", b"t1"], sequence=0).error_code == ErrorCode.NONE
        assert produce(client, [b"plain"], sequence=0, transactional=False, pid=-1).error_code == ErrorCode.NONE

        committed, uncommitted = fetch(client, READ_COMMITTED), fetch(client, READ_UNCOMMITTED)
        assert (committed.high_watermark, committed.last_stable_offset) == (3, 0)
        assert (keys_of(committed), committed.aborted_transactions) == ([], [])
        assert (keys_of(uncommitted), uncommitted.aborted_transactions) == ([b"t0", b"t1", b"plain"], None)
        assert (latest_offset(client, READ_COMMITTED), latest_offset(client, READ_UNCOMMITTED)) == (0, 3)

        assert write_marker(client, committed=True) == ErrorCode.NONE
        committed = fetch(client, READ_COMMITTED)
        assert (committed.last_stable_offset, keys_of(committed), aborted(committed)) == (4, [b"t0", b"t1", b"plain"],
                                                                                        [])
        assert latest_offset(client, READ_COMMITTED) == 4

    broker_in_process(script)
    assert broker_in_process.verifier.asked == [(TXN_ID, PID, EPOCH, [(TOPIC, 0)])]


def test_read_committed_consumers_are_given_the_aborted_transactions_they_read(broker_in_process):
    def script(client):
        create_topic(client)
        produce(client, [b"a0", b"a1"], sequence=0)
        assert write_marker(client, committed=False) == ErrorCode.NONE
        produce(client, [b"c0"], sequence=2)
        assert write_marker(client, committed=True) == ErrorCode.NONE

        partition = fetch(client, READ_COMMITTED)
        assert (partition.last_stable_offset, aborted(partition)) == (5, [(PID, 0)])
        assert keys_of(partition) == [b"a0", b"a1", b"c0"]  # the consumer drops what was aborted
        assert aborted(fetch(client, READ_COMMITTED, offset=3)) == []  # past the aborted range

    broker_in_process(script)


@pytest.mark.parametrize("version", [0, 1])
def test_write_txn_markers_errors(broker_in_process, version):
    def script(client):
        create_topic(client)
        produce(client, [b"a"], sequence=0)
        assert write_marker(client, committed=False, coordinator_epoch=3, version=version) == ErrorCode.NONE
        produce(client, [b"b"], sequence=1)
        assert write_marker(client, committed=True, coordinator_epoch=2,
                            version=version) == ErrorCode.TRANSACTION_COORDINATOR_FENCED
        assert write_marker(client, committed=True, topic="absent",
                            version=version) == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert fetch(client, READ_COMMITTED).last_stable_offset == 2  # the second transaction is still open

    broker_in_process(script)


def test_describe_producers_lists_the_ongoing_transaction(broker_in_process):
    def script(client):
        create_topic(client)
        produce(client, [b"a"], sequence=0)
        write_marker(client, committed=True, coordinator_epoch=7)
        produce(client, [b"b", b"c"], sequence=1)
        response = client.request(ApiKey.DESCRIBE_PRODUCERS, 0, DescribeProducers(topics=[
            DescribeProducers.TopicRequest(name=TOPIC, partition_indexes=[0, 9]),
            DescribeProducers.TopicRequest(name="absent", partition_indexes=[0])]))
        known, unknown = response.topics
        first, missing = known.partitions
        assert first.error_code == ErrorCode.NONE
        [state] = first.active_producers
        assert (state.producer_id, state.producer_epoch, state.last_sequence, state.coordinator_epoch,
                state.current_txn_start_offset) == (PID, EPOCH, 2, 7, 2)
        assert state.last_timestamp > 0
        assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert (unknown.partitions[0].error_code, unknown.partitions[0].error_message) == (
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")

    broker_in_process(script)


# -- a broker process killed with SIGKILL --------------------------------------------------

def test_transactions_survive_a_kill_9(tmp_path):
    # the test writes the transactions' batches and markers itself: no coordinator verifies them
    no_verification = {"transaction.partition.verification.enable": "false"}
    with BrokerProcess(tmp_path, keep_port_on_restart=True, overrides=no_verification) as broker:
        with WireClient(broker.bootstrap) as client:
            create_topic(client)
            assert produce(client, [b"a0", b"a1"], sequence=0).error_code == ErrorCode.NONE
            assert write_marker(client, committed=False) == ErrorCode.NONE
            assert produce(client, [b"open"], sequence=2).error_code == ErrorCode.NONE  # left open by the crash
            before = fetch(client, READ_COMMITTED)
            assert before.last_stable_offset == 3
        broker.kill()
        broker.start()
        broker.wait_until_logs_loaded()
        with WireClient(broker.bootstrap) as client:
            after = fetch(client, READ_COMMITTED)
            assert (after.high_watermark, after.last_stable_offset, aborted(after)) == (4, 3, [(PID, 0)])
            assert latest_offset(client, READ_COMMITTED) == 3
            assert write_marker(client, committed=True) == ErrorCode.NONE
            assert fetch(client, READ_COMMITTED).last_stable_offset == 5

