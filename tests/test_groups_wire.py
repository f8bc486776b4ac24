"""The group APIs on the wire, in every version the broker advertises, answered as Kafka 3.9
answers them: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
OffsetFetch, DescribeGroups, ListGroups, DeleteGroups and OffsetDelete (each response is also
checked to decode with nothing left over)."""
from __future__ import annotations

import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.wire import WireClient

from .clients import create_topic
from .coordinator.fakes import subscription
from .coordinator.live import group_broker


def request_cls(api: ApiKey):
    return messages.request(api).cls


FindCoordinator = request_cls(ApiKey.FIND_COORDINATOR)
JoinGroup = request_cls(ApiKey.JOIN_GROUP)
SyncGroup = request_cls(ApiKey.SYNC_GROUP)
Heartbeat = request_cls(ApiKey.HEARTBEAT)
LeaveGroup = request_cls(ApiKey.LEAVE_GROUP)
OffsetCommit = request_cls(ApiKey.OFFSET_COMMIT)
OffsetFetch = request_cls(ApiKey.OFFSET_FETCH)
DescribeGroups = request_cls(ApiKey.DESCRIBE_GROUPS)
ListGroups = request_cls(ApiKey.LIST_GROUPS)
DeleteGroups = request_cls(ApiKey.DELETE_GROUPS)
OffsetDelete = request_cls(ApiKey.OFFSET_DELETE)
DescribeConfigs = request_cls(ApiKey.DESCRIBE_CONFIGS)
Metadata = request_cls(ApiKey.METADATA)

TOPIC = "wire-orders"
METADATA = subscription(TOPIC)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with group_broker(tmp_path_factory.mktemp("wire")) as running:
        create_topic(running.bootstrap, TOPIC, 2)
        with WireClient(running.bootstrap) as connection:  # as a client does before its group
            # requests: the lookup creates __consumer_offsets, whose partitions make this broker
            # every group's coordinator
            connection.request(ApiKey.FIND_COORDINATOR, 1, FindCoordinator(key="any", key_type=0))
        yield running


@pytest.fixture
def client(broker):
    with WireClient(broker.bootstrap, timeout=30) as connection:
        yield connection


# -- FindCoordinator ---------------------------------------------------------------------------

@pytest.mark.parametrize("version", range(0, 4))
def test_find_coordinator_names_this_broker_for_a_group(broker, client, version):
    response = client.request(ApiKey.FIND_COORDINATOR, version,
                              FindCoordinator(key="some-group", key_type=0))
    assert (response.error_code, response.node_id, response.host, response.port) == (
        0, 0, "127.0.0.1", broker.port)
    if version >= 1:
        assert response.error_message == "NONE"  # Kafka's quirk: the name of Errors.NONE


@pytest.mark.parametrize("version", [4, 5])
def test_find_coordinator_answers_each_key_of_a_batch(broker, client, version):
    response = client.request(ApiKey.FIND_COORDINATOR, version,
                              FindCoordinator(key_type=0, coordinator_keys=["a", "b"]))
    assert [(c.key, c.error_code, c.node_id, c.port, c.error_message)
            for c in response.coordinators] == [("a", 0, 0, broker.port, None),
                                                ("b", 0, 0, broker.port, None)]


def test_transaction_coordinators_are_found_like_group_coordinators(broker, client):
    old = client.request(ApiKey.FIND_COORDINATOR, 3, FindCoordinator(key="tx", key_type=1))
    assert (old.error_code, old.error_message, old.node_id, old.host, old.port) == (
        ErrorCode.NONE, "NONE", 0, broker.host, broker.port)
    new = client.request(ApiKey.FIND_COORDINATOR, 5,
                         FindCoordinator(key_type=1, coordinator_keys=["tx"]))
    assert [(c.error_code, c.node_id) for c in new.coordinators] == [(0, 0)]


def test_an_unknown_key_type_is_an_invalid_request(client):
    response = client.request(ApiKey.FIND_COORDINATOR, 2, FindCoordinator(key="x", key_type=9))
    assert response.error_code == ErrorCode.INVALID_REQUEST


def test_the_offsets_topic_is_internal_compacted_and_sized_by_the_broker_config(client):
    client.request(ApiKey.FIND_COORDINATOR, 0, FindCoordinator(key="g"))
    metadata = client.request(ApiKey.METADATA, 9, Metadata(
        topics=[Metadata.MetadataRequestTopic(name="__consumer_offsets")],
        allow_auto_topic_creation=False))
    [topic] = metadata.topics
    assert topic.is_internal and len(topic.partitions) == 10  # offsets.topic.num.partitions
    configs = client.request(ApiKey.DESCRIBE_CONFIGS, 1, DescribeConfigs(resources=[
        DescribeConfigs.DescribeConfigsResource(
            resource_type=2, resource_name="__consumer_offsets",
            configuration_keys=["cleanup.policy", "compression.type"])]))
    values = {c.name: c.value for c in configs.results[0].configs}
    assert values == {"cleanup.policy": "compact", "compression.type": "producer"}


def test_without_enough_brokers_for_the_offsets_topic_no_coordinator_is_available(tmp_path):
    with group_broker(tmp_path / "broker", **{"offsets.topic.replication.factor": "3"}) as lone:
        with WireClient(lone.bootstrap) as connection:
            response = connection.request(ApiKey.FIND_COORDINATOR, 1,
                                          FindCoordinator(key="g", key_type=0))
    assert (response.error_code, response.node_id) == (ErrorCode.COORDINATOR_NOT_AVAILABLE, -1)


# -- membership --------------------------------------------------------------------------------

def join(client, version: int, group: str, member_id: str = "", **extra):
    return client.request(ApiKey.JOIN_GROUP, version, JoinGroup(
        group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
        member_id=member_id, protocol_type="consumer",
        protocols=[JoinGroup.JoinGroupRequestProtocol(name="range", metadata=METADATA)],
        **extra))


@pytest.mark.parametrize("join_version", range(0, 10))
def test_a_member_joins_syncs_heartbeats_and_leaves_in_every_version(client, join_version):
    group = f"lifecycle-{join_version}"
    sync_version, heartbeat_version, leave_version = (min(join_version, 5), min(join_version, 4),
                                                      min(join_version, 5))
    first = join(client, join_version, group)
    if join_version >= 4:
        assert (first.error_code, first.generation_id) == (ErrorCode.MEMBER_ID_REQUIRED, -1)
        assert first.member_id.startswith("wire-test-")
        joined = join(client, join_version, group, member_id=first.member_id)
    else:
        joined = first
    member = joined.member_id
    assert (joined.error_code, joined.generation_id, joined.leader) == (0, 1, member)
    assert joined.protocol_name == "range"
    assert joined.protocol_type == ("consumer" if join_version >= 7 else None)
    assert [(m.member_id, bytes(m.metadata)) for m in joined.members] == [(member, METADATA)]

    synced = client.request(ApiKey.SYNC_GROUP, sync_version, SyncGroup(
        group_id=group, generation_id=1, member_id=member, protocol_type="consumer",
        protocol_name="range",
        assignments=[SyncGroup.SyncGroupRequestAssignment(member_id=member, assignment=b"A")]))
    assert (synced.error_code, bytes(synced.assignment)) == (0, b"A")
    if sync_version >= 5:
        assert (synced.protocol_type, synced.protocol_name) == ("consumer", "range")

    beat = client.request(ApiKey.HEARTBEAT, heartbeat_version, Heartbeat(
        group_id=group, generation_id=1, member_id=member))
    assert beat.error_code == 0

    if leave_version >= 3:
        left = client.request(ApiKey.LEAVE_GROUP, leave_version, LeaveGroup(
            group_id=group, members=[LeaveGroup.MemberIdentity(member_id=member)]))
        assert [(m.member_id, m.error_code) for m in left.members] == [(member, 0)]
    else:
        left = client.request(ApiKey.LEAVE_GROUP, leave_version, LeaveGroup(
            group_id=group, member_id=member))
    assert left.error_code == 0


def test_join_group_errors(client):
    assert join(client, 5, "").error_code == ErrorCode.INVALID_GROUP_ID
    assert join(client, 5, "g", member_id="nobody").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    too_short = client.request(ApiKey.JOIN_GROUP, 5, JoinGroup(
        group_id="g", session_timeout_ms=10, rebalance_timeout_ms=10, member_id="",
        protocol_type="consumer", protocols=[]))
    assert too_short.error_code == ErrorCode.INVALID_SESSION_TIMEOUT


def test_an_error_answer_has_an_empty_protocol_name_before_v7_and_null_from_v7(client):
    assert join(client, 6, "g", member_id="nobody").protocol_name == ""
    assert join(client, 7, "g", member_id="nobody").protocol_name is None


def test_sync_group_v5_requires_protocol_type_and_name(client):
    response = client.request(ApiKey.SYNC_GROUP, 5, SyncGroup(
        group_id="g", generation_id=1, member_id="m", protocol_type=None, protocol_name="range",
        assignments=[]))
    assert response.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_leave_group_v0_of_an_unknown_member_answers_its_error_at_the_top(client):
    response = client.request(ApiKey.LEAVE_GROUP, 0, LeaveGroup(group_id="g", member_id="m"))
    assert response.error_code == ErrorCode.UNKNOWN_MEMBER_ID


# -- offsets -----------------------------------------------------------------------------------

def commit(client, version: int, group: str, partition: int, offset: int, **partition_extra):
    return client.request(ApiKey.OFFSET_COMMIT, version, OffsetCommit(
        group_id=group, generation_id_or_member_epoch=-1, member_id="", retention_time_ms=-1,
        topics=[OffsetCommit.OffsetCommitRequestTopic(name=TOPIC, partitions=[
            OffsetCommit.OffsetCommitRequestPartition(
                partition_index=partition, committed_offset=offset,
                committed_metadata=f"meta-{offset}", **partition_extra)])]))


def fetch(client, version: int, group: str, partitions=(0, 1)):
    return client.request(ApiKey.OFFSET_FETCH, version, OffsetFetch(
        group_id=group, topics=[OffsetFetch.OffsetFetchRequestTopic(
            name=TOPIC, partition_indexes=list(partitions))]))


@pytest.mark.parametrize("version", range(0, 10))
def test_offsets_committed_in_any_version_are_fetched_in_every_version(client, version):
    group = f"offsets-{version}"
    committed = commit(client, version, group, 1, 40 + version, committed_leader_epoch=3)
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in committed.topics] == [(TOPIC, [(1, 0)])]
    for fetch_version in range(0, 8):
        [topic] = fetch(client, fetch_version, group).topics
        answers = {p.partition_index: (p.committed_offset, p.metadata, p.error_code)
                   for p in topic.partitions}
        assert answers == {0: (-1, "", 0), 1: (40 + version, f"meta-{40 + version}", 0)}
        if fetch_version >= 5:
            epochs = {p.partition_index: p.committed_leader_epoch for p in topic.partitions}
            assert epochs == {0: -1, 1: 3 if version >= 6 else -1}


def test_offset_fetch_v8_asks_for_several_groups_and_v2_for_all_partitions(client):
    commit(client, 8, "many-a", 0, 5)
    commit(client, 8, "many-b", 1, 6)
    response = client.request(ApiKey.OFFSET_FETCH, 8, OffsetFetch(groups=[
        OffsetFetch.OffsetFetchRequestGroup(group_id="many-a", topics=None),
        OffsetFetch.OffsetFetchRequestGroup(group_id="many-b", topics=[
            OffsetFetch.OffsetFetchRequestTopics(name=TOPIC, partition_indexes=[1])])]))
    assert [(g.group_id, g.error_code, [(t.name, [(p.partition_index, p.committed_offset)
                                                  for p in t.partitions]) for t in g.topics])
            for g in response.groups] == [("many-a", 0, [(TOPIC, [(0, 5)])]),
                                          ("many-b", 0, [(TOPIC, [(1, 6)])])]
    every = client.request(ApiKey.OFFSET_FETCH, 2, OffsetFetch(group_id="many-a", topics=None))
    assert [(t.name, [p.partition_index for p in t.partitions]) for t in every.topics] == [
        (TOPIC, [0])]


def test_committing_to_unknown_topics_or_partitions_fails_for_those_only(client):
    response = client.request(ApiKey.OFFSET_COMMIT, 2, OffsetCommit(
        group_id="partly", generation_id_or_member_epoch=-1, member_id="", retention_time_ms=-1,
        topics=[OffsetCommit.OffsetCommitRequestTopic(name=TOPIC, partitions=[
            OffsetCommit.OffsetCommitRequestPartition(partition_index=p, committed_offset=1)
            for p in (0, 7)]),
            OffsetCommit.OffsetCommitRequestTopic(name="no-such-topic", partitions=[
                OffsetCommit.OffsetCommitRequestPartition(partition_index=0, committed_offset=1)])]))
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in response.topics] == [
        (TOPIC, [(0, 0), (7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
        ("no-such-topic", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)])]


def test_a_simple_commit_to_a_group_with_members_is_refused(client):
    member = join(client, 3, "occupied").member_id
    client.request(ApiKey.SYNC_GROUP, 3, SyncGroup(
        group_id="occupied", generation_id=1, member_id=member, assignments=[]))
    response = commit(client, 7, "occupied", 0, 1)
    assert response.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_MEMBER_ID


# -- listing, describing and deleting ------------------------------------------------------------

@pytest.mark.parametrize("version", range(0, 6))
def test_describe_groups_in_every_version(client, version):
    group = f"described-{version}"
    member = join(client, 5, group, group_instance_id=f"instance-{version}").member_id
    client.request(ApiKey.SYNC_GROUP, 3, SyncGroup(
        group_id=group, generation_id=1, member_id=member, group_instance_id=f"instance-{version}",
        assignments=[SyncGroup.SyncGroupRequestAssignment(member_id=member, assignment=b"A")]))
    response = client.request(ApiKey.DESCRIBE_GROUPS, version, DescribeGroups(
        groups=[group, "never-heard-of"], include_authorized_operations=True))
    described, unknown = response.groups
    assert (described.error_code, described.group_state, described.protocol_type,
            described.protocol_data) == (0, "Stable", "consumer", "range")
    [m] = described.members
    assert (m.member_id, m.client_id, m.client_host, bytes(m.member_metadata),
            bytes(m.member_assignment)) == (member, "wire-test", "/127.0.0.1", METADATA, b"A")
    assert m.group_instance_id == (f"instance-{version}" if version >= 4 else None)
    if version >= 3:
        assert described.authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)
        assert unknown.authorized_operations == (1 << 3) | (1 << 6) | (1 << 8)
    assert (unknown.error_code, unknown.group_state, unknown.members) == (0, "Dead", [])


@pytest.mark.parametrize("version", range(0, 6))
def test_list_groups_in_every_version(client, version):
    commit(client, 2, f"listed-{version}", 0, 1)
    request = ListGroups(states_filter=["empty"], types_filter=["classic"])
    response = client.request(ApiKey.LIST_GROUPS, version, request)
    [listed] = [g for g in response.groups if g.group_id == f"listed-{version}"]
    assert (response.error_code, listed.protocol_type) == (0, "")
    if version >= 4:
        assert listed.group_state == "Empty"
        assert all(g.group_state == "Empty" for g in response.groups)
    if version >= 5:
        assert listed.group_type == "classic"
        other = client.request(ApiKey.LIST_GROUPS, 5, ListGroups(types_filter=["consumer"]))
        assert other.groups == []


@pytest.mark.parametrize("version", range(0, 3))
def test_delete_groups_in_every_version(client, version):
    commit(client, 2, f"deleted-{version}", 0, 1)
    response = client.request(ApiKey.DELETE_GROUPS, version, DeleteGroups(
        groups_names=[f"deleted-{version}", "ghost", f"deleted-{version}"]))
    assert [(r.group_id, r.error_code) for r in response.results] == [
        (f"deleted-{version}", 0), ("ghost", ErrorCode.GROUP_ID_NOT_FOUND)]
    [topic] = fetch(client, 3, f"deleted-{version}").topics
    assert [p.committed_offset for p in topic.partitions] == [-1, -1]


def test_offset_delete(client):
    commit(client, 2, "pruned", 0, 1)
    commit(client, 2, "pruned", 1, 2)
    response = client.request(ApiKey.OFFSET_DELETE, 0, OffsetDelete(group_id="pruned", topics=[
        OffsetDelete.OffsetDeleteRequestTopic(name=TOPIC, partitions=[
            OffsetDelete.OffsetDeleteRequestPartition(partition_index=p) for p in (0, 5)])]))
    assert response.error_code == 0
    assert [(p.partition_index, p.error_code) for p in response.topics[0].partitions] == [
        (0, 0), (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    [topic] = fetch(client, 3, "pruned").topics
    assert [p.committed_offset for p in topic.partitions] == [-1, 2]
    missing = client.request(ApiKey.OFFSET_DELETE, 0, OffsetDelete(group_id="ghost", topics=[]))
    assert (missing.error_code, missing.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])
