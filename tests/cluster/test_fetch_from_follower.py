"""Fetch from the closest replica (KIP-392) on three brokers, each in its own rack (RACK1-RACK3),
with `replica.selector.class` = Kafka's RackAwareReplicaSelector.

The first test is librdkafka's test 0101 (tests/0101-fetch-from-follower.cpp) in Python: 1000
messages of 100 bytes to a one-partition topic with three replicas; every broker reports its own
`broker.rack` (DescribeConfigs); a consumer whose `client.rack` is a follower's rack reads them
all, in order, and its statistics show the most bytes received from that follower, more than the
messages' size. Beyond 0101: the follower's fetch metrics (BytesOutPerSec of the topic) show the
consumer's reads, and the leader's do not; once that follower dies the consumer keeps reading
everything, back from the leader.

Then: a read_committed consumer on a follower sees only committed transactions; Kafka's Java
console consumer with `client.rack` reads from the follower as well. The others ask over the wire
what a leader and a follower answer: a preferred read replica for a consumer in a follower's
rack, records for one in no rack or in the leader's; a follower serves Fetch v11+ consumers up to
its high watermark (also in an incremental fetch session, woken when that moves), checks their
leader epoch, and refuses older consumers, ListOffsets and OffsetForLeaderEpoch from consumers
(leader only, as Kafka's); a broker without a replica refuses them all. Last, the setting: Kafka's
two selectors are accepted, any other class stops the broker at start.

`RACKFETCH_TARGETS=pykbroker,kafka` runs every test on three Kafka 3.9.0 brokers as well, which
is how they were validated (the default is pykbroker only: `../shared/realkafka/cluster.sh` gives
every broker the same extra settings, so its brokers get their racks by being stopped, given
their `broker.rack` and started again one by one, minutes on a small machine). Kafka's fetch
metrics are JMX only, so the metrics assertions run on pykbroker's brokers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest
from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from compat import realkafka
from pykbroker.config import BrokerConfig
from pykbroker.config.types import ConfigError
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient
from tests.ci import skip_or_fail_in_ci

RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
CLUSTER_OPTIONS = {
    "racks": {1: "RACK1", 2: "RACK2", 3: "RACK3"},
    "overrides": {
        "replica.selector.class": RACK_AWARE,
        "pykbroker.metrics.listener": "http://127.0.0.1:0",
        "replica.fetch.wait.max.ms": "100",
    },
}
MESSAGES, MESSAGE_SIZE = 1000, 100
_SERVED = re.compile(r"Metrics and health served on (http://[\d.]+:\d+)")

Fetch = messages.request(ApiKey.FETCH).cls
Metadata = messages.request(ApiKey.METADATA).cls
ListOffsets = messages.request(ApiKey.LIST_OFFSETS).cls
OffsetForLeaderEpoch = messages.request(ApiKey.OFFSET_FOR_LEADER_EPOCH).cls


# -- the brokers: pykbroker's or Kafka's -------------------------------------------------------
class PykbrokerRacks:
    """The module's pykbroker cluster (tests/cluster fixtures, CLUSTER_OPTIONS)."""

    def __init__(self, cluster) -> None:
        self.cluster = cluster

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap

    def address(self, broker_id: int) -> str:
        return self.cluster.brokers[broker_id].bootstrap

    def kill(self, broker_id: int) -> None:
        self.cluster.kill(broker_id)

    def restart(self, broker_id: int) -> None:
        self.cluster.ensure_all_running()

    def bytes_out(self, broker_id: int, topic: str) -> float | None:
        """The broker's BytesOutPerSec count for `topic` (record bytes sent to consumers)."""
        endpoint = _SERVED.findall(self.cluster.brokers[broker_id].log_text())[-1]
        with urllib.request.urlopen(f"{endpoint}/metrics", timeout=10) as answer:
            text = answer.read().decode()
        samples = (sample for family in text_string_to_metric_families(text) for sample in family.samples)
        for sample in samples:
            if sample.name == "kafka_server_brokertopicmetrics_bytesout_total" and sample.labels.get("topic") == topic:
                return sample.value
        return 0.0


class KafkaRacks(realkafka.KafkaCluster):
    """Kafka 3.9.0's three brokers (cluster.sh), each stopped, given its rack and the rack-aware
    selector, and started again."""

    def start(self) -> KafkaRacks:
        super().start()
        try:
            for broker_id in self.ids:
                self.script("stop-broker", str(broker_id))
                properties = self.server_properties(broker_id)
                properties.write_text(
                    properties.read_text() + f"broker.rack=RACK{broker_id}\nreplica.selector.class={RACK_AWARE}\n"
                )
                self.script("start-broker", str(broker_id))
        except BaseException:
            self.stop()
            raise
        return self

    def address(self, broker_id: int) -> str:
        return f"127.0.0.1:{self.base + broker_id}"

    def bytes_out(self, broker_id: int, topic: str) -> float | None:
        return None  # JMX only


@pytest.fixture(scope="module", params=os.environ.get("RACKFETCH_TARGETS", "pykbroker").split(","))
def racks(request, tmp_path_factory):
    """Three brokers in racks RACK1-RACK3 under the rack-aware selector: pykbroker's or Kafka's."""
    if request.param != "kafka":
        yield PykbrokerRacks(request.getfixturevalue("cluster"))
        return
    reason = realkafka.unavailable()
    if reason:
        skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
    with KafkaRacks(tmp_path_factory.mktemp("kafka-racks")) as running:
        yield running


# -- helpers ----------------------------------------------------------------------------------
class PartitionView:
    """Partition 0 of a topic as a broker's Metadata shows it."""

    def __init__(self, data, brokers) -> None:
        self.leader, self.leader_epoch = data.leader_id, data.leader_epoch
        self.replicas, self.isr = list(data.replica_nodes), list(data.isr_nodes)
        self.racks = {b.node_id: b.rack for b in brokers}


def partition_view(racks, topic: str) -> PartitionView | None:
    request = Metadata(topics=[Metadata.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)
    for address in racks.bootstrap.split(","):
        try:
            with WireClient(address) as client:
                answer = client.request(ApiKey.METADATA, 12, request)
            break
        except OSError:
            continue  # a broker that is down
    else:
        return None
    [data] = answer.topics
    if data.error_code != 0 or not data.partitions:
        return None
    return PartitionView(data.partitions[0], answer.brokers)


def create_replicated_topic(racks, name: str) -> tuple[int, list[int]]:
    """A one-partition topic on all three brokers; (leader, replicas) once the ISR is full."""
    admin = AdminClient({"bootstrap.servers": racks.bootstrap})
    admin.create_topics([NewTopic(name, 1, replication_factor=3)])[name].result(timeout=30)

    def full() -> PartitionView | None:
        view = partition_view(racks, name)
        return view if view is not None and view.leader >= 0 and sorted(view.isr) == [1, 2, 3] else None

    view = wait_until(full, "a full ISR", timeout=60)
    return view.leader, view.replicas


def produce(racks, topic: str, first: int, count: int) -> None:
    """Messages of MESSAGE_SIZE bytes carrying `msg=<n>\\n`, as librdkafka's test helpers make them."""
    producer = Producer({"bootstrap.servers": racks.bootstrap, "acks": "all", "linger.ms": 5})
    for n in range(first, first + count):
        text = f"testid=0101, partition=0, msg={n}\n".encode()
        producer.produce(topic, text.ljust(MESSAGE_SIZE, b"."), partition=0)
    assert producer.flush(60) == 0


def broker_racks(racks, broker_ids: list[int]) -> set[str]:
    """The `broker.rack` each broker describes for itself (0101's get_broker_rack_count)."""
    admin = AdminClient({"bootstrap.servers": racks.bootstrap})
    racks = set()
    for broker_id in broker_ids:
        resource = ConfigResource(ConfigResource.Type.BROKER, str(broker_id))
        entries = admin.describe_configs([resource])[resource].result(timeout=30)
        racks.add(entries["broker.rack"].value)
    return racks


class StatsCapture:
    """librdkafka's statistics callback: the latest `rxbytes` of each broker, by broker id."""

    def __init__(self) -> None:
        self.rxbytes: dict[int, int] = {}
        self.captured = 0

    def __call__(self, stats_json: str) -> None:
        stats = json.loads(stats_json)
        for name, broker in stats.get("brokers", {}).items():
            _, _, broker_id = name.rpartition("/")
            if broker_id.isdigit():
                self.rxbytes[int(broker_id)] = broker["rxbytes"]
        self.captured += 1


def consume_in_order(consumer: Consumer, first: int, count: int, timeout_s: float = 120.0) -> None:
    """Read messages `first`..`first + count - 1`, checking each one's `msg=` number."""
    expected, deadline = first, time.monotonic() + timeout_s
    while expected < first + count:
        assert time.monotonic() < deadline, f"consumed up to msg={expected - 1} only"
        message = consumer.poll(1.0)
        if message is None:
            continue
        if message.error() is not None:
            assert message.error().code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN), message.error()
            continue
        value = message.value()
        assert len(value) == MESSAGE_SIZE
        number = int(value.split(b"msg=", 1)[1].split(b"\n", 1)[0])
        assert number == expected, "message consumed out of order"
        expected += 1


def fetch(client, topic: str, offset: int, *, version: int, rack: str = "", epoch: int = -1):
    request = Fetch(
        replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
        session_epoch=-1, forgotten_topics_data=[], rack_id=rack,
        topics=[Fetch.FetchTopic(topic=topic, partitions=[Fetch.FetchPartition(
            partition=0, current_leader_epoch=epoch, fetch_offset=offset, last_fetched_epoch=-1,
            log_start_offset=-1, partition_max_bytes=1 << 20)])])
    [data] = client.request(ApiKey.FETCH, version, request).responses[0].partitions
    return data


# -- librdkafka's 0101, and the follower dying ------------------------------------------------
def test_a_consumer_reads_from_the_follower_in_its_rack_and_from_the_leader_once_it_dies(racks):
    topic = "fetch-from-follower-0101"
    leader, replicas = create_replicated_topic(racks, topic)
    produce(racks, topic, 0, MESSAGES)
    assert len(replicas) == 3
    assert len(broker_racks(racks, replicas)) == 3, "every broker its own broker.rack"
    follower = next(r for r in replicas if r != leader)

    stats = StatsCapture()
    consumer = Consumer({
        "bootstrap.servers": racks.bootstrap, "group.id": topic, "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "statistics.interval.ms": 1000, "stats_cb": stats,
        "client.rack": f"RACK{follower}",
    })
    try:
        consumer.subscribe([topic])
        consume_in_order(consumer, 0, MESSAGES)
        seen = stats.captured
        while stats.captured <= seen:  # statistics taken after the last message
            consumer.poll(0.5)
        received = dict(stats.rxbytes)
        assert all(received.get(r, 0) < received[follower] for r in replicas if r != follower), received
        assert received[follower] > MESSAGES * MESSAGE_SIZE, received

        if racks.bytes_out(follower, topic) is not None:
            assert racks.bytes_out(follower, topic) >= MESSAGES * MESSAGE_SIZE
            assert racks.bytes_out(leader, topic) < MESSAGES * MESSAGE_SIZE

        racks.kill(follower)
        try:
            produce(racks, topic, MESSAGES, MESSAGES)
            consume_in_order(consumer, MESSAGES, MESSAGES)
            if racks.bytes_out(leader, topic) is not None:
                assert racks.bytes_out(leader, topic) >= MESSAGES * MESSAGE_SIZE
        finally:
            racks.restart(follower)
    finally:
        consumer.close()


def test_a_read_committed_consumer_on_a_follower_sees_only_committed_transactions(racks):
    """The follower keeps the transactions' state as its leader does (last stable offset, aborted
    transactions index): a read_committed consumer in its rack reads the committed records only."""
    topic = "fetch-from-follower-transactions"
    leader, replicas = create_replicated_topic(racks, topic)
    follower = next(r for r in replicas if r != leader)
    producer = Producer({"bootstrap.servers": racks.bootstrap, "transactional.id": topic})
    producer.init_transactions(60)
    for outcome in ("commit", "abort", "commit"):
        producer.begin_transaction()
        for n in range(3):
            producer.produce(topic, f"{outcome}-{n}".encode(), partition=0)
        if outcome == "commit":
            producer.commit_transaction(60)
        else:
            producer.abort_transaction(60)
    consumer = Consumer({
        "bootstrap.servers": racks.bootstrap, "group.id": topic, "auto.offset.reset": "earliest",
        "isolation.level": "read_committed", "client.rack": f"RACK{follower}", "enable.auto.commit": False,
    })
    values: list[bytes] = []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while len(values) < 6 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                values.append(message.value())
        for _ in range(4):  # nothing more comes
            message = consumer.poll(0.5)
            assert message is None or message.error() is not None, message.value()
    finally:
        consumer.close()
    assert values == [f"commit-{n}".encode() for n in range(3)] * 2
    if racks.bytes_out(follower, topic) is not None:
        assert racks.bytes_out(follower, topic) > 0


def test_kafkas_java_console_consumer_reads_from_the_follower_in_its_rack(racks, tmp_path):
    """The Java consumer (Kafka 3.9's console consumer, `--consumer-property client.rack=...`)
    follows the preferred read replica too, with its incremental fetch sessions."""
    if shutil.which("java") is None or not (realkafka.REALKAFKA / "libs" / "kafka-tools-3.9.0.jar").exists():
        skip_or_fail_in_ci(f"Kafka's console consumer needs java and the jars in {realkafka.REALKAFKA / 'libs'}")
    topic = "fetch-from-follower-java"
    leader, replicas = create_replicated_topic(racks, topic)
    follower = next(r for r in replicas if r != leader)
    produce(racks, topic, 0, 200)
    log4j = tmp_path / "log4j.properties"
    log4j.write_text("log4j.rootLogger=ERROR, stderr\nlog4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
                     "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
                     "log4j.appender.stderr.Target=System.err\n")
    command = [
        "java", f"-Dlog4j.configuration=file:{log4j}", "-cp", f"{realkafka.REALKAFKA / 'libs'}/*",
        "org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", racks.bootstrap,
        "--topic", topic, "--from-beginning", "--max-messages", "200", "--timeout-ms", "90000",
        "--consumer-property", f"client.rack=RACK{follower}",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr[-2000:]
    numbers = [int(line.split("msg=", 1)[1]) for line in run.stdout.splitlines() if "msg=" in line]
    assert numbers == list(range(200))
    if racks.bytes_out(follower, topic) is not None:
        assert racks.bytes_out(follower, topic) >= 200 * MESSAGE_SIZE
        assert racks.bytes_out(leader, topic) < 200 * MESSAGE_SIZE


# -- what a leader and a follower answer --------------------------------------------------------
class Written:
    """A replicated topic with 10 messages every replica has: its leader, a follower and the
    leader epoch."""

    def __init__(self, racks, topic: str) -> None:
        self.racks, self.topic = racks, topic
        self.leader, replicas = create_replicated_topic(racks, topic)
        produce(racks, topic, 0, 10)
        self.follower = next(r for r in replicas if r != self.leader)
        self.leader_epoch = partition_view(racks, topic).leader_epoch
        with self.wire(self.follower) as client:
            wait_until(lambda: fetch(client, topic, 0, version=11).high_watermark == 10,
                       "the follower's high watermark at 10", timeout=40)

    def wire(self, broker_id: int) -> WireClient:
        return WireClient(self.racks.address(broker_id))


@pytest.fixture(scope="module")
def written(racks):
    return Written(racks, "fetch-from-follower-wire")


def test_every_broker_shows_its_rack_in_metadata(written):
    assert partition_view(written.racks, written.topic).racks == {1: "RACK1", 2: "RACK2", 3: "RACK3"}


def test_the_leader_sends_a_consumer_in_a_followers_rack_to_that_follower(written):
    topic, leader, follower = written.topic, written.leader, written.follower
    with written.wire(leader) as client:
        sent_away = fetch(client, topic, 0, version=11, rack=f"RACK{follower}")
        own_rack = fetch(client, topic, 0, version=11, rack=f"RACK{leader}")
        no_rack = fetch(client, topic, 0, version=11)
        elsewhere = fetch(client, topic, 0, version=11, rack="RACK9")
    assert (sent_away.error_code, sent_away.preferred_read_replica, sent_away.high_watermark) == (0, follower, 10)
    assert len(sent_away.records or b"") == 0
    for answer in (own_rack, no_rack, elsewhere):
        assert (answer.error_code, answer.preferred_read_replica) == (0, -1)
        assert len(answer.records or b"") > 0


def test_a_follower_serves_fetch_v11_consumers_up_to_its_high_watermark(written):
    topic = written.topic
    with written.wire(written.follower) as client:
        read = fetch(client, topic, 0, version=11, rack=f"RACK{written.follower}")
        at_the_end = fetch(client, topic, 10, version=11)
        past_the_end = fetch(client, topic, 11, version=11)
        old_consumer = fetch(client, topic, 0, version=10)
    assert (read.error_code, read.high_watermark, read.preferred_read_replica) == (0, 10, -1)
    assert len(read.records) > 0
    assert (at_the_end.error_code, len(at_the_end.records or b"")) == (0, 0)
    assert past_the_end.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert old_consumer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_a_broker_without_a_replica_refuses_consumers_of_the_partition(written):
    """NOT_LEADER_OR_FOLLOWER, as for a replica that is gone: the topic has the partition, this
    broker has no replica of it."""
    topic = "fetch-from-follower-two-replicas"
    leader, follower = written.leader, written.follower
    elsewhere = next(b for b in (1, 2, 3) if b not in (leader, follower))
    admin = AdminClient({"bootstrap.servers": written.racks.bootstrap})
    admin.create_topics([NewTopic(topic, 1, replica_assignment=[[leader, follower]])])[topic].result(timeout=30)
    wait_until(lambda: (view := partition_view(written.racks, topic)) is not None and len(view.isr) == 2,
               "the topic's leader and ISR", timeout=40)
    with written.wire(elsewhere) as client:
        def answer():
            data = fetch(client, topic, 0, version=11, rack=f"RACK{elsewhere}")
            return data if data.error_code != ErrorCode.UNKNOWN_TOPIC_OR_PARTITION else None

        refused = wait_until(answer, "the topic known everywhere", timeout=40)
    assert refused.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER


def test_a_fetch_session_on_a_follower_wakes_when_its_high_watermark_moves(written):
    """An incremental fetch (KIP-227) waiting on a follower is answered once the follower learns
    from its leader that new records are committed, with those records."""
    topic, follower = written.topic, written.follower
    with written.wire(follower) as client:
        end = fetch(client, topic, 0, version=12).high_watermark
        session_request = Fetch(
            replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=0, session_id=0,
            session_epoch=0, forgotten_topics_data=[], rack_id=f"RACK{follower}",
            topics=[Fetch.FetchTopic(topic=topic, partitions=[Fetch.FetchPartition(
                partition=0, current_leader_epoch=-1, fetch_offset=end, last_fetched_epoch=-1,
                log_start_offset=-1, partition_max_bytes=1 << 20)])])
        created = client.request(ApiKey.FETCH, 12, session_request)
        assert created.error_code == 0 and created.session_id > 0
        waiting = Fetch(
            replica_id=-1, max_wait_ms=30000, min_bytes=1, max_bytes=1 << 20, isolation_level=0,
            session_id=created.session_id, session_epoch=1, forgotten_topics_data=[], rack_id=f"RACK{follower}",
            topics=[])
        client.send(ApiKey.FETCH, 12, waiting)
        produce(written.racks, topic, 10_000, 3)
        _, answer = client.receive(ApiKey.FETCH, 12)
    assert answer.error_code == 0
    [data] = answer.responses[0].partitions
    assert (data.error_code, data.high_watermark) == (0, end + 3)
    assert len(data.records) > 0


def test_a_follower_checks_the_consumers_leader_epoch(written):
    topic, epoch = written.topic, written.leader_epoch
    with written.wire(written.follower) as client:
        current = fetch(client, topic, 0, version=12, epoch=epoch)
        stale = fetch(client, topic, 0, version=12, epoch=epoch - 1) if epoch > 0 else None
        future = fetch(client, topic, 0, version=12, epoch=epoch + 1)
    assert current.error_code == ErrorCode.NONE
    assert stale is None or stale.error_code == ErrorCode.FENCED_LEADER_EPOCH
    assert future.error_code == ErrorCode.UNKNOWN_LEADER_EPOCH


def test_consumers_list_offsets_and_validate_epochs_at_the_leader_only(written):
    topic = written.topic
    list_offsets = ListOffsets(replica_id=-1, isolation_level=0, topics=[ListOffsets.ListOffsetsTopic(
        name=topic, partitions=[ListOffsets.ListOffsetsPartition(
            partition_index=0, current_leader_epoch=-1, timestamp=-1)])])
    epochs = OffsetForLeaderEpoch(replica_id=-1, topics=[OffsetForLeaderEpoch.OffsetForLeaderTopic(
        topic=topic, partitions=[OffsetForLeaderEpoch.OffsetForLeaderPartition(
            partition=0, current_leader_epoch=-1, leader_epoch=0)])])
    answers = {}
    for broker_id in (written.leader, written.follower):
        with written.wire(broker_id) as client:
            offsets = client.request(ApiKey.LIST_OFFSETS, 7, list_offsets).topics[0].partitions[0]
            ends = client.request(ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, epochs).topics[0].partitions[0]
            answers[broker_id] = (offsets.error_code, ends.error_code)
    assert answers[written.leader] == (ErrorCode.NONE, ErrorCode.NONE)
    assert answers[written.follower] == (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_LEADER_OR_FOLLOWER)


# -- the setting ------------------------------------------------------------------------------
@pytest.mark.parametrize("selector", [None, RACK_AWARE, "org.apache.kafka.common.replica.LeaderSelector"])
def test_kafkas_replica_selectors_are_accepted(selector):
    config = BrokerConfig({} if selector is None else {"replica.selector.class": selector})
    assert config["replica.selector.class"] == selector


def test_any_other_replica_selector_stops_the_broker_at_start(tmp_path):
    with pytest.raises(ConfigError, match="replica.selector.class.*com.example.NearestSelector could not be found"):
        BrokerConfig({"replica.selector.class": "com.example.NearestSelector"})
    command = [sys.executable, "-m", "pykbroker", "--override", "replica.selector.class=com.example.NearestSelector",
               "--override", f"log.dirs={tmp_path}", "--override", "listeners=PLAINTEXT://127.0.0.1:0"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert ("Invalid configuration: Invalid value com.example.NearestSelector for configuration "
            "replica.selector.class: Class com.example.NearestSelector could not be found") in run.stderr
