"""Raw Kafka requests over a plain socket, independent of the code of the broker under test.

Only what the benchmarks need: is Metadata answered yet (startup time), and which APIs does the
broker advertise in ApiVersions (so throughput phases it cannot serve are skipped with a reason).
"""
from __future__ import annotations

import socket
import struct

METADATA = 3
API_VERSIONS = 18
PRODUCE = 0
FETCH = 1
_CORRELATION_ID = 7


def _request(api_key: int, version: int, body: bytes) -> bytes:
    client_id = b"bench"
    header = struct.pack(">hhih", api_key, version, _CORRELATION_ID, len(client_id)) + client_id
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, remaining = [], size
    while remaining:
        chunk = sock.recv(remaining)
        if not chunk:
            raise EOFError("connection closed by the broker")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def exchange(bootstrap: str, frame: bytes, timeout: float) -> bytes:
    """Send one request frame, return the response frame (after its size, from the correlation id)."""
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(frame)
        size = struct.unpack(">i", _read_exactly(sock, 4))[0]
        return _read_exactly(sock, size)


def metadata_answered(bootstrap: str, timeout: float = 0.5) -> bool:
    """True when the broker answers a Metadata v1 request for all topics."""
    frame = _request(METADATA, 1, struct.pack(">i", -1))
    try:
        response = exchange(bootstrap, frame, timeout)
    except (OSError, EOFError, struct.error):
        return False
    return struct.unpack(">i", response[:4])[0] == _CORRELATION_ID


def advertised_apis(bootstrap: str, timeout: float = 5.0) -> dict[int, tuple[int, int]]:
    """{api key: (min version, max version)} from an ApiVersions v0 response."""
    response = exchange(bootstrap, _request(API_VERSIONS, 0, b""), timeout)
    _, error_code, count = struct.unpack(">ihi", response[:10])
    if error_code:
        raise RuntimeError(f"ApiVersions answered error {error_code}")
    apis = {}
    for index in range(count):
        key, low, high = struct.unpack(">hhh", response[10 + 6 * index:16 + 6 * index])
        apis[key] = (low, high)
    return apis
