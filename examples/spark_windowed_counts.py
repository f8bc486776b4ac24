"""Counts click-stream events per action over event-time windows with Spark Structured Streaming,
from one Kafka topic to another, through pykbroker (see docs/spark.md).

    .venv/bin/python examples/spark_windowed_counts.py --bootstrap 127.0.0.1:9092 \\
        --source events --sink event-counts --checkpoint /tmp/windowed-counts-checkpoint

It reads the JSON events `produce_events.py` writes ({"user", "action", "ts": event time in ms}),
groups them into tumbling windows of event time (`--window`) with a watermark (`--watermark`):
a window's count is written once, when the watermark (the latest event time seen, less the
allowed delay) has passed the window's end, and events that come later than that are dropped.
Each count goes to the sink topic keyed by action:

    {"window_start": 1714564800000, "window_end": 1714564860000, "action": "click", "count": 17}

Spark's Kafka connector comes from `SPARK_KAFKA_JARS` (comma-separated jar paths), or else is
resolved from Maven Central (`spark.jars.packages`), which needs a connection to it.
"""
from __future__ import annotations

import argparse
import os

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

EVENT = T.StructType([T.StructField("user", T.StringType()),
                      T.StructField("action", T.StringType()),
                      T.StructField("ts", T.LongType())])


def connector_config() -> dict[str, str]:
    """Spark settings that put the Kafka connector on the class path."""
    jars = os.environ.get("SPARK_KAFKA_JARS")
    if jars:
        return {"spark.jars": jars}
    import pyspark

    version = pyspark.__version__
    scala = "2.12" if version.startswith("3.") else "2.13"  # Spark 4 is built for Scala 2.13
    return {"spark.jars.packages": f"org.apache.spark:spark-sql-kafka-0-10_{scala}:{version}"}


def spark_session(app: str = "windowed-counts", master: str = "local[2]") -> SparkSession:
    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.shuffle.partitions", "2"))
    for key, value in connector_config().items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def windowed_counts(records: DataFrame, window: str, watermark: str) -> DataFrame:
    """Kafka records of JSON events -> Kafka records (key, value) of per-window counts."""
    events = (records
              .select(F.from_json(F.col("value").cast("string"), EVENT).alias("event"))
              .select("event.*")
              .withColumn("event_time", F.expr("timestamp_millis(ts)"))
              .where("action IS NOT NULL AND event_time IS NOT NULL"))
    counts = (events
              .withWatermark("event_time", watermark)
              .groupBy(F.window("event_time", window), "action")
              .count())
    return counts.select(
        F.col("action").alias("key"),
        F.to_json(F.struct(F.expr("unix_millis(window.start)").alias("window_start"),
                           F.expr("unix_millis(window.end)").alias("window_end"),
                           "action", "count")).alias("value"))


def start(spark: SparkSession, bootstrap: str, source: str, sink: str, checkpoint: str,
          window: str = "1 minute", watermark: str = "30 seconds",
          starting_offsets: str = "earliest"):
    """Starts the query; returns its StreamingQuery."""
    records = (spark
               .readStream
               .format("kafka")
               .option("kafka.bootstrap.servers", bootstrap)
               .option("subscribe", source)
               .option("startingOffsets", starting_offsets)
               .load())
    return (windowed_counts(records, window, watermark)
            .writeStream
            .format("kafka")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", sink)
            .option("checkpointLocation", checkpoint)
            .outputMode("append")
            .start())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--source", default="events")
    parser.add_argument("--sink", default="event-counts")
    parser.add_argument("--checkpoint", default="/tmp/windowed-counts-checkpoint",
                        help="where the query keeps its progress; a restart resumes from it")
    parser.add_argument("--window", default="1 minute")
    parser.add_argument("--watermark", default="30 seconds")
    parser.add_argument("--starting-offsets", default="earliest")
    args = parser.parse_args(argv)

    spark = spark_session()
    spark.sparkContext.setLogLevel("WARN")
    query = start(spark, args.bootstrap, args.source, args.sink, args.checkpoint,
                  args.window, args.watermark, args.starting_offsets)
    print(f"counting {args.source} -> {args.sink} (checkpoint {args.checkpoint}); "
          "Ctrl-C stops", flush=True)
    try:
        query.awaitTermination()
    except KeyboardInterrupt:
        query.stop()
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
