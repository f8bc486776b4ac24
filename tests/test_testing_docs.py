"""docs/testing.md's examples run as written: every code block whose first line names a test
file (`# test_kafka_python.py`) is that file, run by pytest with the plugin loaded as an
installed pykbroker loads it. PySpark's needs Spark's Kafka connector (tests/spark_support.py)."""

from __future__ import annotations

from .docs_examples import documented_test_files
from .spark_support import connector, not_here, require_pyspark

pytest_plugins = ["pytester"]

WITH_THE_PLUGIN = ("-p", "no:pykbroker", "-p", "pykbroker.testkit.pytest_plugin")
SPARK_EXAMPLE = "test_pyspark.py"


def test_the_page_shows_an_example_for_each_client_and_the_embedding_api():
    assert set(documented_test_files()) == {
        "test_kafka_python.py",
        "test_confluent_kafka.py",
        "test_aiokafka.py",
        SPARK_EXAMPLE,
        "test_embedding.py",
        "test_process.py",
    }


def test_the_client_and_embedding_examples_pass(pytester):
    examples = {name: code for name, code in documented_test_files().items() if name != SPARK_EXAMPLE}
    pytester.makepyfile(**{name.removesuffix(".py"): code for name, code in examples.items()})
    result = pytester.runpytest_inprocess(*WITH_THE_PLUGIN)
    result.assert_outcomes(passed=7)


def test_the_pyspark_example_passes(pytester, monkeypatch):
    require_pyspark()
    settings, unavailable = connector()
    if unavailable:
        not_here(unavailable)
    if "spark.jars" in settings:
        monkeypatch.setenv("SPARK_KAFKA_JARS", settings["spark.jars"])
    pytester.makepyfile(test_pyspark=documented_test_files()[SPARK_EXAMPLE])
    # a process of its own: Spark's JVM ends with it, and the suite's own Spark sessions keep theirs
    result = pytester.runpytest_subprocess(*WITH_THE_PLUGIN, timeout=240)
    result.assert_outcomes(passed=1)
