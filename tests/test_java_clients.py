"""Acceptance: the Java client (kafka-clients 3.9.1, with its default settings) works against the
broker as against Apache Kafka 3.9: producer, consumer groups, manual assignment and AdminClient,
including every call Spark 4.0's Kafka source and sink make.

The scenarios are the Java program `tests/java/ClientScenarios.java`, compiled once per session
with `javac` against the jars of the `shigawire-apache-flink-libraries` package (in the `test`
extra); each test runs one scenario, with clients of its own, in the module's one JVM (started
once: a JVM start per test would cost more than most scenarios), which checks what the client got
back and answers "PASS <scenario>" or "FAIL <scenario>: <what went wrong>". These tests never
skip: a missing JDK or jar is a failure.

The broker is configured like Kafka's own development `server.properties`
(`group.initial.rebalance.delay.ms=0`), so that a group's first join is not held back 3 s.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from compat import java
from pykbroker.records import compression
from pykbroker.testkit.process import BrokerProcess

from .clients import stored_batches

SOURCES = [Path(__file__).parent / "java" / "ClientScenarios.java"]


@pytest.fixture(scope="session")
def java_classes(tmp_path_factory) -> Path:
    return java.compile_sources(SOURCES, tmp_path_factory.mktemp("java-classes"))


@pytest.fixture(scope="module")
def scenarios_jvm(java_classes, tmp_path_factory):
    """ClientScenarios serving the module's tests, one after the other, in one JVM."""
    stderr = tmp_path_factory.mktemp("java-scenarios") / "stderr"
    stderr.touch()
    with java.ServingMain(java_classes, "ClientScenarios", stderr) as jvm:
        yield jvm


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("java-broker"),
                       {"group.initial.rebalance.delay.ms": "0"}) as running:
        yield running


@pytest.fixture
def topic(request) -> str:
    """A topic name of the test's own, for the scenario's topics."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", request.node.name).strip("-")[:200]


def run(scenarios_jvm: java.ServingMain, scenario: str, broker, topic: str) -> None:
    """Runs one scenario; fails with its message, output and the broker's log tail."""
    result = scenarios_jvm.run(scenario, broker.bootstrap, topic)
    if result.returncode != 0 or f"PASS {scenario}" not in result.stdout:
        verdict = next((line for line in result.stdout.splitlines()
                        if line.startswith("FAIL")), f"exit code {result.returncode}")
        log_tail = "\n".join(broker.log_text().splitlines()[-30:])
        pytest.fail(f"{verdict}\n--- java output ---\n{result.stdout}"
                    f"{java.without_logging_noise(result.stderr)}\n--- broker log (tail) ---\n"
                    f"{log_tail}", pytrace=False)


# -- producer ---------------------------------------------------------------------------------

def test_a_producer_with_default_settings_writes_idempotent_batches_with_acks_all(
        scenarios_jvm, broker, topic):
    """KafkaProducer defaults (enable.idempotence=true, acks=all): keyed records land on their
    key's partition at consecutive offsets, acknowledged with those offsets, and the stored
    batches carry the producer id and sequence numbers the broker handed out."""
    run(scenarios_jvm, "producer-defaults", broker, topic)

    batches = [b for p in range(3) for b in stored_batches(broker.bootstrap, topic, p)]
    assert batches and all(b.producer_id >= 0 for b in batches)
    assert len({b.producer_id for b in batches}) == 1
    assert all(b.base_sequence >= 0 for b in batches)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_every_compression_type_round_trips(scenarios_jvm, broker, topic, codec):
    run(scenarios_jvm, f"producer-compression-{codec}", broker, topic)

    stored = {b.compression for b in stored_batches(broker.bootstrap, topic)}
    assert stored == {getattr(compression, codec.upper())}


def test_the_spark_sink_producer_writes_byte_arrays_null_keys_and_headers(
        scenarios_jvm, broker, topic):
    """Spark's Kafka sink: KafkaProducer<byte[], byte[]> with ByteArraySerializer, records with
    and without keys and partitions, a header with a null value."""
    run(scenarios_jvm, "spark-sink", broker, topic)


# -- consumers --------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario", ["group-range", "group-roundrobin"])
def test_two_eager_consumers_share_partitions_and_a_rejoining_one_resumes_after_the_commit(
        scenarios_jvm, broker, topic, scenario):
    """Two members of a group (RangeAssignor, the default, or RoundRobinAssignor) get two of
    four partitions each, read every record once between them, commitSync and close; a new
    member reads only what came after the commit."""
    run(scenarios_jvm, scenario, broker, topic)


def test_cooperative_sticky_members_hand_over_partitions_without_revoking_all(
        scenarios_jvm, broker, topic):
    """With CooperativeStickyAssignor, the first member revokes exactly the two partitions that
    move to the member that joins, keeps the other two throughout, and loses none."""
    run(scenarios_jvm, "group-cooperative-sticky", broker, topic)


def test_commit_sync_offsets_and_metadata_are_where_a_rejoining_consumer_resumes(
        scenarios_jvm, broker, topic):
    run(scenarios_jvm, "group-commit-resume", broker, topic)


def test_manual_assignment_with_seek_position_and_offsets_for_times(scenarios_jvm, broker, topic):
    """assign, beginningOffsets, endOffsets, seek, position, pause/resume, seekToBeginning,
    seekToEnd and offsetsForTimes (between records, on the first, after the last)."""
    run(scenarios_jvm, "consumer-assign-seek", broker, topic)


def test_the_spark_source_reads_offset_ranges_and_sees_deleted_records_as_out_of_range(
        scenarios_jvm, broker, topic):
    """Spark's Kafka source: AdminClient listOffsets with both isolation levels, then an executor
    consumer (group spark-kafka-source-*-executor, auto.offset.reset=none, isolation.level
    read_committed and read_uncommitted) assigns, seeks and polls an offset range and finds the
    available range; after deleteRecords, seeking under the new start raises
    OffsetOutOfRangeException, which is how Spark detects data loss."""
    run(scenarios_jvm, "spark-source", broker, topic)


# -- AdminClient ------------------------------------------------------------------------------

def test_admin_creates_lists_describes_grows_and_deletes_topics(scenarios_jvm, broker, topic):
    run(scenarios_jvm, "admin-topics", broker, topic)


def test_admin_describes_the_cluster(scenarios_jvm, broker, topic):
    run(scenarios_jvm, "admin-cluster", broker, topic)


def test_admin_lists_earliest_latest_by_timestamp_and_max_timestamp_offsets(
        scenarios_jvm, broker, topic):
    run(scenarios_jvm, "admin-list-offsets", broker, topic)


def test_admin_deletes_records_and_consumers_follow_the_new_log_start(scenarios_jvm, broker, topic):
    run(scenarios_jvm, "admin-delete-records", broker, topic)


def test_admin_describes_and_incrementally_alters_configs(scenarios_jvm, broker, topic):
    run(scenarios_jvm, "admin-configs", broker, topic)


def test_admin_lists_describes_and_deletes_consumer_groups_and_their_offsets(
        scenarios_jvm, broker, topic):
    run(scenarios_jvm, "admin-groups", broker, topic)
