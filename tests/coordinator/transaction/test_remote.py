"""What the coordinator sends other brokers: WriteTxnMarkers v1 to partition leaders (markers
follow a leader that moved), and AddPartitionsToTxn v4 verify-only from the produce path's
verifier to a coordinator elsewhere."""
from __future__ import annotations

import anyio

from pykbroker.coordinator.transaction import TransactionVerifier
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.replication.broker_client import BrokerConnectionError

from .fakes import Harness

WriteTxnMarkersResponse = messages.response(ApiKey.WRITE_TXN_MARKERS).cls
AddPartitionsResponse = messages.response(ApiKey.ADD_PARTITIONS_TO_TXN).cls


class FakeBroker:
    """Other brokers, reached by `connect`: each request is recorded and answered by `answer`."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests: list = []
        self.down: set[int] = set()

    async def connect(self, host, port, *, client_id, timeout_s):
        broker_id = port - 9092
        if broker_id in self.down:
            raise BrokerConnectionError("connection refused")
        return FakeConnection(self, broker_id)


class FakeConnection:
    closed = False

    def __init__(self, brokers: FakeBroker, broker_id: int) -> None:
        self.brokers, self.broker_id = brokers, broker_id

    async def request(self, api_key, version, body):
        self.brokers.requests.append((self.broker_id, api_key, version, body))
        return self.brokers.answer(self.broker_id, body)

    async def aclose(self):
        self.closed = True


def markers_answer(error_by_broker):
    def answer(broker_id, body):
        cls = WriteTxnMarkersResponse
        return cls(markers=[cls.WritableTxnMarkerResult(producer_id=m.producer_id, topics=[
            cls.WritableTxnMarkerTopicResult(name=t.name, partitions=[
                cls.WritableTxnMarkerPartitionResult(partition_index=i, error_code=error_by_broker.get(broker_id, 0))
                for i in t.partition_indexes]) for t in m.topics]) for m in body.markers])
    return answer


def test_markers_for_other_leaders_go_as_write_txn_markers_v1_and_follow_a_moved_leader():
    h = Harness()
    h.metadata.add_topic("remote", 1, leader=1)
    brokers = FakeBroker(markers_answer({1: ErrorCode.NOT_LEADER_OR_FOLLOWER}))
    h.markers.connections.connect = brokers.connect
    _, producer_id, epoch = h.init("tx")
    h.add("tx", producer_id, epoch, ("remote", 0), ("orders", 0))
    assert h.end("tx", producer_id, epoch) == ErrorCode.NONE
    [(broker_id, api_key, version, body)] = brokers.requests
    assert (broker_id, api_key, version) == (1, ApiKey.WRITE_TXN_MARKERS, 1)
    [marker] = body.markers
    assert (marker.producer_id, marker.transaction_result, marker.coordinator_epoch,
            [(t.name, t.partition_indexes) for t in marker.topics]) == (producer_id, True, 5, [("remote", [0])])
    assert h.describe("tx").state == "PrepareCommit"  # orders-0 is written locally, remote-0 not yet

    h.metadata.add_topic("remote", 1, leader=2)  # the leader moved
    h.advance(100)
    assert [r[0] for r in brokers.requests] == [1, 2]
    assert h.describe("tx").state == "CompleteCommit"


def test_a_leader_that_cannot_be_reached_is_tried_again():
    h = Harness()
    h.metadata.add_topic("remote", 1, leader=1)
    brokers = FakeBroker(markers_answer({}))
    brokers.down.add(1)
    h.markers.connections.connect = brokers.connect
    _, producer_id, epoch = h.init("tx")
    h.add("tx", producer_id, epoch, ("remote", 0))
    h.end("tx", producer_id, epoch)
    assert h.describe("tx").state == "PrepareCommit"
    brokers.down.clear()
    h.advance(100)
    assert h.describe("tx").state == "CompleteCommit"


def verify_answer(code):
    def answer(broker_id, body):
        cls = AddPartitionsResponse
        return cls(error_code=0, results_by_transaction=[cls.AddPartitionsToTxnResult(
            transactional_id=t.transactional_id, topic_results=[cls.AddPartitionsToTxnTopicResult(
                name=topic.name, results_by_partition=[
                    cls.AddPartitionsToTxnPartitionResult(partition_index=i, partition_error_code=code)
                    for i in topic.partitions]) for topic in t.topics]) for t in body.transactions])
    return answer


def verify(verifier, **kwargs):
    return anyio.run(lambda: verifier.verify("tx", 1000, 0, [("orders", 0)], **kwargs))


def test_the_verifier_asks_a_remote_coordinator_with_add_partitions_v4_verify_only():
    h = Harness()
    h.metadata.add_topic("__transaction_state", 1, leader=3)
    brokers = FakeBroker(verify_answer(ErrorCode.PRODUCER_FENCED))
    verifier = TransactionVerifier(0, h.metadata, h.coordinator, listener_name="PLAINTEXT", connect=brokers.connect)
    assert verify(verifier) == {("orders", 0): ErrorCode.INVALID_PRODUCER_EPOCH}
    [(broker_id, api_key, version, body)] = brokers.requests
    assert (broker_id, api_key, version, body.transactions[0].verify_only) == (3, ApiKey.ADD_PARTITIONS_TO_TXN, 4, True)

    brokers.answer = verify_answer(ErrorCode.TRANSACTION_ABORTABLE)
    assert verify(verifier) == {("orders", 0): ErrorCode.TRANSACTION_ABORTABLE}
    assert verify(verifier, abortable_error_supported=False) == {("orders", 0): ErrorCode.INVALID_TXN_STATE}
    brokers.down.add(3)
    verifier.connections.pop_all()
    assert verify(verifier) == {("orders", 0): ErrorCode.NETWORK_EXCEPTION}


def test_the_verifier_asks_the_local_coordinator_and_needs_the_transaction_state_topic():
    h = Harness()
    _, producer_id, epoch = h.init("tx")
    h.add("tx", producer_id, epoch, ("orders", 0))
    verifier = TransactionVerifier(0, h.metadata, h.coordinator, listener_name="PLAINTEXT")
    assert anyio.run(lambda: verifier.verify("tx", producer_id, epoch, [("orders", 0), ("orders", 1)])) == {
        ("orders", 0): ErrorCode.NONE, ("orders", 1): ErrorCode.TRANSACTION_ABORTABLE}
    h.metadata.delete_topic("__transaction_state")
    assert verify(verifier) == {("orders", 0): ErrorCode.COORDINATOR_NOT_AVAILABLE}
