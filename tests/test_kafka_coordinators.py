"""Coordinators as Apache Kafka 3.9.0 has them, the same scenarios run on one pykbroker and on one
Kafka broker (`../shared/realkafka`) with the same settings:

- which partition of `__consumer_offsets` holds a group, and of `__transaction_state` a
  transactional id: `Utils.abs(key.hashCode()) % partitions`, seen on each broker as the
  partition a group's commit (or an id's InitProducerId) is written to, for keys whose hash
  code is negative (where an older pykbroker placed them elsewhere);
- a group's first generation with `group.initial.rebalance.delay.ms=0`: JoinGroups of two static
  members arriving together both join generation 1.
"""
from __future__ import annotations

import struct
import time

import pytest

from compat import realkafka
from compat.wire_probes import build
from pykbroker.coordinator.placement import coordinator_partition, legacy_partition
from pykbroker.protocol import headers, messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.testkit.embedded import EmbeddedBroker
from pykbroker.testkit.waiting import wait_until
from pykbroker.testkit.wire import WireClient

from .ci import skip_or_fail_in_ci

PARTITIONS = 7
SETTINGS = {"offsets.topic.num.partitions": str(PARTITIONS),
            "transaction.state.log.num.partitions": str(PARTITIONS),
            "group.initial.rebalance.delay.ms": "0"}
TOPIC = "placed"
GROUP_KEY, TRANSACTION_KEY = 0, 1
RETRIABLE = {ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
             ErrorCode.NOT_COORDINATOR}


class KafkaWithSettings(realkafka.KafkaBroker):
    def extra_settings(self, port: int) -> dict[str, str]:
        return SETTINGS


@pytest.fixture(scope="module", params=["pykbroker", "kafka"])
def target(request, tmp_path_factory):
    """(name, bootstrap) of a started broker; Kafka skipped where it cannot run (failed in CI)."""
    if request.param == "kafka":
        reason = realkafka.unavailable()
        if reason:
            skip_or_fail_in_ci(f"Kafka 3.9.0 cannot run here: {reason}")
        with KafkaWithSettings(tmp_path_factory.mktemp("kafka-coordinators")) as kafka:
            yield "kafka", kafka.bootstrap
    else:
        with EmbeddedBroker(SETTINGS) as broker:
            yield "pykbroker", broker.bootstrap


@pytest.fixture(scope="module")
def client(target):
    with WireClient(target[1], timeout=30) as wire:
        wait_until(lambda: create_topic(wire), f"{TOPIC} created", timeout=60)
        yield wire


def create_topic(client: WireClient) -> bool:
    """Create TOPIC; False while the broker is not yet registered (a broker just started)."""
    answer = client.request(ApiKey.CREATE_TOPICS, 5, build(messages.request(ApiKey.CREATE_TOPICS), {
        "timeout_ms": 30000, "validate_only": False, "topics": [
            {"name": TOPIC, "num_partitions": 1, "replication_factor": 1, "assignments": [],
             "configs": []}]}))
    error = answer.topics[0].error_code
    assert error in (ErrorCode.NONE, ErrorCode.TOPIC_ALREADY_EXISTS, ErrorCode.INVALID_REPLICATION_FACTOR)
    return error != ErrorCode.INVALID_REPLICATION_FACTOR


def negative_hash_keys(prefix: str, count: int = 4) -> list[str]:
    """Keys placed differently by Kafka's rule and by the one older pykbroker versions had
    (`(hashCode & 0x7fffffff) % partitions`): all have negative hash codes."""
    keys = (f"{prefix}-{index}" for index in range(10_000))
    return [key for key in keys
            if coordinator_partition(key, PARTITIONS) != legacy_partition(key, PARTITIONS)][:count]


def until_answered(client: WireClient, api_key: int, version: int, data: dict, error_of):
    """The answer to a request retried while its coordinator is being created or loaded."""
    answers = []

    def answered() -> bool:
        answers.append(client.request(api_key, version, build(messages.request(api_key), data)))
        if error_of(answers[-1]) in RETRIABLE:
            time.sleep(0.1)
            return False
        return True

    wait_until(answered, f"an answer to {ApiKey(api_key).name} without a retriable error", timeout=60)
    return answers[-1]


def end_offsets(client: WireClient, topic: str) -> list[int]:
    answer = client.request(ApiKey.LIST_OFFSETS, 1, build(messages.request(ApiKey.LIST_OFFSETS), {
        "replica_id": -1, "topics": [{"name": topic, "partitions": [
            {"partition_index": p, "timestamp": -1} for p in range(PARTITIONS)]}]}))
    partitions = sorted(answer.topics[0].partitions, key=lambda p: p.partition_index)
    assert all(p.error_code == ErrorCode.NONE for p in partitions), partitions
    return [p.offset for p in partitions]


def written_partition(client: WireClient, topic: str, write) -> int:
    """The one partition of `topic` whose end offset `write()` moves."""
    before = end_offsets(client, topic)
    write()
    after = end_offsets(client, topic)
    [moved] = [p for p in range(PARTITIONS) if after[p] != before[p]]
    return moved


def find_coordinator(client: WireClient, key: str, key_type: int) -> None:
    until_answered(client, ApiKey.FIND_COORDINATOR, 2, {"key": key, "key_type": key_type},
                   lambda answer: answer.error_code)


def test_a_groups_offsets_go_to_the_partition_of_utils_abs_of_its_hash_code(target, client):
    groups = negative_hash_keys("placed-group")
    find_coordinator(client, groups[0], GROUP_KEY)

    def commit(group: str) -> None:
        answer = until_answered(client, ApiKey.OFFSET_COMMIT, 2, {
            "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
            "retention_time_ms": -1, "topics": [{"name": TOPIC, "partitions": [
                {"partition_index": 0, "committed_offset": 1, "committed_metadata": ""}]}]},
            lambda answer: answer.topics[0].partitions[0].error_code)
        assert answer.topics[0].partitions[0].error_code == ErrorCode.NONE

    placed = {g: written_partition(client, "__consumer_offsets", lambda g=g: commit(g)) for g in groups}
    assert placed == {g: coordinator_partition(g, PARTITIONS) for g in groups}


def test_a_transactional_id_is_written_to_the_partition_of_utils_abs_of_its_hash_code(target, client):
    ids = negative_hash_keys("placed-txn")
    find_coordinator(client, ids[0], TRANSACTION_KEY)

    def init(transactional_id: str) -> None:
        find_coordinator(client, transactional_id, TRANSACTION_KEY)
        answer = until_answered(client, ApiKey.INIT_PRODUCER_ID, 2, {
            "transactional_id": transactional_id, "transaction_timeout_ms": 60000,
            "producer_id": -1, "producer_epoch": -1}, lambda answer: answer.error_code)
        assert answer.error_code == ErrorCode.NONE

    placed = {t: written_partition(client, "__transaction_state", lambda t=t: init(t)) for t in ids}
    assert placed == {t: coordinator_partition(t, PARTITIONS) for t in ids}


# -- the first generation with group.initial.rebalance.delay.ms=0 -----------------------------

JOIN_VERSION = 5
JoinGroup = messages.request(ApiKey.JOIN_GROUP).cls


def join_frame(client: WireClient, group: str, instance: str) -> bytes:
    """A static member's JoinGroup as `client` would send it."""
    client.correlation_id += 1
    payload = headers.encode_request_header(ApiKey.JOIN_GROUP, JOIN_VERSION, client.correlation_id,
                                            client.client_id)
    payload += messages.request(ApiKey.JOIN_GROUP).encode_bytes(JoinGroup(
        group_id=group, session_timeout_ms=10_000, rebalance_timeout_ms=3_000, member_id="",
        group_instance_id=instance, protocol_type="consumer",
        protocols=[JoinGroup.JoinGroupRequestProtocol(name="range", metadata=b"")]),
        version=JOIN_VERSION)
    return struct.pack(">i", len(payload)) + payload


def generations_of_two_joining_together(bootstrap: str, group: str) -> list[int]:
    """Two static members' JoinGroups, on two connections, made to arrive together: each is
    sent but its last byte, then both last bytes; the generations they are answered in."""
    with WireClient(bootstrap, timeout=30) as first, WireClient(bootstrap, timeout=30) as second:
        frames = [join_frame(first, group, "instance-1"), join_frame(second, group, "instance-2")]
        for wire, frame in zip((first, second), frames):
            wire.send_raw(frame[:-1])
        time.sleep(0.05)
        for wire, frame in zip((first, second), frames):
            wire.send_raw(frame[-1:])
        return [wire.receive(ApiKey.JOIN_GROUP, JOIN_VERSION)[1].generation_id for wire in (first, second)]


def test_static_members_joining_together_share_the_first_generation(target, client):
    """librdkafka's 0102_static_group_rebalance starts two static members together; had the
    first generation been formed with one of them, the other's join would rebalance the group
    and revoke what the first was just given. Kafka forms it on its purgatory's thread while its
    request threads handle the JoinGroups that arrived meanwhile: nearly always with both
    members, not always (a race between its threads). pykbroker always does."""
    name, bootstrap = target
    attempts = 3
    groups = [f"together-{index}" for index in range(attempts)]
    for group in groups:
        find_coordinator(client, group, GROUP_KEY)
    generations = [generations_of_two_joining_together(bootstrap, group) for group in groups]
    together = [g for g in generations if g == [1, 1]]
    if name == "kafka":
        assert together, generations
    else:
        assert len(together) == attempts, generations
