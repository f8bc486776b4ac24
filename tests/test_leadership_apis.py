"""The controller and replication APIs on a single broker (its own controller, one replica per
partition): ControlledShutdown, ElectLeaders and OffsetForLeaderEpoch over the wire."""
import time

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.wire import WireClient

ControlledShutdown = messages.request(ApiKey.CONTROLLED_SHUTDOWN).cls
ElectLeaders = messages.request(ApiKey.ELECT_LEADERS).cls
OffsetForLeaderEpoch = messages.request(ApiKey.OFFSET_FOR_LEADER_EPOCH).cls
Produce = messages.request(ApiKey.PRODUCE).cls
CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls


def create(client, name: str) -> None:
    response = client.request(ApiKey.CREATE_TOPICS, 5, CreateTopics(
        topics=[CreateTopics.CreatableTopic(name=name, num_partitions=1, replication_factor=1,
                                            assignments=[], configs=[])],
        timeout_ms=10000, validate_only=False))
    assert response.topics[0].error_code == ErrorCode.NONE


def produce(client, name: str, count: int) -> None:
    batch = bytes(build_batch([(None, b"v", [], int(time.time() * 1000))] * count))
    response = client.request(ApiKey.PRODUCE, 9, Produce(
        transactional_id=None, acks=-1, timeout_ms=5000, topic_data=[Produce.TopicProduceData(
            name=name, partition_data=[Produce.PartitionProduceData(index=0, records=batch)])]))
    assert response.responses[0].partition_responses[0].error_code == ErrorCode.NONE


def end_offset_of_epoch(client, name: str, epoch: int, version: int = 4):
    request = OffsetForLeaderEpoch(replica_id=-1, topics=[OffsetForLeaderEpoch.OffsetForLeaderTopic(
        topic=name, partitions=[OffsetForLeaderEpoch.OffsetForLeaderPartition(
            partition=0, current_leader_epoch=-1, leader_epoch=epoch)])])
    answer = client.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, version, request)
    return answer.topics[0].partitions[0]


def test_offset_for_leader_epoch_gives_the_log_end_for_the_current_epoch(broker):
    with WireClient(broker.bootstrap) as client:
        create(client, "epoch-ends")
        produce(client, "epoch-ends", 3)
        answer = end_offset_of_epoch(client, "epoch-ends", 0)
        assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (0, 0, 3)
        v0 = end_offset_of_epoch(client, "epoch-ends", 0, version=0)
        assert (v0.error_code, v0.end_offset) == (0, 3)


def test_offset_for_leader_epoch_of_an_unknown_epoch_or_topic(broker):
    with WireClient(broker.bootstrap) as client:
        create(client, "epoch-unknown")
        answer = end_offset_of_epoch(client, "epoch-unknown", 5)  # later than the latest epoch
        assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (0, -1, -1)
        missing = end_offset_of_epoch(client, "no-such-topic", 0)
        assert missing.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert (missing.leader_epoch, missing.end_offset) == (-1, -1)


def test_a_single_broker_shuts_down_with_no_leadership_to_move(broker):
    with WireClient(broker.bootstrap) as client:
        own = client.request(ApiKey.CONTROLLED_SHUTDOWN, 3,
                             ControlledShutdown(broker_id=0, broker_epoch=-1))
        other = client.request(ApiKey.CONTROLLED_SHUTDOWN, 1, ControlledShutdown(broker_id=7))
    assert (own.error_code, own.remaining_partitions) == (ErrorCode.NONE, [])
    assert other.error_code == ErrorCode.BROKER_NOT_AVAILABLE


def test_preferred_election_is_never_needed_on_a_single_broker(broker):
    with WireClient(broker.bootstrap) as client:
        create(client, "elect-one")
        response = client.request(ApiKey.ELECT_LEADERS, 2, ElectLeaders(
            election_type=0, timeout_ms=10000, topic_partitions=[
                ElectLeaders.TopicPartitions(topic="elect-one", partitions=[0, 1])]))
        everything = client.request(ApiKey.ELECT_LEADERS, 0, ElectLeaders(
            timeout_ms=10000, topic_partitions=None))
    codes = {r.partition_id: r.error_code
             for r in response.replica_election_results[0].partition_result}
    assert codes == {0: ErrorCode.ELECTION_NOT_NEEDED, 1: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert everything.replica_election_results == []  # nothing needed an election


AlterReassignments = messages.request(ApiKey.ALTER_PARTITION_REASSIGNMENTS).cls
ListReassignments = messages.request(ApiKey.LIST_PARTITION_REASSIGNMENTS).cls


def test_a_single_broker_reassigns_only_to_itself(broker):
    """A reassignment to the broker's own replica completes at once (nothing to move); one to a
    broker that does not exist is INVALID_REPLICA_ASSIGNMENT (for partition 1, which does not exist
    either, every target replica counts as added, as in Kafka's check), a cancellation finds
    nothing to cancel, and no reassignment is ever listed (as Kafka's controller does with one
    broker)."""
    asked = {0: [0], 1: [0, 1], 2: None, 5: [0]}
    with WireClient(broker.bootstrap) as client:
        create(client, "reassign-one")
        response = client.request(ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, AlterReassignments(
            timeout_ms=10000, topics=[AlterReassignments.ReassignableTopic(name="reassign-one", partitions=[
                AlterReassignments.ReassignablePartition(partition_index=p, replicas=r) for p, r in asked.items()])]))
        listed = client.request(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0,
                                ListReassignments(timeout_ms=10000, topics=None))
    results = {p.partition_index: (p.error_code, p.error_message) for p in response.responses[0].partitions}
    assert results == {
        0: (ErrorCode.NONE, None),
        1: (ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Replica assignment has brokers that are not alive. "
                                                  "Replica list: ArrayBuffer(0, 1), live broker list: Set(0)"),
        2: (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, "No partition reassignment is in progress."),
        5: (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist."),
    }
    assert (listed.error_code, listed.topics) == (ErrorCode.NONE, [])
