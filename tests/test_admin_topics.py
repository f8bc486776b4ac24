"""Creating, deleting and growing topics: CreateTopics, DeleteTopics and CreatePartitions.

Real admin clients (kafka-python, confluent-kafka) for the paths they take, and the raw wire
client for versions and fields they do not reach. Expected codes and messages are Kafka 3.9's.
"""
import uuid

import pytest
from confluent_kafka import KafkaError as ConfluentError
from confluent_kafka.admin import AdminClient, NewPartitions as ConfluentNewPartitions, NewTopic as ConfluentNewTopic
from kafka import KafkaAdminClient

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.wire import WireClient

ZERO_UUID = uuid.UUID(int=0)
CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls
DeleteTopics = messages.request(ApiKey.DELETE_TOPICS).cls
CreatePartitions = messages.request(ApiKey.CREATE_PARTITIONS).cls
Metadata = messages.request(ApiKey.METADATA).cls


# --------------------------------------------------------------------------------------------
# Helpers

@pytest.fixture(scope="module")
def admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, client_id="admin-topics-test")
    yield client
    client.close()


@pytest.fixture(scope="module")
def confluent(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def request(broker, api_key, version, body):
    with WireClient(broker.bootstrap) as client:
        return client.request(api_key, version, body)


def new_topic(name, partitions=1, replication_factor=1, configs=None, assignments=None):
    return CreateTopics.CreatableTopic(
        name=name, num_partitions=partitions, replication_factor=replication_factor,
        assignments=[CreateTopics.CreatableReplicaAssignment(partition_index=index, broker_ids=replicas)
                     for index, replicas in (assignments or {}).items()],
        configs=[CreateTopics.CreatableTopicConfig(name=key, value=value) for key, value in (configs or {}).items()])


def create(broker, *topics, version=7, timeout_ms=30000, validate_only=False):
    body = CreateTopics(topics=list(topics), timeout_ms=timeout_ms, validate_only=validate_only)
    return request(broker, ApiKey.CREATE_TOPICS, version, body).topics


def create_one(broker, name, version=7, **kwargs):
    [result] = create(broker, new_topic(name, **kwargs), version=version)
    return result


def partition_count(broker, name):
    body = Metadata(topics=[Metadata.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    [topic] = request(broker, ApiKey.METADATA, 12, body).topics
    return len(topic.partitions) if topic.error_code == 0 else None


def topic_id(broker, name):
    body = Metadata(topics=[Metadata.MetadataRequestTopic(name=name)], allow_auto_topic_creation=False)
    return request(broker, ApiKey.METADATA, 12, body).topics[0].topic_id


def delete(broker, names=(), topics=(), version=6, timeout_ms=30000):
    if version < 6:
        body = DeleteTopics(topic_names=list(names), timeout_ms=timeout_ms)
    else:
        body = DeleteTopics(topics=[DeleteTopics.DeleteTopicState(name=name, topic_id=tid) for name, tid in topics]
                            + [DeleteTopics.DeleteTopicState(name=name) for name in names], timeout_ms=timeout_ms)
    return request(broker, ApiKey.DELETE_TOPICS, version, body).responses


def grow(broker, name, count, assignments=None, version=3, validate_only=False, timeout_ms=30000):
    topic = CreatePartitions.CreatePartitionsTopic(
        name=name, count=count,
        assignments=None if assignments is None else [
            CreatePartitions.CreatePartitionsAssignment(broker_ids=ids) for ids in assignments])
    body = CreatePartitions(topics=[topic], timeout_ms=timeout_ms, validate_only=validate_only)
    [result] = request(broker, ApiKey.CREATE_PARTITIONS, version, body).results
    return result


def outcome(result):
    return result.error_code, result.error_message


# --------------------------------------------------------------------------------------------
# CreateTopics

def test_kafka_python_creates_a_topic_and_gets_its_id_size_and_effective_configs(broker, admin):
    result = admin.create_topics({"kp-created": {"num_partitions": 3, "replication_factor": 1,
                                                 "configs": {"retention.ms": "1000"}}})
    [topic] = result["topics"]
    assert topic["error_code"] == 0 and topic["error_message"] is None
    assert (topic["num_partitions"], topic["replication_factor"]) == (3, 1)
    assert uuid.UUID(topic["topic_id"]) == topic_id(broker, "kp-created")
    assert topic["configs"]["retention.ms"]["value"] == "1000"
    assert topic["configs"]["retention.ms"]["config_source"] == "DYNAMIC_TOPIC_CONFIG"
    assert topic["configs"]["cleanup.policy"] == {"value": "delete", "read_only": False,
                                                  "config_source": "DEFAULT_CONFIG", "is_sensitive": False}
    assert partition_count(broker, "kp-created") == 3


def test_confluent_creates_topics_and_reports_those_that_exist(broker, confluent):
    futures = confluent.create_topics([ConfluentNewTopic("ck-created", 2, 1, config={"cleanup.policy": "compact"})])
    assert futures["ck-created"].result(timeout=10) is None
    assert partition_count(broker, "ck-created") == 2
    again = confluent.create_topics([ConfluentNewTopic("ck-created", 2, 1)])["ck-created"].exception(timeout=10)
    assert again.args[0].code() == ConfluentError.TOPIC_ALREADY_EXISTS
    assert again.args[0].str() == "Topic 'ck-created' already exists."


def test_minus_one_takes_num_partitions_and_default_replication_factor(tmp_path):
    with EmbeddedBroker({"num.partitions": "4"}, directory=tmp_path) as broker:
        result = create_one(broker, "defaults", partitions=-1, replication_factor=-1)
        assert outcome(result) == (0, None)
        assert (result.num_partitions, result.replication_factor) == (4, 1)
        assert partition_count(broker, "defaults") == 4


def test_an_existing_topic_is_not_created_again(broker):
    create_one(broker, "exists-already")
    result = create_one(broker, "exists-already")
    assert outcome(result) == (36, "Topic 'exists-already' already exists.")  # TOPIC_ALREADY_EXISTS
    assert (result.topic_id, result.num_partitions, result.replication_factor, result.configs) == (ZERO_UUID, -1, -1, [])


@pytest.mark.parametrize("name, message", [  # Kafka 3.9.0's words in ZooKeeper mode
    ("bad/name", "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII "
                 "alphanumerics, '.', '_' and '-'"),
    ("", "Topic name is invalid: the empty string is not allowed"),
    ("..", "Topic name is invalid: '..' is not allowed"),
    ("x" * 250, f"Topic name is invalid: the length of '{'x' * 250}' is longer than the max allowed length 249"),
])
def test_illegal_topic_names_are_refused(broker, name, message):
    assert outcome(create_one(broker, name)) == (17, message)  # INVALID_TOPIC_EXCEPTION


def test_names_that_differ_only_in_dot_and_underscore_collide(broker):
    create_one(broker, "metrics.clicks")
    assert outcome(create_one(broker, "metrics_clicks")) == (
        17, "Topic 'metrics_clicks' collides with existing topics: metrics.clicks")


@pytest.mark.parametrize("configs, message", [
    ({"no.such.config": "1"}, "Unknown topic config name: no.such.config"),
    ({"retention.ms": "soon"}, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
    ({"cleanup.policy": "forever"}, "Invalid value forever for configuration cleanup.policy: "
                                    "String must be one of: compact, delete"),
    ({"retention.ms": None}, "Null value not supported for topic configs: retention.ms"),
    ({"remote.storage.enable": "true"}, "Tiered Storage functionality is disabled in the broker. "
                                        "Topic cannot be configured with remote log storage."),
])
def test_invalid_topic_configs_are_refused_with_invalid_config(broker, configs, message):
    result = create_one(broker, "bad-config", configs=configs)
    assert outcome(result) == (40, message)  # INVALID_CONFIG
    assert partition_count(broker, "bad-config") is None


@pytest.mark.parametrize("partitions, replication_factor, code, message", [
    (1, 0, 38, "Replication factor must be larger than 0."),
    (1, -2, 38, "Replication factor must be larger than 0."),
    (1, 3, 38, "Replication factor: 3 larger than available brokers: 1."),
    (0, 1, 37, "Number of partitions must be larger than 0."),
    (-5, 1, 37, "Number of partitions must be larger than 0."),
])
def test_partition_counts_and_replication_factors_are_checked(broker, partitions, replication_factor, code, message):
    result = create_one(broker, "bad-size", partitions=partitions, replication_factor=replication_factor)
    assert outcome(result) == (code, message)


def test_replica_assignments_chosen_by_the_client_create_the_partitions(broker):
    result = create_one(broker, "assigned", partitions=-1, replication_factor=-1, assignments={1: [0], 0: [0]})
    assert outcome(result) == (0, None)
    assert (result.num_partitions, result.replication_factor) == (2, 1)
    assert partition_count(broker, "assigned") == 2


@pytest.mark.parametrize("partitions, replication_factor, assignments, code, message", [
    (-1, 1, {0: [0]}, 42, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."),
    (1, -1, {0: [0]}, 42, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."),
    (-1, -1, {0: [7]}, 39, "The manual partition assignment includes broker 7, but no such broker is registered."),
    (-1, -1, {0: [0, 0]}, 39, "Duplicate replica assignment found: HashMap(0 -> ArrayBuffer(0, 0))"),
    (-1, -1, {0: []}, 39, "The manual partition assignment includes an empty replica list."),
    (-1, -1, {0: [0], 2: [0]}, 39, "partitions should be a consecutive 0-based integer sequence"),
])
def test_bad_replica_assignments_are_refused(broker, partitions, replication_factor, assignments, code, message):
    result = create_one(broker, "badly-assigned", partitions=partitions, replication_factor=replication_factor,
                        assignments=assignments)
    assert outcome(result) == (code, message)


def test_the_same_partition_assigned_twice_is_refused(broker):
    topic = new_topic("twice-assigned", -1, -1)
    topic.assignments = [CreateTopics.CreatableReplicaAssignment(partition_index=0, broker_ids=[0])] * 2
    [result] = create(broker, topic)
    assert outcome(result) == (39, "Found multiple manual partition assignments for partition 0")


def test_validate_only_checks_without_creating(broker):
    [result] = create(broker, new_topic("only-validated", 2, configs={"retention.ms": "5"}), validate_only=True)
    assert outcome(result) == (0, None)
    assert result.topic_id != ZERO_UUID and result.num_partitions == 2
    assert {c.name: c.value for c in result.configs}["retention.ms"] == "5"
    assert partition_count(broker, "only-validated") is None
    [refused] = create(broker, new_topic("only-validated", 0), validate_only=True)
    assert refused.error_code == 37


def test_kafka_python_validate_only_creates_nothing(broker, admin):
    result = admin.create_topics({"kp-validated": {"num_partitions": 1}}, validate_only=True)
    assert result["topics"][0]["error_code"] == 0
    assert partition_count(broker, "kp-validated") is None


def test_a_name_given_twice_fails_once_with_invalid_request(broker):
    results = create(broker, new_topic("given-twice"), new_topic("given-twice"), new_topic("given-once"))
    assert [(r.name, r.error_code, r.error_message) for r in results] == [
        ("given-once", 0, None), ("given-twice", 42, "Duplicate topic name.")]
    assert partition_count(broker, "given-twice") is None


def test_the_cluster_metadata_topic_cannot_be_created(broker):
    assert outcome(create_one(broker, "__cluster_metadata")) == (29, "Authorization failed.")


def test_a_timeout_of_zero_times_out_and_creates_nothing(broker):
    results = create(broker, new_topic("no-time"), new_topic("no-time-either"), timeout_ms=0)
    assert [outcome(r) for r in results] == [(7, None), (7, None)]  # REQUEST_TIMED_OUT
    assert partition_count(broker, "no-time") is None


@pytest.mark.parametrize("version", range(0, 8))
def test_every_version_creates_and_reports_what_it_can_carry(broker, version):
    name = f"versioned-{version}"
    [result] = create(broker, new_topic(name, 2, configs={"retention.ms": "7"}), version=version)
    assert result.error_code == 0
    assert partition_count(broker, name) == 2
    if version >= 5:
        assert (result.num_partitions, result.replication_factor) == (2, 1)
        assert ("retention.ms", "7", 1) in {(c.name, c.value, c.config_source) for c in result.configs}
    else:
        assert result.num_partitions == -1 and result.configs == []
    assert (result.topic_id != ZERO_UUID) == (version >= 7)
    [again] = create(broker, new_topic(name), version=version)
    assert again.error_code == 36
    if version >= 1:  # v0 has no message field
        assert again.error_message == f"Topic '{name}' already exists."


# --------------------------------------------------------------------------------------------
# DeleteTopics

def test_kafka_python_deletes_topics_by_name_and_by_id(broker, admin):
    create_one(broker, "kp-deleted-by-name")
    create_one(broker, "kp-deleted-by-id")
    by_id = topic_id(broker, "kp-deleted-by-id")
    result = admin.delete_topics(["kp-deleted-by-name", by_id])
    assert sorted((t["name"], t["error_code"]) for t in result["topics"]) == [
        ("kp-deleted-by-id", 0), ("kp-deleted-by-name", 0)]
    assert partition_count(broker, "kp-deleted-by-name") is None
    assert partition_count(broker, "kp-deleted-by-id") is None


def test_confluent_deletes_topics_and_reports_unknown_ones(broker, confluent):
    create_one(broker, "ck-deleted")
    futures = confluent.delete_topics(["ck-deleted", "ck-never-made"], operation_timeout=10)
    assert futures["ck-deleted"].result(timeout=10) is None
    assert futures["ck-never-made"].exception(timeout=10).args[0].code() == ConfluentError.UNKNOWN_TOPIC_OR_PART
    assert partition_count(broker, "ck-deleted") is None


def test_deleting_by_id_answers_with_the_name_and_the_id(broker):
    create_one(broker, "deleted-by-id")
    tid = topic_id(broker, "deleted-by-id")
    [result] = delete(broker, topics=[(None, tid)])
    assert (result.name, result.topic_id, result.error_code, result.error_message) == ("deleted-by-id", tid, 0, None)


def test_unknown_names_and_ids_are_reported_without_a_message_as_kafka_does(broker):
    unknown_id = uuid.uuid4()
    results = delete(broker, names=["never-made"], topics=[(None, unknown_id)])
    assert sorted((r.name or "", r.topic_id, r.error_code, r.error_message) for r in results) == [
        ("", unknown_id, 100, None),  # UNKNOWN_TOPIC_ID
        ("never-made", ZERO_UUID, 3, None)]  # UNKNOWN_TOPIC_OR_PARTITION


def test_malformed_entries_fail_alone(broker):
    create_one(broker, "survives-bad-neighbours")
    tid = uuid.uuid4()
    results = delete(broker, names=["twice", "twice", "survives-bad-neighbours"],
                     topics=[(None, ZERO_UUID), ("both", tid)])
    assert sorted((r.name or "", r.error_code, r.error_message) for r in results) == [
        ("", 42, "Neither topic name nor id were specified."),
        ("both", 42, "You may not specify both topic name and topic id."),
        ("survives-bad-neighbours", 0, None),
        ("twice", 42, "Duplicate topic name.")]


def test_a_name_and_the_id_of_the_same_topic_is_refused(broker):
    create_one(broker, "named-and-identified")
    tid = topic_id(broker, "named-and-identified")
    results = delete(broker, names=["named-and-identified"], topics=[(None, tid)])
    assert [(r.name, r.topic_id, r.error_code, r.error_message) for r in results] == [
        ("named-and-identified", tid, 42, "The provided topic name maps to an ID that was already supplied.")]
    assert partition_count(broker, "named-and-identified") == 1


@pytest.mark.parametrize("version", range(0, 7))
def test_every_version_deletes_and_reports_unknown_topics(broker, version):
    name = f"deleted-v{version}"
    create_one(broker, name)
    results = delete(broker, names=[name, "not-there"], version=version)
    assert sorted((r.name, r.error_code) for r in results) == [(name, 0), ("not-there", 3)]
    if version >= 5:  # earlier versions have no message field
        unknown = next(r for r in results if r.name == "not-there")
        assert unknown.error_message is None  # Kafka 3.9 sets no message
    assert partition_count(broker, name) is None


def test_a_timeout_of_zero_times_out_and_deletes_nothing(broker):
    create_one(broker, "kept-by-timeout")
    [result] = delete(broker, names=["kept-by-timeout"], timeout_ms=0)
    assert outcome(result) == (7, None)
    assert partition_count(broker, "kept-by-timeout") == 1


@pytest.fixture(scope="module")
def deletion_disabled(tmp_path_factory):
    """A broker with delete.topic.enable=false (each test refused on a topic of its own)."""
    with BrokerProcess(tmp_path_factory.mktemp("deletion-disabled"), {"delete.topic.enable": "false"}) as running:
        yield running


@pytest.mark.parametrize("version, code", [(0, 42), (2, 42), (3, 73), (6, 73)])  # TOPIC_DELETION_DISABLED
def test_disabled_deletion_refuses_every_topic(deletion_disabled, version, code):
    name = f"undeletable-v{version}"
    create_one(deletion_disabled, name)
    [result] = delete(deletion_disabled, names=[name], version=version)
    assert (result.name, result.error_code, result.error_message) == (name, code, None)
    assert partition_count(deletion_disabled, name) == 1


# --------------------------------------------------------------------------------------------
# CreatePartitions

def test_kafka_python_adds_partitions(broker, admin):
    create_one(broker, "kp-grown")
    response = admin.create_partitions({"kp-grown": 4})
    assert [(r.name, r.error_code) for r in response.results] == [("kp-grown", 0)]
    assert partition_count(broker, "kp-grown") == 4


def test_metadata_answers_a_topic_as_it_is_after_it_grew(broker, admin):
    create_one(broker, "described-then-grown")
    assert partition_count(broker, "described-then-grown") == 1  # the broker keeps this answer...
    admin.create_partitions({"described-then-grown": 3})
    assert partition_count(broker, "described-then-grown") == 3  # ...until the topic changes


def test_confluent_adds_partitions_and_reports_a_decrease(broker, confluent):
    create_one(broker, "ck-grown", partitions=2)
    assert confluent.create_partitions([ConfluentNewPartitions("ck-grown", 3)])["ck-grown"].result(timeout=10) is None
    error = confluent.create_partitions([ConfluentNewPartitions("ck-grown", 1)])["ck-grown"].exception(timeout=10)
    assert error.args[0].code() == ConfluentError.INVALID_PARTITIONS
    assert error.args[0].str() == "Topic currently has 3 partitions, which is higher than the requested 1."
    assert partition_count(broker, "ck-grown") == 3


@pytest.mark.parametrize("count, message", [
    (3, "Topic already has 3 partitions."),
    (2, "Topic currently has 3 partitions, which is higher than the requested 2."),
    (-22, "Topic currently has 3 partitions, which is higher than the requested -22."),
])
def test_the_count_must_grow(broker, count, message):
    create_one(broker, "same-or-less", partitions=3)
    assert outcome(grow(broker, "same-or-less", count)) == (37, message)  # INVALID_PARTITIONS


def test_an_unknown_topic_cannot_grow(broker):
    assert outcome(grow(broker, "no-such-topic", 2)) == (3, "The topic 'no-such-topic' does not exist.")


def test_assignments_place_the_new_partitions(broker):
    create_one(broker, "grown-by-hand")
    assert outcome(grow(broker, "grown-by-hand", 3, assignments=[[0], [0]])) == (0, None)
    assert partition_count(broker, "grown-by-hand") == 3


@pytest.mark.parametrize("assignments, message", [
    ([[0]], "Increasing the number of partitions by 2 but 1 assignments provided."),
    ([], "Increasing the number of partitions by 2 but 0 assignments provided."),
    ([[0], [12]], "The manual partition assignment includes broker 12, but no such broker is registered."),
    ([[0], [0, 0]], "The manual partition assignment includes the broker 0 more than once."),
])
def test_bad_assignments_are_refused(broker, assignments, message):
    create_one(broker, "grown-badly")
    assert outcome(grow(broker, "grown-badly", 3, assignments=assignments)) == (39, message)
    assert partition_count(broker, "grown-badly") == 1


def test_validate_only_does_not_grow_the_topic(broker):
    create_one(broker, "grown-in-theory")
    assert outcome(grow(broker, "grown-in-theory", 5, validate_only=True)) == (0, None)
    assert partition_count(broker, "grown-in-theory") == 1


def test_a_topic_named_twice_fails_with_invalid_request(broker):
    create_one(broker, "grown-twice")
    topic = CreatePartitions.CreatePartitionsTopic(name="grown-twice", count=2, assignments=None)
    body = CreatePartitions(topics=[topic, topic], timeout_ms=30000, validate_only=False)
    results = request(broker, ApiKey.CREATE_PARTITIONS, 3, body).results
    assert [(r.name, r.error_code, r.error_message) for r in results] == [
        ("grown-twice", 42, "Duplicate topic name.")]


def test_a_timeout_of_zero_times_out_and_adds_nothing(broker):
    create_one(broker, "grown-too-late")
    assert outcome(grow(broker, "grown-too-late", 2, timeout_ms=0)) == (7, None)
    assert partition_count(broker, "grown-too-late") == 1


@pytest.mark.parametrize("version", range(0, 4))
def test_every_version_adds_partitions(broker, version):
    create_one(broker, f"grown-v{version}")
    assert outcome(grow(broker, f"grown-v{version}", 2, version=version)) == (0, None)
    assert partition_count(broker, f"grown-v{version}") == 2


# --------------------------------------------------------------------------------------------
# Internal topics and persistence

def test_internal_topics_are_created_and_deleted_like_any_other(tmp_path):
    with EmbeddedBroker(directory=tmp_path) as broker:  # a broker that has no internal topic yet
        assert outcome(create_one(broker, "__transaction_state")) == (0, None)
        body = Metadata(topics=[Metadata.MetadataRequestTopic(name="__transaction_state")],
                        allow_auto_topic_creation=False)
        assert request(broker, ApiKey.METADATA, 12, body).topics[0].is_internal
        [result] = delete(broker, names=["__transaction_state"])
        assert outcome(result) == (0, None)


def test_created_grown_and_deleted_topics_stay_so_across_a_restart(fresh_broker):
    create_one(fresh_broker, "kept-topic", partitions=2, configs={"retention.ms": "1000"})
    create_one(fresh_broker, "gone-topic")
    kept_id = topic_id(fresh_broker, "kept-topic")
    assert outcome(grow(fresh_broker, "kept-topic", 3)) == (0, None)
    assert outcome(delete(fresh_broker, names=["gone-topic"])[0]) == (0, None)
    fresh_broker.stop()
    fresh_broker.start()
    assert (partition_count(fresh_broker, "kept-topic"), topic_id(fresh_broker, "kept-topic")) == (3, kept_id)
    assert partition_count(fresh_broker, "gone-topic") is None
    assert create_one(fresh_broker, "kept-topic").error_code == 36
