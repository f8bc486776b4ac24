"""The share coordinator's RPCs on the wire (KIP-932, as Kafka 4 brokers send them to each
other): FindCoordinator v6 with key type SHARE, InitializeShareGroupState, ReadShareGroupState,
WriteShareGroupState, ReadShareGroupStateSummary and DeleteShareGroupState, their answers to bad
input, the pruning of records no state needs, and a restart of the broker that keeps the state
in `__share_group_state`."""
from __future__ import annotations

import uuid

import pytest

from pykbroker.cluster.model import uuid_to_base64
from pykbroker.coordinator.share.shard import SharePartitionKey
from pykbroker.coordinator.share.state_topic import partition_for
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

TOPIC = "share-state-topic"
GROUP = "share-group"
NONE = ErrorCode.NONE
STATE_PARTITIONS = 10  # more than the keys the tests initialize: some partitions hold no state
SETTINGS = {
    "share.coordinator.state.topic.num.partitions": str(STATE_PARTITIONS),
    "share.coordinator.snapshot.update.records.per.snapshot": "2",
    "share.coordinator.state.topic.prune.interval.ms": "100",
    "offsets.topic.num.partitions": "1",
}

FindCoordinator = messages.request(ApiKey.FIND_COORDINATOR).cls
Initialize = messages.request(ApiKey.INITIALIZE_SHARE_GROUP_STATE).cls
Read = messages.request(ApiKey.READ_SHARE_GROUP_STATE).cls
Write = messages.request(ApiKey.WRITE_SHARE_GROUP_STATE).cls
Summary = messages.request(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY).cls
Delete = messages.request(ApiKey.DELETE_SHARE_GROUP_STATE).cls


@pytest.fixture(scope="module")
def data_directory(tmp_path_factory):
    return tmp_path_factory.mktemp("share-state")


@pytest.fixture(scope="module")
def broker(data_directory):
    with EmbeddedBroker(SETTINGS, directory=data_directory) as broker:
        broker.create_topic(TOPIC, partitions=4)
        yield broker


@pytest.fixture(scope="module")
def topic_id(broker):
    return broker.broker.metadata.topic(TOPIC).topic_id


@pytest.fixture
def client(broker):
    with WireClient(broker.bootstrap, timeout=30) as connection:
        yield connection


def find_share_coordinator(client, key, version=6):
    response = client.request(ApiKey.FIND_COORDINATOR, version, FindCoordinator(key_type=2, coordinator_keys=[key]))
    return response.coordinators[0]


def initialize(client, topic_id, partition, state_epoch=0, start_offset=-1, group=GROUP):
    response = client.request(ApiKey.INITIALIZE_SHARE_GROUP_STATE, 0, Initialize(group_id=group, topics=[
        Initialize.InitializeStateData(topic_id=topic_id, partitions=[
            Initialize.PartitionData(partition=partition, state_epoch=state_epoch, start_offset=start_offset)])]))
    return response.results[0].partitions[0]


def write(client, topic_id, partition, batches, state_epoch=0, leader_epoch=0, start_offset=-1, group=GROUP):
    response = client.request(ApiKey.WRITE_SHARE_GROUP_STATE, 0, Write(group_id=group, topics=[
        Write.WriteStateData(topic_id=topic_id, partitions=[Write.PartitionData(
            partition=partition, state_epoch=state_epoch, leader_epoch=leader_epoch, start_offset=start_offset,
            state_batches=[Write.StateBatch(first_offset=f, last_offset=l, delivery_state=s, delivery_count=c)
                           for f, l, s, c in batches])])]))
    return response.results[0].partitions[0]


def read(client, topic_id, partition, leader_epoch=0, group=GROUP):
    response = client.request(ApiKey.READ_SHARE_GROUP_STATE, 0, Read(group_id=group, topics=[
        Read.ReadStateData(topic_id=topic_id, partitions=[
            Read.PartitionData(partition=partition, leader_epoch=leader_epoch)])]))
    return response.results[0].partitions[0]


def summary(client, topic_id, partition, leader_epoch=-1, group=GROUP):
    response = client.request(ApiKey.READ_SHARE_GROUP_STATE_SUMMARY, 0, Summary(group_id=group, topics=[
        Summary.ReadStateSummaryData(topic_id=topic_id, partitions=[
            Summary.PartitionData(partition=partition, leader_epoch=leader_epoch)])]))
    return response.results[0].partitions[0]


def delete(client, topic_id, partition, group=GROUP):
    response = client.request(ApiKey.DELETE_SHARE_GROUP_STATE, 0, Delete(group_id=group, topics=[
        Delete.DeleteStateData(topic_id=topic_id, partitions=[Delete.PartitionData(partition=partition)])]))
    return response.results[0].partitions[0]


def batches_of(result):
    return [(b.first_offset, b.last_offset, b.delivery_state, b.delivery_count) for b in result.state_batches]


def test_find_coordinator_v6_names_the_share_coordinator_and_creates_the_state_topic(broker, client, topic_id):
    key = f"{GROUP}:{uuid_to_base64(topic_id)}:0"
    coordinator = find_share_coordinator(client, key)
    assert (coordinator.error_code, coordinator.node_id, coordinator.port) == (NONE, 0, broker.port)
    info = broker.broker.metadata.topic("__share_group_state")
    assert len(info.partitions) == STATE_PARTITIONS
    assert info.configs["cleanup.policy"] == "delete" and info.configs["compression.type"] == "producer"


@pytest.mark.parametrize("key", ["", "group-only", "g:not-a-topic-id:0", "g:AAAAAAAAAAAAAAAAAAAAAA:x", "g:AAAAAAAAAAAAAAAAAAAAAA:"])
def test_find_coordinator_refuses_a_malformed_share_key(client, key):
    assert find_share_coordinator(client, key).error_code == ErrorCode.INVALID_REQUEST


def test_the_share_key_type_needs_find_coordinator_v6(client, topic_id):
    key = f"{GROUP}:{uuid_to_base64(topic_id)}:0"
    assert find_share_coordinator(client, key, version=5).error_code == ErrorCode.INVALID_REQUEST


def test_a_share_partition_is_initialized_written_read_and_summarized(client, topic_id):
    assert initialize(client, topic_id, 0, state_epoch=1).error_code == NONE
    fresh = read(client, topic_id, 0, leader_epoch=1)
    assert (fresh.error_code, fresh.state_epoch, fresh.start_offset, batches_of(fresh)) == (NONE, 1, -1, [])
    assert write(client, topic_id, 0, [(0, 9, 0, 1)], state_epoch=1, leader_epoch=1, start_offset=0).error_code == NONE
    assert write(client, topic_id, 0, [(3, 5, 2, 1)], state_epoch=1, leader_epoch=1).error_code == NONE
    state = read(client, topic_id, 0, leader_epoch=1)
    assert (state.error_code, state.state_epoch, state.start_offset) == (NONE, 1, 0)
    assert batches_of(state) == [(0, 2, 0, 1), (3, 5, 2, 1), (6, 9, 0, 1)]
    brief = summary(client, topic_id, 0)
    assert (brief.error_code, brief.state_epoch, brief.start_offset) == (NONE, 1, 0)


def test_epochs_older_than_the_recorded_ones_are_fenced(client, topic_id):
    assert initialize(client, topic_id, 1, state_epoch=3).error_code == NONE
    assert read(client, topic_id, 1, leader_epoch=5).error_code == NONE  # the new leader's epoch is kept
    assert read(client, topic_id, 1, leader_epoch=4).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert write(client, topic_id, 1, [], state_epoch=3, leader_epoch=4).error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert write(client, topic_id, 1, [], state_epoch=2, leader_epoch=5).error_code == ErrorCode.FENCED_STATE_EPOCH
    assert initialize(client, topic_id, 1, state_epoch=2).error_code == ErrorCode.FENCED_STATE_EPOCH


def test_an_unknown_group_has_no_state_to_read_or_write(client, topic_id):
    unread = read(client, topic_id, 0, group="no-such-group")
    assert (unread.error_code, unread.error_message) == (
        ErrorCode.INVALID_REQUEST, "Read operation on uninitialized share partition not allowed.")
    assert write(client, topic_id, 0, [(0, 0, 2, 1)], group="no-such-group").error_code == ErrorCode.INVALID_REQUEST
    never = summary(client, topic_id, 0, group="no-such-group")
    assert (never.error_code, never.state_epoch, never.start_offset) == (NONE, 0, -1)
    assert delete(client, topic_id, 0, group="no-such-group").error_code == NONE


def test_bad_partitions_and_topics_are_refused(client, topic_id):
    assert initialize(client, topic_id, -1).error_code == ErrorCode.INVALID_REQUEST
    assert initialize(client, uuid.uuid4(), 0).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert initialize(client, topic_id, 99).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def test_a_batch_running_backwards_is_refused(client, topic_id):
    assert initialize(client, topic_id, 0, group="backwards").error_code == NONE
    assert write(client, topic_id, 0, [(9, 3, 2, 1)], group="backwards").error_code == ErrorCode.INVALID_REQUEST


def test_an_empty_group_id_or_topic_list_gets_an_empty_response(client, topic_id):
    assert client.request(ApiKey.READ_SHARE_GROUP_STATE, 0, Read(group_id=GROUP, topics=[])).results == []
    empty_group = Write(group_id="", topics=[Write.WriteStateData(topic_id=topic_id, partitions=[
        Write.PartitionData(partition=0, state_epoch=0, leader_epoch=0, start_offset=0, state_batches=[])])])
    assert client.request(ApiKey.WRITE_SHARE_GROUP_STATE, 0, empty_group).results == []


def test_deleted_state_must_be_initialized_again(client, topic_id):
    assert initialize(client, topic_id, 2, start_offset=7).error_code == NONE
    assert delete(client, topic_id, 2).error_code == NONE
    assert read(client, topic_id, 2).error_code == ErrorCode.INVALID_REQUEST


def group_alone_in_its_state_partition(broker, topic_id):
    """A group whose key (partition 0 of the topic) has a `__share_group_state` partition of its own."""
    coordinator = broker.broker.share_coordinator
    for index in range(100):
        group = f"pruned-group-{index}"
        state_partition = partition_for(SharePartitionKey(group, topic_id, 0).coordinator_key(), STATE_PARTITIONS)
        if not broker.call(lambda: coordinator.loaded[state_partition].shard.states):
            return group, state_partition
    raise AssertionError("every partition of __share_group_state holds a state")


def test_records_before_the_last_snapshot_of_every_share_partition_are_pruned(broker, client, topic_id):
    group, state_partition = group_alone_in_its_state_partition(broker, topic_id)

    def log_start():
        replica = broker.broker.replica_manager.partitions[("__share_group_state", state_partition)]
        return broker.call(lambda: replica.log.log_start_offset)

    assert initialize(client, topic_id, 0, state_epoch=0, start_offset=0, group=group).error_code == NONE
    first = log_start()
    for offset in range(8):  # snapshots every third write: the earlier records are not needed
        assert write(client, topic_id, 0, [(offset, offset, 2, 1)], group=group).error_code == NONE
    wait_until(lambda: log_start() > first, "records pruned")
    state = read(client, topic_id, 0, group=group)
    assert (state.error_code, batches_of(state)) == (NONE, [(0, 7, 2, 1)])


def test_a_restarted_broker_loads_the_state_from_its_log(data_directory, client, topic_id, broker):
    assert initialize(client, topic_id, 3, state_epoch=2, start_offset=10).error_code == NONE
    for offset in range(10, 14):
        result = write(client, topic_id, 3, [(offset, offset, 2, 1)], state_epoch=2, leader_epoch=7)
        assert result.error_code == NONE
    client.close()
    broker.stop()
    try:
        with EmbeddedBroker(SETTINGS, directory=data_directory) as restarted, \
                WireClient(restarted.bootstrap, timeout=30) as again:
            state = wait_until(lambda: _loaded(read(again, topic_id, 3, leader_epoch=7)), "the state loaded")
            assert (state.state_epoch, state.start_offset, batches_of(state)) == (2, 10, [(10, 13, 2, 1)])
            assert read(again, topic_id, 3, leader_epoch=6).error_code == ErrorCode.FENCED_LEADER_EPOCH
    finally:
        broker.start()


def _loaded(result):
    return result if result.error_code != ErrorCode.COORDINATOR_LOAD_IN_PROGRESS else None
