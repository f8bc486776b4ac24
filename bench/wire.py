"""Raw Kafka requests over a plain socket, independent of the code of the broker under test.

Only what the benchmarks need: is Metadata answered yet (startup time), which APIs does the
broker advertise in ApiVersions (so throughput phases it cannot serve are skipped with a reason),
and, for the scale benchmark, every topic's partitions, leaders and ISR sizes from Metadata v1.
"""
from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass, field

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


# -- Metadata v1 responses, parsed: partitions, leaders and in-sync replicas of every topic ------

class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, layout: str):
        values = struct.unpack_from(layout, self.data, self.at)
        self.at += struct.calcsize(layout)
        return values

    def int16(self) -> int:
        return self.take(">h")[0]

    def int32(self) -> int:
        return self.take(">i")[0]

    def string(self) -> str | None:
        size = self.int16()
        if size < 0:
            return None
        text = self.data[self.at:self.at + size].decode()
        self.at += size
        return text

    def int32_array(self) -> list[int]:
        count = self.int32()
        return list(self.take(f">{max(count, 0)}i")) if count > 0 else []


@dataclass(frozen=True)
class PartitionState:
    error_code: int
    leader: int
    replicas: int
    isr: int


@dataclass
class ClusterView:
    """What one Metadata v1 response for all topics says."""
    brokers: list[int] = field(default_factory=list)
    topics: dict[str, dict[int, PartitionState]] = field(default_factory=dict)
    topic_errors: dict[str, int] = field(default_factory=dict)

    def partition_count(self, prefix: str = "") -> int:
        return sum(len(parts) for name, parts in self.topics.items() if name.startswith(prefix))

    def led(self, expected: dict[str, int]) -> bool:
        """Every expected topic listed with its partitions, each with a leader."""
        for name, count in expected.items():
            parts = self.topics.get(name)
            if parts is None or self.topic_errors.get(name) or len(parts) != count:
                return False
            if any(state.leader < 0 or state.error_code for state in parts.values()):
                return False
        return True


def _parse_metadata_v1(response: bytes) -> ClusterView:
    reader, view = _Reader(response), ClusterView()
    reader.int32()  # correlation id
    for _ in range(reader.int32()):
        view.brokers.append(reader.int32())
        reader.string(), reader.int32(), reader.string()  # host, port, rack
    reader.int32()  # controller id
    for _ in range(reader.int32()):
        error_code, name = reader.int16(), reader.string()
        reader.take(">b")  # is_internal
        view.topic_errors[name] = error_code
        parts = view.topics.setdefault(name, {})
        for _ in range(reader.int32()):
            part_error, index, leader = reader.take(">hii")
            replicas, isr = reader.int32_array(), reader.int32_array()
            parts[index] = PartitionState(part_error, leader, len(replicas), len(isr))
    return view


class MetadataConnection:
    """One connection that asks for all topics' Metadata (v1) as often as needed.

    `round_trip()` times a request from sending to the last byte of its response, not parsing.
    """

    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.sock.settimeout(timeout)
        self.frame = _request(METADATA, 1, struct.pack(">i", -1))

    def _exchange(self) -> bytes:
        self.sock.sendall(self.frame)
        size = struct.unpack(">i", _read_exactly(self.sock, 4))[0]
        return _read_exactly(self.sock, size)

    def round_trip(self) -> tuple[float, bytes]:
        begin = time.perf_counter()
        response = self._exchange()
        return time.perf_counter() - begin, response

    def view(self) -> ClusterView:
        return _parse_metadata_v1(self._exchange())

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> MetadataConnection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def cluster_view(bootstrap: str, timeout: float = 10.0) -> ClusterView | None:
    """All topics as the broker sees them; None when it does not answer."""
    try:
        with MetadataConnection(bootstrap, timeout) as connection:
            return connection.view()
    except (OSError, EOFError, struct.error, UnicodeDecodeError):
        return None
