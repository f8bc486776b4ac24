"""How a TLS listener writes a response: byte pieces and file regions of segment files arrive in
order and complete, whatever their sizes (regions larger than one 1 MiB write slice, regions read
on the event loop and on a worker thread, one connection's write buffer used again and again, a
region that ends early is an error rather than short data), through a real TLS connection between two sockets of one process.
"""

from __future__ import annotations

import os
import socket
import ssl
from pathlib import Path

import anyio
import pytest

from pykbroker.server import tls_io
from pykbroker.server.tls_io import TlsSocketIO

from .certs import Pki


class Region:
    """A file region as the log hands them out."""

    def __init__(self, fd: int, position: int, length: int) -> None:
        self.fd, self.position, self.length = fd, position, length

    def __len__(self) -> int:
        return self.length


@pytest.fixture(scope="module")
def contexts(tmp_path_factory):
    pki = Pki(tmp_path_factory.mktemp("pki"))
    broker = pki.issue("broker", "CN=broker,OU=test,O=pykbroker")
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(broker.chain_pem, broker.key_pem)
    client = ssl.create_default_context(cafile=str(pki.ca_pem))
    return server, client


@pytest.fixture
def segment(tmp_path: Path):
    data = os.urandom(9 * 1024 * 1024 + 123)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    yield fd, data
    os.close(fd)


def sent_through_tls(contexts, pieces: list) -> bytes:
    """What a client reads when the server side writes `pieces` and closes."""
    server_context, client_context = contexts
    server_sock, client_sock = socket.socketpair()
    received = bytearray()

    async def serve() -> None:
        io = TlsSocketIO(server_sock, server_context)
        try:
            await io.handshake()
            await io.send_pieces(pieces)
        finally:
            io.close()

    def read_all() -> None:
        with client_context.wrap_socket(client_sock, server_hostname="127.0.0.1") as tls:
            while chunk := tls.recv(1 << 20):
                received.extend(chunk)

    async def main() -> None:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(anyio.to_thread.run_sync, read_all)
            tasks.start_soon(serve)

    anyio.run(main)  # the server closes without close_notify: the client reads that as the end
    return bytes(received)


def test_header_and_regions_arrive_in_order(contexts, segment):
    fd, data = segment
    pieces = [b"\x00\x00\x01\x00", b"header", Region(fd, 10, 1000), b"middle", Region(fd, 5000, 300)]
    assert sent_through_tls(contexts, pieces) == b"\x00\x00\x01\x00header" + data[10:1010] + b"middle" + data[5000:5300]


def test_regions_larger_than_a_write_buffer_arrive_whole(contexts, segment):
    fd, data = segment
    length = len(data) - 7
    pieces = [b"head", Region(fd, 7, length), Region(fd, 0, 3 * 1024 * 1024), b"tail"]
    expected = b"head" + data[7:] + data[: 3 * 1024 * 1024] + b"tail"
    assert sent_through_tls(contexts, pieces) == expected


def test_a_response_goes_out_in_slices_of_at_most_one_mib(segment):
    fd, data = segment
    slices = tls_io._response_slices([b"x" * 100, Region(fd, 0, len(data)), b"y" * 100])
    sizes = [sum(len(piece) for piece in pieces) for pieces in slices]
    assert sizes == [1 << 20] * 9 + [len(data) + 200 - (9 << 20)]
    sent = bytearray()
    for pieces in slices:
        target = memoryview(bytearray(sum(len(piece) for piece in pieces)))
        tls_io._read_regions(tls_io._fill(target, pieces))
        sent += target
    assert sent == b"x" * 100 + data + b"y" * 100


def test_a_region_past_the_end_of_its_file_is_an_error_not_short_data(segment):
    fd, data = segment
    (pieces,) = tls_io._response_slices([Region(fd, len(data) - 10, 20)])
    with pytest.raises(EOFError):
        tls_io._read_regions(tls_io._fill(memoryview(bytearray(20)), pieces))


def test_responses_of_one_connection_reuse_its_write_buffer(contexts, segment):
    fd, data = segment
    pieces = [b"a", Region(fd, 0, 300_000), b"b", Region(fd, 1, 10), b"c", Region(fd, 7, 2_000_000)]
    expected = b"a" + data[:300_000] + b"b" + data[1:11] + b"c" + data[7:2_000_007]
    assert sent_through_tls(contexts, pieces + pieces[:2]) == expected + b"a" + data[:300_000]


def test_what_the_page_cache_holds_is_read_without_a_worker_thread(segment):
    fd, data = segment
    target = memoryview(bytearray(1000))
    assert tls_io._read_cached(tls_io._fill(target, [tls_io._Region(fd, 50, 1000)])) == []
    assert target == data[50:1050]


def test_what_would_wait_for_the_disk_is_left_to_a_worker_thread(contexts, segment, monkeypatch):
    fd, data = segment
    preadv = os.preadv

    def cache_holds_only_the_first_kib(fd, buffers, position, flags=0):
        if flags & os.RWF_NOWAIT and position >= 1024:
            raise BlockingIOError(11, "would block")
        return preadv(fd, [buffers[0][: max(1, 1024 - position)]] if flags else buffers, position, flags)

    monkeypatch.setattr(tls_io.os, "preadv", cache_holds_only_the_first_kib)
    target = memoryview(bytearray(5000))
    rest = tls_io._read_cached(tls_io._fill(target, [tls_io._Region(fd, 0, 5000)]))
    assert [(len(place), region.position, region.length) for place, region in rest] == [(3976, 1024, 3976)]
    assert sent_through_tls(contexts, [b"head", Region(fd, 0, 300_000)]) == b"head" + data[:300_000]
