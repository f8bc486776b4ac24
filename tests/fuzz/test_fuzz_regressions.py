"""What the fuzzer found, and what hand-made probes of its hostile values found beside it, as
plain tests with the exact bytes or requests.

- (probe) A size prefix that lies (100 MB announced, nothing sent) made the broker allocate the
  whole frame at once: five such connections cost 500 MB. The frame buffer now grows with the
  bytes that arrive.
- (probe) CreateTopics with 2,147,483,647 partitions (and CreatePartitions to that count) placed
  replicas for each of them on the event loop: the broker stopped answering anyone and grew past
  4 GB. More than 100,000 partitions at once is now INVALID_PARTITIONS.
- (fuzzer) Metadata v10 and v11 with a null topic name failed in the handler (the name is
  nullable in the schema from v10, for v12's topic ids). Before v12 it is an invalid request, as
  in Kafka: the connection closes with one WARN line.
- (fuzzer) A malformed ApiVersions request before SASL authentication was logged as an
  unexpected error (with a traceback) once such errors were named; it closes its connection with
  one WARN line.
- An unexpected exception in a handler was logged without the request it belonged to. It is now
  logged at ERROR with the API, version, correlation id and client id, and closes only that
  connection.
"""
from __future__ import annotations

import logging
import socket
import struct

import anyio
import pytest

from pykbroker.handlers.support.registry import HandlerEntry
from pykbroker.protocol import headers, messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.server.dispatcher import CloseConnection, Dispatcher
from pykbroker.testkit.process import BrokerProcess
from tests.security.sasl_support import sasl_broker
from pykbroker.testkit.wire import WireClient

from .target import resident_memory_kb

HUNDRED_MB = 100 * 1024 * 1024
Metadata = messages.request(ApiKey.METADATA)


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    with BrokerProcess(tmp_path_factory.mktemp("regressions")) as running:
        yield running


def metadata_answers(broker: BrokerProcess) -> bool:
    with WireClient(broker.bootstrap) as client:
        return client.request(ApiKey.METADATA, 12, Metadata.cls(topics=[])).brokers != []


def test_size_prefixes_that_lie_cost_no_memory(broker):
    before_kb = resident_memory_kb(broker.process.pid)
    liars = [socket.create_connection((broker.host, broker.port)) for _ in range(5)]
    try:
        for liar in liars:  # just under socket.request.max.bytes, then only an API key
            liar.sendall(struct.pack(">i", HUNDRED_MB - 1) + b"\x00\x12")
        for _ in range(3):  # the broker has read the prefixes by the time these are answered
            assert metadata_answers(broker)
        grown_kb = resident_memory_kb(broker.process.pid) - before_kb
        assert grown_kb < 50 * 1024, f"five lying size prefixes cost {grown_kb} kB"
    finally:
        for liar in liars:
            liar.close()


def test_a_2_gb_size_prefix_closes_the_connection_and_allocates_nothing(broker):
    before_kb = resident_memory_kb(broker.process.pid)
    with WireClient(broker.bootstrap) as client:
        client.send_raw(struct.pack(">i", 2**31 - 1))
        assert client.is_closed_by_peer()
    assert resident_memory_kb(broker.process.pid) - before_kb < 50 * 1024
    assert "exceeds socket.request.max.bytes" in broker.log_text()
    assert metadata_answers(broker)


def test_a_large_frame_that_arrives_in_pieces_is_read_whole(broker):
    """A 2 MB Metadata request sent in three parts: the growing buffer holds all of it."""
    names = [f"absent-topic-{i:07d}" for i in range(100_000)]
    body = Metadata.cls(topics=[Metadata.cls.MetadataRequestTopic(name=name) for name in names],
                        allow_auto_topic_creation=False)
    payload = headers.encode_request_header(ApiKey.METADATA, 12, 5, "pieces") + Metadata.encode_bytes(body, version=12)
    frame = struct.pack(">i", len(payload)) + payload
    assert len(frame) > 2 * 1024 * 1024
    with WireClient(broker.bootstrap, timeout=60) as client:
        third = len(frame) // 3
        for start in (0, third, 2 * third):
            client.send_raw(frame[start:start + third] if start < 2 * third else frame[start:])
        correlation_id, response = client.receive(ApiKey.METADATA, 12)
    assert correlation_id == 5
    assert [topic.name for topic in response.topics] == names


# -- absurd partition counts ----------------------------------------------------------------

CreateTopics = messages.request(ApiKey.CREATE_TOPICS)
CreatePartitions = messages.request(ApiKey.CREATE_PARTITIONS)
INVALID_PARTITIONS = 37
TWO_BILLION = 2**31 - 1


def create_topic_request(name: str, partitions: int, replication_factor: int = 1, validate_only: bool = False):
    topic = CreateTopics.cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=replication_factor)
    return CreateTopics.cls(topics=[topic], timeout_ms=5000, validate_only=validate_only)


@pytest.mark.parametrize("validate_only", [False, True])
def test_creating_a_topic_of_two_billion_partitions_is_refused(broker, validate_only):
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.CREATE_TOPICS, 7, create_topic_request("vast", TWO_BILLION, 1, validate_only))
    [result] = response.topics
    assert (result.error_code, result.error_message) == (
        INVALID_PARTITIONS,
        "Number of partitions (2147483647) exceeds the limit of 100000 partitions created at once.",
    )
    assert metadata_answers(broker)


def test_growing_a_topic_to_two_billion_partitions_is_refused(broker):
    with WireClient(broker.bootstrap) as client:
        created = client.request(ApiKey.CREATE_TOPICS, 7, create_topic_request("growing", 1))
        assert created.topics[0].error_code == 0
        grow = CreatePartitions.cls.CreatePartitionsTopic(name="growing", count=TWO_BILLION, assignments=None)
        response = client.request(ApiKey.CREATE_PARTITIONS, 3, CreatePartitions.cls(topics=[grow], timeout_ms=5000))
    [result] = response.results
    assert result.error_code == INVALID_PARTITIONS
    assert "exceeds the limit of 100000 partitions" in result.error_message
    assert metadata_answers(broker)


# -- requests that close their connection with one WARN line --------------------------------

# Metadata v11, client id null, one topic whose compact name is null (0x00), zero topic id
METADATA_V11_NULL_TOPIC_NAME = b'\x00\x00\x00"\x00\x03\x00\x0b\x00\x00\x00\x07\xff\xff\x00\x02' + bytes(22)
# ApiVersions v3 whose compact client software name has length -1
API_VERSIONS_V3_NULL_SOFTWARE_NAME = b"\x00\x00\x00\x10\x00\x12\x00\x03\x00\x00\x00\x00\xff\xff\x00\x00\x00\x01\x00\x01"


def closes_with_one_warning(broker: BrokerProcess, bootstrap: str, frame: bytes, warning: str) -> None:
    with WireClient(bootstrap) as client:
        client.send_raw(frame)
        assert client.is_closed_by_peer()
    assert metadata_answers(broker)
    lines = [line for line in broker.log_text().splitlines() if warning in line]
    assert lines and all(" WARNING " in line for line in lines), lines
    assert "Traceback" not in broker.log_text()


def test_metadata_v11_with_a_null_topic_name_closes_the_connection(broker):
    closes_with_one_warning(broker, broker.bootstrap, METADATA_V11_NULL_TOPIC_NAME,
                            "Topic name can not be null for version 11")


@pytest.fixture(scope="module")
def sasl(tmp_path_factory):
    with sasl_broker(tmp_path_factory.mktemp("sasl")) as running:
        yield running


def test_a_malformed_api_versions_before_sasl_authentication_closes_the_connection(sasl):
    closes_with_one_warning(sasl, sasl.sasl_bootstrap, API_VERSIONS_V3_NULL_SOFTWARE_NAME,
                            "malformed API_VERSIONS v3 request")


# -- an unexpected error in a handler -------------------------------------------------------


async def broken_handler(request, ctx):
    raise ZeroDivisionError("a bug in a handler")


def test_an_unexpected_handler_error_is_logged_with_its_request_and_closes_the_connection(caplog):
    entry = HandlerEntry(ApiKey.METADATA, 0, 12, broken_handler, Metadata, messages.response(ApiKey.METADATA))
    dispatcher = Dispatcher({ApiKey.METADATA: entry}, services=None)
    frame = bytearray(headers.encode_request_header(ApiKey.METADATA, 12, 42, "the-app")
                      + Metadata.encode_bytes(Metadata.cls(topics=[]), version=12))

    async def dispatch():
        await dispatcher.dispatch(frame, "10.0.0.1", "PLAINTEXT")

    with caplog.at_level(logging.ERROR), pytest.raises(CloseConnection):
        anyio.run(dispatch)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.exc_info is not None
    assert record.getMessage() == (
        "Unexpected error handling METADATA v12 request (correlation id 42, client id 'the-app') "
        "from 10.0.0.1 on listener PLAINTEXT; closing the connection"
    )
