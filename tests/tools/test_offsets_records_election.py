"""`pykbroker get-offsets`, `delete-records` and `leader-election`: GetOffsetShell's, DeleteRecordsCommand's
and LeaderElectionCommand's flags and output."""

from __future__ import annotations

import json

import pytest

from .conftest import fresh


@pytest.fixture(scope="module")
def filled(broker):
    """A topic of 3 partitions with 10, 20 and 0 records."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = fresh("filled")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for partition, count in ((0, 10), (1, 20)):
        for i in range(count):
            producer.produce(topic, f"r{i}".encode(), partition=partition)
    assert producer.flush(30) == 0
    return topic


def test_get_offsets_prints_topic_partition_offset_lines(broker, pykbroker, filled):
    latest = pykbroker("get-offsets", "--bootstrap-server", broker.bootstrap, "--topic", filled)
    assert latest.out.splitlines() == [f"{filled}:0:10", f"{filled}:1:20", f"{filled}:2:0"]
    earliest = pykbroker(
        "get-offsets", "--bootstrap-server", broker.bootstrap, "--topic", filled, "--time", "-2", "--partitions", "0,1"
    )
    assert earliest.out.splitlines() == [f"{filled}:0:0", f"{filled}:1:0"]


def test_get_offsets_takes_topic_partition_patterns(broker, pykbroker, filled):
    ranged = pykbroker("get-offsets", "--bootstrap-server", broker.bootstrap, "--topic-partitions", f"{filled}:1-")
    assert ranged.out.splitlines() == [f"{filled}:1:20", f"{filled}:2:0"]
    mixed = pykbroker(
        "get-offsets", "--bootstrap-server", broker.bootstrap, "--topic-partitions", f"{filled}:1", "--topic", filled
    )
    assert (mixed.status, mixed.err) == (
        1,
        "Error occurred: --topic-partitions cannot be used with --topic or --partitions\n",
    )


def test_get_offsets_without_a_match_is_an_error(broker, pykbroker):
    missing = pykbroker("get-offsets", "--bootstrap-server", broker.bootstrap, "--topic", "nothing-matches-this")
    assert (missing.status, missing.err) == (
        1,
        "Error occurred: Could not match any topic-partitions with the specified filters\n",
    )


def test_delete_records_reports_low_watermarks_then_earliest_offsets_move(broker, pykbroker, tmp_path):
    topic = fresh("trimmed")
    pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic, "--partitions", "2")
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(8):
        producer.produce(topic, b"x", partition=i % 2)
    producer.flush(30)
    offsets = tmp_path / "offsets.json"
    offsets.write_text(
        json.dumps(
            {
                "version": 1,
                "partitions": [
                    {"topic": topic, "partition": 0, "offset": 3},
                    {"topic": topic, "partition": 1, "offset": -1},
                ],
            }
        )
    )

    deleted = pykbroker("delete-records", "--bootstrap-server", broker.bootstrap, "--offset-json-file", str(offsets))
    lines = deleted.out.splitlines()
    assert lines[:2] == ["Executing records delete operation", "Records delete operation completed:"]
    assert sorted(lines[2:]) == [  # in the order of Kafka's HashMap, which the topic's name decides
        f"partition: {topic}-0\tlow_watermark: 3",
        f"partition: {topic}-1\tlow_watermark: 4",
    ]
    earliest = pykbroker("get-offsets", "--bootstrap-server", broker.bootstrap, "--topic", topic, "--time", "earliest")
    assert earliest.out.splitlines() == [f"{topic}:0:3", f"{topic}:1:4"]


def test_delete_records_exits_1_when_a_partition_fails(broker, pykbroker, tmp_path):
    """Kafka 3.9.0's tool prints the same lines and exits 0; here a script can tell (exit status 1)."""
    topic = fresh("beyond")
    pykbroker("topics", "--bootstrap-server", broker.bootstrap, "--create", "--topic", topic, "--partitions", "2")
    offsets = tmp_path / "beyond.json"
    partitions = [{"topic": topic, "partition": 0, "offset": 0}, {"topic": topic, "partition": 1, "offset": 5}]
    offsets.write_text(json.dumps({"version": 1, "partitions": partitions}))
    deleted = pykbroker("delete-records", "--bootstrap-server", broker.bootstrap, "--offset-json-file", str(offsets))
    assert deleted.status == 1
    assert sorted(deleted.out.splitlines()[2:]) == [
        f"partition: {topic}-0\tlow_watermark: 0",
        f"partition: {topic}-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: "
        "The requested offset is not within the range of offsets maintained by the server.",
    ]
    missing = pykbroker("delete-records", "--bootstrap-server", broker.bootstrap, "--offset-json-file", "nope.json")
    assert (missing.status, missing.err) == (1, "Unable to read file nope.json\n")


def test_delete_records_refuses_duplicate_partitions(broker, pykbroker, tmp_path):
    offsets = tmp_path / "twice.json"
    entry = {"topic": "t", "partition": 0, "offset": 1}
    offsets.write_text(json.dumps({"partitions": [entry, entry]}))
    refused = pykbroker("delete-records", "--bootstrap-server", broker.bootstrap, "--offset-json-file", str(offsets))
    assert (refused.status, refused.err) == (1, "Offset json file contains duplicate topic partitions: t-0\n")


def test_preferred_election_of_a_partition_already_led_by_its_preferred_replica(broker, pykbroker, filled):
    elected = pykbroker(
        "leader-election",
        "--bootstrap-server",
        broker.bootstrap,
        "--election-type",
        "preferred",
        "--topic",
        filled,
        "--partition",
        "0",
    )
    assert (elected.status, elected.out) == (0, f"Valid replica already elected for partitions {filled}-0\n")


def test_election_of_an_unknown_partition_fails_with_kafkas_lines(broker, pykbroker, tmp_path):
    partitions = tmp_path / "elect.json"
    partitions.write_text(json.dumps({"partitions": [{"topic": "no-such-topic", "partition": 0}]}))
    failed = pykbroker(
        "leader-election",
        "--bootstrap-server",
        broker.bootstrap,
        "--election-type",
        "PREFERRED",
        "--path-to-json-file",
        str(partitions),
    )
    assert failed.status == 1
    assert failed.out.startswith(
        "Error completing leader election (PREFERRED) for partition: no-such-topic-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
    )
    assert failed.err == "1 replica(s) could not be elected\n"


def test_election_needs_exactly_one_partition_selector(broker, pykbroker):
    both = pykbroker(
        "leader-election",
        "--bootstrap-server",
        broker.bootstrap,
        "--election-type",
        "preferred",
        "--all-topic-partitions",
        "--topic",
        "t",
        "--partition",
        "0",
    )
    assert both.status == 2
