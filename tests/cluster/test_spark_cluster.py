"""Spark 4.0's stock Kafka connector against three brokers and ZooKeeper, given the brokers as a
bootstrap list: batch and streaming reads and the Kafka sink see exactly the records written,
and when the leader of a partition dies (`kill -9`) a checkpointed query still ends up with
every acknowledged record exactly once, and the sink loses nothing it was told was written.

Topics here have three replicas and `min.insync.replicas=2`. Spark runs `local[2]` in this
process; its connector is found as in tests/spark_support.py (skipped without it, failing in CI).
"""
from __future__ import annotations

import json

import pytest
from confluent_kafka import Consumer, TopicPartition

from tests.spark_support import (
    check_exact_round_trip, finish, produce, read_batch, read_stream,
    end_module_queries, require_connector,
)

from .test_failover import ContinuousProducer, create_topic, read_everything

require_connector()  # the module is skipped without Spark's Kafka connector (fails in CI)

# When a leader dies, the driver's AdminClient may look up partition leaders before ZooKeeper
# has let the dead broker go; it then keeps its ListOffsets call bound to that broker until
# `default.api.timeout.ms` (60 s) has passed, and Spark retries it (so it does with Apache
# Kafka 3.9.0 too). Shorter timeouts (Kafka client settings passed with the `kafka.` prefix)
# only shorten that pause: the call times out after 10 s rather than 30 s (request.timeout.ms;
# default.api.timeout.ms may not be below it).
FAILOVER_OPTIONS = {"kafka.request.timeout.ms": "10000", "kafka.default.api.timeout.ms": "10000"}


@pytest.fixture(scope="module")
def spark(spark_session):
    yield spark_session
    end_module_queries(spark_session)


def high_watermarks(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "watermarks"})
    try:
        return {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1]
                for p in range(partitions)}
    finally:
        consumer.close()


def progressed_to(query) -> dict[int, int]:
    """{partition: offset} up to which the query's last micro-batch read its one source."""
    progress = query.lastProgress
    if progress is None or not progress["sources"]:
        return {}
    offsets = progress["sources"][0]["endOffset"]
    offsets = json.loads(offsets) if isinstance(offsets, str) else offsets
    return {int(p): o for per_topic in offsets.values() for p, o in per_topic.items()}


def running_fine(query) -> bool:
    """True while the query runs; raises what ended it otherwise."""
    if query.exception() is not None:
        raise AssertionError(f"the query failed: {query.exception()}")
    return query.isActive


def test_reads_and_writes_through_a_bootstrap_list_see_exact_records(all_running, spark):
    """Records written with ordinary client batching (acks=all) to a 3-partition topic: a batch
    read and an availableNow stream return them with their keys, values, partitions and
    offsets; the Kafka sink copies them to another topic, partition for partition, where they
    get the same offsets."""
    cluster = all_running
    create_topic(cluster, "spark-exact", 3)
    create_topic(cluster, "spark-exact-copy", 3)

    check_exact_round_trip(spark, cluster.bootstrap, "spark-exact", "spark-exact-copy",
                           partitions=3)


def test_a_checkpointed_query_holds_every_acknowledged_record_once_after_a_leader_is_killed(
        all_running, spark, tmp_path):
    """An idempotent producer (acks=all) writes throughout; a streaming query reads the topic
    into Parquet files with a checkpoint; the leader of partition 0 is killed with kill -9.
    Once the query has caught up with the topic, the files hold every record of the topic
    exactly once, and so every acknowledged record."""
    cluster = all_running
    topic = "spark-failover"
    create_topic(cluster, topic, 3)
    producer = ContinuousProducer(cluster.bootstrap, topic).start()
    query = (read_stream(spark, cluster.bootstrap, topic, startingOffsets="earliest",
                         **FAILOVER_OPTIONS)
             .selectExpr("partition", "offset", "CAST(value AS STRING) AS value")
             .writeStream.format("parquet").option("path", str(tmp_path / "data"))
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(processingTime="1 second").start())
    try:
        cluster.wait_until(lambda: running_fine(query) and sum(progressed_to(query).values())
                           > 300 and len(producer.acknowledged) > 500, timeout=120,
                           what="the query reading while records are acknowledged")
        victim = cluster.leader(topic, 0)
        cluster.kill(victim)
        cluster.wait_for_leaders(topic, 3, exclude={victim})
        acknowledged_before = len(producer.acknowledged)
        cluster.wait_until(lambda: len(producer.acknowledged) > acknowledged_before + 500,
                           timeout=120, what="records acknowledged by the new leader")
        producer.stop()
        assert not producer.failed

        ends = high_watermarks(cluster.bootstrap, topic, 3)
        cluster.wait_until(lambda: running_fine(query) and progressed_to(query) == ends,
                           timeout=180, interval=1, what=f"the query to read up to {ends}")
    finally:
        producer.stop()
        query.stop()

    written = spark.read.parquet(str(tmp_path / "data"))
    values = [int(r.value) for r in written.select("value").collect()]
    assert len(values) == len(set(values)), "no record is read twice"
    assert sorted(values) == sorted(read_everything(cluster.bootstrap, topic, 3))
    assert producer.acknowledged <= set(values), "no acknowledged record is missing"


def test_the_kafka_sink_loses_nothing_through_a_leader_failover(all_running, spark, tmp_path):
    """A query copies 3000 records, 100 per micro-batch, to a topic with the Kafka sink
    (kafka.acks=all); the leader of the sink's partition 0 is killed with kill -9 while it
    runs. Every record of every committed micro-batch is in the sink topic afterwards."""
    cluster = all_running
    source, sink = "spark-sink-source", "spark-sink-target"
    create_topic(cluster, source, 3)
    create_topic(cluster, sink, 3)
    produce(cluster.bootstrap, source, [(p, None, f"r-{p}-{i}", None)
                                        for i in range(1000) for p in range(3)], acks="all")
    query = (read_stream(spark, cluster.bootstrap, source, startingOffsets="earliest",
                         maxOffsetsPerTrigger="100", **FAILOVER_OPTIONS)
             .selectExpr("value", "partition")
             .writeStream.format("kafka").option("kafka.bootstrap.servers", cluster.bootstrap)
             .option("topic", sink).option("kafka.acks", "all")
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    try:
        cluster.wait_until(lambda: running_fine(query) and len(query.recentProgress) >= 3,
                           timeout=120, what="three micro-batches written")
        cluster.kill(cluster.leader(sink, 0))
        assert query.isActive, "the query was still writing when the leader died"
    finally:
        finish(query, timeout=300)

    assert sum(p["numInputRows"] for p in query.recentProgress) == 3000
    copied = [r.value.decode() for r in read_batch(spark, cluster.bootstrap, sink).collect()]
    assert set(copied) == {f"r-{p}-{i}" for i in range(1000) for p in range(3)}
