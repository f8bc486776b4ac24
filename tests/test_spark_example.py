"""The example pipeline of docs/spark.md: its event producer (`examples/produce_events.py`)
writes JSON events to the broker, and its windowed aggregation (`examples/spark_windowed_counts.py`)
writes each event-time window's counts once the watermark has passed the window and drops
events that come later than that.

The aggregation runs here on a stream of text files standing in for the Kafka records (each
line a record value), so that it is checked without Spark's Kafka connector; the whole pipeline
through the broker is checked in test_spark_kafka.py when the connector is at hand.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .clients import KafkaPython, create_topic, from_start
from .spark_support import end_module_queries, require_pyspark

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
T0 = 1_700_000_000_000  # 20 s into a minute
MINUTE = 60_000
M = T0 - T0 % MINUTE  # the start of T0's minute


def load_example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_event_producer_writes_json_events_keyed_by_user(broker):
    create_topic(broker.bootstrap, "example-feed", partitions=2)

    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "produce_events.py"), "--bootstrap", broker.bootstrap,
         "--topic", "example-feed", "--count", "12", "--rate", "0", "--start-ms", str(T0),
         "--step-ms", "500"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "sent 12 events to example-feed"

    records = KafkaPython.consume(broker.bootstrap, "example-feed", from_start(2), 12)
    events = sorted((json.loads(r.value) for r in records), key=lambda e: e["ts"])
    assert [e["ts"] for e in events] == [T0 + i * 500 for i in range(12)]
    assert all(e["action"] in ("view", "click", "purchase") for e in events)
    assert all(r.key == json.loads(r.value)["user"].encode() for r in records)


@pytest.fixture(scope="module")
def spark(request):
    pyspark = require_pyspark()
    assert pyspark.__version__.startswith("4.0."), "the spark extra pins PySpark 4.0"
    session = request.getfixturevalue("spark_session")
    yield session
    end_module_queries(session)


def test_windowed_counts_are_written_once_per_closed_window_and_late_events_dropped(
        spark, tmp_path):
    """1-minute windows, 30 s watermark. After the first events the watermark is M + 4:50, so
    the windows of M and M + 1 min are written; a later event of the M window is dropped; an
    event at M + 9:20 moves the watermark past M + 6 min and the M + 5 min window is written."""
    example = load_example("spark_windowed_counts")
    incoming = tmp_path / "incoming"
    incoming.mkdir()

    def arrive(name: str, *events) -> None:
        staged = tmp_path / name
        staged.write_text("".join(json.dumps({"user": "user-1", "action": action, "ts": ts}) + "\n"
                                  for action, ts in events) + "not json\n")
        os.rename(staged, incoming / name)  # the file stream sees whole files only

    records = spark.readStream.text(str(incoming))  # one `value` per line, like Kafka's
    query = (example.windowed_counts(records, "1 minute", "30 seconds")
             .writeStream.format("memory").queryName("window_counts").outputMode("append")
             .start())
    try:
        arrive("first.json", ("view", T0), ("view", T0 + 10_000), ("click", T0 + 20_000),
               ("view", T0 + MINUTE + 5_000), ("view", T0 + 5 * MINUTE))
        query.processAllAvailable()
        arrive("second.json", ("view", T0 + 30_000), ("click", T0 + 9 * MINUTE))
        query.processAllAvailable()
    finally:
        query.stop()

    rows = spark.sql("SELECT key, value FROM window_counts").collect()
    counts = sorted((json.loads(r.value) for r in rows),
                    key=lambda c: (c["window_start"], c["action"]))
    assert all(r.key == json.loads(r.value)["action"] for r in rows)
    assert counts == [
        {"window_start": M, "window_end": M + MINUTE, "action": "click", "count": 1},
        {"window_start": M, "window_end": M + MINUTE, "action": "view", "count": 2},
        {"window_start": M + MINUTE, "window_end": M + 2 * MINUTE, "action": "view", "count": 1},
        {"window_start": M + 5 * MINUTE, "window_end": M + 6 * MINUTE, "action": "view",
         "count": 1},
    ]
