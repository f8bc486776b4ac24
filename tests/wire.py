"""A minimal blocking Kafka wire client built on our codec, for tests that speak raw protocol."""
from __future__ import annotations

import socket
import struct

from pykbroker.protocol import headers, messages


class WireClient:
    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.correlation_id = 0

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, api_key: int, version: int, body: object, client_id: str = "wire-test") -> int:
        self.correlation_id += 1
        payload = headers.encode_request_header(api_key, version, self.correlation_id, client_id)
        payload += messages.request(api_key).encode_bytes(body, version=version)
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        return self.correlation_id

    def receive_frame(self) -> bytes:
        size = struct.unpack(">i", self._read_exactly(4))[0]
        return self._read_exactly(size)

    def receive(self, api_key: int, version: int, *, response_version: int | None = None):
        """(correlation id, decoded response body)."""
        frame = self.receive_frame()
        body_version = version if response_version is None else response_version
        header, pos = headers.decode_response_header(frame, api_key, body_version)
        body, end = messages.response(api_key).decode(frame, pos, version=body_version)
        assert end == len(frame), "response has trailing bytes"
        return header.correlation_id, body

    def request(self, api_key: int, version: int, body: object):
        correlation_id = self.send(api_key, version, body)
        received_id, response = self.receive(api_key, version)
        assert received_id == correlation_id
        return response

    def is_closed_by_peer(self, timeout: float = 5.0) -> bool:
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False

    def _read_exactly(self, n: int) -> bytes:
        chunks, remaining = [], n
        while remaining:
            chunk = self.sock.recv(remaining)
            if not chunk:
                raise EOFError("connection closed")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "WireClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
