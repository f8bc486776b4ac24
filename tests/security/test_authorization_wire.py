"""Every API's authorization answer on the wire, as Kafka 3.9's KafkaApis gives it.

One broker with the ACL authorizer: `User:admin` is a super user and sets up topics and groups;
`User:alice` has only the ACLs a test grants. Each case asks as alice without the ACL it needs and
expects Kafka's error code; some also check that the ACL lets the request through.
"""
import time
import uuid

import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.records.records import build_batch
from pykbroker.security.acl import AclOperation, AclPermissionType, PatternType, ResourceType

from .support import AUTHORIZER, PrincipalBroker, WireAs

TOPIC_DENIED = 29
GROUP_DENIED = 30
CLUSTER_DENIED = 31
TXN_DENIED = 53
OPERATIONS_NOT_REQUESTED = -2147483648


def req(api_key, **fields):
    return messages.request(api_key).cls(**fields)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    settings = {**AUTHORIZER, "super.users": "User:admin", "num.partitions": "1"}
    with PrincipalBroker(tmp_path_factory.mktemp("authz"), settings) as running:
        admin = WireAs(running, "admin")
        topics = [req(ApiKey.CREATE_TOPICS).CreatableTopic(name=name, num_partitions=1, replication_factor=1)
                  for name in ("secret", "open", "readable")]
        answer = admin.request(ApiKey.CREATE_TOPICS, 5, req(ApiKey.CREATE_TOPICS, topics=topics, timeout_ms=10000))
        assert [t.error_code for t in answer.topics] == [0, 0, 0]
        grant(admin, ResourceType.TOPIC, "open", AclOperation.ALL)
        grant(admin, ResourceType.TOPIC, "readable", AclOperation.READ)
        grant(admin, ResourceType.GROUP, "open-group", AclOperation.READ)
        # a coordinator lookup creates __consumer_offsets, as a client's first group request does
        admin.request(ApiKey.FIND_COORDINATOR, 1, req(ApiKey.FIND_COORDINATOR, key="open-group", key_type=0))
        admin.close()
        yield running


def grant(client, resource_type, name, operation, *, principal="User:alice", pattern=PatternType.LITERAL,
          permission=AclPermissionType.ALLOW, host="*"):
    creation = req(ApiKey.CREATE_ACLS).AclCreation(
        resource_type=resource_type, resource_name=name, resource_pattern_type=pattern, principal=principal,
        host=host, operation=operation, permission_type=permission)
    answer = client.request(ApiKey.CREATE_ACLS, 3, req(ApiKey.CREATE_ACLS, creations=[creation]))
    assert answer.results[0].error_code == 0, answer


@pytest.fixture
def alice(broker):
    with WireAs(broker, "alice") as client:
        yield client


def one_batch(**options) -> bytes:
    return build_batch([(b"k", b"v")], **options)


def produce(topic, transactional_id=None, **batch_options):
    return req(ApiKey.PRODUCE, acks=-1, timeout_ms=5000, transactional_id=transactional_id, topic_data=[
        req(ApiKey.PRODUCE).TopicProduceData(name=topic, partition_data=[
            req(ApiKey.PRODUCE).PartitionProduceData(index=0, records=one_batch(**batch_options))])])


def test_produce_needs_write_on_the_topic(alice):
    answer = alice.request(ApiKey.PRODUCE, 9, produce("secret"))
    assert answer.responses[0].partition_responses[0].error_code == TOPIC_DENIED
    answer = alice.request(ApiKey.PRODUCE, 9, produce("open"))
    assert answer.responses[0].partition_responses[0].error_code == 0


def test_transactional_produce_needs_write_on_the_transactional_id(alice):
    request = produce("open", "tx-1", producer_id=1, producer_epoch=0, base_sequence=0, is_transactional=True)
    answer = alice.request(ApiKey.PRODUCE, 9, request)
    assert answer.responses[0].partition_responses[0].error_code == TXN_DENIED


def fetch(topic, replica_id=-1):
    return req(ApiKey.FETCH, replica_id=replica_id, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, topics=[
        req(ApiKey.FETCH).FetchTopic(topic=topic, partitions=[
            req(ApiKey.FETCH).FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])


def test_fetch_needs_read_on_the_topic_and_followers_cluster_action(alice):
    answer = alice.request(ApiKey.FETCH, 11, fetch("secret"))
    assert answer.responses[0].partitions[0].error_code == TOPIC_DENIED
    assert alice.request(ApiKey.FETCH, 11, fetch("readable")).responses[0].partitions[0].error_code == 0
    answer = alice.request(ApiKey.FETCH, 11, fetch("readable", replica_id=5))
    assert answer.responses[0].partitions[0].error_code == TOPIC_DENIED


def test_list_offsets_needs_describe(alice):
    request = req(ApiKey.LIST_OFFSETS, replica_id=-1, topics=[req(ApiKey.LIST_OFFSETS).ListOffsetsTopic(
        name="secret", partitions=[req(ApiKey.LIST_OFFSETS).ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    assert alice.request(ApiKey.LIST_OFFSETS, 5, request).topics[0].partitions[0].error_code == TOPIC_DENIED


def metadata(names, auto_create=False, **options):
    topics = None if names is None else [req(ApiKey.METADATA).MetadataRequestTopic(name=n) for n in names]
    return req(ApiKey.METADATA, topics=topics, allow_auto_topic_creation=auto_create, **options)


def test_metadata_hides_topics_the_caller_may_not_describe(alice, broker):
    listed = {t.name for t in alice.request(ApiKey.METADATA, 9, metadata(None)).topics}
    assert "secret" not in listed and {"open", "readable"} <= listed
    [secret] = alice.request(ApiKey.METADATA, 12, metadata(["secret"])).topics
    assert secret.error_code == TOPIC_DENIED and secret.partitions == []
    assert str(secret.topic_id) == "00000000-0000-0000-0000-000000000000"  # existence not disclosed
    [missing] = alice.request(ApiKey.METADATA, 9, metadata(["never-created"])).topics
    assert missing.error_code == TOPIC_DENIED  # no DESCRIBE: as if it were secret
    with WireAs(broker, "admin") as admin:
        grant(admin, ResourceType.TOPIC, "auto-", AclOperation.DESCRIBE, pattern=PatternType.PREFIXED)
    [auto] = alice.request(ApiKey.METADATA, 9, metadata(["auto-made"], auto_create=True)).topics
    assert auto.error_code == TOPIC_DENIED  # DESCRIBE but no CREATE: not auto-created
    [unknown] = alice.request(ApiKey.METADATA, 9, metadata(["auto-made"])).topics
    assert unknown.error_code == 3  # UNKNOWN_TOPIC_OR_PARTITION


def test_metadata_authorized_operations(alice):
    answer = alice.request(ApiKey.METADATA, 10, metadata(
        ["readable"], include_cluster_authorized_operations=True, include_topic_authorized_operations=True))
    assert answer.cluster_authorized_operations == 0  # no DESCRIBE on the cluster
    read_and_describe = (1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE)
    assert answer.topics[0].topic_authorized_operations == read_and_describe
    plain = alice.request(ApiKey.METADATA, 10, metadata(["readable"]))
    assert plain.topics[0].topic_authorized_operations == OPERATIONS_NOT_REQUESTED


def test_group_apis_need_read_on_the_group(alice):
    join = req(ApiKey.JOIN_GROUP, group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=10000, member_id="",
               protocol_type="consumer", protocols=[req(ApiKey.JOIN_GROUP).JoinGroupRequestProtocol(
                   name="range", metadata=b"")])
    assert alice.request(ApiKey.JOIN_GROUP, 7, join).error_code == GROUP_DENIED
    sync = req(ApiKey.SYNC_GROUP, group_id="g", generation_id=1, member_id="m", protocol_type="consumer",
               protocol_name="range", assignments=[])
    assert alice.request(ApiKey.SYNC_GROUP, 5, sync).error_code == GROUP_DENIED
    heartbeat = req(ApiKey.HEARTBEAT, group_id="g", generation_id=1, member_id="m")
    assert alice.request(ApiKey.HEARTBEAT, 4, heartbeat).error_code == GROUP_DENIED
    leave = req(ApiKey.LEAVE_GROUP, group_id="g", members=[req(ApiKey.LEAVE_GROUP).MemberIdentity(member_id="m")])
    assert alice.request(ApiKey.LEAVE_GROUP, 4, leave).error_code == GROUP_DENIED
    # with READ on the group the coordinator answers (here: a heartbeat from an unknown member)
    heartbeat.group_id = "open-group"
    assert alice.request(ApiKey.HEARTBEAT, 4, heartbeat).error_code not in (GROUP_DENIED, 0)


def commit(group, topic):
    return req(ApiKey.OFFSET_COMMIT, group_id=group, generation_id_or_member_epoch=-1, member_id="", topics=[
        req(ApiKey.OFFSET_COMMIT).OffsetCommitRequestTopic(name=topic, partitions=[
            req(ApiKey.OFFSET_COMMIT).OffsetCommitRequestPartition(partition_index=0, committed_offset=1)])])


def test_offset_commit_needs_read_on_group_and_topic(alice):
    answer = alice.request(ApiKey.OFFSET_COMMIT, 8, commit("g", "readable"))
    assert answer.topics[0].partitions[0].error_code == GROUP_DENIED
    answer = alice.request(ApiKey.OFFSET_COMMIT, 8, commit("open-group", "secret"))
    assert answer.topics[0].partitions[0].error_code == TOPIC_DENIED
    answer = alice.request(ApiKey.OFFSET_COMMIT, 8, commit("open-group", "readable"))
    assert answer.topics[0].partitions[0].error_code not in (GROUP_DENIED, TOPIC_DENIED)  # authorized


def test_offset_fetch_needs_describe_on_group_and_topic(alice):
    topics = [req(ApiKey.OFFSET_FETCH).OffsetFetchRequestTopic(name=t, partition_indexes=[0])
              for t in ("readable", "secret")]
    assert alice.request(ApiKey.OFFSET_FETCH, 7, req(ApiKey.OFFSET_FETCH, group_id="g", topics=topics)
                         ).error_code == GROUP_DENIED
    alice.request(ApiKey.FIND_COORDINATOR, 3, req(ApiKey.FIND_COORDINATOR, key_type=0, key="open-group"))
    for _ in range(100):  # until the group coordinator has loaded its partition
        answer = alice.request(ApiKey.OFFSET_FETCH, 7, req(ApiKey.OFFSET_FETCH, group_id="open-group", topics=topics))
        if answer.error_code not in (14, 15, 16):
            break
        time.sleep(0.1)
    errors = {t.name: t.partitions[0].error_code for t in answer.topics}
    assert answer.error_code == 0 and errors == {"readable": 0, "secret": TOPIC_DENIED}
    everything = alice.request(ApiKey.OFFSET_FETCH, 7, req(ApiKey.OFFSET_FETCH, group_id="open-group", topics=None))
    assert "secret" not in {t.name for t in everything.topics}


def test_find_coordinator(alice):
    group = alice.request(ApiKey.FIND_COORDINATOR, 4, req(ApiKey.FIND_COORDINATOR, key_type=0,
                                                          coordinator_keys=["g", "open-group"]))
    assert [c.error_code for c in group.coordinators] == [GROUP_DENIED, 0]
    txn = alice.request(ApiKey.FIND_COORDINATOR, 3, req(ApiKey.FIND_COORDINATOR, key_type=1, key="tx"))
    assert txn.error_code == TXN_DENIED


def test_group_administration(alice):
    described = alice.request(ApiKey.DESCRIBE_GROUPS, 5, req(ApiKey.DESCRIBE_GROUPS, groups=["g", "open-group"],
                                                            include_authorized_operations=True))
    assert [(g.group_id, g.error_code) for g in described.groups] == [("open-group", 0), ("g", GROUP_DENIED)]
    assert alice.request(ApiKey.DELETE_GROUPS, 2, req(ApiKey.DELETE_GROUPS, groups_names=["g"])
                         ).results[0].error_code == GROUP_DENIED
    listed = alice.request(ApiKey.LIST_GROUPS, 4, req(ApiKey.LIST_GROUPS))
    assert {g.group_id for g in listed.groups} <= {"open-group"}
    delete = req(ApiKey.OFFSET_DELETE, group_id="open-group", topics=[])
    assert alice.request(ApiKey.OFFSET_DELETE, 0, delete).error_code == GROUP_DENIED  # DELETE, not READ


def test_topic_administration(alice):
    create = req(ApiKey.CREATE_TOPICS, timeout_ms=5000, topics=[
        req(ApiKey.CREATE_TOPICS).CreatableTopic(name="new", num_partitions=1, replication_factor=1)])
    [created] = alice.request(ApiKey.CREATE_TOPICS, 5, create).topics
    assert (created.error_code, created.error_message) == (TOPIC_DENIED, "Authorization failed.")
    assert created.topic_config_error_code == TOPIC_DENIED
    delete = req(ApiKey.DELETE_TOPICS, topic_names=["secret"], timeout_ms=5000)
    assert alice.request(ApiKey.DELETE_TOPICS, 5, delete).responses[0].error_code == TOPIC_DENIED
    grow = req(ApiKey.CREATE_PARTITIONS, timeout_ms=5000, topics=[
        req(ApiKey.CREATE_PARTITIONS).CreatePartitionsTopic(name="readable", count=2)])
    assert alice.request(ApiKey.CREATE_PARTITIONS, 3, grow).results[0].error_code == TOPIC_DENIED
    records = req(ApiKey.DELETE_RECORDS, timeout_ms=5000, topics=[req(ApiKey.DELETE_RECORDS).DeleteRecordsTopic(
        name="readable", partitions=[req(ApiKey.DELETE_RECORDS).DeleteRecordsPartition(partition_index=0, offset=0)])])
    assert alice.request(ApiKey.DELETE_RECORDS, 2, records).topics[0].partitions[0].error_code == TOPIC_DENIED


def test_configs(alice):
    resources = [req(ApiKey.DESCRIBE_CONFIGS).DescribeConfigsResource(resource_type=t, resource_name=n)
                 for t, n in ((2, "secret"), (4, "0"), (2, "open"))]
    described = alice.request(ApiKey.DESCRIBE_CONFIGS, 4, req(ApiKey.DESCRIBE_CONFIGS, resources=resources))
    assert [(r.resource_name, r.error_code) for r in described.results] == [
        ("open", 0), ("secret", TOPIC_DENIED), ("0", CLUSTER_DENIED)]
    alter = req(ApiKey.ALTER_CONFIGS, resources=[
        req(ApiKey.ALTER_CONFIGS).AlterConfigsResource(resource_type=2, resource_name="readable", configs=[]),
        req(ApiKey.ALTER_CONFIGS).AlterConfigsResource(resource_type=4, resource_name="0", configs=[])])
    assert [r.error_code for r in alice.request(ApiKey.ALTER_CONFIGS, 2, alter).responses] == [
        TOPIC_DENIED, CLUSTER_DENIED]
    incremental = req(ApiKey.INCREMENTAL_ALTER_CONFIGS, resources=[
        req(ApiKey.INCREMENTAL_ALTER_CONFIGS).AlterConfigsResource(resource_type=8, resource_name="0", configs=[])])
    assert alice.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, incremental).responses[0].error_code == CLUSTER_DENIED


def test_producer_ids_and_transactions(alice):
    init = req(ApiKey.INIT_PRODUCER_ID, transactional_id="tx", transaction_timeout_ms=60000, producer_id=-1,
               producer_epoch=-1)
    assert alice.request(ApiKey.INIT_PRODUCER_ID, 4, init).error_code == TXN_DENIED
    init.transactional_id = None  # idempotent: WRITE on some topic suffices (alice has ALL on "open")
    assert alice.request(ApiKey.INIT_PRODUCER_ID, 4, init).error_code == 0
    add = req(ApiKey.ADD_PARTITIONS_TO_TXN, v3_and_below_transactional_id="tx", v3_and_below_producer_id=1,
              v3_and_below_producer_epoch=0, v3_and_below_topics=[
                  req(ApiKey.ADD_PARTITIONS_TO_TXN).AddPartitionsToTxnTopic(name="open", partitions=[0])])
    answer = alice.request(ApiKey.ADD_PARTITIONS_TO_TXN, 3, add)
    assert answer.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == TXN_DENIED
    verify = req(ApiKey.ADD_PARTITIONS_TO_TXN, transactions=[])
    assert alice.request(ApiKey.ADD_PARTITIONS_TO_TXN, 4, verify).error_code == CLUSTER_DENIED
    offsets = req(ApiKey.ADD_OFFSETS_TO_TXN, transactional_id="tx", producer_id=1, producer_epoch=0, group_id="g")
    assert alice.request(ApiKey.ADD_OFFSETS_TO_TXN, 3, offsets).error_code == TXN_DENIED
    end = req(ApiKey.END_TXN, transactional_id="tx", producer_id=1, producer_epoch=0, committed=True)
    assert alice.request(ApiKey.END_TXN, 3, end).error_code == TXN_DENIED
    txn_commit = req(ApiKey.TXN_OFFSET_COMMIT, transactional_id="tx", group_id="g", producer_id=1, producer_epoch=0,
                     topics=[req(ApiKey.TXN_OFFSET_COMMIT).TxnOffsetCommitRequestTopic(name="open", partitions=[
                         req(ApiKey.TXN_OFFSET_COMMIT).TxnOffsetCommitRequestPartition(partition_index=0)])])
    answer = alice.request(ApiKey.TXN_OFFSET_COMMIT, 3, txn_commit)
    assert answer.topics[0].partitions[0].error_code == TXN_DENIED
    described = alice.request(ApiKey.DESCRIBE_TRANSACTIONS, 0, req(ApiKey.DESCRIBE_TRANSACTIONS,
                                                                  transactional_ids=["tx"]))
    assert described.transaction_states[0].error_code == TXN_DENIED
    assert alice.request(ApiKey.LIST_TRANSACTIONS, 1, req(ApiKey.LIST_TRANSACTIONS)).transaction_states == []


def test_cluster_apis(alice):
    markers = req(ApiKey.WRITE_TXN_MARKERS, markers=[req(ApiKey.WRITE_TXN_MARKERS).WritableTxnMarker(
        producer_id=1, producer_epoch=0, transaction_result=True, coordinator_epoch=0, topics=[
            req(ApiKey.WRITE_TXN_MARKERS).WritableTxnMarkerTopic(name="open", partition_indexes=[0])])])
    answer = alice.request(ApiKey.WRITE_TXN_MARKERS, 1, markers)
    assert answer.markers[0].topics[0].partitions[0].error_code == CLUSTER_DENIED
    shutdown = req(ApiKey.CONTROLLED_SHUTDOWN, broker_id=0, broker_epoch=0)
    assert alice.request(ApiKey.CONTROLLED_SHUTDOWN, 3, shutdown).error_code == CLUSTER_DENIED
    elect = req(ApiKey.ELECT_LEADERS, election_type=0, topic_partitions=None, timeout_ms=5000)
    assert alice.request(ApiKey.ELECT_LEADERS, 2, elect).error_code == CLUSTER_DENIED
    assert alice.request(ApiKey.DESCRIBE_LOG_DIRS, 4, req(ApiKey.DESCRIBE_LOG_DIRS, topics=None)
                         ).error_code == CLUSTER_DENIED
    move = req(ApiKey.ALTER_REPLICA_LOG_DIRS, dirs=[req(ApiKey.ALTER_REPLICA_LOG_DIRS).AlterReplicaLogDir(
        path="/any", topics=[req(ApiKey.ALTER_REPLICA_LOG_DIRS).AlterReplicaLogDirTopic(name="open", partitions=[0])])])
    [moved] = alice.request(ApiKey.ALTER_REPLICA_LOG_DIRS, 2, move).results
    assert moved.partitions[0].error_code == CLUSTER_DENIED
    cluster = alice.request(ApiKey.DESCRIBE_CLUSTER, 1, req(ApiKey.DESCRIBE_CLUSTER,
                                                           include_cluster_authorized_operations=True))
    assert cluster.error_code == 0 and cluster.cluster_authorized_operations == 0


def test_partition_level_reads(alice):
    producers = req(ApiKey.DESCRIBE_PRODUCERS, topics=[req(ApiKey.DESCRIBE_PRODUCERS).TopicRequest(
        name="secret", partition_indexes=[0])])
    assert alice.request(ApiKey.DESCRIBE_PRODUCERS, 0, producers).topics[0].partitions[0].error_code == TOPIC_DENIED
    epochs = req(ApiKey.OFFSET_FOR_LEADER_EPOCH, replica_id=-1, topics=[
        req(ApiKey.OFFSET_FOR_LEADER_EPOCH).OffsetForLeaderTopic(topic="secret", partitions=[
            req(ApiKey.OFFSET_FOR_LEADER_EPOCH).OffsetForLeaderPartition(partition=0, leader_epoch=0)])])
    answer = alice.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, epochs)
    assert answer.topics[0].partitions[0].error_code == TOPIC_DENIED


def test_super_users_and_deny_over_allow(broker):
    with WireAs(broker, "admin") as admin, WireAs(broker, "carol") as carol:
        assert admin.request(ApiKey.PRODUCE, 9, produce("secret")).responses[0].partition_responses[0].error_code == 0
        grant(admin, ResourceType.TOPIC, "*", AclOperation.WRITE, principal="User:carol")
        grant(admin, ResourceType.TOPIC, "sec", AclOperation.WRITE, principal="User:carol",
              pattern=PatternType.PREFIXED, permission=AclPermissionType.DENY)
        assert carol.request(ApiKey.PRODUCE, 9, produce("open")).responses[0].partition_responses[0].error_code == 0
        answer = carol.request(ApiKey.PRODUCE, 9, produce("secret"))
        assert answer.responses[0].partition_responses[0].error_code == TOPIC_DENIED


def scram_upsertion(user, password=b"stolen"):
    upsertion = req(ApiKey.ALTER_USER_SCRAM_CREDENTIALS).ScramCredentialUpsertion(
        name=user, mechanism=2, iterations=8192, salt=b"salt", salted_password=password)
    return req(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, deletions=[], upsertions=[upsertion])


def describe_scram(*users):
    named = [req(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS).UserName(name=u) for u in users]
    return req(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, users=named)


def test_a_user_without_acls_can_neither_set_nor_read_anyones_scram_credentials(broker, alice):
    with WireAs(broker, "admin") as admin:
        before = admin.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, describe_scram())

        altered = alice.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, scram_upsertion("admin"))
        described = alice.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, describe_scram("admin", "bob"))

        assert [(r.user, r.error_code, r.error_message) for r in altered.results] == [
            ("admin", CLUSTER_DENIED, None)]  # no message: Kafka's ApiError leaves out the default one
        assert (described.error_code, described.error_message) == (CLUSTER_DENIED, None)
        assert [(r.user, r.error_code, r.credential_infos) for r in described.results] == [
            ("", CLUSTER_DENIED, []), ("", CLUSTER_DENIED, [])]
        assert admin.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, describe_scram()) == before


def test_scram_credentials_are_described_with_describe_and_altered_with_alter_on_the_cluster(broker):
    with WireAs(broker, "admin") as admin, WireAs(broker, "erin") as erin:
        grant(admin, ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE, principal="User:erin")
        refused = erin.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, scram_upsertion("erin-scram"))
        assert [(r.user, r.error_code) for r in refused.results] == [("erin-scram", CLUSTER_DENIED)]
        described = erin.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, describe_scram("erin-scram"))
        assert (described.error_code, described.results[0].error_code) == (0, 91)  # RESOURCE_NOT_FOUND

        grant(admin, ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER, principal="User:erin")
        altered = erin.request(ApiKey.ALTER_USER_SCRAM_CREDENTIALS, 0, scram_upsertion("erin-scram"))
        assert [(r.user, r.error_code) for r in altered.results] == [("erin-scram", 0)]
        described = erin.request(ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, 0, describe_scram("erin-scram"))
        assert [(r.user, r.error_code, [(c.mechanism, c.iterations) for c in r.credential_infos])
                for r in described.results] == [("erin-scram", 0, [(2, 8192)])]


SHARE_TOPIC_ID = uuid.UUID(int=7)


def share_state_request(api_key):
    """A one-partition request of a share-group state API (Initialize/Read/Write/Delete/Summary)."""
    cls = messages.request(api_key).cls
    topic_type = {ApiKey.INITIALIZE_SHARE_GROUP_STATE: "InitializeStateData",
                  ApiKey.READ_SHARE_GROUP_STATE: "ReadStateData",
                  ApiKey.WRITE_SHARE_GROUP_STATE: "WriteStateData",
                  ApiKey.DELETE_SHARE_GROUP_STATE: "DeleteStateData",
                  ApiKey.READ_SHARE_GROUP_STATE_SUMMARY: "ReadStateSummaryData"}[api_key]
    topic = getattr(cls, topic_type)(topic_id=SHARE_TOPIC_ID, partitions=[cls.PartitionData(partition=0)])
    return cls(group_id="share-group", topics=[topic])


@pytest.mark.parametrize("api_key", [ApiKey.INITIALIZE_SHARE_GROUP_STATE, ApiKey.READ_SHARE_GROUP_STATE,
                                     ApiKey.WRITE_SHARE_GROUP_STATE, ApiKey.DELETE_SHARE_GROUP_STATE,
                                     ApiKey.READ_SHARE_GROUP_STATE_SUMMARY])
def test_share_group_state_apis_need_cluster_action(alice, api_key):
    """Kafka 4 (KIP-932): brokers call each other's share coordinator with ClusterAction."""
    answer = alice.request(api_key, 0, share_state_request(api_key))
    assert [(p.partition, p.error_code) for r in answer.results for p in r.partitions] == [(0, CLUSTER_DENIED)]


def test_a_share_coordinator_lookup_needs_cluster_action(alice):
    answer = alice.request(ApiKey.FIND_COORDINATOR, 6, req(
        ApiKey.FIND_COORDINATOR, key_type=2, coordinator_keys=["share-group:AAAAAAAAAAAAAAAAAAAAAA:0"]))
    assert [c.error_code for c in answer.coordinators] == [CLUSTER_DENIED]
