"""Bad input costs the sender its connection, never the broker: the next client works normally."""
import os
import socket
import struct

import pytest

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient

Metadata = messages.request(ApiKey.METADATA)


def assert_broker_still_serves(broker):
    with WireClient(broker.bootstrap) as client:
        response = client.request(ApiKey.METADATA, 1, Metadata.cls(topics=None))
    assert [b.node_id for b in response.brokers] == [0]


def send_and_expect_close(broker, payload: bytes):
    with WireClient(broker.bootstrap) as client:
        client.send_raw(payload)
        assert client.is_closed_by_peer()


@pytest.mark.parametrize("payload", [
    # garbage whose size prefix is over socket.request.max.bytes (a smaller one is a valid wait)
    pytest.param(b"\x7e" + os.urandom(63), id="random-bytes"),
    pytest.param(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", id="http-request"),
    pytest.param(struct.pack(">i", -5), id="negative-size"),
    pytest.param(struct.pack(">i", 2**31 - 1) + b"\x00" * 16, id="2GiB-size-prefix"),
    pytest.param(struct.pack(">i", 3) + b"\x00\x03\x00", id="shorter-than-a-header"),
    pytest.param(struct.pack(">ihhi", 8, 9999, 0, 1), id="unknown-api-key"),
    pytest.param(struct.pack(">ihhi", 8, ApiKey.METADATA, 99, 1), id="version-above-range"),
    pytest.param(struct.pack(">ihhi", 12, ApiKey.METADATA, 1, 1) + b"\x00\x01x\x00",
                 id="body-cut-short"),
    pytest.param(struct.pack(">ihhi", 8, ApiKey.PRODUCE + 200, 0, 1), id="api-not-served"),
])
def test_malformed_input_closes_only_that_connection(broker, payload):
    send_and_expect_close(broker, payload)
    assert_broker_still_serves(broker)


def test_a_truncated_frame_then_disconnect_leaves_the_broker_serving(broker):
    with WireClient(broker.bootstrap) as client:
        client.send_raw(struct.pack(">i", 1000) + b"\x00\x03\x00\x01")
    assert_broker_still_serves(broker)


def test_a_stalled_half_frame_does_not_block_other_clients(broker):
    with WireClient(broker.bootstrap) as stalled:
        stalled.send_raw(struct.pack(">i", 1000) + b"\x00\x03")
        assert_broker_still_serves(broker)


def test_requests_above_socket_request_max_bytes_are_refused(tmp_path):
    from pykbroker.testkit.process import BrokerProcess

    with BrokerProcess(tmp_path, {"socket.request.max.bytes": "1000"}) as small:
        send_and_expect_close(small, struct.pack(">i", 1001) + b"\x00" * 1001)
        assert "exceeds socket.request.max.bytes" in small.log_text()
        assert_broker_still_serves(small)


def test_pipelined_requests_are_answered_in_order(broker):
    with WireClient(broker.bootstrap) as client:
        sent = [client.send(ApiKey.METADATA, version, Metadata.cls(topics=None))
                for version in (1, 5, 9, 12, 1, 7)]
        received = [client.receive(ApiKey.METADATA, version)[0]
                    for version in (1, 5, 9, 12, 1, 7)]
    assert received == sent


def test_many_concurrent_connections_are_served(broker):
    clients = [WireClient(broker.bootstrap) for _ in range(50)]
    try:
        for client in clients:
            client.send(ApiKey.METADATA, 1, Metadata.cls(topics=None))
        for client in clients:
            _, response = client.receive(ApiKey.METADATA, 1)
            assert response.brokers
    finally:
        for client in clients:
            client.close()


def test_connection_reset_mid_request_is_harmless(broker):
    sock = socket.create_connection(("127.0.0.1", broker.port))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.sendall(struct.pack(">i", 100) + b"\x00\x03")
    sock.close()  # RST
    assert_broker_still_serves(broker)
