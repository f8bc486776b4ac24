"""pytest fixtures for testing Kafka clients against pykbroker, loaded through the `pytest11`
entry point wherever pykbroker is installed (`-p no:pykbroker` turns them off):

    def test_round_trip(kafka_bootstrap, kafka_topic):
        producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
        producer.send(kafka_topic, b"hello").get(timeout=10)

- `kafka_broker`: one broker for the whole session, in this process (`EmbeddedBroker`), or in a
  process of its own with `--pykbroker-mode=process` (`BrokerProcess`);
- `kafka_bootstrap`: its `host:port`;
- `kafka_topic`: a new topic for each test, named after it, with one partition unless the test
  is marked `@pytest.mark.kafka_topic(partitions=3, configs={...})`;
- `kafka_cluster`: ZooKeeper and three brokers (`BrokerCluster`) for the session, skipped when
  ZooKeeper is not installed, with `CLUSTER_OVERRIDES` (a lighter `__consumer_offsets`, a quicker
  failover) over the cluster settings;
- `kafka_broker_overrides`: the session broker's server.properties keys, over the development
  profile (`pykbroker --dev`'s); override the fixture in a conftest.py to change them.

Importing this module starts nothing and loads none of the broker's modules: a broker starts
when a test first asks for one of these fixtures.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

MODES = ("embedded", "process")
TOPIC_MARKER = "kafka_topic"
CLUSTER_OVERRIDES = {"offsets.topic.num.partitions": "3", "zookeeper.session.timeout.ms": "6000"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pykbroker", "Kafka fixtures backed by pykbroker")
    group.addoption(
        "--pykbroker-mode",
        choices=MODES,
        default="embedded",
        help="run the kafka_broker fixture's broker in this process (embedded, the default) or in a process of its own",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{TOPIC_MARKER}(partitions=1, replication_factor=1, configs=None): "
        "how the kafka_topic fixture creates the test's topic",
    )


@pytest.fixture(scope="session")
def kafka_broker_overrides() -> dict[str, str]:
    """server.properties keys for the session broker (none: the development profile)."""
    return {}


@pytest.fixture(scope="session")
def kafka_broker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, kafka_broker_overrides: dict[str, str]
) -> Iterator[Any]:
    """One broker for the session, stopped at its end; its data under pytest's temporary directory."""
    directory = tmp_path_factory.mktemp("pykbroker")
    if request.config.getoption("pykbroker_mode") == "process":
        from .process import BrokerProcess

        running: Any = BrokerProcess(directory, kafka_broker_overrides)
    else:
        from .embedded import EmbeddedBroker

        running = EmbeddedBroker(kafka_broker_overrides, directory=directory)
    with running:
        yield running


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_broker: Any) -> str:
    """The session broker's `host:port`, for a client's bootstrap servers."""
    return kafka_broker.bootstrap


@pytest.fixture
def kafka_topic(request: pytest.FixtureRequest, kafka_broker: Any) -> str:
    """A topic of the test's own on the session broker, created before the test runs."""
    marker = request.node.get_closest_marker(TOPIC_MARKER)
    options = dict(marker.kwargs) if marker is not None else {}
    return kafka_broker.create_topic(unique_topic_name(request.node.name), **options)


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """ZooKeeper and three brokers for the session (`bootstrap` lists all three, `brokers` maps
    id to BrokerProcess); skipped where ZooKeeper is not installed."""
    from .cluster import BrokerCluster
    from .zookeeper import zookeeper_available

    if not zookeeper_available():
        pytest.skip(
            "kafka_cluster needs java and ZooKeeper's jar (Debian's zookeeper package: "
            "/usr/share/java/zookeeper.jar, or the jars named by $ZOOKEEPER_CLASSPATH)"
        )
    with BrokerCluster(tmp_path_factory.mktemp("pykbroker-cluster"), overrides=CLUSTER_OVERRIDES) as cluster:
        yield cluster


def unique_topic_name(test_name: str) -> str:
    """The test's name in Kafka's legal topic characters, made unique; at most 249 characters."""
    legible = re.sub(r"[^a-zA-Z0-9._-]+", "-", test_name).strip("-.") or "topic"
    return f"{legible[:200]}-{uuid.uuid4().hex[:8]}"
