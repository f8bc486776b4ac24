"""Acceptance: Spark 3.5 Structured Streaming reads from and writes to the broker through Spark's
Kafka connector (spark-sql-kafka-0-10), as with Apache Kafka 3.9: streaming queries written as
the Structured Streaming + Kafka Integration Guide shows, starting at earliest, latest,
per-partition offsets and timestamps, rate-limited by maxOffsetsPerTrigger, restarted from their
checkpoint without loss or duplicates, failing (or not, with failOnDataLoss=false) after
DeleteRecords removed records they had yet to read; batch reads of offset ranges; batch and
streaming writes through the Kafka sink; and the windowed-counts example pipeline.

Spark runs `local[2]` in this process (PySpark, the `spark` extra). Its Kafka connector is not in
any Python package: it comes from `SPARK_KAFKA_JARS` (comma-separated jar paths, passed as
`spark.jars`), or else Spark resolves it from Maven Central (`spark.jars.packages`) when that can
be reached. Without either, the module is skipped with one message.
"""
from __future__ import annotations

import importlib.util
import json
import os
import urllib.request
from pathlib import Path

import pytest

from pykbroker.testing import BrokerProcess

from .clients import create_topic
from .spark_support import stop_spark

T0 = 1_700_000_000_000  # record timestamps of the timestamp tests
MAVEN = "https://repo1.maven.org/maven2/org/apache/spark/spark-sql-kafka-0-10_2.12"


def connector() -> tuple[dict[str, str], str | None]:
    """Spark settings that load the Kafka connector, or why it cannot be had here."""
    try:
        import pyspark
    except ImportError:
        return {}, "PySpark is not installed (pip install -e '.[spark]')"
    jars = os.environ.get("SPARK_KAFKA_JARS")
    if jars:
        missing = [j for j in jars.split(",") if not Path(j).is_file()]
        if missing:
            return {}, f"SPARK_KAFKA_JARS names missing files: {missing}"
        return {"spark.jars": jars}, None
    version = pyspark.__version__
    pom = f"{MAVEN}/{version}/spark-sql-kafka-0-10_2.12-{version}.pom"
    try:
        urllib.request.urlopen(urllib.request.Request(pom, method="HEAD"), timeout=3).close()
    except Exception as failure:  # noqa: BLE001 - unreachable for whatever reason
        return {}, (f"Spark's Kafka connector: set SPARK_KAFKA_JARS, or reach Maven Central "
                    f"({type(failure).__name__})")
    return {"spark.jars.packages":
            f"org.apache.spark:spark-sql-kafka-0-10_2.12:{version}"}, None


SPARK_CONFIG, UNAVAILABLE = connector()
if UNAVAILABLE:
    pytest.skip(UNAVAILABLE, allow_module_level=True)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.errors import StreamingQueryException  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "spark_windowed_counts.py"
_spec = importlib.util.spec_from_file_location("spark_windowed_counts", EXAMPLE)
spark_windowed_counts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(spark_windowed_counts)


@pytest.fixture(scope="module")
def spark():
    builder = (SparkSession.builder.master("local[2]").appName("pykbroker-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in SPARK_CONFIG.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    for query in session.streams.active:
        query.stop()
    stop_spark(session)



@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("spark-broker")) as running:
        yield running


@pytest.fixture
def topic(request, broker) -> str:
    """A 2-partition topic of the test's own, with records 0-9 in each partition (value
    "p<partition>-<i>", key "k<i>", timestamp T0 + i s)."""
    name = request.node.name.replace("_", "-")[:100]
    create_topic(broker.bootstrap, name, partitions=2)
    produce(broker.bootstrap, name, [(p, f"k{i}", f"p{p}-{i}", T0 + i * 1000)
                                     for p in (0, 1) for i in range(10)])
    return name


def produce(bootstrap: str, topic: str, records) -> None:
    """records: (partition, key, value, timestamp ms) tuples."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, key, value, timestamp in records:
        where = {} if partition is None else {"partition": partition}
        producer.produce(topic, key=key, value=value, timestamp=timestamp or 0, **where)
    assert producer.flush(30) == 0


def consume(bootstrap: str, topic: str, partitions: int, count: int) -> list:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-check",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    got = []
    try:
        for _ in range(300):
            if len(got) >= count:
                break
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                got.append(message)
    finally:
        consumer.close()
    return got


def read_stream(spark, bootstrap: str, topic: str, **options):
    """The source as the integration guide creates it, plus the given options."""
    reader = (spark
              .readStream
              .format("kafka")
              .option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def rows(df) -> list[tuple]:
    return df.selectExpr("partition", "offset", "CAST(key AS STRING)",
                         "CAST(value AS STRING)").orderBy("partition", "offset").collect()


def run_to_memory(df, name: str) -> list[tuple]:
    """Runs the streaming query with the availableNow trigger (it reads what there is, then
    stops) into a memory table; returns its (partition, offset, key, value) rows."""
    query = (df.selectExpr("partition", "offset", "CAST(key AS STRING) AS key",
                           "CAST(value AS STRING) AS value")
             .writeStream.format("memory").queryName(name)
             .trigger(availableNow=True).start())
    finish(query)
    return [tuple(r) for r in
            df.sparkSession.sql(f"SELECT * FROM {name} ORDER BY partition, offset").collect()]


def finish(query) -> None:
    """Waits for an availableNow query to stop by itself; fails if it failed."""
    try:
        assert query.awaitTermination(120), "the query did not finish"
    finally:
        query.stop()


def expected(partition_starts: dict[int, int], end: int = 10) -> list[tuple]:
    return [(p, i, f"k{i}", f"p{p}-{i}") for p, start in sorted(partition_starts.items())
            for i in range(start, end)]


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


def test_a_restarted_query_resumes_from_its_checkpoint_without_loss_or_duplicates(
        spark, broker, topic, tmp_path):
    def run():
        query = (read_stream(spark, broker.bootstrap, topic, startingOffsets="earliest")
                 .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
                 .writeStream.format("parquet").option("path", str(tmp_path / "out"))
                 .option("checkpointLocation", str(tmp_path / "checkpoint"))
                 .trigger(availableNow=True).start())
        finish(query)
        return sum(p["numInputRows"] for p in query.recentProgress)

    assert run() == 20
    produce(broker.bootstrap, topic, [(p, "more", f"more-{p}-{i}", None)
                                      for p in (0, 1) for i in range(3)])
    assert run() == 6  # only what came after the first run

    written = spark.read.parquet(str(tmp_path / "out"))
    assert written.count() == 26
    assert written.select("partition", "offset").distinct().count() == 26
    assert sorted(tuple(r) for r in written.groupBy("partition").agg(
        F.min("offset"), F.max("offset")).collect()) == [(0, 0, 12), (1, 0, 12)]


def test_records_deleted_before_the_query_read_them_fail_it_unless_fail_on_data_loss_is_off(
        spark, broker, topic, tmp_path):
    """The query read offsets 0-9 of both partitions; 10 more come to partition 0 and
    DeleteRecords removes its offsets below 15 before the query runs again: with the default
    failOnDataLoss=true the query fails, naming the option; with false it goes on at 15."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import AdminClient

    def run(**options):
        df = read_stream(spark, broker.bootstrap, topic, startingOffsets="earliest", **options)
        return (df.selectExpr("partition", "offset")
                .writeStream.format("parquet").option("path", str(tmp_path / "out"))
                .option("checkpointLocation", str(tmp_path / "checkpoint"))
                .trigger(availableNow=True).start())

    finish(run())
    produce(broker.bootstrap, topic, [(0, "late", f"late-{i}", None) for i in range(10, 20)])
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    [deleted] = admin.delete_records([TopicPartition(topic, 0, 15)]).values()
    assert deleted.result(30).low_watermark == 15

    with pytest.raises(StreamingQueryException) as failure:
        finish(run())
    assert "failOnDataLoss" in str(failure.value)

    finish(run(failOnDataLoss="false"))
    offsets = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "out")).collect())
    assert offsets == [(0, i) for i in [*range(10), *range(15, 20)]] + [(1, i) for i in range(10)]


def test_a_batch_query_reads_an_offset_range(spark, broker, topic):
    df = (spark
          .read
          .format("kafka")
          .option("kafka.bootstrap.servers", broker.bootstrap)
          .option("subscribe", topic)
          .option("startingOffsets", json.dumps({topic: {"0": 2, "1": -2}}))
          .option("endingOffsets", json.dumps({topic: {"0": 5, "1": -1}}))
          .load())

    assert [tuple(r) for r in rows(df)] == expected({0: 2}, end=5) + expected({1: 0})


# -- writing ----------------------------------------------------------------------------------

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
