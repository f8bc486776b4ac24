"""Serving while the logs load: a restarted broker answers Metadata and serves the partitions
already loaded while others still load; a partition whose log is not loaded yet answers
NOT_LEADER_OR_FOLLOWER (retriable: clients refresh their metadata and retry), and no client
sees a non-retriable error or loses a record.

The broker runs in this process with a "slow loader": `LogManager._load_log` replaced by one
that holds one partition's load until the test releases it. No test here measures time.
"""
import threading

import pytest

from pykbroker.broker import Broker
from pykbroker.config import BrokerConfig
from pykbroker.log.manager import LogManager
from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.protocol.errors import ErrorCode
from pykbroker.records.records import build_batch
from pykbroker.testkit.wire import WireClient

from .client_helpers import Fetch, ListOffsets, produce_batch, producer, read_by_fetch
from .test_fsync_off_the_loop import LONG_ENOUGH, serve_while

Metadata = messages.request(ApiKey.METADATA).cls
HELD = ("held", 0)


class HeldLoad:
    """`LogManager._load_log` that holds the load of `HELD` until `release`."""

    def __init__(self) -> None:
        self.real = LogManager._load_log
        self.reached = threading.Event()
        self.released = threading.Event()

    def __call__(self, manager, item, **kwargs):
        if item.key == HELD:
            self.reached.set()
            self.released.wait(LONG_ENOUGH)
        return self.real(manager, item, **kwargs)


def new_broker(tmp_path) -> Broker:
    broker = Broker(BrokerConfig({
        "log.dirs": str(tmp_path / "logs"), "listeners": "PLAINTEXT://127.0.0.1:0",
        "num.recovery.threads.per.data.dir": "2"}))
    broker.open()
    return broker


def bootstrap_of(broker: Broker) -> str:
    return f"127.0.0.1:{broker.listeners[0].port}"


def records(*values: bytes) -> bytes:
    return build_batch([(b"k", value) for value in values])


def until_produced(client: WireClient, topic: str, batch: bytes):
    """Produce `batch` as a client does: retry a retriable error, fail on any other."""
    for _ in range(500):
        answer = produce_batch(client, topic, batch)
        if answer.error_code == ErrorCode.NONE:
            return answer
        assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER, answer
        threading.Event().wait(0.02)
    pytest.fail(f"{topic} was never served")


def list_offsets_error(client: WireClient, topic: str) -> int:
    request = ListOffsets(replica_id=-1, isolation_level=0, topics=[ListOffsets.ListOffsetsTopic(
        name=topic, partitions=[ListOffsets.ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    return client.request(ApiKey.LIST_OFFSETS, 7, request).topics[0].partitions[0].error_code


def fetch_error(client: WireClient, topic: str) -> int:
    request = Fetch(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1 << 20, isolation_level=0,
                    session_id=0, session_epoch=-1, topics=[Fetch.FetchTopic(topic=topic, partitions=[
                        Fetch.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    return client.request(ApiKey.FETCH, 11, request).responses[0].partitions[0].error_code


def metadata_of(client: WireClient, *topics: str) -> dict:
    answer = client.request(ApiKey.METADATA, 12, Metadata(
        topics=[Metadata.MetadataRequestTopic(name=topic) for topic in topics],
        allow_auto_topic_creation=False))
    return {t.name: (t.error_code, [(p.partition_index, p.error_code, p.leader_id) for p in t.partitions])
            for t in answer.topics}


def test_a_partition_still_loading_answers_retriable_errors_while_loaded_ones_are_served(
        tmp_path, monkeypatch):
    first = new_broker(tmp_path)
    first.topic_creator.create("held", 1, 1)
    first.topic_creator.create("ready", 1, 1)

    def write_both():
        with WireClient(bootstrap_of(first)) as client:
            for topic in ("held", "ready"):
                assert until_produced(client, topic, records(b"a", b"b", b"c")).base_offset == 0

    serve_while(first, write_both)

    hold = HeldLoad()
    monkeypatch.setattr(LogManager, "_load_log", lambda manager, item, **kw: hold(manager, item, **kw))
    second = new_broker(tmp_path)
    bootstrap = bootstrap_of(second)
    seen = {}

    def while_held():
        assert hold.reached.wait(LONG_ENOUGH)
        with WireClient(bootstrap) as client:
            seen["metadata"] = metadata_of(client, "held", "ready")
            seen["ready produce"] = until_produced(client, "ready", records(b"d")).base_offset
            seen["held produce"] = produce_batch(client, "held", records(b"d")).error_code
            seen["held list offsets"] = list_offsets_error(client, "held")
            seen["held fetch"] = fetch_error(client, "held")
            seen["still held"] = not hold.released.is_set()
        client_producer = producer(bootstrap, retries=100, retry_backoff_ms=20)
        errors = []
        client_producer.produce("held", key=b"k", value=b"e", partition=0,
                                on_delivery=lambda error, _: error and errors.append(error))
        client_producer.poll(0.2)
        hold.released.set()
        assert client_producer.flush(LONG_ENOUGH * 2) == 0
        seen["client errors"] = errors
        seen["held records"] = [value for _, _, value in read_by_fetch(bootstrap, "held")]

    serve_while(second, while_held)
    assert seen == {
        "metadata": {"held": (0, [(0, 0, 0)]), "ready": (0, [(0, 0, 0)])},
        "ready produce": 3,
        "held produce": ErrorCode.NOT_LEADER_OR_FOLLOWER,
        "held list offsets": ErrorCode.NOT_LEADER_OR_FOLLOWER,
        "held fetch": ErrorCode.NOT_LEADER_OR_FOLLOWER,
        "still held": True,
        "client errors": [],
        "held records": [b"a", b"b", b"c", b"e"],
    }
