"""Flushes never stall the event loop: with `pykbroker.fsync.before.ack=true` a produce waits for
its fdatasync in a worker thread, and meanwhile the broker answers everyone else.

The broker runs in this process, with `os.fdatasync` replaced by one that blocks until the test
lets it finish: no test here measures time.
"""
import json
import os
import socket
import threading
from functools import partial

import anyio
import pytest

from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.records.records import build_batch
from pykbroker.testkit.wire import WireClient

Produce = messages.request(ApiKey.PRODUCE).cls
Metadata = messages.request(ApiKey.METADATA).cls
LONG_ENOUGH = 10  # seconds: a generous bound on waiting for the broker, never reached when it works


class SlowFlush:
    """`os.fdatasync` that, once armed, blocks its first caller until `release()`."""

    def __init__(self) -> None:
        self.armed = False
        self.started = threading.Event()
        self.released = threading.Event()
        self.finished = threading.Event()  # the blocked call returned (it gives up waiting after a while)
        self._real = os.fdatasync

    def __call__(self, fd: int) -> None:
        if self.armed and not self.started.is_set():
            self.started.set()
            self.released.wait(LONG_ENOUGH)
            self._real(fd)
            self.finished.set()
            return
        self._real(fd)

    def release(self) -> None:
        self.released.set()


@pytest.fixture
def slow_flush(monkeypatch):
    flush = SlowFlush()
    monkeypatch.setattr(os, "fdatasync", flush)
    yield flush
    flush.release()


def serve_while(broker: Broker, script) -> None:
    """Run the broker on this thread's event loop while `script()` runs in a worker thread."""
    async def main():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(partial(broker.run, handle_signals=False))
            try:
                await anyio.to_thread.run_sync(script)
            finally:
                broker.shutdown()
    anyio.run(main)


def open_broker_with_topic(tmp_path, topic: str, **settings: str) -> tuple[Broker, str]:
    """An in-process broker, opened (not yet serving), holding `topic`; and its bootstrap."""
    broker = Broker(BrokerConfig({"log.dirs": str(tmp_path), "listeners": "PLAINTEXT://127.0.0.1:0", **settings}))
    broker.open()
    broker.topic_creator.create(topic, 1, 1)
    return broker, f"127.0.0.1:{broker.listeners[0].port}"


def produce_request(topic: str) -> Produce:
    return Produce(acks=-1, timeout_ms=30_000, transactional_id=None, topic_data=[
        Produce.TopicProduceData(name=topic, partition_data=[
            Produce.PartitionProduceData(index=0, records=build_batch([(b"k", b"v")]))])])


def test_a_second_client_is_answered_while_the_first_ones_produce_waits_for_an_injected_slow_flush(
        tmp_path, slow_flush):
    broker, bootstrap = open_broker_with_topic(tmp_path, "durable", **{"pykbroker.fsync.before.ack": "true"})
    seen = {}

    def script():
        with WireClient(bootstrap) as producer, WireClient(bootstrap) as other:
            slow_flush.armed = True
            produce_id = producer.send(ApiKey.PRODUCE, 9, produce_request("durable"))
            assert slow_flush.started.wait(LONG_ENOUGH), "the produce never flushed"

            answer = other.request(ApiKey.METADATA, 12, Metadata(
                topics=[Metadata.MetadataRequestTopic(name="durable")],
                allow_auto_topic_creation=False))
            seen["metadata while flushing"] = not slow_flush.released.is_set()
            seen["topic"] = answer.topics[0].name

            slow_flush.release()
            received_id, produced = producer.receive(ApiKey.PRODUCE, 9)
            seen["produce"] = (received_id == produce_id,
                               produced.responses[0].partition_responses[0].error_code)

    serve_while(broker, script)
    assert seen == {"metadata while flushing": True, "topic": "durable", "produce": (True, 0)}


InitProducerId = messages.request(ApiKey.INIT_PRODUCER_ID).cls


def test_a_second_client_is_answered_while_an_init_producer_id_reserves_its_block(tmp_path, monkeypatch):
    """The producer id block is persisted (write, fsync, rename) on a worker thread."""
    slow_fsync = SlowFlush()
    slow_fsync._real = os.fsync
    broker, bootstrap = open_broker_with_topic(tmp_path, "plain")
    monkeypatch.setattr(os, "fsync", slow_fsync)
    seen = {}

    def script():
        with WireClient(bootstrap) as producer, WireClient(bootstrap) as other:
            slow_fsync.armed = True
            init_id = producer.send(ApiKey.INIT_PRODUCER_ID, 4, InitProducerId(
                transactional_id=None, transaction_timeout_ms=60_000, producer_id=-1, producer_epoch=-1))
            assert slow_fsync.started.wait(LONG_ENOUGH), "no producer id block was persisted"

            answer = other.request(ApiKey.METADATA, 12, Metadata(
                topics=[Metadata.MetadataRequestTopic(name="plain")], allow_auto_topic_creation=False))
            seen["metadata while persisting"] = not slow_fsync.finished.is_set()
            seen["topic"] = answer.topics[0].name

            slow_fsync.release()
            received_id, initialized = producer.receive(ApiKey.INIT_PRODUCER_ID, 4)
            seen["init"] = (received_id == init_id, initialized.error_code, initialized.producer_id)

    try:
        serve_while(broker, script)
    finally:
        slow_fsync.release()
    assert seen == {"metadata while persisting": True, "topic": "plain", "init": (True, 0, 0)}
    assert (tmp_path / "pykbroker-producer-id-block").read_text() == "1000"


CreateTopics = messages.request(ApiKey.CREATE_TOPICS).cls


def test_a_second_client_is_answered_while_a_create_topics_waits_for_the_metadata_state_fsync(
        tmp_path, monkeypatch):
    """The embedded store writes its state file (write, fsync, rename) on its writer thread;
    CreateTopics is answered only once that fsync is done, and meanwhile the loop serves others."""
    slow_fsync = SlowFlush()
    real_fsync = os.fsync

    def fsync_on_the_writer_only(fd):
        if threading.current_thread().name != "pykbroker-metadata-writer":
            real_fsync(fd)
            return
        slow_fsync(fd)

    slow_fsync._real = real_fsync
    broker, bootstrap = open_broker_with_topic(tmp_path, "plain")
    monkeypatch.setattr(os, "fsync", fsync_on_the_writer_only)
    seen = {}

    def script():
        with WireClient(bootstrap) as admin, WireClient(bootstrap) as other:
            slow_fsync.armed = True
            create_id = admin.send(ApiKey.CREATE_TOPICS, 7, CreateTopics(timeout_ms=30_000, topics=[
                CreateTopics.CreatableTopic(name="fresh", num_partitions=2, replication_factor=1,
                                            assignments=[], configs=[])]))
            assert slow_fsync.started.wait(LONG_ENOUGH), "the state file was never fsynced"

            answer = other.request(ApiKey.METADATA, 12, Metadata(
                topics=[Metadata.MetadataRequestTopic(name="fresh")], allow_auto_topic_creation=False))
            seen["metadata while persisting"] = not slow_fsync.finished.is_set()
            # the topic exists on the loop at once, though not acknowledged yet
            seen["topic"] = (answer.topics[0].name, answer.topics[0].error_code, len(answer.topics[0].partitions))
            admin.sock.settimeout(0.2)
            try:
                seen["create answered before the fsync"] = len(admin.sock.recv(1, socket.MSG_PEEK)) > 0
            except TimeoutError:
                seen["create answered before the fsync"] = False
            admin.sock.settimeout(LONG_ENOUGH)

            slow_fsync.release()
            received_id, created = admin.receive(ApiKey.CREATE_TOPICS, 7)
            seen["fsync done when answered"] = slow_fsync.finished.is_set()
            seen["create"] = (received_id == create_id, created.topics[0].name, created.topics[0].error_code)

    try:
        serve_while(broker, script)
    finally:
        slow_fsync.release()
    assert seen == {"metadata while persisting": True, "topic": ("fresh", 0, 2),
                    "create answered before the fsync": False, "fsync done when answered": True,
                    "create": (True, "fresh", 0)}
    state = json.loads((tmp_path / "pykbroker-metadata.json").read_text())
    assert {topic["name"] for topic in state["topics"]} == {"plain", "fresh"}
