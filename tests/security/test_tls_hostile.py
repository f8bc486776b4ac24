"""Hostile input on TLS and plaintext listeners: plaintext bytes on a TLS port, a TLS handshake
on a plaintext port, a client that never finishes its handshake, a client gone in the middle of a
request, a corrupted TLS record. Each costs its connection (and a log line); the broker keeps
serving everyone else."""
from __future__ import annotations

import re
import socket
import ssl
import time
import urllib.request

import pytest

from pykbroker.testkit.process import BrokerProcess

from .certs import Pki
from .tls_support import listener_ports, ssl_overrides, wait_for_log


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("pki"))
    pki.broker = pki.issue("broker", "CN=broker,O=pykbroker")
    return pki


@pytest.fixture(scope="module")
def broker(pki, tmp_path_factory):
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                 "connections.max.idle.ms": "1500", **ssl_overrides(pki, pki.broker)}
    with BrokerProcess(tmp_path_factory.mktemp("hostile"), overrides) as running:
        running.ports = listener_ports(running)
        yield running


@pytest.fixture(scope="module")
def patient_broker(pki, tmp_path_factory):
    """A broker with Kafka's default connections.max.idle.ms (10 minutes), serving its metrics: a
    connection it still counts open after a few seconds is one it has not ended itself."""
    overrides = {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                 "pykbroker.metrics.listener": "http://127.0.0.1:0", **ssl_overrides(pki, pki.broker)}
    with BrokerProcess(tmp_path_factory.mktemp("patient"), overrides) as running:
        running.ports = listener_ports(running)
        yield running


def still_serves(broker, pki) -> None:
    """A TLS client and a plaintext client both get their metadata."""
    from kafka import KafkaAdminClient

    for options in ({"bootstrap_servers": f"127.0.0.1:{broker.ports['PLAINTEXT']}"},
                    {"bootstrap_servers": f"127.0.0.1:{broker.ports['SSL']}", "security_protocol": "SSL",
                     "ssl_cafile": str(pki.ca_pem)}):
        admin = KafkaAdminClient(**options)
        assert admin.describe_cluster()["brokers"]
        admin.close()


_METRICS_SERVED = re.compile(r"Metrics and health served on (http://[\d.]+:\d+)")
_SSL_CONNECTION_COUNT = 'kafka_server_socket_server_metrics_connection_count{listener="SSL"}'


def ssl_connections(broker) -> float:
    """The connections the broker counts open on its SSL listener (Kafka's connection-count)."""
    served = _METRICS_SERVED.search(broker.log_text())
    assert served, broker.log_text()
    with urllib.request.urlopen(f"{served.group(1)}/metrics", timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            if line.startswith(_SSL_CONNECTION_COUNT):
                return float(line.split()[-1])
    return 0.0


def ssl_connections_come_down_to(broker, count: float, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while ssl_connections(broker) > count:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def drain(sock: socket.socket, quiet_s: float = 0.3) -> None:
    """Read what the peer has sent until it has been quiet for `quiet_s`."""
    sock.settimeout(quiet_s)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        pass


def closed_by_peer(sock: socket.socket, timeout: float = 10.0) -> bool:
    sock.settimeout(timeout)
    try:
        while sock.recv(4096):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_plaintext_bytes_on_the_tls_port(broker, pki):
    with socket.create_connection(("127.0.0.1", broker.ports["SSL"])) as sock:
        # an ApiVersions v0 request, as a client configured for PLAINTEXT sends it
        sock.sendall(bytes.fromhex("0000000e00120000000000010004746573740000"))
        assert closed_by_peer(sock)
    wait_for_log(broker, "Failed authentication with 127.0.0.1 on listener SSL (SSL handshake failed")
    still_serves(broker, pki)


def test_a_tls_handshake_on_the_plaintext_port(broker, pki):
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    with socket.create_connection(("127.0.0.1", broker.ports["PLAINTEXT"])) as raw:
        raw.settimeout(10)
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            context.wrap_socket(raw, server_hostname="127.0.0.1")
    wait_for_log(broker, "a TLS handshake on PLAINTEXT listener PLAINTEXT")
    still_serves(broker, pki)


def test_a_client_that_never_finishes_its_handshake_is_closed(broker, pki):
    with socket.create_connection(("127.0.0.1", broker.ports["SSL"])) as silent:
        started = time.monotonic()
        still_serves(broker, pki)  # served meanwhile
        assert closed_by_peer(silent, timeout=15)
        assert time.monotonic() - started < 10
    wait_for_log(broker, "no TLS handshake within 1500 ms")


def test_garbage_after_a_completed_handshake_is_an_ordinary_bad_frame(broker, pki):
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    with socket.create_connection(("127.0.0.1", broker.ports["SSL"])) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            tls.sendall(b"\x7f\xff\xff\xff" + b"x" * 100)  # a frame larger than socket.request.max.bytes
            assert closed_by_peer(tls)
    wait_for_log(broker, "exceeds socket.request.max.bytes")
    still_serves(broker, pki)


def tls_client(broker, pki) -> tuple[socket.socket, ssl.SSLObject, ssl.MemoryBIO]:
    """A connected TLS client whose records are written to memory first (so that a test can send
    them whole, cut short or corrupted): the socket, the TLS object and its outgoing BIO."""
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    sock = socket.create_connection(("127.0.0.1", broker.ports["SSL"]), timeout=10)
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            sock.sendall(outgoing.read())
            incoming.write(sock.recv(65536))
    sock.sendall(outgoing.read())
    return sock, tls, outgoing


@pytest.mark.parametrize("close_notify", [True, False], ids=["close-notify", "no-close-notify"])
def test_a_client_gone_in_the_middle_of_a_large_request(patient_broker, pki, close_notify):
    """The broker ends its side of the connection (its SSL connection count comes back down)."""
    broker = patient_broker
    before = ssl_connections(broker)
    sock, tls, outgoing = tls_client(broker, pki)
    assert ssl_connections(broker) == before + 1
    with sock:
        tls.write((3 << 20).to_bytes(4, "big") + b"\x00" * (600 << 10))  # 600 KiB of a 3 MiB frame
        sock.sendall(outgoing.read())
        if close_notify:
            try:
                tls.unwrap()
            except ssl.SSLWantReadError:
                pass
            sock.sendall(outgoing.read())
        drain(sock)  # what the broker sent (session tickets) read: the close is a FIN, not a reset
    assert ssl_connections_come_down_to(broker, before)
    still_serves(broker, pki)


def test_a_corrupted_tls_record_in_the_middle_of_a_request_closes_the_connection(broker, pki):
    sock, tls, outgoing = tls_client(broker, pki)
    with sock:
        tls.write((1 << 20).to_bytes(4, "big") + b"\x00" * 20_000)
        records = bytearray(outgoing.read())
        records[-100] ^= 0xFF  # inside the second record, after the frame began: its tag fails
        sock.sendall(records)
        assert closed_by_peer(sock)
    assert "BAD_RECORD_MAC" in wait_for_log(broker, "failed: [SSL")
    still_serves(broker, pki)
