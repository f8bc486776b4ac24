"""The pytest plugin (`pykbroker.testkit.pytest_plugin`, entry point `pytest11`): its fixtures run in a
pytest session of their own (pytester), with the plugin loaded as an installed pykbroker loads
it; it costs nothing to a session that does not use it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from pykbroker.testkit.pytest_plugin import unique_topic_name
from pykbroker.testkit.zookeeper import zookeeper_available

pytest_plugins = ["pytester"]

TESTS = Path(__file__).resolve().parent
PLUGIN_FIXTURES = {"kafka_broker", "kafka_bootstrap", "kafka_topic", "kafka_cluster", "kafka_broker_overrides"}
# the entry point's name turned off, then the module loaded by name: the same with or without an installed entry point
WITH_THE_PLUGIN = ("-p", "no:pykbroker", "-p", "pykbroker.testkit.pytest_plugin")

TOPIC_TESTS = """
import pytest
from kafka import KafkaConsumer, KafkaProducer

SEEN = []

def partitions_of(bootstrap, topic):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        return consumer.partitions_for_topic(topic)
    finally:
        consumer.close()

def test_a_topic_of_its_own_with_one_partition(kafka_bootstrap, kafka_topic):
    SEEN.append(kafka_topic)
    assert kafka_topic.startswith("test_a_topic_of_its_own_with_one_partition-")
    assert partitions_of(kafka_bootstrap, kafka_topic) == {0}

@pytest.mark.kafka_topic(partitions=3, configs={"cleanup.policy": "compact"})
def test_a_marked_topic(kafka_bootstrap, kafka_topic):
    SEEN.append(kafka_topic)
    assert partitions_of(kafka_bootstrap, kafka_topic) == {0, 1, 2}

def test_every_test_has_a_new_topic_on_the_one_session_broker(kafka_broker, kafka_bootstrap, kafka_topic):
    assert kafka_topic not in SEEN and len(set(SEEN)) == 2
    assert kafka_broker.bootstrap == kafka_bootstrap

def test_produce_and_consume(kafka_bootstrap, kafka_topic):
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(kafka_topic, key=b"k", value=b"v").get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(kafka_topic, bootstrap_servers=kafka_bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)
    record = next(iter(consumer))
    consumer.close()
    assert (record.key, record.value) == (b"k", b"v")
"""


def test_the_fixtures_give_a_session_broker_and_a_new_topic_per_test(pytester):
    pytester.makepyfile(test_topics=TOPIC_TESTS)
    result = pytester.runpytest_inprocess(*WITH_THE_PLUGIN)
    result.assert_outcomes(passed=4)


def test_the_session_broker_runs_in_a_process_of_its_own_with_pykbroker_mode_process(pytester):
    pytester.makepyfile(
        test_topics=TOPIC_TESTS,
        test_mode="""
import os
from pykbroker.testkit.process import BrokerProcess

def test_the_broker_is_a_process(kafka_broker):
    assert isinstance(kafka_broker, BrokerProcess) and kafka_broker.process.pid != os.getpid()
""",
    )
    result = pytester.runpytest_inprocess(*WITH_THE_PLUGIN, "--pykbroker-mode=process")
    result.assert_outcomes(passed=5)


def test_a_conftest_changes_the_session_brokers_settings(pytester):
    pytester.makeconftest("""
import pytest

@pytest.fixture(scope="session")
def kafka_broker_overrides():
    return {"num.partitions": "4"}
""")
    pytester.makepyfile("""
from kafka import KafkaConsumer, KafkaProducer

def test_auto_created_topics_have_four_partitions(kafka_bootstrap):
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send("auto-created", b"v").get(timeout=30)
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap)
    assert consumer.partitions_for_topic("auto-created") == {0, 1, 2, 3}
    consumer.close()
""")
    pytester.runpytest_inprocess(*WITH_THE_PLUGIN).assert_outcomes(passed=1)


def test_kafka_cluster_is_skipped_with_its_reason_where_zookeeper_is_missing(pytester, monkeypatch):
    monkeypatch.setattr("pykbroker.testkit.zookeeper.zookeeper_available", lambda: False)
    pytester.makepyfile("""
def test_needs_a_cluster(kafka_cluster):
    raise AssertionError("never runs")
""")
    result = pytester.runpytest_inprocess(*WITH_THE_PLUGIN, "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*kafka_cluster needs java and ZooKeeper*"])


@pytest.mark.skipif(not zookeeper_available(), reason="needs java and ZooKeeper (make system-deps)")
def test_kafka_cluster_is_three_brokers_and_a_zookeeper(pytester):
    pytester.makepyfile("""
from kafka import KafkaConsumer, KafkaProducer

def test_three_brokers_replicate(kafka_cluster):
    assert sorted(kafka_cluster.brokers) == [1, 2, 3] and kafka_cluster.bootstrap.count(",") == 2
    kafka_cluster.create_topic("replicated", partitions=3, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap, acks="all")
    producer.send("replicated", b"on three brokers").get(timeout=30)
    producer.close()
    consumer = KafkaConsumer("replicated", bootstrap_servers=kafka_cluster.bootstrap,
                             auto_offset_reset="earliest", consumer_timeout_ms=20000)
    assert next(iter(consumer)).value == b"on three brokers"
    consumer.close()
""")
    pytester.runpytest_inprocess(*WITH_THE_PLUGIN).assert_outcomes(passed=1)


def test_importing_the_plugin_starts_nothing_and_loads_no_broker_module():
    probe = (
        "import sys, threading\n"
        "import pykbroker.testkit.pytest_plugin\n"
        "harness = ('pykbroker.testkit', 'pykbroker.testkit.pytest_plugin')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('pykbroker.') and m not in harness)\n"
        "print(loaded, threading.active_count())\n"
    )
    output = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    assert output.strip() == "[] 1"


def test_the_plugin_is_registered_as_a_pytest11_entry_point():
    pyproject = (TESTS.parent / "pyproject.toml").read_text()
    assert '[project.entry-points.pytest11]\npykbroker = "pykbroker.testkit.pytest_plugin"' in pyproject


def test_no_conftest_of_this_project_defines_a_fixture_the_plugin_defines():
    """The project's own suite loads the plugin too: a fixture of the same name would shadow it."""
    defined = {name for conftest in TESTS.rglob("conftest.py") for name in top_level_names(conftest)}
    assert defined & PLUGIN_FIXTURES == set()


def top_level_names(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
    return names


@pytest.mark.parametrize(
    "test_name, expected",
    [
        ("test_plain", "test_plain-"),
        ("test_param[a/b c-1]", "test_param-a-b-c-1-"),
        ("[]", "topic-"),
    ],
)
def test_topic_names_are_the_tests_name_in_legal_characters_made_unique(test_name, expected):
    first, second = unique_topic_name(test_name), unique_topic_name(test_name)
    assert first.startswith(expected) and second.startswith(expected) and first != second
    assert len(first) <= 249


CONSUMER_GROUP_TEST = """
from confluent_kafka import Consumer, Producer

def test_a_consumer_group_protocol_consumer_reads_the_topic(kafka_bootstrap, kafka_topic):
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    producer.produce(kafka_topic, b"v")
    producer.flush()
    consumer = Consumer({"bootstrap.servers": kafka_bootstrap, "group.id": kafka_topic,
                         "group.protocol": "consumer", "auto.offset.reset": "earliest"})
    consumer.subscribe([kafka_topic])
    try:
        message = None
        for _ in range(300):
            message = consumer.poll(0.1)
            if message is not None and not message.error():
                break
        assert message is not None and message.value() == b"v"
    finally:
        consumer.close()
"""


def test_the_session_broker_serves_consumer_groups_of_the_consumer_protocol(pytester):
    pytester.makepyfile(test_consumer_group=CONSUMER_GROUP_TEST)
    result = pytester.runpytest_inprocess(*WITH_THE_PLUGIN)
    result.assert_outcomes(passed=1)
