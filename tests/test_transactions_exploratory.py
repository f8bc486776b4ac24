"""Transactions at their edges, as Kafka 3.9 answers them: requests a well-behaved producer never
sends (transactional batches without a transactional id, internal topics added to a transaction,
TxnOffsetCommit without AddOffsetsToTxn), compaction of aborted transactions, and read_committed
consumers starting inside an aborted transaction on a log of many segments.

Each answer here was first observed on Apache Kafka 3.9.0 (`../shared/realkafka`) with the same
requests; the tests run against one pykbroker whose cleaner runs every 100 ms.
"""
from __future__ import annotations

import pytest
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

from .txn_support import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    WAIT_SECONDS,
    read_values,
    send,
    transactional_producer,
)

FindCoordinator, InitProducerId, AddPartitions, AddOffsets, EndTxn, Produce, TxnOffsetCommit, Fetch = (
    messages.request(api).cls for api in (
        ApiKey.FIND_COORDINATOR, ApiKey.INIT_PRODUCER_ID, ApiKey.ADD_PARTITIONS_TO_TXN,
        ApiKey.ADD_OFFSETS_TO_TXN, ApiKey.END_TXN, ApiKey.PRODUCE, ApiKey.TXN_OFFSET_COMMIT,
        ApiKey.FETCH))

SMALL_SEGMENTS = {"segment.bytes": "300"}


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("txn-exploratory"),
                       {"log.cleaner.backoff.ms": "100"}) as running:
        yield running


@pytest.fixture
def topic(broker, request) -> str:
    """A topic of the test's own with two partitions."""
    name = request.node.name.replace("[", "-").replace("]", "")[:100]
    create_topic(broker.bootstrap, name, partitions=2)
    return name


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1, config=config or {})]).values():
        future.result(WAIT_SECONDS)


# -- the raw producer side -----------------------------------------------------------------

class RawProducer:
    """A transactional producer speaking the wire itself: its id and epoch from InitProducerId."""

    def __init__(self, client: WireClient, transactional_id: str) -> None:
        self.client, self.transactional_id = client, transactional_id
        found = client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(key=transactional_id, key_type=1))
        assert found.error_code == ErrorCode.NONE, found
        answer = client.request(ApiKey.INIT_PRODUCER_ID, 4, InitProducerId(
            transactional_id=transactional_id, transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1))
        assert answer.error_code == ErrorCode.NONE, answer
        self.producer_id, self.epoch = answer.producer_id, answer.producer_epoch

    def add_partitions(self, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], ErrorCode]:
        by_topic: dict[str, list[int]] = {}
        for name, index in partitions:
            by_topic.setdefault(name, []).append(index)
        response = self.client.request(ApiKey.ADD_PARTITIONS_TO_TXN, 3, AddPartitions(
            v3_and_below_transactional_id=self.transactional_id, v3_and_below_producer_id=self.producer_id,
            v3_and_below_producer_epoch=self.epoch, v3_and_below_topics=[
                AddPartitions.AddPartitionsToTxnTopic(name=name, partitions=indexes)
                for name, indexes in by_topic.items()]))
        return {(t.name, p.partition_index): ErrorCode(p.partition_error_code)
                for t in response.results_by_topic_v3_and_below for p in t.results_by_partition}

    def produce(self, topic: str, version: int, transactional_id: str | None) -> list[ErrorCode]:
        """Produce of one transactional batch to each of the topic's partitions 0 and 1."""
        batch = build_batch([(b"k", b"v")], producer_id=self.producer_id, producer_epoch=self.epoch,
                            base_sequence=0, is_transactional=True)
        response = self.client.request(ApiKey.PRODUCE, version, Produce(
            transactional_id=transactional_id, acks=-1, timeout_ms=30000,
            topic_data=[Produce.TopicProduceData(name=topic, partition_data=[
                Produce.PartitionProduceData(index=index, records=batch) for index in (0, 1)])]))
        return [ErrorCode(p.error_code) for t in response.responses for p in t.partition_responses]

    def end(self, committed: bool) -> ErrorCode:
        return ErrorCode(self.client.request(ApiKey.END_TXN, 3, EndTxn(
            transactional_id=self.transactional_id, producer_id=self.producer_id,
            producer_epoch=self.epoch, committed=committed)).error_code)


@pytest.fixture
def client(broker):
    with WireClient(broker.bootstrap, timeout=WAIT_SECONDS) as connection:
        yield connection


@pytest.mark.parametrize("version", [3, 9, 11])
def test_transactional_batches_without_a_transactional_id_are_not_authorized(client, topic, version):
    """Kafka checks the request's transactional id (its authorization) before anything else: a
    request whose batches are transactional but that names no transactional id fails as a whole
    with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, whether or not the partitions are in the
    producer's transaction."""
    producer = RawProducer(client, f"{topic}-producer")
    assert set(producer.add_partitions([(topic, 0)]).values()) == {ErrorCode.NONE}

    assert producer.produce(topic, version, None) == [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED] * 2
    assert producer.end(committed=False) == ErrorCode.NONE


@pytest.mark.parametrize("internal", ["__consumer_offsets", "__transaction_state"])
def test_an_internal_topic_cannot_join_a_transaction(client, topic, internal):
    """Producers may not write to internal topics, so AddPartitionsToTxn (v0-3, from clients)
    answers their partitions TOPIC_AUTHORIZATION_FAILED and, as for any failed partition, adds
    none of the others (OPERATION_NOT_ATTEMPTED): the transaction does not start."""
    producer = RawProducer(client, f"{topic}-producer")

    assert producer.add_partitions([(topic, 0), (internal, 0)]) == {
        (topic, 0): ErrorCode.OPERATION_NOT_ATTEMPTED, (internal, 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert producer.end(committed=True) == ErrorCode.INVALID_TXN_STATE  # nothing was added


@pytest.mark.parametrize("version, error", [
    (0, ErrorCode.INVALID_TXN_STATE), (3, ErrorCode.INVALID_TXN_STATE), (4, ErrorCode.TRANSACTION_ABORTABLE)])
def test_txn_offset_commit_without_add_offsets_to_txn_fails_by_version(client, topic, version, error):
    """The group's offsets partition must be in the transaction (AddOffsetsToTxn) before
    TxnOffsetCommit: otherwise the verification fails, with TRANSACTION_ABORTABLE for v4 clients
    and INVALID_TXN_STATE for older ones, which do not know it."""
    producer = RawProducer(client, f"{topic}-producer")
    group = f"{topic}-group"
    wait_until(lambda: client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(
        key=group, key_type=0)).error_code == ErrorCode.NONE, "the group coordinator")
    response = client.request(ApiKey.TXN_OFFSET_COMMIT, version, TxnOffsetCommit(
        transactional_id=producer.transactional_id, group_id=group, producer_id=producer.producer_id,
        producer_epoch=producer.epoch, generation_id=-1, member_id="", group_instance_id=None,
        topics=[TxnOffsetCommit.TxnOffsetCommitRequestTopic(name=topic, partitions=[
            TxnOffsetCommit.TxnOffsetCommitRequestPartition(
                partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata="")])]))

    assert [p.error_code for t in response.topics for p in t.partitions] == [error]


# -- the log side --------------------------------------------------------------------------

def write_transactions(bootstrap: str, topic: str, transactions) -> None:
    """Writes (committed, [(key, value)]) transactions to partition 0, one batch per record."""
    producer = transactional_producer(bootstrap, f"{topic}-producer", **{"linger.ms": 0})
    for committed, records in transactions:
        producer.begin_transaction()
        for key, value in records:
            producer.produce(topic, value, key=key, partition=0)
            assert producer.flush(WAIT_SECONDS) == 0
        (producer.commit_transaction if committed else producer.abort_transaction)(WAIT_SECONDS)


def aborted_first_offsets(bootstrap: str, topic: str, offset: int = 0) -> list[int]:
    """The first offsets of the aborted transactions a read_committed fetch (v11) is given."""
    with WireClient(bootstrap) as connection:
        response = connection.request(ApiKey.FETCH, 11, Fetch(
            replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=1,
            session_id=0, session_epoch=-1, topics=[Fetch.FetchTopic(topic=topic, partitions=[
                Fetch.FetchPartition(partition=0, fetch_offset=offset, partition_max_bytes=1 << 20,
                                     current_leader_epoch=-1, log_start_offset=-1)])]))
    [partition] = response.responses[0].partitions
    assert partition.error_code == ErrorCode.NONE
    return [txn.first_offset for txn in partition.aborted_transactions]


def test_compaction_drops_aborted_records_but_fetches_still_list_their_transaction(broker):
    """The cleaner drops the records of an aborted transaction, and readers see only committed
    values; the aborted-transaction index keeps the transaction at least through the pass that
    dropped its records, as Kafka's does."""
    topic = "compacted-aborted"
    create_topic(broker.bootstrap, topic, config={
        **SMALL_SEGMENTS, "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"})
    write_transactions(broker.bootstrap, topic, [
        (True, [(b"k1", b"c1"), (b"k2", b"c1")]),                   # offsets 0-1, COMMIT at 2
        (False, [(b"k1", b"a2"), (b"k2", b"a2"), (b"k3", b"a2")]),  # offsets 3-5, ABORT at 6
        (True, [(b"k1", b"c3")]),                                   # offset 7, COMMIT at 8
    ])
    assert aborted_first_offsets(broker.bootstrap, topic) == [3]
    padding = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for i in range(12):  # rolls segments, so that the transactions' ones can be cleaned
        padding.produce(topic, b"padding", key=b"padding-%d" % (i % 3), partition=0)
        assert padding.flush(WAIT_SECONDS) == 0

    def compacted() -> bool:
        return b"a2" not in read_values(broker.bootstrap, topic, READ_UNCOMMITTED)[0]

    wait_until(compacted, f"compaction of {topic}", timeout=WAIT_SECONDS, interval=0.3)

    # the pass that dropped the records keeps the entry (tests/log/test_log_compaction.py pins it);
    # a later pass, which the padding may already have started, may leave it out, as Kafka's does
    assert aborted_first_offsets(broker.bootstrap, topic) in ([3], [])
    assert aborted_first_offsets(broker.bootstrap, topic, offset=7) == []
    values = read_values(broker.bootstrap, topic, READ_COMMITTED)[0]
    assert [value for value in values if value != b"padding"] == [b"c1", b"c3"]


def test_read_committed_from_inside_an_aborted_transaction_across_segments(broker):
    """Two transactions of different producers interleave with plain records over segments of a
    few batches each; one aborts. A read_committed consumer starting anywhere, even in the middle
    of the aborted transaction, reads exactly the committed and plain records from there on."""
    topic = "interleaved-segments"
    create_topic(broker.bootstrap, topic, config=SMALL_SEGMENTS)
    aborting = transactional_producer(broker.bootstrap, f"{topic}-aborting", **{"linger.ms": 0})
    committing = transactional_producer(broker.bootstrap, f"{topic}-committing", **{"linger.ms": 0})
    plain = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    aborting.begin_transaction()
    committing.begin_transaction()
    for i in range(4):  # offsets 3i: aborted A, 3i+1: committed C, 3i+2: plain P
        for producer, value in ((aborting, b"A%d" % i), (committing, b"C%d" % i), (plain, b"P%d" % i)):
            send(producer, topic, [(0, value)])
    aborting.abort_transaction(WAIT_SECONDS)
    committing.commit_transaction(WAIT_SECONDS)
    committed = [value for i in range(4) for value in (b"C%d" % i, b"P%d" % i)]

    wait_until(lambda: read_values(broker.bootstrap, topic, READ_COMMITTED)[0] == committed,
               "the committed records", timeout=WAIT_SECONDS)
    for start in (3, 4, 6):
        assert read_from(broker.bootstrap, topic, start) == committed[2 * (start // 3):]


def read_from(bootstrap: str, topic: str, offset: int) -> list[bytes]:
    """The values a read_committed consumer reads from `offset` to the partition's end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-from", "log_level": 3,
                         "enable.auto.commit": False, "enable.partition.eof": True,
                         "isolation.level": READ_COMMITTED})
    consumer.assign([TopicPartition(topic, 0, offset)])
    values = []
    try:
        while True:
            message = consumer.poll(WAIT_SECONDS)
            assert message is not None, "no end of partition reported"
            if message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                return values
            values.append(message.value())
    finally:
        consumer.close()
