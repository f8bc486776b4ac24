"""Share groups (KIP-932), the group side, at the wire: ShareGroupHeartbeat (join, the `simple`
assignor's assignment once the share state is initialized, leave, session expiry, bad input),
ShareGroupDescribe, the share group offsets APIs over the share persister, GROUP config
resources, and a restart that resumes the group. Kafka 3.9 has no share groups, so nothing here
is compared with real Kafka."""

from __future__ import annotations

import time
import uuid

import pytest

from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.protocol.message_types import (
    AlterShareGroupOffsetsRequest,
    DeleteGroupsRequest,
    DeleteShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequest,
    FindCoordinatorRequest,
    ListGroupsRequest,
    ShareGroupDescribeRequest,
    ShareGroupHeartbeatRequest,
)
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient, create_topic, metadata

SHARE_SETTINGS = {
    "group.coordinator.rebalance.protocols": "classic,consumer,share",
    "group.share.min.session.timeout.ms": "1000",
    "group.share.session.timeout.ms": "1500",
    "group.share.min.heartbeat.interval.ms": "100",
    "group.share.heartbeat.interval.ms": "100",
}
DEADLINE_S = 30


@pytest.fixture(scope="module")
def broker():
    with EmbeddedBroker(SHARE_SETTINGS) as running:
        yield running


@pytest.fixture
def client(broker):
    with WireClient(broker.bootstrap) as wire:
        yield wire


def heartbeat(client, group, member, epoch, topics=None, rack=None):
    request = ShareGroupHeartbeatRequest(
        group_id=group, member_id=member, member_epoch=epoch, rack_id=rack, subscribed_topic_names=topics
    )
    return client.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, request)


def describe(client, group):
    request = ShareGroupDescribeRequest(group_ids=[group], include_authorized_operations=False)
    return client.request(ApiKey.SHARE_GROUP_DESCRIBE, 1, request).groups[0]


def assigned(response):
    if response.assignment is None:
        return None
    return {tp.topic_id: sorted(tp.partitions) for tp in response.assignment.topic_partitions}


def heartbeat_until(client, group, member, epoch, condition):
    """Heartbeat as a member does until `condition(response)`; the last response."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        response = heartbeat(client, group, member, epoch)
        assert response.error_code == ErrorCode.NONE, response
        epoch = response.member_epoch
        if condition(response) or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def find_coordinator(client, group):
    """As a client does first: FindCoordinator creates __consumer_offsets; wait until it answers."""
    request = FindCoordinatorRequest(key_type=0, coordinator_keys=[group])
    deadline = time.monotonic() + DEADLINE_S
    while client.request(ApiKey.FIND_COORDINATOR, 4, request).coordinators[0].error_code and time.monotonic() < deadline:
        time.sleep(0.1)


def join(client, group, member, topics, *, interval_ms=100):
    find_coordinator(client, group)
    response = heartbeat(client, group, member, 0, topics)
    assert response.error_code == ErrorCode.NONE, response
    assert response.member_id == member
    assert response.heartbeat_interval_ms == interval_ms
    return response


def new_topic(broker, name, partitions):
    create_topic(broker.bootstrap, name, partitions=partitions)
    return name


def topic_id_of(broker, topic) -> uuid.UUID:
    [found] = metadata(broker.bootstrap, [topic]).topics
    return found.topic_id


def share_states_kept(broker, group, topic_id, partitions) -> list[int]:
    """The partitions whose share state the broker's persister (the share coordinator) still
    keeps for the group: reading a state never initialized, or deleted, is INVALID_REQUEST."""
    persister = broker.broker.share_persister
    return [p for p in partitions
            if broker.call_async(persister.read_state, group, topic_id, p, -1).error != ErrorCode.INVALID_REQUEST]


def test_members_join_get_the_simple_assignment_leave_and_expire(broker, client):
    topic = new_topic(broker, "share-assign", 2)
    group = "share-assign-group"
    first = join(client, group, "member-1", [topic])
    assert assigned(first) == {}  # nothing assigned before the share state is initialized
    # The partitions' state is initialized, the group epoch bumped, the next heartbeat assigns them.
    got = heartbeat_until(client, group, "member-1", first.member_epoch, lambda r: assigned(r))
    assert list(assigned(got).values()) == [[0, 1]]
    epoch1 = got.member_epoch

    second = join(client, group, "member-2", [topic])
    assert second.member_epoch > epoch1
    assert sum(len(p) for p in assigned(second).values()) == 1
    again = heartbeat(client, group, "member-1", epoch1)
    assert again.member_epoch == second.member_epoch
    assert sum(len(p) for p in assigned(again).values()) == 1  # changed: sent without being asked

    described = describe(client, group)
    assert (described.error_code, described.group_state, described.assignor_name) == (0, "Stable", "simple")
    assert described.group_epoch == described.assignment_epoch == second.member_epoch
    assert sorted(m.member_id for m in described.members) == ["member-1", "member-2"]
    assert {m.assignment.topic_partitions[0].topic_name for m in described.members} == {topic}
    assert all(m.subscribed_topic_names == [topic] for m in described.members)

    left = heartbeat(client, group, "member-2", -1)
    assert (left.error_code, left.member_id, left.member_epoch) == (0, "member-2", -1)
    assert [m.member_id for m in describe(client, group).members] == ["member-1"]

    # member-1 stops heartbeating: its session (1.5 s) expires and the group is Empty.
    deadline = time.monotonic() + DEADLINE_S
    while describe(client, group).group_state != "Empty" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert describe(client, group).members == []
    listed = client.request(ApiKey.LIST_GROUPS, 5, ListGroupsRequest(states_filter=[], types_filter=["share"]))
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in listed.groups if g.group_id == group] == [
        (group, "share", "Empty", "share")
    ]


def test_share_version_advertises_the_share_group_apis(client):
    from pykbroker.protocol.message_types import ApiVersionsRequest

    response = client.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(client_software_name="t", client_software_version="1"))
    advertised = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
    assert {key: advertised[key] for key in (76, 77, 90, 91, 92)} == {
        76: (1, 1),
        77: (1, 1),
        90: (0, 0),
        91: (0, 0),
        92: (0, 0),
    }


def test_without_share_version_the_share_apis_are_neither_advertised_nor_served():
    from pykbroker.protocol.message_types import ApiVersionsRequest

    without_share = {"group.coordinator.rebalance.protocols": "classic,consumer"}
    with EmbeddedBroker(without_share) as running, WireClient(running.bootstrap) as plain:
        versions = plain.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest(client_software_name="t", client_software_version="1"))
        assert not {k.api_key for k in versions.api_keys} & {76, 77, 90, 91, 92}
        assert heartbeat(plain, "g", "m", 0, ["t"]).error_code == ErrorCode.UNSUPPORTED_VERSION
        assert describe(plain, "g").error_code == ErrorCode.UNSUPPORTED_VERSION


def test_a_deleted_topic_takes_its_share_state_with_it(broker, client):
    from pykbroker.protocol.message_types import DeleteTopicsRequest

    topic = new_topic(broker, "share-deleted", 1)
    joined = join(client, "deleted-topic-group", "m", [topic])
    heartbeat_until(client, "deleted-topic-group", "m", joined.member_epoch, lambda r: assigned(r))
    assert len(describe_offsets(client, "deleted-topic-group", None).topics) == 1
    topic_id = topic_id_of(broker, topic)
    assert share_states_kept(broker, "deleted-topic-group", topic_id, [0]) == [0]

    def state():
        group = broker.broker.group_coordinator.share.groups["deleted-topic-group"]
        return dict(group.initialized)

    client.request(ApiKey.DELETE_TOPICS, 4, DeleteTopicsRequest(topic_names=[topic], timeout_ms=10000))
    wait_until(lambda: broker.call(state) == {} and not share_states_kept(broker, "deleted-topic-group", topic_id, [0]),
               "the share state of the deleted topic deleted", timeout=DEADLINE_S)
    assert assigned(heartbeat(client, "deleted-topic-group", "m", -1)) is None


def test_bad_heartbeats_get_kafkas_errors(broker, client):
    topic = new_topic(broker, "share-errors", 1)
    find_coordinator(client, "share-errors-group")
    assert heartbeat(client, "", "m", 0, [topic]).error_code == ErrorCode.INVALID_REQUEST
    no_topics = heartbeat(client, "share-errors-group", "m", 0, None)
    assert (no_topics.error_code, no_topics.error_message) == (
        ErrorCode.INVALID_REQUEST,
        "SubscribedTopicNames must be set in first request.",
    )
    assert heartbeat(client, "share-errors-group", "", 0, [topic]).error_code == ErrorCode.INVALID_REQUEST
    assert heartbeat(client, "share-errors-group", "m" * 37, 0, [topic]).error_code == ErrorCode.INVALID_REQUEST
    blank = heartbeat(client, "share-errors-group", "  ", 0, [topic])
    assert (blank.error_code, blank.error_message) == (ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    assert heartbeat(client, "share-errors-group", "m", -2).error_code == ErrorCode.INVALID_REQUEST
    assert heartbeat(client, "share-errors-group", "m", 3).error_code == ErrorCode.GROUP_ID_NOT_FOUND
    joined = join(client, "share-errors-group", "m", [topic])
    assert heartbeat(client, "share-errors-group", "other", 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    fenced = heartbeat(client, "share-errors-group", "m", joined.member_epoch + 5)
    assert fenced.error_code == ErrorCode.FENCED_MEMBER_EPOCH
    heartbeat(client, "share-errors-group", "m", -1)
    # A classic group's id is not a share group's.
    from pykbroker.protocol.message_types import OffsetCommitRequest

    commit = OffsetCommitRequest(
        group_id="classic-group",
        generation_id_or_member_epoch=-1,
        member_id="",
        topics=[
            OffsetCommitRequest.OffsetCommitRequestTopic(
                name=topic, partitions=[OffsetCommitRequest.OffsetCommitRequestPartition(partition_index=0, committed_offset=1)]
            )
        ],
    )
    assert client.request(ApiKey.OFFSET_COMMIT, 8, commit).topics[0].partitions[0].error_code == 0
    other = heartbeat(client, "classic-group", "m", 0, [topic])
    assert (other.error_code, other.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group classic-group is not a share group.",
    )
    described = describe(client, "classic-group")
    assert (described.error_code, described.error_message) == (
        ErrorCode.GROUP_ID_NOT_FOUND,
        "Group classic-group is not a share group.",
    )
    assert describe(client, "no-such-group").error_message == "Group no-such-group not found."


def describe_offsets(client, group, topics):
    Group = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestGroup
    Topic = DescribeShareGroupOffsetsRequest.DescribeShareGroupOffsetsRequestTopic
    wanted = None if topics is None else [Topic(topic_name=t, partitions=p) for t, p in topics]
    request = DescribeShareGroupOffsetsRequest(groups=[Group(group_id=group, topics=wanted)])
    return client.request(ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 0, request).groups[0]


def alter_offsets(client, group, topic, offsets):
    Topic = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestTopic
    Partition = AlterShareGroupOffsetsRequest.AlterShareGroupOffsetsRequestPartition
    request = AlterShareGroupOffsetsRequest(
        group_id=group,
        topics=[
            Topic(
                topic_name=topic,
                partitions=[Partition(partition_index=p, start_offset=o) for p, o in offsets.items()],
            )
        ],
    )
    return client.request(ApiKey.ALTER_SHARE_GROUP_OFFSETS, 0, request)


def test_share_group_offsets_go_through_the_persister(broker, client):
    topic = new_topic(broker, "share-offsets", 2)
    find_coordinator(client, "absent-share-group")
    group = "share-offsets-group"
    joined = join(client, group, "m", [topic])
    heartbeat_until(client, group, "m", joined.member_epoch, lambda r: assigned(r))
    refused = alter_offsets(client, group, topic, {0: 5})
    assert (refused.error_code, refused.error_message) == (ErrorCode.NON_EMPTY_GROUP, "The group is not empty.")
    initialized = describe_offsets(client, group, None)
    assert [(p.partition_index, p.start_offset) for p in initialized.topics[0].partitions] == [(0, -1), (1, -1)]
    heartbeat(client, group, "m", -1)

    altered = alter_offsets(client, group, topic, {0: 5, 7: 1})
    assert altered.error_code == ErrorCode.NONE
    assert [(p.partition_index, p.error_code) for p in altered.responses[0].partitions] == [
        (0, 0),
        (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    described = describe_offsets(client, group, [(topic, [0, 1]), ("no-such-topic", [0])])
    assert [(p.partition_index, p.start_offset, p.error_code) for p in described.topics[0].partitions] == [
        (0, 5, 0),
        (1, -1, 0),
    ]
    unknown = described.topics[1]  # no data rather than an error, as Kafka
    assert (unknown.topic_id, [(p.partition_index, p.start_offset, p.error_code) for p in unknown.partitions]) == (
        uuid.UUID(int=0),
        [(0, -1, 0)],
    )

    Topic = DeleteShareGroupOffsetsRequest.DeleteShareGroupOffsetsRequestTopic
    deleted = client.request(
        ApiKey.DELETE_SHARE_GROUP_OFFSETS,
        0,
        DeleteShareGroupOffsetsRequest(group_id=group, topics=[Topic(topic_name=topic), Topic(topic_name="nope")]),
    )
    assert deleted.error_code == 0
    assert [(t.topic_name, t.error_code) for t in deleted.responses] == [
        (topic, 0),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    assert describe_offsets(client, group, None).topics == []
    # A classic group is not a share group; an absent one is created empty by the alter.
    assert alter_offsets(client, "absent-share-group", topic, {1: 3}).error_code == 0
    assert describe(client, "absent-share-group").group_state == "Empty"

    deletion = client.request(ApiKey.DELETE_GROUPS, 2, DeleteGroupsRequest(groups_names=[group, "absent-share-group"]))
    assert [(r.group_id, r.error_code) for r in deletion.results] == [(group, 0), ("absent-share-group", 0)]
    assert describe(client, group).error_code == ErrorCode.GROUP_ID_NOT_FOUND

    topic_id = topic_id_of(broker, topic)

    def states_left():  # in the broker's share coordinator, through its persister
        return [(g, p) for g in (group, "absent-share-group") for p in share_states_kept(broker, g, topic_id, [0, 1])]

    wait_until(lambda: not states_left(), "DeleteGroups deleting the groups' share state", timeout=DEADLINE_S)


def test_group_configs_through_the_admin_client(broker):
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    resource = ConfigResource(
        ResourceType.GROUP,
        "configured-group",
        incremental_configs=[
            ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("share.heartbeat.interval.ms", "200", incremental_operation=AlterConfigOpType.SET),
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(timeout=DEADLINE_S)
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, "configured-group")])
    configs = next(iter(described.values())).result(timeout=DEADLINE_S)
    assert configs["share.auto.offset.reset"].value == "earliest"
    assert configs["share.session.timeout.ms"].value == "1500"  # the broker's default
    assert configs["share.isolation.level"].value == "read_uncommitted"
    bad = ConfigResource(
        ResourceType.GROUP,
        "configured-group",
        incremental_configs=[ConfigEntry("share.session.timeout.ms", "10", incremental_operation=AlterConfigOpType.SET)],
    )
    with pytest.raises(Exception, match="INVALID_CONFIG|must be greater than or equal"):
        admin.incremental_alter_configs([bad])[bad].result(timeout=DEADLINE_S)

    # The group's own heartbeat interval is what its members are told.
    topic = new_topic(broker, "share-configured", 1)
    with WireClient(broker.bootstrap) as client:
        assert join(client, "configured-group", "m", [topic], interval_ms=200).member_epoch == 1


def test_a_restart_resumes_the_share_group(tmp_path):
    with EmbeddedBroker(SHARE_SETTINGS, directory=tmp_path) as first:
        topic = new_topic(first, "share-restart", 2)
        with WireClient(first.bootstrap) as client:
            joined = join(client, "restart-group", "m", [topic])
            got = heartbeat_until(client, "restart-group", "m", joined.member_epoch, lambda r: assigned(r))
            before = describe(client, "restart-group")
    with EmbeddedBroker(SHARE_SETTINGS, directory=tmp_path) as second, WireClient(second.bootstrap) as client:
        deadline = time.monotonic() + DEADLINE_S
        after = describe(client, "restart-group")
        while after.error_code != ErrorCode.NONE and time.monotonic() < deadline:
            time.sleep(0.1)
            after = describe(client, "restart-group")
        assert (after.group_epoch, after.assignment_epoch) == (before.group_epoch, before.assignment_epoch)
        if after.members:  # unless its session expired meanwhile
            assert after.members[0].member_epoch == got.member_epoch
            resumed = heartbeat(client, "restart-group", "m", got.member_epoch)
            assert (resumed.error_code, resumed.member_epoch) == (0, got.member_epoch)


def test_a_share_consumer_joins_and_is_assigned(broker, client):
    confluent_kafka = pytest.importorskip("confluent_kafka")
    if not hasattr(confluent_kafka, "ShareConsumer"):
        pytest.skip("no ShareConsumer in this confluent-kafka")
    topic = new_topic(broker, "share-consumer", 1)
    consumer = confluent_kafka.ShareConsumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": "share-consumer-group"}
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + DEADLINE_S
        members = []
        while time.monotonic() < deadline:
            try:
                consumer.poll(0.2)
            except Exception:
                pass  # ShareFetch is served by the share partitions, not here
            members = describe(client, "share-consumer-group").members
            if members and members[0].assignment.topic_partitions:
                break
        assert members and [tp.topic_name for tp in members[0].assignment.topic_partitions] == [topic]
        assert members[0].member_id  # the client chose it (KIP-1082)
    finally:
        consumer.close()
