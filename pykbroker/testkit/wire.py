"""A blocking Kafka client on the project's own codec: raw requests for tests, benchmarks and
the harness, to pykbroker or any Kafka broker, without a client library.

    with WireClient("127.0.0.1:9092") as client:
        response = client.request(ApiKey.METADATA, 12, body)
    create_topic("127.0.0.1:9092", "orders", partitions=3)   # returns once every partition has a leader
    metadata("127.0.0.1:9092").brokers

A `WireClient` keeps one connection to the first of the bootstrap servers and numbers its
requests; `send_raw` and `receive_frame` reach below the codec, for hostile or timed exchanges.
The functions open one connection per call.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from ..protocol import headers, messages
from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode

CLIENT_ID = "wire-test"
METADATA_VERSION = 12
CREATE_TOPICS_VERSION = 7


class WireClient:
    """One connection to the first server of `bootstrap`, speaking requests encoded by the codec."""

    def __init__(self, bootstrap: str, timeout: float = 10.0, *, client_id: str = CLIENT_ID) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self.correlation_id = 0

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send(self, api_key: int, version: int, body: object, client_id: str | None = None) -> int:
        """Send one request; returns its correlation id."""
        self.correlation_id += 1
        payload = headers.encode_request_header(api_key, version, self.correlation_id, client_id or self.client_id)
        payload += messages.request(api_key).encode_bytes(body, version=version)
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)
        return self.correlation_id

    def receive_frame(self) -> bytes:
        """The next response frame, without its size prefix."""
        size = struct.unpack(">i", self._read_exactly(4))[0]
        return self._read_exactly(size)

    def receive(self, api_key: int, version: int, *, response_version: int | None = None) -> tuple[int, Any]:
        """(correlation id, decoded response body) of the next response."""
        return decode_response(self.receive_frame(), api_key, version if response_version is None else response_version)

    def request(self, api_key: int, version: int, body: object) -> Any:
        """Send one request and return its decoded response."""
        correlation_id = self.send(api_key, version, body)
        received_id, response = self.receive(api_key, version)
        assert received_id == correlation_id, f"correlation id {received_id}, expected {correlation_id}"
        return response

    def is_closed_by_peer(self, timeout: float = 5.0) -> bool:
        """True when the broker closes the connection within `timeout` seconds."""
        self.sock.settimeout(timeout)
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True
        except TimeoutError:
            return False

    def _read_exactly(self, size: int) -> bytes:
        chunks, remaining = [], size
        while remaining:
            chunk = self.sock.recv(remaining)
            if not chunk:
                raise EOFError("connection closed")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def decode_response(frame: bytes, api_key: int, version: int, *, exact: bool = True) -> tuple[int, Any]:
    """(correlation id, decoded body) of a response frame; trailing bytes are an error unless
    `exact` is False."""
    header, position = headers.decode_response_header(frame, api_key, version)
    body, end = messages.response(api_key).decode(frame, position, version=version)
    if exact and end != len(frame):
        raise AssertionError(f"response has {len(frame) - end} trailing bytes")
    return header.correlation_id, body


def request_once(bootstrap: str, api_key: int, version: int, body: object, timeout: float = 30.0) -> Any:
    """One request on a new connection to the first of `bootstrap`'s servers; the decoded answer."""
    with WireClient(bootstrap, timeout, client_id="pykbroker-testkit") as client:
        return client.request(api_key, version, body)


def metadata(bootstrap: str, topics: list[str] | None = None, timeout: float = 30.0) -> Any:
    """The Metadata response for `topics` (none: only brokers and controller), creating none."""
    request = messages.request(ApiKey.METADATA).cls
    body = request(
        topics=[request.MetadataRequestTopic(name=topic) for topic in topics or []], allow_auto_topic_creation=False
    )
    return request_once(bootstrap, ApiKey.METADATA, METADATA_VERSION, body, timeout)


def registered_brokers(bootstrap: str) -> list[int]:
    """The ids of the brokers Metadata lists (every broker registered in the cluster); none when
    the broker does not answer."""
    try:
        return sorted(broker.node_id for broker in metadata(bootstrap).brokers)
    except (OSError, EOFError):
        return []


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int = 1,
    replication_factor: int = 1,
    configs: dict[str, str] | None = None,
    *,
    timeout: float = 30.0,
) -> str:
    """Create a topic with CreateTopics on the first bootstrap server, then wait until Metadata
    shows a leader for each of its partitions; returns the name. Raises RuntimeError with
    Kafka's error name when the broker refuses (TOPIC_ALREADY_EXISTS, INVALID_REPLICATION_FACTOR...)."""
    request = messages.request(ApiKey.CREATE_TOPICS).cls
    topic = request.CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=replication_factor,
        assignments=[],
        configs=[request.CreatableTopicConfig(name=key, value=value) for key, value in (configs or {}).items()],
    )
    body = request(topics=[topic], timeout_ms=int(timeout * 1000), validate_only=False)
    [result] = request_once(bootstrap, ApiKey.CREATE_TOPICS, CREATE_TOPICS_VERSION, body, timeout).topics
    if result.error_code != 0:
        raise RuntimeError(f"cannot create topic {name!r}: {error_name(result.error_code)}: {result.error_message}")
    deadline = time.monotonic() + timeout
    while not has_leaders(bootstrap, name, partitions):
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {name!r} has no leader for every partition after {timeout}s")
        time.sleep(0.02)
    return name


def has_leaders(bootstrap: str, topic: str, partitions: int) -> bool:
    """True once Metadata lists `partitions` partitions of `topic`, each with a leader."""
    [found] = metadata(bootstrap, [topic]).topics
    leaders = [partition.leader_id for partition in found.partitions]
    return found.error_code == 0 and len(leaders) == partitions and all(leader >= 0 for leader in leaders)


def error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"
