"""The development profile: `pykbroker --dev` is one broker with the settings of Kafka's example
server.properties for a single node, so that a transactional producer and a consumer group work
at once with no settings of their own; the same table is what the test harness starts from, and
the example file ships with the package (`pykbroker --print-config`).
"""
from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from compat.realkafka import SINGLE_BROKER_SETTINGS as KAFKA_SH_SETTINGS
from pykbroker.config import load_properties
from pykbroker.config.dev_profile import DEV_PROFILE, example_server_properties
from pykbroker.testkit.process import STARTED
from pykbroker.testkit.settings import single_broker_settings
from pykbroker.testkit.waiting import wait_until

CHECKOUT = Path(__file__).resolve().parents[1]
FREE_PORT = ["--override", "listeners=PLAINTEXT://127.0.0.1:0"]
SINGLE_NODE_KEYS = ("offsets.topic.replication.factor", "transaction.state.log.replication.factor",
                    "transaction.state.log.min.isr", "group.initial.rebalance.delay.ms")
# Kafka 4's example config/server.properties also lowers those of __share_group_state (KIP-932),
# which Kafka 3.9 does not have
KAFKA4_SINGLE_NODE_KEYS = {"share.coordinator.state.topic.replication.factor": "1",
                           "share.coordinator.state.topic.min.isr": "1"}


class DevBroker:
    """`python -m pykbroker ARGS` in `directory`, its output in a file; the address it announces."""

    def __init__(self, directory: Path, *args: str) -> None:
        self.directory = directory
        self.log_path = directory / "broker.log"
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "pykbroker", *args], cwd=directory,
                                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_until_started(self) -> str:
        def announced():
            assert self.process.poll() is None, self.log_text()
            match = STARTED.search(self.log_text())
            return match and f"{match.group(1)}:{match.group(2)}"
        return wait_until(announced, "the broker's start line")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def dev_broker(tmp_path_factory):
    """`pykbroker --dev` on a free port, nothing else."""
    broker = DevBroker(tmp_path_factory.mktemp("dev"), "--dev", *FREE_PORT)
    try:
        yield broker, broker.wait_until_started()
    finally:
        broker.stop()


def test_dev_names_its_data_directory_at_start_and_keeps_its_data_there(dev_broker):
    broker, _ = dev_broker
    data = broker.directory / "pykbroker-data"
    assert re.search(rf"Development profile .*: data in {re.escape(str(data))}\b", broker.log_text())
    assert f"data in {data}" in broker.log_text().split("pykbroker started")[1] and data.is_dir()


def test_dev_has_kafkas_single_node_settings_as_describe_configs_shows_them(dev_broker):
    _, bootstrap = dev_broker
    admin = AdminClient({"bootstrap.servers": bootstrap})
    resource = ConfigResource(ResourceType.BROKER, "0")
    entries = admin.describe_configs([resource])[resource].result(timeout=30)
    assert {key: entries[key].value for key in SINGLE_NODE_KEYS} == {
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",  # the first join of a group is not held back 3 s
    }


def test_dev_serves_a_transactional_producer_and_a_consumer_group_at_once_without_client_settings(dev_broker):
    _, bootstrap = dev_broker
    topic = f"dev-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "dev-readers", "auto.offset.reset": "earliest"})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "dev-writer"})
    try:
        consumer.subscribe([topic])
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce(topic, key=b"k", value=b"committed")
        producer.commit_transaction(30)

        def received():
            message = consumer.poll(0.5)
            return message if message is not None and message.error() is None else None
        message = wait_until(received, "the committed record in the consumer group", timeout=60)
        consumer.commit(message, asynchronous=False)
    finally:
        consumer.close()
    assert (message.key(), message.value()) == (b"k", b"committed")


def test_dir_names_the_data_directory(tmp_path):
    broker = DevBroker(tmp_path, "--dev", "--dir", "elsewhere", *FREE_PORT)
    try:
        broker.wait_until_started()
    finally:
        broker.stop()
    assert f"data in {tmp_path / 'elsewhere'}" in broker.log_text()
    assert (tmp_path / "elsewhere").is_dir() and not (tmp_path / "pykbroker-data").exists()


def test_print_config_prints_the_example_server_properties(tmp_path):
    printed = subprocess.run([sys.executable, "-m", "pykbroker", "--print-config"], cwd=tmp_path,
                             check=True, capture_output=True, text=True).stdout
    assert printed == example_server_properties() == (CHECKOUT / "config" / "server.properties").read_text()
    assert list(tmp_path.iterdir()) == []  # no broker started, no data directory made


def test_the_checkouts_config_file_is_the_one_the_package_ships():
    assert (CHECKOUT / "config" / "server.properties").resolve() == \
        CHECKOUT / "pykbroker" / "config" / "server.properties"


def test_the_example_file_sets_what_the_profile_sets():
    written = load_properties(CHECKOUT / "pykbroker" / "config" / "server.properties")
    assert {key: written.get(key) for key in DEV_PROFILE} == DEV_PROFILE


def test_the_profile_is_kafkas_example_for_one_node_as_kafka_sh_gives_it_to_kafka():
    assert {key: DEV_PROFILE[key] for key in SINGLE_NODE_KEYS} == {key: KAFKA_SH_SETTINGS[key] for key in SINGLE_NODE_KEYS}
    assert {key: DEV_PROFILE[key] for key in KAFKA4_SINGLE_NODE_KEYS} == KAFKA4_SINGLE_NODE_KEYS
    assert set(DEV_PROFILE) == {"listeners", *SINGLE_NODE_KEYS, *KAFKA4_SINGLE_NODE_KEYS}


def test_the_harness_starts_from_the_profile_with_the_callers_settings_on_top():
    settings = single_broker_settings({"group.initial.rebalance.delay.ms": 100}, log_dirs="/data")
    assert settings["listeners"] == "PLAINTEXT://127.0.0.1:0" and settings["log.dirs"] == "/data"
    assert settings["group.initial.rebalance.delay.ms"] == "100"
    assert all(settings[key] == DEV_PROFILE[key] for key in SINGLE_NODE_KEYS[:3])
