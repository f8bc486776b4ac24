"""Topics created and metadata read through the wire, with pykbroker's own codec: what test
fixtures need from a broker (any Kafka broker) without a client library.

    create_topic("127.0.0.1:9092", "orders", partitions=3)   # returns once every partition has a leader
    registered_brokers("127.0.0.1:9092")                      # [1, 2, 3]

Each call opens one connection to the first of the bootstrap servers.
"""

from __future__ import annotations

import socket
import struct
import time
from typing import Any

from .protocol import headers, messages
from .protocol.api_keys import ApiKey
from .protocol.errors import ErrorCode


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
    [result] = _wire_request(bootstrap, ApiKey.CREATE_TOPICS, 7, body, timeout).topics
    if result.error_code != 0:
        raise RuntimeError(f"cannot create topic {name!r}: {_error_name(result.error_code)}: {result.error_message}")
    deadline = time.monotonic() + timeout
    while not _has_leaders(bootstrap, name, partitions):
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {name!r} has no leader for every partition after {timeout}s")
        time.sleep(0.02)
    return name


def registered_brokers(bootstrap: str) -> list[int]:
    """The ids of the brokers Metadata lists (every broker registered in the cluster)."""
    try:
        return sorted(broker.node_id for broker in _metadata(bootstrap, []).brokers)
    except OSError:
        return []


def _has_leaders(bootstrap: str, topic: str, partitions: int) -> bool:
    [found] = _metadata(bootstrap, [topic]).topics
    leaders = [partition.leader_id for partition in found.partitions]
    return found.error_code == 0 and len(leaders) == partitions and all(leader >= 0 for leader in leaders)


def _metadata(bootstrap: str, topics: list[str]) -> Any:
    request = messages.request(ApiKey.METADATA).cls
    body = request(
        topics=[request.MetadataRequestTopic(name=topic) for topic in topics], allow_auto_topic_creation=False
    )
    return _wire_request(bootstrap, ApiKey.METADATA, 12, body)


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error {code}"


def _wire_request(bootstrap: str, api_key: int, version: int, body: object, timeout: float = 30.0) -> Any:
    """One request on a new connection to the first of `bootstrap`'s servers; the decoded answer."""
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    payload = headers.encode_request_header(api_key, version, 1, "pykbroker-testing")
    payload += messages.request(api_key).encode_bytes(body, version=version)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        frame = _read_exactly(sock, struct.unpack(">i", _read_exactly(sock, 4))[0])
    _, position = headers.decode_response_header(frame, api_key, version)
    answer, _ = messages.response(api_key).decode(frame, position, version=version)
    return answer


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = sock.recv(size)
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
