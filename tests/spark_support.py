"""What the Spark test modules share: a small local Spark session with Spark's Kafka connector
(one for all of them: `shared_session`), running queries the way the Structured Streaming + Kafka
Integration Guide writes them, and stopping a session together with its JVM.

The connector (spark-sql-kafka-0-10 and the jars it needs) is in no Python package. It is taken
from, in this order:

1. `SPARK_KAFKA_JARS`: comma-separated jar paths, passed to Spark as `spark.jars`;
2. `<repository>/../shared/spark-kafka/*.jar`: the stock connector of Spark 4.0.0 beside the
   checkout, as on CI machines;
3. Maven Central, when it can be reached (`spark.jars.packages`).

Without any of them a test that needs the connector is skipped with one line saying how to
provide it; in CI (`CI=true`) it fails instead, so that CI never passes without running Spark.
"""
from __future__ import annotations

import functools
import os
import urllib.request
from pathlib import Path


from .ci import skip_or_fail_in_ci

SHARED_JARS = Path(__file__).resolve().parents[1].parent / "shared" / "spark-kafka"
MAVEN = "https://repo1.maven.org/maven2/org/apache/spark"
HOW_TO_PROVIDE = (f"Spark's Kafka connector: put its jars in {SHARED_JARS}, name them in "
                  "SPARK_KAFKA_JARS (comma-separated paths) or let Spark reach Maven Central")


def connector_package(spark_version: str) -> str:
    """The Maven coordinates of the connector of a Spark version (Scala 2.13 from Spark 4 on)."""
    scala = "2.12" if spark_version.startswith("3.") else "2.13"
    return f"org.apache.spark:spark-sql-kafka-0-10_{scala}:{spark_version}"


@functools.cache
def connector() -> tuple[dict[str, str], str | None]:
    """Spark settings that load the Kafka connector, or why it cannot be had here."""
    try:
        import pyspark
    except ImportError:
        return {}, "PySpark is not installed (pip install -e '.[spark]')"
    jars = os.environ.get("SPARK_KAFKA_JARS")
    if not jars and SHARED_JARS.is_dir():
        jars = ",".join(str(jar) for jar in sorted(SHARED_JARS.glob("*.jar")))
    if jars:
        missing = [jar for jar in jars.split(",") if not Path(jar).is_file()]
        if missing:
            return {}, f"{HOW_TO_PROVIDE} (missing files: {missing})"
        return {"spark.jars": jars}, None
    package = connector_package(pyspark.__version__)
    _, artifact, version = package.split(":")
    try:
        pom = f"{MAVEN}/{artifact}/{version}/{artifact}-{version}.pom"
        urllib.request.urlopen(urllib.request.Request(pom, method="HEAD"), timeout=3).close()
    except Exception as failure:  # noqa: BLE001 - unreachable for whatever reason
        return {}, f"{HOW_TO_PROVIDE} ({type(failure).__name__})"
    return {"spark.jars.packages": package}, None


def not_here(reason: str) -> None:
    """Skips the calling module (one line: why), or fails it in CI, where Spark must run."""
    skip_or_fail_in_ci(f"Spark cannot run here: {reason}")


def require_pyspark():
    try:
        import pyspark
    except ImportError:
        not_here("PySpark is not installed (pip install -e '.[spark]')")
    return pyspark


def require_connector() -> dict[str, str]:
    """The connector's settings; skips the calling module without them, or fails it in CI."""
    config, unavailable = connector()
    if unavailable:
        not_here(unavailable)
    return config


def local_session(app: str, config: dict[str, str] | None = None):
    """A small Spark for tests: local[2], two shuffle partitions, no UI, UTC, quiet logs."""
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master("local[2]").appName(app)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.memory", "1g")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC"))
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(os.environ.get("SPARK_LOG_LEVEL", "ERROR"))
    return session


def shared_session():
    """The Spark of every Spark test module of this process (`spark_session` in tests/conftest.py):
    local_session with the connector where it can be had, without it elsewhere (the modules
    that need it are skipped there). Its JVM starts once: a start costs tens of seconds here."""
    config, unavailable = connector()
    return local_session("pykbroker-spark-tests", None if unavailable else config)


def end_module_queries(session) -> None:
    """Stops the streaming queries a module left running, so that the next module starts with
    none (the session and its JVM stay, for the next module)."""
    for query in session.streams.active:
        query.stop()


def stop_spark(session) -> None:
    """Stops the session's queries, the session and its JVM, so that a later session starts a
    JVM of its own, with its own settings (`spark.jars` and `spark.jars.packages` count only when
    the JVM starts)."""
    from pyspark import SparkContext

    for query in session.streams.active:
        query.stop()
    session.stop()
    gateway = SparkContext._gateway
    if gateway is not None:
        gateway.shutdown()
        gateway.proc.stdin.close()  # the JVM exits when its standard input ends
        gateway.proc.wait(60)
        SparkContext._gateway = None
        SparkContext._jvm = None


# -- queries ----------------------------------------------------------------------------------

def read_stream(spark, bootstrap: str, topic: str | None = None, **options):
    """The Kafka source as the integration guide creates it (subscribed to `topic`), plus the
    given options."""
    reader = spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    if topic is not None:
        reader = reader.option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def read_batch(spark, bootstrap: str, topic: str, **options):
    """A batch read of the topic (`spark.read.format("kafka")`) with the given options."""
    reader = (spark.read.format("kafka").option("kafka.bootstrap.servers", bootstrap)
              .option("subscribe", topic))
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def rows(df) -> list[tuple]:
    """(partition, offset, key, value) of every record, keys and values as strings, in order."""
    return [tuple(r) for r in df.selectExpr(
        "partition", "offset", "CAST(key AS STRING)", "CAST(value AS STRING)"
    ).orderBy("partition", "offset").collect()]


def finish(query, timeout: float = 180) -> None:
    """Waits for an availableNow query to stop by itself; fails if it failed."""
    try:
        assert query.awaitTermination(timeout), "the query did not finish"
    finally:
        query.stop()


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


def produce(bootstrap: str, topic: str, records, **config) -> None:
    """Writes (partition, key, value, timestamp ms[, headers]) records with confluent-kafka,
    batched as the client batches by default; every one must be acknowledged. A partition of
    None lets the client choose, a timestamp of None takes the current time."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, **config})
    for partition, key, value, timestamp, *headers in records:
        where = {} if partition is None else {"partition": partition}
        producer.produce(topic, key=key, value=value, timestamp=timestamp or 0,
                         headers=headers[0] if headers else None, **where)
    assert producer.flush(60) == 0, "records not acknowledged"


def consume(bootstrap: str, topic: str, partitions: int, count: int) -> list:
    """At least `count` records of the topic's partitions from their start (confluent-kafka
    messages, manual assignment), or what came within 60 s."""
    import time

    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{topic}-check",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    got = []
    deadline = time.monotonic() + 60
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                got.append(message)
    finally:
        consumer.close()
    return got


def write_batch(df, bootstrap: str, topic: str, **options) -> None:
    """`df.write.format("kafka")` to the topic, with the given options (`kafka.acks`, ...)."""
    writer = df.write.format("kafka").option("kafka.bootstrap.servers", bootstrap)
    for key, value in {"topic": topic, **options}.items():
        writer = writer.option(key, value)
    writer.save()


def check_exact_round_trip(spark, bootstrap: str, source: str, copy: str, partitions: int,
                           per_partition: int = 200) -> None:
    """Writes records with ordinary client batching (acks=all) to the empty topic `source`:
    a batch read and an availableNow stream return them with their keys, values, partitions
    and offsets; the Kafka sink copies them to the empty topic `copy`, partition for
    partition, where they get the same offsets. Both topics have `partitions` partitions."""
    produce(bootstrap, source, [(p, f"k{p}-{i}", f"v{p}-{i}", None)
                                for i in range(per_partition) for p in range(partitions)],
            acks="all")
    expected = [(p, i, f"k{p}-{i}", f"v{p}-{i}")
                for p in range(partitions) for i in range(per_partition)]

    assert rows(read_batch(spark, bootstrap, source)) == expected
    stream = read_stream(spark, bootstrap, source, startingOffsets="earliest")
    assert run_to_memory(stream, source.replace("-", "_")) == expected

    write_batch(read_batch(spark, bootstrap, source).select("key", "value", "partition"),
                bootstrap, copy, **{"kafka.acks": "all"})
    assert rows(read_batch(spark, bootstrap, copy)) == expected
