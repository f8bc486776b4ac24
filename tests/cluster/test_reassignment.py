"""Partition reassignment (KIP-455) on a three-broker cluster, driven by Kafka 3.9.0's own
`kafka-reassign-partitions` (ReassignPartitionsCommand) and by the wire APIs
(AlterPartitionReassignments, ListPartitionReassignments), with replication throttles.

One pykbroker cluster serves the whole module; the acceptance scenario also runs on Kafka's own
three brokers (`../shared/realkafka/cluster.sh`) in the same test, and the tool's outputs are
compared after normalising what differs by nature (ports, the random placement of --generate).
"""

from __future__ import annotations

import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from compat import realkafka, tool_shell
from compat.tool_shell import ToolShell
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.wire import WireClient
from tests.ci import skip_or_fail_in_ci

REASSIGN = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
THROTTLE = "10000000"  # bytes/s: throttled, but the move still completes quickly

AlterRequest = messages.request(ApiKey.ALTER_PARTITION_REASSIGNMENTS).cls
ListRequest = messages.request(ApiKey.LIST_PARTITION_REASSIGNMENTS).cls


@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    """Run ReassignPartitionsCommand: (exit status, stdout, stderr). Every invocation of the module
    runs in one JVM (`compat/tool_shell.py`), as a shell runs the tool one invocation after another."""
    reason = tool_shell.unavailable()
    if reason:
        skip_or_fail_in_ci(f"Kafka's tools cannot run here: {reason}")
    work = tmp_path_factory.mktemp("reassign-json")
    shell = ToolShell(tmp_path_factory.mktemp("reassign-tool")).start()

    def run(bootstrap: str, *args: str, plan: dict | None = None, topics: dict | None = None) -> tuple[int, str, str]:
        extra: list[str] = []
        for option, value in (("--reassignment-json-file", plan), ("--topics-to-move-json-file", topics)):
            if value is not None:
                path = work / f"file-{time.monotonic_ns()}.json"
                path.write_text(json.dumps(value))
                extra += [option, str(path)]
        done = shell.run(REASSIGN, "--bootstrap-server", bootstrap, *args, *extra, timeout=180)
        return done.status, done.out, done.err

    try:
        yield run
    finally:
        shell.stop()


# -- helpers -------------------------------------------------------------------------------

def create_topic(bootstrap: str, name: str, assignment: list[list[int]], configs: dict | None = None) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([NewTopic(name, len(assignment), replica_assignment=assignment, config=configs or {})])
    futures[name].result(60)


def describe_replicas(bootstrap: str, topic: str) -> dict[int, tuple[list[int], list[int], int]]:
    """{partition: (replicas, isr, leader)} as Metadata says."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    metadata = admin.list_topics(topic, timeout=30).topics[topic]
    return {p: (list(m.replicas), sorted(m.isrs), m.leader) for p, m in metadata.partitions.items()}


def wait_until(condition, what: str, timeout: float = 120.0, interval: float = 0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


class LoadProducer:
    """An idempotent acks=all producer writing numbered records to partition 0 until stopped;
    remembers every record acknowledged."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True,
                                  "linger.ms": 5, "message.timeout.ms": 120000})
        self.topic = topic
        self.acked: list[bytes] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _delivered(self, error, message) -> None:
        if error is None:
            self.acked.append(message.value())
        else:
            self.errors.append(str(error))

    def _run(self) -> None:
        sequence = 0
        while not self._stop.is_set():
            try:
                self.producer.produce(self.topic, value=b"%08d" % sequence + b"x" * 200, partition=0,
                                      on_delivery=self._delivered)
                sequence += 1
            except BufferError:
                pass
            self.producer.poll(0.002 if sequence % 50 else 0.02)

    def __enter__(self) -> "LoadProducer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(30)
        self.producer.flush(120)


def read_all(bootstrap: str, topic: str, expected: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-check", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 120
    while len(values) < expected and time.monotonic() < deadline:
        for message in consumer.consume(1000, 1.0):
            if message.error() is None:
                values.append(message.value())
    consumer.close()
    return values


def normalised(text: str, bootstrap: str) -> str:
    """Tool output without what differs by nature between two clusters."""
    for address in bootstrap.split(","):
        text = text.replace(address, "<broker>")
    return re.sub(r"\"log_dirs\":\[[^\]]*\]", '"log_dirs":[...]', text)


def throttle_configs(bootstrap: str, topic: str) -> dict[str, str]:
    """The throttle configs set on the topic and on brokers 1-3 (dynamic ones only)."""
    from confluent_kafka.admin import ConfigResource
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resources = [ConfigResource("TOPIC", topic)] + [ConfigResource("BROKER", str(b)) for b in (1, 2, 3)]
    found: dict[str, str] = {}
    for resource in resources:  # one broker resource per call (librdkafka's rule)
        for name, entry in admin.describe_configs([resource])[resource].result(30).items():
            dynamic = entry.source in (1, 2)  # DYNAMIC_TOPIC_CONFIG, DYNAMIC_BROKER_CONFIG
            if "throttled" in name and dynamic:
                found[f"{resource.name}:{name}"] = entry.value
    return found


# -- the acceptance scenario -------------------------------------------------------------

def reassignment_scenario(bootstrap: str, tool, topic: str) -> list[str]:
    """A partition on brokers 1,2 moves to 2,3 under an acks=all load with a throttle; returns
    the tool's outputs, in order, for comparison. Asserts nothing is lost or duplicated and the
    throttles are cleared."""
    create_topic(bootstrap, topic, [[1, 2]])
    outputs: list[str] = []

    def step(*args: str, plan: dict | None = None, topics: dict | None = None) -> str:
        status, out, err = tool(bootstrap, *args, plan=plan, topics=topics)
        assert status == 0, (args, out, err)
        outputs.append(normalised(out, bootstrap))
        return out

    out = step("--generate", "--broker-list", "2,3", topics={"version": 1, "topics": [{"topic": topic}]})
    current = out.split("Proposed partition reassignment configuration")[0]
    outputs[-1] = normalised(current, bootstrap)  # the proposal is random (Kafka's start index)

    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [2, 3],
                                          "log_dirs": ["any", "any"]}]}
    with LoadProducer(bootstrap, topic) as load:
        wait_until(lambda: len(load.acked) > 500, "records acknowledged before the move")
        step("--execute", "--throttle", THROTTLE, plan=plan)
        assert "throttled" in " ".join(throttle_configs(bootstrap, topic)), "the --execute throttle is set"
        wait_until(lambda: describe_replicas(bootstrap, topic)[0][0] == [2, 3], "the move to 2,3", timeout=180)
        step("--list")  # once the move is done (while it runs, what is listed depends on the timing)
        moved_at = len(load.acked)
        wait_until(lambda: len(load.acked) > moved_at + 200, "records acknowledged after the move")
    step("--verify", plan=plan)
    step("--list")
    assert not load.errors, load.errors[:5]
    values = read_all(bootstrap, topic, len(load.acked))
    assert sorted(values) == sorted(load.acked), "every acknowledged record, once"
    assert len(set(values)) == len(values)
    assert throttle_configs(bootstrap, topic) == {}, "--verify cleared the throttles"
    replicas, isr, leader = describe_replicas(bootstrap, topic)[0]
    assert (replicas, isr) == ([2, 3], [2, 3]) and leader in (2, 3)
    return outputs


@pytest.fixture(scope="module", autouse=True)
def kafka_starting(tmp_path_factory):
    """Kafka 3.9.0's three brokers (cluster.sh) for the whole module, starting in a thread of
    their own while pykbroker's cluster starts; discarded at the end (None where Kafka cannot
    run: the tests on pykbroker alone still do)."""
    if realkafka.unavailable():
        yield None
        return
    running = realkafka.KafkaCluster(tmp_path_factory.mktemp("kafka-cluster"))
    with ThreadPoolExecutor(max_workers=1) as pool:
        started = pool.submit(running.start)
        try:
            yield started
        finally:
            wait([started])
            if started.exception() is None:
                running.discard()


@pytest.fixture(scope="module")
def kafka(kafka_starting):
    """Kafka's cluster once it has started."""
    reason = realkafka.unavailable()
    if reason:
        skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
    return kafka_starting.result()


def on_both_clusters(scenario, cluster, kafka, *args):
    """`scenario` run on pykbroker's cluster and on Kafka's at the same time (the two clusters
    share nothing but the tool's JVM, which runs one invocation at a time): (ours, theirs)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        ours = pool.submit(scenario, cluster.bootstrap, *args)
        theirs = pool.submit(scenario, kafka.bootstrap, *args)
        return ours.result(), theirs.result()


def test_kafka_reassign_partitions_moves_a_partition_under_load_as_on_kafka(cluster, tool, kafka):
    """kafka-reassign-partitions --execute (with --throttle) moves partition 0 from brokers 1,2 to
    2,3 while an acks=all producer writes; --verify reports it complete and clears the throttle
    configs; every acknowledged record is there exactly once. The same on Kafka 3.9.0's cluster
    prints the same."""
    ours, theirs = on_both_clusters(reassignment_scenario, cluster, kafka, tool, "moving")
    assert ours == theirs


# -- a throttled reassignment: listed while it runs, cancelled --------------------------------

def fill(bootstrap: str, topic: str, megabytes: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 20,
                         "compression.type": "none"})
    value = bytes(range(256)) * 40  # 10 KiB that do not compress
    for _ in range(megabytes * 100):
        producer.produce(topic, value=value, partition=0)
        producer.poll(0)
    assert producer.flush(120) == 0


def throttled_cancel_scenario(bootstrap: str, tool, topic: str) -> list[str]:
    """A partition on broker 1 with 5 MB is to move to broker 2 under a 30 KB/s throttle: the move
    is still running when listed (unthrottled it takes well under a second; throttled, about a
    megabyte per replication quota span), and --cancel takes it back: the partition has replica 1
    alone again. (Kafka 3.9.0's --cancel cancels only reassignments that remove a replica or add
    none, so the move here removes one.)"""
    create_topic(bootstrap, topic, [[1]])
    fill(bootstrap, topic, 5)
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [2]}]}
    outputs = []
    for args in (("--execute", "--throttle", "30000"), ("--list",), ("--verify",), ("--cancel",)):
        status, out, err = tool(bootstrap, *args, plan=None if args == ("--list",) else plan)
        assert status == 0, (args, out, err)
        outputs.append(normalised(out, bootstrap))
    assert "is still in progress" in outputs[2]
    assert "Successfully cancelled partition reassignment for: " in outputs[3]
    wait_until(lambda: describe_replicas(bootstrap, topic)[0][0] == [1], "the reassignment cancelled")
    status, out, _ = tool(bootstrap, "--list")
    outputs.append(out)
    assert throttle_configs(bootstrap, topic) == {}, "--cancel cleared the throttles"
    return outputs


def test_a_throttled_reassignment_is_listed_while_it_runs_and_cancel_reverts_it(cluster, tool, kafka):
    """The throttle holds the new replica back (Kafka's ReplicationQuotaManager), so --list and
    --verify see the reassignment in progress; --cancel reverts it (the added replica is stopped
    and its log deleted) and clears the throttles. Kafka 3.9.0 prints the same."""
    ours, theirs = on_both_clusters(throttled_cancel_scenario, cluster, kafka, tool, "slow")
    wait_until(lambda: not list((cluster.directory / "broker-2").rglob("slow-0")), "broker 2 deleted its replica",
               timeout=60)
    assert ours == theirs


# -- the wire APIs' errors -------------------------------------------------------------------

def alter(bootstrap: str, reassignments: dict[tuple[str, int], list[int] | None]):
    topics: dict[str, list] = {}
    for (topic, partition), replicas in reassignments.items():
        topics.setdefault(topic, []).append(AlterRequest.ReassignablePartition(partition_index=partition,
                                                                               replicas=replicas))
    request = AlterRequest(timeout_ms=30000, topics=[AlterRequest.ReassignableTopic(name=t, partitions=p)
                                                     for t, p in topics.items()])
    return request_controller(bootstrap, ApiKey.ALTER_PARTITION_REASSIGNMENTS, request)


def request_controller(bootstrap: str, api_key: int, request):
    """Send to whichever broker answers without NOT_CONTROLLER (as the admin client does)."""
    for address in bootstrap.split(","):
        with WireClient(address, timeout=60) as client:
            response = client.request(api_key, 0, request)
        if response.error_code != ErrorCode.NOT_CONTROLLER:
            return response
    raise AssertionError("no broker is the controller")


def partition_errors(response) -> dict[tuple[str, int], tuple[str, str | None]]:
    return {(t.name, p.partition_index): (ErrorCode(p.error_code).name, p.error_message)
            for t in response.responses for p in t.partitions}


def test_reassignment_errors_are_kafkas(cluster, kafka):
    """Kafka's errors and messages per partition: an empty, duplicated or negative replica list and a
    broker that is not alive are INVALID_REPLICA_ASSIGNMENT; cancelling where nothing runs is
    NO_REASSIGNMENT_IN_PROGRESS; an unknown partition is UNKNOWN_TOPIC_OR_PARTITION; the brokers
    that are not the controller answer NOT_CONTROLLER."""
    asked = {("errors", 0): [], ("errors", 1): [2, 2], ("errors", 2): [-1], ("errors", 3): [1, 9],
             ("errors", 4): None, ("errors", 9): [1], ("nowhere", 0): [1]}
    results = []
    for running in (cluster, kafka):
        create_topic(running.bootstrap, "errors", [[1], [2], [3], [1], [2]])
        results.append(partition_errors(alter(running.bootstrap, asked)))
        listed = request_controller(running.bootstrap, ApiKey.LIST_PARTITION_REASSIGNMENTS,
                                    ListRequest(timeout_ms=30000, topics=None))
        assert (listed.error_code, listed.topics) == (ErrorCode.NONE, [])
    ours, theirs = results
    assert ours == theirs
    assert ours[("errors", 4)][0] == "NO_REASSIGNMENT_IN_PROGRESS"
    assert ours[("errors", 3)] == ("INVALID_REPLICA_ASSIGNMENT", "Replica assignment has brokers that are not "
                                   "alive. Replica list: ArrayBuffer(9), live broker list: Set(1, 2, 3)")
    not_controller = [b for b in cluster.brokers if b != cluster.controller_id()][0]
    with cluster.wire(not_controller) as client:
        response = client.request(ApiKey.LIST_PARTITION_REASSIGNMENTS, 0, ListRequest(timeout_ms=1000, topics=None))
    assert response.error_code == ErrorCode.NOT_CONTROLLER


# -- ZooKeeper: the old znode, and a new controller resuming -----------------------------------

def test_a_reassignment_written_to_admin_reassign_partitions_is_carried_out(cluster):
    """The pre-KIP-455 way (what old tools write): /admin/reassign_partitions. The controller
    reassigns and deletes the znode once done."""
    create_topic(cluster.bootstrap, "legacy", [[1, 2]])
    cluster.zk.create("/admin/reassign_partitions", json.dumps(
        {"version": 1, "partitions": [{"topic": "legacy", "partition": 0, "replicas": [3, 2]}]}).encode(),
        makepath=True)
    wait_until(lambda: cluster.replicas("legacy") == {0: [3, 2]}, "the move to 3,2")
    wait_until(lambda: cluster.json_at("/admin/reassign_partitions") is None and
               not cluster.zk.exists("/admin/reassign_partitions"), "the znode deleted")
    topic = cluster.json_at("/brokers/topics/legacy")
    assert (topic["adding_replicas"], topic["removing_replicas"]) == ({}, {})


def test_a_new_controller_resumes_a_reassignment(cluster, tool):
    """A throttled reassignment runs (the topic znode lists the replicas being added); the controller
    is killed; the next controller resumes it from the znodes and completes it once the throttle is
    lifted."""
    controller = cluster.controller_id()
    others = [b for b in sorted(cluster.brokers) if b != controller]
    create_topic(cluster.bootstrap, "resumed", [[others[0]]])
    fill(cluster.bootstrap, "resumed", 3)
    plan = {"version": 1, "partitions": [{"topic": "resumed", "partition": 0, "replicas": others}]}
    status, out, err = tool(cluster.bootstrap, "--execute", "--throttle", "100000", plan=plan)
    assert status == 0, (out, err)
    topic = cluster.json_at("/brokers/topics/resumed")
    assert (topic["partitions"], topic["adding_replicas"], topic["removing_replicas"]) == (
        {"0": others}, {"0": [others[1]]}, {})
    try:
        cluster.kill(controller)
        wait_until(lambda: cluster.controller_id() in others, "a new controller", timeout=60)
        bootstrap = ",".join(cluster.brokers[b].bootstrap for b in others)
        status, out, err = tool(bootstrap, "--execute", "--additional", "--throttle", "1000000000", plan=plan)
        assert status == 0, (out, err)
        wait_until(lambda: cluster.json_at("/brokers/topics/resumed")["adding_replicas"] == {},
                   "the reassignment completed", timeout=120)
        assert cluster.replicas("resumed") == {0: others}
        assert sorted(cluster.state("resumed", 0)["isr"]) == sorted(others)
    finally:
        cluster.ensure_all_running()
