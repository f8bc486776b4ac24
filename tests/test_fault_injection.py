"""Injected faults exercise clients' retry and failover paths: a broker told (through the admin
request, the `pykbroker.fault.injection` broker config key) to answer chosen requests with an
error, late, or not at all, or to pause a partition's fetches, is retried through by librdkafka
and the Java client with nothing lost and nothing duplicated.

One broker serves the module; each test uses topics of its own and clears the faults it added.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic, ResourceType

from compat import java
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.process import BrokerProcess
from pykbroker.tools import faults as faults_tool
from pykbroker.testkit.wire import WireClient

FAULT_KEY = "pykbroker.fault.injection"
ListOffsets = messages.request(ApiKey.LIST_OFFSETS).cls
Produce = messages.request(ApiKey.PRODUCE).cls
Fetch = messages.request(ApiKey.FETCH).cls
Metadata = messages.request(ApiKey.METADATA).cls
IncrementalAlterConfigs = messages.request(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls
AlterConfigs = messages.request(ApiKey.ALTER_CONFIGS).cls


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("faults-broker"), {"group.initial.rebalance.delay.ms": "0"}) as running:
        yield running


@pytest.fixture(scope="module")
def admin(broker):
    return AdminClient({"bootstrap.servers": broker.bootstrap})


@pytest.fixture
def topic(request, admin):
    """A topic of the test's own with three partitions; the faults are cleared afterwards."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name).strip("-")[:200]
    admin.create_topics([NewTopic(name, 3, 1)])[name].result()
    yield name
    clear_faults(admin)


# -- the admin request ---------------------------------------------------------------------------


def alter(admin, operation: str, value: str | None, broker_id: str = "0", key: str = FAULT_KEY) -> None:
    entry = ConfigEntry(key, value, incremental_operation=getattr(AlterConfigOpType, operation))
    resource = ConfigResource(ResourceType.BROKER, broker_id, incremental_configs=[entry])
    admin.incremental_alter_configs([resource])[resource].result()


def faults(admin) -> list[dict]:
    resource = ConfigResource(ResourceType.BROKER, "0")
    entry = admin.describe_configs([resource])[resource].result().get(FAULT_KEY)
    return json.loads(entry.value) if entry is not None else []


def add_fault(admin, **rule) -> int:
    before = {fault["id"] for fault in faults(admin)}
    alter(admin, "APPEND", json.dumps(rule))
    return max(fault["id"] for fault in faults(admin) if fault["id"] not in before)


def remove_fault(admin, fault_id: int) -> None:
    alter(admin, "SUBTRACT", str(fault_id))


def clear_faults(admin) -> None:
    alter(admin, "DELETE", None)


def fired(admin, fault_id: int) -> int | None:
    """How often a fault fired; None once it is gone."""
    return next((fault["fired"] for fault in faults(admin) if fault["id"] == fault_id), None)


# -- clients -------------------------------------------------------------------------------------


def produce(bootstrap: str, topic: str, values: list[str], partition: int = 0, **config) -> list[tuple]:
    """Send with an idempotent producer; (error, offset) of each record, in order."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5, **config})
    results: list = [None] * len(values)

    def on_delivery(index):
        return lambda error, message: results.__setitem__(index, (error, message.offset()))

    for index, value in enumerate(values):
        producer.produce(topic, value=value.encode(), partition=partition, on_delivery=on_delivery(index))
    assert producer.flush(60) == 0
    return results


def read_partition(bootstrap: str, topic: str, partition: int = 0, **config) -> list[str]:
    """Every value of the partition, read until its end."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.partition.eof": True, **config})
    consumer.assign([TopicPartition(topic, partition, 0)])
    values = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            if message.error() is not None:
                if message.error().code() == -191:  # _PARTITION_EOF
                    return values
                continue
            values.append(message.value().decode())
        raise AssertionError(f"{topic}-{partition} not read to its end: {values}")
    finally:
        consumer.close()


def list_offsets(bootstrap: str, topic: str, partitions: list[int], client_id: str) -> dict[int, int]:
    """{partition: error code} of a ListOffsets (v7, latest offsets) sent as `client_id`."""
    latest = [ListOffsets.ListOffsetsPartition(partition_index=p, timestamp=-1) for p in partitions]
    body = ListOffsets(
        replica_id=-1, isolation_level=0, topics=[ListOffsets.ListOffsetsTopic(name=topic, partitions=latest)]
    )
    with WireClient(bootstrap) as client:
        client.send(ApiKey.LIST_OFFSETS, 7, body, client_id=client_id)
        _, response = client.receive(ApiKey.LIST_OFFSETS, 7)
    return {p.partition_index: p.error_code for t in response.topics for p in t.partitions}


def metadata_request() -> object:
    return Metadata(topics=[], allow_auto_topic_creation=False)


# -- the acceptance: NOT_LEADER_OR_FOLLOWER on Produce, three times ------------------------------


def test_librdkafka_retries_through_three_not_leader_errors_with_nothing_lost_or_duplicated(broker, admin, topic):
    fault_id = add_fault(admin, api="Produce", topic=topic, error="NOT_LEADER_OR_FOLLOWER", count=3)

    results = produce(broker.bootstrap, topic, [f"value-{i}" for i in range(50)])

    assert [error for error, _ in results] == [None] * 50
    assert [offset for _, offset in results] == list(range(50))
    assert read_partition(broker.bootstrap, topic) == [f"value-{i}" for i in range(50)]
    assert fired(admin, fault_id) is None  # spent after three firings, and removed
    log = broker.log_text()
    assert f"Fault {fault_id} added" in log and f"Fault {fault_id} fired on Produce" in log
    assert f"Fault {fault_id} removed after firing 3 time(s)" in log


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory):
    return java.compile_sources([Path(__file__).parent / "java" / "FaultRetry.java"], tmp_path_factory.mktemp("java"))


def test_the_java_client_retries_through_three_not_leader_errors_with_nothing_lost_or_duplicated(
    broker, admin, topic, java_classes
):
    fault_id = add_fault(admin, api="Produce", topic=topic, error="NOT_LEADER_OR_FOLLOWER", count=3)

    result = java.run_main(java_classes, "FaultRetry", broker.bootstrap, topic, "40")

    assert "PASS" in result.stdout, result.stdout + java.without_logging_noise(result.stderr)
    assert fired(admin, fault_id) is None
    assert f"Fault {fault_id} removed after firing 3 time(s)" in broker.log_text()


# -- what a fault does ----------------------------------------------------------------------------


def test_an_error_hits_only_the_matching_partition_and_client(broker, admin, topic):
    add_fault(admin, api="ListOffsets", topic=topic, partition=1, client_id="victim", error="LEADER_NOT_AVAILABLE")

    assert list_offsets(broker.bootstrap, topic, [0, 1, 2], "victim") == {
        0: ErrorCode.NONE,
        1: ErrorCode.LEADER_NOT_AVAILABLE,
        2: ErrorCode.NONE,
    }
    assert set(list_offsets(broker.bootstrap, topic, [0, 1, 2], "bystander").values()) == {ErrorCode.NONE}


def test_a_produce_error_on_one_partition_writes_the_others(broker, admin, topic):
    add_fault(admin, api="Produce", topic=topic, partition=1, error="NOT_ENOUGH_REPLICAS", count=1)
    batch = _one_record_batch()
    both = [Produce.PartitionProduceData(index=p, records=batch) for p in (0, 1)]
    data = [Produce.TopicProduceData(name=topic, partition_data=both)]
    body = Produce(transactional_id=None, acks=1, timeout_ms=5000, topic_data=data)
    with WireClient(broker.bootstrap) as client:
        client.send(ApiKey.PRODUCE, 9, body)
        _, response = client.receive(ApiKey.PRODUCE, 9)

    errors = {p.index: (p.error_code, p.base_offset) for t in response.responses for p in t.partition_responses}
    assert errors == {0: (ErrorCode.NONE, 0), 1: (ErrorCode.NOT_ENOUGH_REPLICAS, -1)}
    assert read_partition(broker.bootstrap, topic, 0) == ["v"]
    assert read_partition(broker.bootstrap, topic, 1) == []


def test_an_api_without_partitions_gets_its_top_level_error_and_clients_retry(broker, admin, topic):
    """librdkafka retries InitProducerId on COORDINATOR_LOAD_IN_PROGRESS and FindCoordinator on
    COORDINATOR_NOT_AVAILABLE: a group member joins once it finds its coordinator."""
    init = add_fault(admin, api="InitProducerId", error="COORDINATOR_LOAD_IN_PROGRESS", count=2)
    results = produce(broker.bootstrap, topic, ["a", "b"])
    assert [error for error, _ in results] == [None, None]
    assert fired(admin, init) is None

    find = add_fault(admin, api="FindCoordinator", error="COORDINATOR_NOT_AVAILABLE", count=2)
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": f"{topic}-group", "auto.offset.reset": "earliest"}
    )
    consumer.subscribe([topic])
    try:
        assert sorted(_poll_values(consumer, until=lambda values: len(values) == 2)) == ["a", "b"]
    finally:
        consumer.close()
    assert fired(admin, find) is None


def test_latency_delays_only_the_matching_connection(broker, admin, topic):
    add_fault(admin, api="Metadata", client_id="slow", latency_ms=2000)
    with WireClient(broker.bootstrap) as slow, WireClient(broker.bootstrap) as fast:
        slow.send(ApiKey.METADATA, 9, metadata_request(), client_id="slow")
        fast.send(ApiKey.METADATA, 9, metadata_request(), client_id="fast")
        fast.receive(ApiKey.METADATA, 9)  # answered while the slow one waits
        assert not _has_data(slow)
        _, response = slow.receive(ApiKey.METADATA, 9)  # answered later, whole
    assert response.brokers


def test_a_dropped_connection_closes_without_a_response_after_serving_the_request(broker, admin, topic):
    add_fault(admin, api="Metadata", client_id="dropped", drop_connection=True, count=1)
    with WireClient(broker.bootstrap) as client:
        client.send(ApiKey.METADATA, 9, metadata_request(), client_id="dropped")
        assert client.is_closed_by_peer()
    with WireClient(broker.bootstrap) as client:  # spent: the next connection is served
        client.send(ApiKey.METADATA, 9, metadata_request(), client_id="dropped")
        assert client.receive(ApiKey.METADATA, 9)[1].brokers


def test_an_idempotent_producer_whose_connection_drops_after_a_write_retries_without_duplicates(broker, admin, topic):
    fault_id = add_fault(admin, api="Produce", topic=topic, drop_connection=True, count=2)

    results = produce(broker.bootstrap, topic, [f"value-{i}" for i in range(20)])

    assert [error for error, _ in results] == [None] * 20
    assert read_partition(broker.bootstrap, topic) == [f"value-{i}" for i in range(20)]
    assert fired(admin, fault_id) is None


def test_a_consumer_retries_through_fetch_errors(broker, admin, topic):
    produce(broker.bootstrap, topic, ["a", "b", "c"])
    fault_id = add_fault(admin, api="Fetch", topic=topic, partition=0, error="NOT_LEADER_OR_FOLLOWER", count=3)

    assert read_partition(broker.bootstrap, topic) == ["a", "b", "c"]
    assert fired(admin, fault_id) is None


def test_a_paused_partition_returns_no_records_until_the_fault_is_removed(broker, admin, topic):
    produce(broker.bootstrap, topic, ["p0-a", "p0-b"], partition=0)
    produce(broker.bootstrap, topic, ["p1-a"], partition=1)
    fault_id = add_fault(admin, topic=topic, partition=0, pause_fetch=True)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused", "fetch.wait.max.ms": 100})
    consumer.assign([TopicPartition(topic, 0, 0), TopicPartition(topic, 1, 0)])
    try:
        seen = _poll_values(consumer, until=lambda values: "p1-a" in values)
        deadline = time.monotonic() + 20
        while fired(admin, fault_id) < 5:  # fetches of partition 0 keep coming back empty
            assert time.monotonic() < deadline, "the consumer stopped fetching the paused partition"
            seen += _poll_values(consumer, until=lambda values: False, timeout=0.2)
        assert seen == ["p1-a"]

        remove_fault(admin, fault_id)
        seen += _poll_values(consumer, until=lambda values: len(values) == 2)
        assert seen == ["p1-a", "p0-a", "p0-b"]
    finally:
        consumer.close()


def test_a_paused_partition_still_reports_its_offsets(broker, admin, topic):
    produce(broker.bootstrap, topic, ["a", "b"])
    add_fault(admin, topic=topic, partition=0, pause_fetch=True)
    topic_id = next(t.topic_id for t in _metadata(broker).topics if t.name == topic)
    wanted = [Fetch.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)]
    body = Fetch(
        replica_id=-1,
        max_wait_ms=100,
        min_bytes=1,
        max_bytes=1 << 20,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=[Fetch.FetchTopic(topic=topic, topic_id=topic_id, partitions=wanted)],
        forgotten_topics_data=[],
        rack_id="",
    )
    with WireClient(broker.bootstrap) as client:
        client.send(ApiKey.FETCH, 13, body)
        _, response = client.receive(ApiKey.FETCH, 13)
    [partition] = response.responses[0].partitions
    assert (partition.error_code, partition.high_watermark, bytes(partition.records or b"")) == (0, 2, b"")


# -- probability, matching, removal ----------------------------------------------------------------


def test_a_fault_with_a_probability_fires_on_some_requests_only(broker, admin, topic):
    rule = {"topic": topic, "client_id": "dice", "error": "LEADER_NOT_AVAILABLE", "probability": 0.5}
    fault_id = add_fault(admin, api="ListOffsets", **rule)
    outcomes = [list_offsets(broker.bootstrap, topic, [0], "dice")[0] for _ in range(60)]

    failures = outcomes.count(ErrorCode.LEADER_NOT_AVAILABLE)
    assert 0 < failures < 60  # each side has probability 2**-60 of never showing
    assert fired(admin, fault_id) == failures


def test_a_removed_fault_stops_firing(broker, admin, topic):
    fault_id = add_fault(admin, api="ListOffsets", topic=topic, error="LEADER_NOT_AVAILABLE")
    assert list_offsets(broker.bootstrap, topic, [0], "c")[0] == ErrorCode.LEADER_NOT_AVAILABLE

    remove_fault(admin, fault_id)

    assert list_offsets(broker.bootstrap, topic, [0], "c")[0] == ErrorCode.NONE
    assert faults(admin) == []
    assert f"Fault {fault_id} removed after firing 1 time(s)" in broker.log_text()


def test_the_admin_request_lists_sets_and_clears_faults(broker, admin, topic):
    alter(admin, "SET", json.dumps([{"api": "Produce", "error": 6, "count": 2}, {"api": 3, "latency_ms": 10}]))
    listed = faults(admin)
    assert [fault["rule"] for fault in listed] == [
        {"api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER", "count": 2},
        {"api": "Metadata", "latency_ms": 10},
    ]
    assert all(fault["fired"] == 0 for fault in listed)

    clear_faults(admin)

    assert faults(admin) == []


@pytest.mark.parametrize(
    "operation, value, error",
    [
        ("APPEND", "{not json", "INVALID_CONFIG"),
        ("APPEND", '{"api": "Produce"}', "INVALID_CONFIG"),  # no effect
        ("APPEND", '{"api": "Produce", "error": "NO_SUCH_ERROR"}', "INVALID_CONFIG"),
        ("APPEND", '{"api": "Produce", "error": 6, "colour": "red"}', "INVALID_CONFIG"),
        ("SUBTRACT", "999", "INVALID_CONFIG"),
    ],
)
def test_the_admin_request_refuses_what_it_cannot_do(admin, topic, operation, value, error):
    with pytest.raises(KafkaException, match=error):
        alter(admin, operation, value)
    assert faults(admin) == []


def test_faults_are_per_broker_and_not_set_on_the_cluster_default(broker, admin, topic):
    """(The cluster-wide default resource, named "", is refused by librdkafka itself.)"""
    rule = '{"api": "Produce", "error": 6}'
    append = IncrementalAlterConfigs.AlterableConfig(name=FAULT_KEY, config_operation=2, value=rule)
    default = IncrementalAlterConfigs.AlterConfigsResource(resource_type=4, resource_name="", configs=[append])
    body = IncrementalAlterConfigs(resources=[default], validate_only=False)
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body)
    assert response.responses[0].error_code == ErrorCode.INVALID_REQUEST
    assert faults(admin) == []


def test_validate_only_adds_nothing(admin, topic):
    entry = ConfigEntry(FAULT_KEY, '{"api": "Produce", "error": 6}', incremental_operation=AlterConfigOpType.APPEND)
    resource = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[entry])
    admin.incremental_alter_configs([resource], validate_only=True)[resource].result()
    assert faults(admin) == []


def test_moving_leadership_needs_a_cluster(admin, topic):
    move = json.dumps({"topic": topic, "partition": 0, "leader": 0})
    with pytest.raises(KafkaException, match="needs a cluster"):
        alter(admin, "SET", move, key="pykbroker.partition.leader.move")


# -- helpers ---------------------------------------------------------------------------------------


def _one_record_batch() -> bytes:
    return build_batch([(None, b"v")])


def _metadata(broker):
    with WireClient(broker.bootstrap) as client:
        return client.request(ApiKey.METADATA, 12, Metadata(topics=None, allow_auto_topic_creation=False))


def _has_data(client: WireClient) -> bool:
    client.sock.setblocking(False)
    try:
        return bool(client.sock.recv(1, 2))  # MSG_PEEK
    except BlockingIOError:
        return False
    finally:
        client.sock.setblocking(True)
        client.sock.settimeout(10)


def _poll_values(consumer, until, timeout: float = 20.0) -> list[str]:
    values: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = consumer.poll(0.1)
        if message is not None and message.error() is None:
            values.append(message.value().decode())
        if until(values):
            return values
    if timeout >= 1:
        raise AssertionError(f"only {values} arrived")
    return values


# -- pykbroker faults ----------------------------------------------------------------------------


def run_tool(broker, capsys, *arguments: str) -> tuple[int, str, str]:
    status = faults_tool.main(["--bootstrap-server", broker.bootstrap, *arguments])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_faults_tool_adds_lists_removes_and_clears(broker, admin, topic, capsys):
    rule = json.dumps({"api": "Produce", "topic": topic, "error": "NOT_LEADER_OR_FOLLOWER", "count": 3})
    status, out, _ = run_tool(broker, capsys, "--add", rule)
    assert status == 0
    fault_id = int(re.fullmatch(r"Added fault (\d+) on broker 0: .*\n", out).group(1))
    run_tool(broker, capsys, "--add", '{"api": "Metadata", "client_id": "nobody", "latency_ms": 100}')

    status, out, _ = run_tool(broker, capsys, "--list")
    assert status == 0
    assert out.splitlines()[0].split() == ["BROKER", "ID", "FIRED", "RULE"]
    assert out.splitlines()[1].split()[:3] == ["0", str(fault_id), "0"]
    assert len(out.splitlines()) == 3

    status, out, _ = run_tool(broker, capsys, "--list", "--output", "json")
    listed = json.loads(out)
    assert listed[0] == {"broker": 0, "id": fault_id, "fired": 0, "rule": json.loads(rule)}

    assert run_tool(broker, capsys, "--remove", str(fault_id))[1] == f"Removed fault {fault_id} on broker(s) 0.\n"
    assert [fault["id"] for fault in faults(admin)] == [fault_id + 1]
    assert run_tool(broker, capsys, "--clear")[0] == 0
    assert run_tool(broker, capsys, "--list")[1] == "No faults.\n"


def test_the_faults_tool_reports_what_the_broker_refuses(broker, admin, topic, capsys):
    status, _, err = run_tool(broker, capsys, "--add", '{"api": "Produce"}')
    assert status == 1 and "needs an effect" in err
    status, _, err = run_tool(broker, capsys, "--remove", "999")
    assert (status, err) == (1, "No fault 999 on broker(s) 0\n")
    status, _, err = run_tool(broker, capsys, "--move-leader", "--topic", topic, "--partition", "0", "--leader", "0")
    assert status == 1 and "needs a cluster" in err


def test_alter_configs_sending_back_the_described_faults_leaves_them_alone(broker, admin, topic):
    """Kafka's kafka-configs.sh alters a broker with AlterConfigs, sending every dynamic config it
    described: the faults among them are neither changed nor refused."""
    fault_id = add_fault(admin, api="ListOffsets", topic=topic, error="LEADER_NOT_AVAILABLE")
    described = json.dumps(faults(admin))
    entries = [
        AlterConfigs.AlterableConfig(name=FAULT_KEY, value=described),
        AlterConfigs.AlterableConfig(name="log.cleaner.threads", value="1"),
    ]
    body = AlterConfigs(
        resources=[AlterConfigs.AlterConfigsResource(resource_type=4, resource_name="0", configs=entries)],
        validate_only=False,
    )
    with WireClient(broker.bootstrap) as client:
        assert client.request(ApiKey.ALTER_CONFIGS, 2, body).responses[0].error_code == ErrorCode.NONE
    assert [fault["id"] for fault in faults(admin)] == [fault_id]


def test_a_resource_naming_faults_and_broker_configs_alters_both(broker, admin, topic):
    """The fault key is answered beside the IncrementalAlterConfigs handler; the resource's other
    keys are still the handler's."""
    rule = json.dumps({"api": "ListOffsets", "topic": topic, "error": "LEADER_NOT_AVAILABLE"})
    entries = [
        IncrementalAlterConfigs.AlterableConfig(name=FAULT_KEY, config_operation=2, value=rule),
        IncrementalAlterConfigs.AlterableConfig(name="log.cleaner.threads", config_operation=0, value="2"),
    ]
    resource = IncrementalAlterConfigs.AlterConfigsResource(resource_type=4, resource_name="0", configs=entries)
    body = IncrementalAlterConfigs(resources=[resource], validate_only=False)
    try:
        with WireClient(broker.bootstrap) as client:
            assert client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).responses[0].error_code == 0
        assert [fault["rule"]["api"] for fault in faults(admin)] == ["ListOffsets"]
        described = ConfigResource(ResourceType.BROKER, "0")
        assert admin.describe_configs([described])[described].result()["log.cleaner.threads"].value == "2"
    finally:
        alter(admin, "DELETE", None, key="log.cleaner.threads")


def test_a_resource_named_twice_is_refused_with_its_faults(broker, admin, topic):
    append = IncrementalAlterConfigs.AlterableConfig(name=FAULT_KEY, config_operation=2, value='{"api": 0, "error": 6}')
    twice = [
        IncrementalAlterConfigs.AlterConfigsResource(resource_type=4, resource_name="0", configs=[append]),
        IncrementalAlterConfigs.AlterConfigsResource(resource_type=4, resource_name="0", configs=[]),
    ]
    body = IncrementalAlterConfigs(resources=twice, validate_only=False)
    with WireClient(broker.bootstrap) as client:
        responses = client.request(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, body).responses
    assert [r.error_code for r in responses] == [ErrorCode.INVALID_REQUEST] * 2
    assert faults(admin) == []
