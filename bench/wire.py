"""What the benchmarks ask a broker over the wire, through `pykbroker.testkit.wire.WireClient`
(the project's codec, which speaks to pykbroker, Kafka and tansu alike).

Is Metadata answered yet (startup time), which APIs does the broker advertise in ApiVersions (so
throughput phases it cannot serve are skipped with a reason), and, for the scale benchmark, every
topic's partitions, leaders and ISR sizes from Metadata v1, on one connection that can also time
round trips.
"""
from __future__ import annotations

import struct
import time
from dataclasses import dataclass, field
from typing import Any

from pykbroker.protocol import messages
from pykbroker.protocol.api_keys import ApiKey
from pykbroker.testkit.wire import WireClient, decode_response

METADATA = int(ApiKey.METADATA)
API_VERSIONS = int(ApiKey.API_VERSIONS)
PRODUCE = int(ApiKey.PRODUCE)
FETCH = int(ApiKey.FETCH)
METADATA_VERSION = 1
FAILURES = (OSError, EOFError, struct.error, UnicodeDecodeError, ValueError)


def all_topics_metadata() -> Any:
    """A Metadata v1 request body for every topic."""
    return messages.request(ApiKey.METADATA).cls(topics=None)


def metadata_answered(bootstrap: str, timeout: float = 0.5) -> bool:
    """True when the broker answers a Metadata v1 request for all topics (its response is not decoded)."""
    try:
        with WireClient(bootstrap, timeout, client_id="bench") as client:
            correlation_id = client.send(METADATA, METADATA_VERSION, all_topics_metadata())
            return struct.unpack(">i", client.receive_frame()[:4])[0] == correlation_id
    except FAILURES:
        return False


def advertised_apis(bootstrap: str, timeout: float = 5.0) -> dict[int, tuple[int, int]]:
    """{api key: (min version, max version)} from an ApiVersions v0 response."""
    with WireClient(bootstrap, timeout, client_id="bench") as client:
        response = client.request(API_VERSIONS, 0, messages.request(ApiKey.API_VERSIONS).cls())
    if response.error_code:
        raise RuntimeError(f"ApiVersions answered error {response.error_code}")
    return {api.api_key: (api.min_version, api.max_version) for api in response.api_keys}


# -- Metadata v1 responses: partitions, leaders and in-sync replicas of every topic -------------

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


def view_of(response: Any) -> ClusterView:
    view = ClusterView(brokers=[broker.node_id for broker in response.brokers])
    for topic in response.topics:
        view.topic_errors[topic.name] = topic.error_code
        view.topics[topic.name] = {
            part.partition_index: PartitionState(part.error_code, part.leader_id, len(part.replica_nodes),
                                                 len(part.isr_nodes))
            for part in topic.partitions
        }
    return view


class MetadataConnection:
    """One connection that asks for all topics' Metadata (v1) as often as needed.

    `round_trip()` times a request from sending to the last byte of its response, not decoding.
    """

    def __init__(self, bootstrap: str, timeout: float = 10.0) -> None:
        self.client = WireClient(bootstrap, timeout, client_id="bench")
        self.body = all_topics_metadata()

    def round_trip(self) -> tuple[float, bytes]:
        begin = time.perf_counter()
        self.client.send(METADATA, METADATA_VERSION, self.body)
        response = self.client.receive_frame()
        return time.perf_counter() - begin, response

    def view(self) -> ClusterView:
        _, response = self.round_trip()
        return view_of(decode_response(response, METADATA, METADATA_VERSION, exact=False)[1])

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> MetadataConnection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def cluster_view(bootstrap: str, timeout: float = 10.0) -> ClusterView | None:
    """All topics as the broker sees them; None when it does not answer."""
    try:
        with MetadataConnection(bootstrap, timeout) as connection:
            return connection.view()
    except FAILURES:
        return None
