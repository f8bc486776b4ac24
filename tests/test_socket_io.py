"""The plaintext connection IO: a response larger than socket.send.buffer.bytes is written whole
(bytes and file regions in order) through a larger send buffer, and the configured buffer is in
place again once it is written."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from dataclasses import dataclass

import anyio

from pykbroker.server.socket_io import SocketIO


@dataclass
class Region:
    fd: int
    position: int
    length: int

    def __len__(self) -> int:
        return self.length


def _read_all(sock: socket.socket, count: int, into: bytearray) -> None:
    while len(into) < count:
        chunk = sock.recv(1 << 20)
        if not chunk:
            return
        into += chunk


def test_a_response_larger_than_the_send_buffer_arrives_whole_and_the_buffer_is_restored() -> None:
    configured = 102400
    payload = os.urandom(3 * 1024 * 1024)
    server, client = socket.socketpair()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, configured)
    configured_in_kernel = server.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    received = bytearray()
    with tempfile.TemporaryFile() as file, server, client:
        file.write(payload)
        file.flush()
        pieces = [
            b"head",
            Region(file.fileno(), 0, 2 * 1024 * 1024),
            b"mid",
            Region(file.fileno(), 2 * 1024 * 1024, 1024 * 1024),
            b"tail",
        ]
        expected = b"head" + payload[: 2 * 1024 * 1024] + b"mid" + payload[2 * 1024 * 1024 :] + b"tail"
        reader = threading.Thread(target=_read_all, args=(client, len(expected), received))
        reader.start()
        io = SocketIO(server, send_buffer_bytes=configured)
        anyio.run(io.send_pieces, pieces)
        reader.join(timeout=60)
        assert bytes(received) == expected
        assert server.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) == configured_in_kernel
