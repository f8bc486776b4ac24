"""A broker embedded in the test's own process (`pykbroker.EmbeddedBroker`), and the process
variant (`pykbroker.BrokerProcess`) without a directory of its own.

The embedded broker serves on its own thread and event loop: it is started and stopped from any
thread, `with` and `async with`, two at once; its data lives in a temporary directory that goes
when it stops, unless a directory was given.
"""

from __future__ import annotations

import socket
import tempfile
import threading
from functools import partial

import anyio
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import pykbroker
from pykbroker import BrokerProcess, EmbeddedBroker
from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig
from pykbroker.testkit.waiting import wait_until


def round_trip(bootstrap: str, topic: str, value: bytes) -> bytes:
    """Produce `value`, then consume what is at its offset."""
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    sent = producer.send(topic, value).get(timeout=30)
    producer.close()
    return value_at(bootstrap, topic, sent.partition, sent.offset)


def value_at(bootstrap: str, topic: str, partition: int, offset: int) -> bytes:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, consumer_timeout_ms=10000)
    assigned = TopicPartition(topic, partition)
    consumer.assign([assigned])
    consumer.seek(assigned, offset)
    record = next(iter(consumer))
    consumer.close()
    return record.value


def test_the_package_exports_the_embedding_api():
    assert pykbroker.EmbeddedBroker is EmbeddedBroker
    assert pykbroker.BrokerProcess is BrokerProcess


def test_an_embedded_broker_serves_clients_and_removes_its_temporary_data_when_it_stops():
    with EmbeddedBroker() as broker:
        host, _ = broker.bootstrap.split(":")
        data = broker.data_directory
        assert host == "127.0.0.1" and broker.port > 0
        broker.create_topic("embedded", partitions=2)
        assert round_trip(broker.bootstrap, "embedded", b"in-process") == b"in-process"
        assert (data / "kafka-logs" / "embedded-1").is_dir()
    assert not broker.is_running()
    assert not data.exists()


def test_an_embedded_broker_keeps_a_given_directory_and_finds_its_data_there_again(tmp_path):
    with EmbeddedBroker(directory=tmp_path) as broker:
        broker.create_topic("kept")
        assert round_trip(broker.bootstrap, "kept", b"first life") == b"first life"
    assert (tmp_path / "kafka-logs" / "kept-0").is_dir()
    with EmbeddedBroker(directory=tmp_path, overrides={"auto.create.topics.enable": "false"}) as again:
        assert value_at(again.bootstrap, "kept", 0, 0) == b"first life"


def test_an_embedded_broker_started_on_one_thread_stops_from_another():
    broker = EmbeddedBroker()
    starter = threading.Thread(target=broker.start)
    starter.start()
    starter.join()
    assert broker.is_running()
    failures = []

    def stop() -> None:
        try:
            broker.stop()
        except BaseException as failure:  # noqa: BLE001 - reported below
            failures.append(failure)

    stopper = threading.Thread(target=stop)
    stopper.start()
    stopper.join(30)
    assert failures == [] and not broker.is_running()


def test_an_embedded_broker_stopped_from_its_own_loop_stops_once_that_call_returns():
    broker = EmbeddedBroker().start()
    broker.call(broker.stop)  # cannot wait for itself: the stop is only asked for
    wait_until(lambda: not broker.is_running(), "the broker's thread to end")


def test_two_embedded_brokers_run_at_once_each_with_its_own_port_data_and_topics():
    with EmbeddedBroker() as first, EmbeddedBroker() as second:
        assert first.bootstrap != second.bootstrap
        assert first.data_directory != second.data_directory
        first.create_topic("only-on-the-first")
        assert round_trip(first.bootstrap, "only-on-the-first", b"one") == b"one"
        assert round_trip(second.bootstrap, "on-the-second", b"two") == b"two"
        consumer = KafkaConsumer(bootstrap_servers=second.bootstrap)
        assert "only-on-the-first" not in consumer.topics()
        consumer.close()


@pytest.mark.anyio
async def test_an_embedded_broker_runs_in_async_with_without_blocking_the_callers_loop():
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await anyio.sleep(0.001)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(tick)
        async with EmbeddedBroker() as broker:
            bootstrap = broker.bootstrap
            await anyio.to_thread.run_sync(broker.create_topic, "async-with")
            value = await anyio.to_thread.run_sync(round_trip, bootstrap, "async-with", b"async")
        assert not broker.is_running()
        tasks.cancel_scope.cancel()
    assert value == b"async"
    assert ticks > 1  # the caller's loop ran while the broker started and stopped


def test_a_broker_that_cannot_bind_raises_at_start_and_leaves_no_data_behind(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where its temporary directory would be
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        broker = EmbeddedBroker({"listeners": f"PLAINTEXT://127.0.0.1:{port}"})
        with pytest.raises(OSError):
            broker.start()
    assert not broker.is_running()
    assert list(tmp_path.iterdir()) == []


def test_stopping_twice_or_before_starting_is_harmless():
    broker = EmbeddedBroker()
    broker.stop()
    with broker:
        pass
    broker.stop()


def test_create_topic_names_kafkas_error_when_the_broker_refuses():
    with EmbeddedBroker() as broker:
        broker.create_topic("twice")
        with pytest.raises(RuntimeError, match="TOPIC_ALREADY_EXISTS"):
            broker.create_topic("twice")


# -- the broker's own shutdown path --------------------------------------------------------------


def serve_on_a_thread(broker: Broker) -> threading.Thread:
    thread = threading.Thread(target=anyio.run, args=(partial(broker.run, handle_signals=False),))
    thread.start()
    assert broker.serving.wait(30)
    return thread


def broker_config(tmp_path) -> BrokerConfig:
    return BrokerConfig(
        {
            "listeners": "PLAINTEXT://127.0.0.1:0",
            "log.dirs": str(tmp_path / "logs"),
            "offsets.topic.replication.factor": "1",
        }
    )


def test_a_broker_serving_on_another_thread_is_shut_down_from_this_one(tmp_path):
    broker = Broker(broker_config(tmp_path))
    broker.open()
    thread = serve_on_a_thread(broker)
    broker.shutdown()  # raised "RuntimeError: no running event loop" when it cancelled here
    thread.join(30)
    assert not thread.is_alive()
    assert broker.log_dir_locks is None  # closed: the directories are unlocked


def test_a_broker_asked_to_shut_down_before_it_runs_stops_as_it_starts(tmp_path):
    broker = Broker(broker_config(tmp_path))
    broker.open()
    broker.shutdown()
    anyio.run(partial(broker.run, handle_signals=False))
    assert broker.log_dir_locks is None


# -- the process variant --------------------------------------------------------------------------


def test_a_broker_process_without_a_directory_keeps_its_data_in_a_temporary_one_until_the_block_ends():
    with BrokerProcess() as broker:
        directory = broker.directory
        broker.create_topic("in-a-process", partitions=3)
        assert round_trip(broker.bootstrap, "in-a-process", b"isolated") == b"isolated"
        broker.stop()
        broker.start()  # a restart finds its data
        consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap)
        assert consumer.partitions_for_topic("in-a-process") == {0, 1, 2}
        consumer.close()
    assert not directory.exists()


# -- faults, once the broker has them -------------------------------------------------------------


def test_faults_are_injected_listed_and_removed_on_the_brokers_loop():
    pytest.importorskip("pykbroker.server.faults")
    with EmbeddedBroker() as broker:
        first = broker.inject_fault(api="Produce", error="NOT_LEADER_OR_FOLLOWER", count=3)
        second = broker.inject_fault(api="Fetch", latency_ms=10)
        assert first != second
        assert [fault_id for fault_id, _ in broker.call(broker.broker.faults.list)] == [first, second]
        assert broker.remove_fault(first) is True
        assert broker.remove_fault(first) is False
        broker.clear_faults()
        assert broker.call(broker.broker.faults.list) == []
