"""Acceptance: Spark 4.0 Structured Streaming reads from and writes to the broker through Spark's
stock Kafka connector (spark-sql-kafka-0-10), as with Apache Kafka 3.9: streaming queries written
as the Structured Streaming + Kafka Integration Guide shows, starting at earliest, latest,
per-partition offsets and timestamps, subscribed to a topic pattern, rate-limited by
maxOffsetsPerTrigger, restarted from their checkpoint without loss or duplicates (also after the
broker was killed), failing (or not, with failOnDataLoss=false) when records they had yet to read
are gone; batch reads of offset and timestamp ranges, with headers, split by minPartitions;
batch and streaming writes through the Kafka sink, idempotent with acks=all; batch reads of a
topic written transactionally with `kafka.isolation.level` read_committed and read_uncommitted;
a batch write and read through a SASL_SSL listener (SCRAM-SHA-512, PEM trust store); and the
windowed-counts example pipeline.

Spark runs `local[2]` in this process (PySpark, the `spark` extra). Its Kafka connector comes
from `SPARK_KAFKA_JARS`, `../shared/spark-kafka/` beside the checkout or Maven Central (see
spark_support.py); without it the module is skipped with one line, or fails in CI.
"""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pykbroker.testkit.process import BrokerProcess
from pykbroker.testkit.waiting import wait_until

from .clients import create_topic, stored_batches
from .spark_support import (
    check_exact_round_trip, consume, finish, produce, read_batch, read_stream,
    end_module_queries, require_connector, rows, run_to_memory, write_batch,
)
from .txn_support import send, transactional_producer

require_connector()  # the module is skipped without Spark's Kafka connector (fails in CI)

from pyspark.sql import functions as F  # noqa: E402
from pyspark.errors import StreamingQueryException  # noqa: E402

T0 = 1_700_000_000_000  # record timestamps of the timestamp tests
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "spark_windowed_counts.py"
_spec = importlib.util.spec_from_file_location("spark_windowed_counts", EXAMPLE)
spark_windowed_counts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(spark_windowed_counts)


@pytest.fixture(scope="module")
def spark(spark_session):
    yield spark_session
    end_module_queries(spark_session)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("spark-broker")) as running:
        yield running


def topic_name(request) -> str:
    return request.node.name.replace("_", "-")[:100]


@pytest.fixture
def topic(request, broker) -> str:
    """A 2-partition topic of the test's own, with records 0-9 in each partition (value
    "p<partition>-<i>", key "k<i>", timestamp T0 + i s)."""
    name = topic_name(request)
    fill(broker.bootstrap, name)
    return name


def fill(bootstrap: str, name: str) -> None:
    """Creates the 2-partition topic and writes the records of the `topic` fixture."""
    create_topic(bootstrap, name, partitions=2)
    produce(bootstrap, name, [(p, f"k{i}", f"p{p}-{i}", T0 + i * 1000)
                              for p in (0, 1) for i in range(10)])


def expected(partition_starts: dict[int, int], end: int = 10) -> list[tuple]:
    return [(p, i, f"k{i}", f"p{p}-{i}") for p, start in sorted(partition_starts.items())
            for i in range(start, end)]


def run_to_files(df, out: Path, **options):
    """Starts the query into a Parquet file sink with its checkpoint beside it (availableNow:
    it reads what there is, then stops)."""
    writer = (df.writeStream.format("parquet").option("path", str(out / "data"))
              .option("checkpointLocation", str(out / "checkpoint")).trigger(availableNow=True))
    for key, value in options.items():
        writer = writer.option(key, value)
    return writer.start()


def offsets_in(spark, out: Path) -> list[tuple]:
    """The (partition, offset) pairs the file sink holds, duplicates included, in order."""
    return sorted(tuple(r) for r in spark.read.parquet(str(out / "data"))
                  .select("partition", "offset").collect())


def read_rows_once(spark, bootstrap: str, topic: str, out: Path, **options) -> int:
    """One availableNow run of the checkpointed query of (partition, offset, value) into the
    file sink; returns how many records this run read."""
    query = run_to_files(read_stream(spark, bootstrap, topic, startingOffsets="earliest",
                                     **options)
                         .selectExpr("partition", "offset", "CAST(value AS STRING) AS value"), out)
    finish(query)
    return sum(p["numInputRows"] for p in query.recentProgress)


# -- reading ----------------------------------------------------------------------------------

def test_a_streaming_query_reads_every_record_from_earliest(spark, broker, topic):
    df = (spark
          .readStream
          .format("kafka")
          .option("kafka.bootstrap.servers", broker.bootstrap)
          .option("subscribe", topic)
          .option("startingOffsets", "earliest")
          .load())
    assert df.isStreaming
    assert [f.name for f in df.schema.fields] == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]

    assert run_to_memory(df, "from_earliest") == expected({0: 0, 1: 0})


def test_a_streaming_query_from_latest_reads_only_records_written_after_it_started(
        spark, broker, topic):
    query = (read_stream(spark, broker.bootstrap, topic, startingOffsets="latest")
             .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName("from_latest").start())
    try:
        query.processAllAvailable()  # the starting offsets are fixed by now
        produce(broker.bootstrap, topic, [(1, "new", "new-0", None), (1, "new", "new-1", None)])
        query.processAllAvailable()
    finally:
        query.stop()

    got = [tuple(r) for r in spark.sql("SELECT * FROM from_latest ORDER BY offset").collect()]
    assert got == [(1, 10, "new-0"), (1, 11, "new-1")]


def test_per_partition_json_starting_offsets(spark, broker, topic):
    """3 in partition 0, -2 (earliest) in partition 1."""
    df = read_stream(spark, broker.bootstrap, topic,
                     startingOffsets=json.dumps({topic: {"0": 3, "1": -2}}))

    assert run_to_memory(df, "json_offsets") == expected({0: 3, 1: 0})


def test_starting_timestamp_for_all_partitions_and_by_partition(spark, broker, topic):
    """Each partition starts at the first record at or after the time."""
    every = read_stream(spark, broker.bootstrap, topic, startingTimestamp=str(T0 + 4500))
    assert run_to_memory(every, "starting_timestamp") == expected({0: 5, 1: 5})

    by_partition = read_stream(spark, broker.bootstrap, topic, startingOffsetsByTimestamp=(
        json.dumps({topic: {"0": T0 + 2500, "1": T0 + 7000}})))
    assert run_to_memory(by_partition, "offsets_by_timestamp") == expected({0: 3, 1: 7})


def test_max_offsets_per_trigger_splits_the_records_into_batches(spark, broker, topic):
    df = read_stream(spark, broker.bootstrap, topic, startingOffsets="earliest",
                     maxOffsetsPerTrigger="6")
    query = (df.selectExpr("offset").writeStream.format("memory").queryName("rate_limited")
             .trigger(availableNow=True).start())
    finish(query)

    batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert batches == [6, 6, 6, 2]
    assert spark.sql("SELECT count(*) FROM rate_limited").first()[0] == 20


def test_a_topic_pattern_picks_up_a_topic_created_while_the_query_runs(spark, broker, request):
    """subscribePattern: the query reads the matching topic there is, and a matching topic
    created later from its first record on; a topic that does not match is left alone."""
    prefix = topic_name(request)[:60]
    fill(broker.bootstrap, f"{prefix}-first")
    query = (read_stream(spark, broker.bootstrap, subscribePattern=f"{prefix}-(first|later)",
                         startingOffsets="earliest")
             .selectExpr("topic", "partition", "offset")
             .writeStream.format("memory").queryName("by_pattern")
             .trigger(processingTime="1 second").start())
    try:
        query.processAllAvailable()
        fill(broker.bootstrap, f"{prefix}-later")
        fill(broker.bootstrap, f"{prefix}-other")

        def read_from(topic: str) -> int:
            return spark.sql(f"SELECT count(*) FROM by_pattern WHERE topic = '{topic}'").first()[0]

        wait_until(lambda: read_from(f"{prefix}-later") == 20, "the new topic's records",
                   timeout=120, interval=1)
    finally:
        query.stop()

    got = spark.sql("SELECT topic, partition, offset FROM by_pattern").collect()
    assert sorted(tuple(r) for r in got) == [
        (f"{prefix}-{name}", p, i) for name in ("first", "later") for p in (0, 1)
        for i in range(10)]


def test_a_restarted_query_resumes_from_its_checkpoint_without_loss_or_duplicates(
        spark, broker, topic, tmp_path):
    assert read_rows_once(spark, broker.bootstrap, topic, tmp_path) == 20
    produce(broker.bootstrap, topic, [(p, "more", f"more-{p}-{i}", None)
                                      for p in (0, 1) for i in range(3)])
    assert read_rows_once(spark, broker.bootstrap, topic, tmp_path) == 6  # only what came after

    assert offsets_in(spark, tmp_path) == [(p, i) for p in (0, 1) for i in range(13)]


def test_a_query_restarted_after_the_broker_was_killed_reads_on_without_loss_or_duplicates(
        spark, request, tmp_path):
    """The query read 20 records; 6 more are acknowledged, the broker dies (kill -9) and is
    started again on its port; 4 more come. The query, started again from its checkpoint, reads
    exactly the 10 it had not read."""
    with BrokerProcess(tmp_path / "broker", keep_port_on_restart=True) as own:
        name = topic_name(request)
        fill(own.bootstrap, name)
        assert read_rows_once(spark, own.bootstrap, name, tmp_path) == 20

        produce(own.bootstrap, name, [(p, "before", f"before-{i}", None)
                                      for p in (0, 1) for i in range(3)], acks="all")
        own.kill()
        own.start()
        produce(own.bootstrap, name, [(p, "after", f"after-{i}", None)
                                      for p in (0, 1) for i in range(2)], acks="all")
        assert read_rows_once(spark, own.bootstrap, name, tmp_path) == 10

    assert offsets_in(spark, tmp_path) == [(p, i) for p in (0, 1) for i in range(15)]


def test_records_deleted_before_the_query_read_them_fail_it_unless_fail_on_data_loss_is_off(
        spark, broker, topic, tmp_path):
    """The query read offsets 0-9 of both partitions; 10 more come to partition 0 and
    DeleteRecords removes its offsets below 15 before the query runs again: with the default
    failOnDataLoss=true the query fails, naming the option; with false it goes on at 15."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    def run(**options):
        return run_to_files(read_stream(spark, broker.bootstrap, topic,
                                        startingOffsets="earliest", **options)
                            .selectExpr("partition", "offset"), tmp_path)

    finish(run())
    produce(broker.bootstrap, topic, [(0, "late", f"late-{i}", None) for i in range(10, 20)])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    [deleted] = admin.delete_records([TopicPartition(topic, 0, 15)]).values()
    assert deleted.result(30).low_watermark == 15

    with pytest.raises(StreamingQueryException) as failure:
        finish(run())
    assert "failOnDataLoss" in str(failure.value)

    finish(run(failOnDataLoss="false"))
    assert offsets_in(spark, tmp_path) == (
        [(0, i) for i in [*range(10), *range(15, 20)]] + [(1, i) for i in range(10)])


def test_a_topic_deleted_and_created_again_fails_the_query_unless_fail_on_data_loss_is_off(
        spark, broker, topic, tmp_path):
    """The query read offsets 0-9 of both partitions; the topic is deleted and created again
    with 3 records in each partition, so that its offsets went back from 10 to 3. With the
    default failOnDataLoss=true the query fails, naming the option; with false it carries on
    from the new topic's end and reads what is written after that."""
    from confluent_kafka.admin import AdminClient

    def run(**options):
        return read_rows_once(spark, broker.bootstrap, topic, tmp_path, **options)

    assert run() == 20
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.delete_topics([topic], operation_timeout=30)[topic].result(30)
    wait_until(lambda: topic not in admin.list_topics(timeout=10).topics, "the topic deleted")
    create_topic(broker.bootstrap, topic, partitions=2)
    produce(broker.bootstrap, topic, [(p, "again", f"again-{i}", None)
                                      for p in (0, 1) for i in range(3)])

    with pytest.raises(StreamingQueryException) as failure:
        run()
    assert "failOnDataLoss" in str(failure.value)

    assert run(failOnDataLoss="false") == 0
    produce(broker.bootstrap, topic, [(p, "next", f"next-{i}", None)
                                      for p in (0, 1) for i in range(2)])
    assert run(failOnDataLoss="false") == 4
    # offsets 3 and 4 of each partition twice: once from the old topic, once from the new
    assert offsets_in(spark, tmp_path) == sorted(
        (p, i) for p in (0, 1) for i in [*range(10), 3, 4])


def test_a_batch_query_reads_an_offset_range(spark, broker, topic):
    df = (spark
          .read
          .format("kafka")
          .option("kafka.bootstrap.servers", broker.bootstrap)
          .option("subscribe", topic)
          .option("startingOffsets", json.dumps({topic: {"0": 2, "1": -2}}))
          .option("endingOffsets", json.dumps({topic: {"0": 5, "1": -1}}))
          .load())

    assert rows(df) == expected({0: 2}, end=5) + expected({1: 0})


def test_a_batch_query_reads_a_range_of_timestamps(spark, broker, topic):
    """startingOffsetsByTimestamp / endingOffsetsByTimestamp: from the first record at or after
    the starting time up to, not including, the first at or after the ending time."""
    df = read_batch(spark, broker.bootstrap, topic,
                    startingOffsetsByTimestamp=json.dumps({topic: {"0": T0 + 1500, "1": T0}}),
                    endingOffsetsByTimestamp=json.dumps({topic: {"0": T0 + 5000,
                                                                 "1": T0 + 3500}}))
    assert rows(df) == expected({0: 2}, end=5) + expected({1: 0}, end=4)

    every = read_batch(spark, broker.bootstrap, topic, startingTimestamp=str(T0 + 6000),
                       endingTimestamp=str(T0 + 8000))
    assert rows(every) == expected({0: 6, 1: 6}, end=8)


def test_a_batch_query_returns_record_headers_with_include_headers(spark, broker, request):
    """includeHeaders=true adds the `headers` column: (key, value) pairs in record order,
    repeated keys and null values kept."""
    name = topic_name(request)
    create_topic(broker.bootstrap, name)
    produce(broker.bootstrap, name, [
        (0, "k0", "traced", None, [("trace", b"t-1"), ("hop", b"a"), ("hop", b"b")]),
        (0, "k1", "empty", None, [("flag", None)]),
        (0, "k2", "plain", None)])

    df = read_batch(spark, broker.bootstrap, name, includeHeaders="true")
    assert "headers" in df.columns
    got = [(r.value.decode(), [(h.key, None if h.value is None else bytes(h.value))
                               for h in r.headers or []])
           for r in df.orderBy("offset").collect()]
    assert got == [("traced", [("trace", b"t-1"), ("hop", b"a"), ("hop", b"b")]),
                   ("empty", [("flag", None)]),
                   ("plain", [])]


def test_min_partitions_splits_the_offset_ranges_into_more_spark_partitions(
        spark, broker, topic):
    """minPartitions=4 on a 2-partition topic: four Spark partitions, every record once."""
    df = read_batch(spark, broker.bootstrap, topic, minPartitions="4")

    assert df.rdd.getNumPartitions() == 4
    assert rows(df) == expected({0: 0, 1: 0})


@pytest.mark.transactions
def test_a_batch_read_with_read_committed_returns_only_committed_transactions(
        spark, broker, request):
    """A 2-partition topic written transactionally, one transaction committed and one aborted
    (each with a record in each partition): with `kafka.isolation.level=read_committed` a batch
    read returns the committed records only; with read_uncommitted (Spark's default) both
    transactions' records, at the offsets they were written at (the COMMIT marker takes
    offset 2 of each partition). Needs the broker's transaction support."""
    name = topic_name(request)
    create_topic(broker.bootstrap, name, partitions=2)
    producer = transactional_producer(broker.bootstrap, f"{name}-txn")
    producer.begin_transaction()
    send(producer, name, [(i % 2, f"committed-{i}".encode()) for i in range(4)])
    producer.commit_transaction(30)
    producer.begin_transaction()
    send(producer, name, [(i % 2, f"aborted-{i}".encode()) for i in range(4)])
    producer.abort_transaction(30)
    committed = [(0, 0, None, "committed-0"), (0, 1, None, "committed-2"),
                 (1, 0, None, "committed-1"), (1, 1, None, "committed-3")]
    aborted = [(0, 3, None, "aborted-0"), (0, 4, None, "aborted-2"),
               (1, 3, None, "aborted-1"), (1, 4, None, "aborted-3")]

    read_committed = read_batch(spark, broker.bootstrap, name,
                                **{"kafka.isolation.level": "read_committed"})
    read_uncommitted = read_batch(spark, broker.bootstrap, name,
                                  **{"kafka.isolation.level": "read_uncommitted"})

    assert rows(read_committed) == committed
    assert rows(read_uncommitted) == sorted(committed + aborted)
    assert rows(read_batch(spark, broker.bootstrap, name)) == sorted(committed + aborted)


# -- writing ----------------------------------------------------------------------------------

def test_reads_and_writes_see_exact_keys_values_partitions_and_offsets(spark, broker, request):
    """600 records written by a client with its ordinary batching to 3 partitions come back
    exactly from a batch read and an availableNow stream, and the Kafka sink copies them to
    another topic where they get the same partitions and offsets."""
    name = topic_name(request)
    create_topic(broker.bootstrap, name, partitions=3)
    create_topic(broker.bootstrap, f"{name}-copy", partitions=3)

    check_exact_round_trip(spark, broker.bootstrap, name, f"{name}-copy", partitions=3)


def test_a_batch_write_through_the_kafka_sink(spark, broker, topic):
    sink = f"{topic}-sink"
    create_topic(broker.bootstrap, sink, partitions=2)
    df = spark.createDataFrame(
        [("a", "first", 0), (None, "no key", 1), ("c", "third", None)],
        "key STRING, value STRING, partition INT"
    ).withColumn("headers", F.expr("array(named_struct('key', 'origin', 'value', "
                                   "CAST('spark' AS BINARY)))"))

    (df.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)", "partition", "headers")
     .write
     .format("kafka")
     .option("kafka.bootstrap.servers", broker.bootstrap)
     .option("topic", sink)
     .save())

    got = {m.value(): m for m in consume(broker.bootstrap, sink, 2, 3)}
    assert sorted(got) == [b"first", b"no key", b"third"]
    assert got[b"first"].key() == b"a" and got[b"first"].partition() == 0
    assert got[b"no key"].key() is None and got[b"no key"].partition() == 1
    assert all(m.headers() == [("origin", b"spark")] for m in got.values())


def test_an_idempotent_write_with_acks_all_stores_every_row_once(spark, broker, request):
    """kafka.acks=all and kafka.enable.idempotence=true: the sink's producer writes batches
    with a producer id and sequence numbers; each of 2000 rows is stored once, in the
    partition the row names."""
    sink = topic_name(request)
    create_topic(broker.bootstrap, sink, partitions=2)
    df = spark.range(2000).selectExpr("CAST(id AS STRING) AS key", "CAST(id AS STRING) AS value",
                                      "CAST(id % 2 AS INT) AS partition")

    write_batch(df, broker.bootstrap, sink, **{"kafka.acks": "all",
                                               "kafka.enable.idempotence": "true"})

    got = consume(broker.bootstrap, sink, 2, 2000)
    assert sorted(int(m.value()) for m in got) == list(range(2000))
    assert all(int(m.value()) % 2 == m.partition() for m in got)
    for partition in (0, 1):
        batches = stored_batches(broker.bootstrap, sink, partition)
        assert all(b.has_producer_id for b in batches)
        assert sum(b.records_count for b in batches) == 1000


def test_a_streaming_write_through_the_kafka_sink(spark, broker, topic, tmp_path):
    sink = f"{topic}-upper"
    create_topic(broker.bootstrap, sink, partitions=1)
    query = (read_stream(spark, broker.bootstrap, topic, startingOffsets="earliest")
             .selectExpr("CAST(key AS STRING) AS key", "upper(CAST(value AS STRING)) AS value")
             .writeStream
             .format("kafka")
             .option("kafka.bootstrap.servers", broker.bootstrap)
             .option("topic", sink)
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True)
             .start())
    finish(query)

    got = consume(broker.bootstrap, sink, 1, 20)
    assert sorted(m.value() for m in got) == sorted(
        f"P{p}-{i}".encode() for p in (0, 1) for i in range(10))
    assert all(m.key() == f"k{m.value().decode().split('-')[1]}".encode() for m in got)


# -- security ---------------------------------------------------------------------------------

def test_a_batch_write_and_read_through_sasl_ssl_with_scram_sha_512(spark, tmp_path):
    """The Kafka sink and source with the `kafka.`-prefixed client settings of a production
    SASL_SSL cluster: SCRAM-SHA-512 (a user created through the admin API), the CA's certificate
    as a PEM trust store. A broker of its own: PLAINTEXT for the admin, SASL_SSL for Spark."""
    from .security.certs import Pki
    from .security.sasl_support import create_scram_user, sasl_broker
    from .security.tls_support import DEBUG_COMMAND

    with sasl_broker(tmp_path / "broker", pki=Pki(tmp_path / "pki"), command=DEBUG_COMMAND) as broker:
        create_scram_user(broker.plain_bootstrap, "spark", "spark-secret", "SCRAM-SHA-512")
        bootstrap = broker.bootstrap_of("SASL_SSL")
        security = {
            "kafka.security.protocol": "SASL_SSL",
            "kafka.sasl.mechanism": "SCRAM-SHA-512",
            "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                      'username="spark" password="spark-secret";',
            "kafka.ssl.truststore.type": "PEM",
            "kafka.ssl.truststore.location": str(broker.ca),
        }
        create_topic(broker.plain_bootstrap, "secured", partitions=1)
        df = spark.createDataFrame([(f"k{i}", f"v{i}") for i in range(10)], ["key", "value"])
        write_batch(df, bootstrap, "secured", **security)
        got = rows(read_batch(spark, bootstrap, "secured", **security))
        assert [offset for _, offset, _, _ in got] == list(range(10))  # two Spark tasks wrote: any order
        assert sorted((key, value) for _, _, key, value in got) == sorted((f"k{i}", f"v{i}") for i in range(10))
        assert "authentication of User:spark from" in broker.log_text()


# -- the example pipeline ---------------------------------------------------------------------

def test_the_windowed_counts_example_writes_each_closed_window_once(spark, broker, tmp_path):
    """examples/spark_windowed_counts.py with 1-minute windows and a 30 s watermark: the counts
    of a window are written once the watermark passes its end; a late event is dropped."""
    source, sink = "example-events", "example-counts"
    create_topic(broker.bootstrap, source, partitions=2)
    create_topic(broker.bootstrap, sink, partitions=1)

    def events(*items):
        produce(broker.bootstrap, source, [
            (None, "user-1", json.dumps({"user": "user-1", "action": action, "ts": ts}), None)
            for action, ts in items])

    minute = 60_000
    query = spark_windowed_counts.start(spark, broker.bootstrap, source, sink,
                                        str(tmp_path / "checkpoint"))
    try:
        events(("view", T0), ("view", T0 + 10_000), ("click", T0 + 20_000),
               ("view", T0 + minute + 5_000), ("view", T0 + 5 * minute))
        query.processAllAvailable()  # the watermark is now T0 + 4.5 min
        events(("view", T0 + 30_000),  # late: its window was written already
               ("click", T0 + 9 * minute))
        query.processAllAvailable()
    finally:
        query.stop()

    got = sorted((json.loads(m.value()) for m in consume(broker.bootstrap, sink, 1, 4)),
                 key=lambda c: (c["window_start"], c["action"]))
    assert got == [
        {"window_start": T0 - T0 % minute, "window_end": T0 - T0 % minute + minute,
         "action": "click", "count": 1},
        {"window_start": T0 - T0 % minute, "window_end": T0 - T0 % minute + minute,
         "action": "view", "count": 2},
        {"window_start": T0 - T0 % minute + minute, "window_end": T0 - T0 % minute + 2 * minute,
         "action": "view", "count": 1},
        {"window_start": T0 - T0 % minute + 5 * minute,
         "window_end": T0 - T0 % minute + 6 * minute, "action": "view", "count": 1},
    ]
