"""OffsetDelete (API key 47) for `consumer-groups --delete-offsets`: confluent-kafka has no binding
for it, so this module speaks the two requests it needs on a socket of its own: FindCoordinator v1
to find the group's coordinator, then OffsetDelete v0. PLAINTEXT and SSL listeners; SASL is refused
with one clear error.
"""

from __future__ import annotations

import socket
import ssl
import struct

from confluent_kafka import KafkaError

from .client_config import ToolError
from .kafka_errors import java_exception_text, kafka_error_name
from .tool_support import Partition

FIND_COORDINATOR, OFFSET_DELETE = 10, 47
CLIENT_ID = "pykbroker-consumer-groups"


def delete_offsets(
    config: dict, group_id: str, partitions: list[Partition], timeout_s: float
) -> tuple[str | None, dict[Partition, str | None]]:
    """The top-level error's name (None: none) and each partition's error message (None: deleted)."""
    protocol = str(config.get("security.protocol", "PLAINTEXT")).upper()
    if protocol.startswith("SASL"):
        raise ToolError("--delete-offsets supports PLAINTEXT and SSL listeners only (SASL is not implemented here)")
    with KafkaConnection(*bootstrap_address(config), config, timeout_s) as connection:
        coordinator = connection.find_coordinator(group_id)
    with KafkaConnection(coordinator[0], coordinator[1], config, timeout_s) as connection:
        return connection.offset_delete(group_id, partitions)


def bootstrap_address(config: dict) -> tuple[str, int]:
    """The first broker of `bootstrap.servers`: the one the tools' own requests go to first."""
    return split_host_port(str(config["bootstrap.servers"]).split(",")[0])


def split_host_port(address: str) -> tuple[str, int]:
    host, _, port = address.strip().rpartition(":")
    return host.strip("[]"), int(port)


def error_text(code: int) -> str:
    """A partition's error as Kafka's tool prints it: the Java exception and Kafka's message."""
    fallback = KafkaError(code)
    return java_exception_text(code, str(fallback.name()), str(fallback.str()))


def error_name(code: int) -> str:
    return kafka_error_name(code, str(KafkaError(code).name()))


def string(value: str) -> bytes:
    data = value.encode("utf-8")
    return struct.pack(">h", len(data)) + data


class Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.position = data, 0

    def take(self, fmt: str) -> int:
        (value,) = struct.unpack_from(fmt, self.data, self.position)
        self.position += struct.calcsize(fmt)
        return value

    def string(self) -> str | None:
        length = self.take(">h")
        if length < 0:
            return None
        value = self.data[self.position : self.position + length].decode("utf-8")
        self.position += length
        return value


class KafkaConnection:
    def __init__(self, host: str, port: int, config: dict, timeout_s: float) -> None:
        self.correlation_id = 0
        try:
            raw = socket.create_connection((host, port), timeout=timeout_s)
        except OSError as error:
            raise ToolError(f"Error: cannot connect to {host}:{port}: {error.strerror or error}") from None
        self.socket: socket.socket = raw
        if str(config.get("security.protocol", "PLAINTEXT")).upper() == "SSL":
            self.socket = tls_context(config).wrap_socket(raw, server_hostname=host)

    def __enter__(self) -> KafkaConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.socket.close()

    def request(self, api_key: int, api_version: int, body: bytes) -> Reader:
        self.correlation_id += 1
        header = struct.pack(">hhi", api_key, api_version, self.correlation_id) + string(CLIENT_ID)
        message = header + body
        self.socket.sendall(struct.pack(">i", len(message)) + message)
        size = struct.unpack(">i", self.receive(4))[0]
        reader = Reader(self.receive(size))
        reader.take(">i")  # correlation id
        return reader

    def receive(self, count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            chunk = self.socket.recv(count - len(chunks))
            if not chunk:
                raise ToolError("Error: the broker closed the connection")
            chunks += chunk
        return bytes(chunks)

    def find_coordinator(self, group_id: str) -> tuple[str, int]:
        response = self.request(FIND_COORDINATOR, 1, string(group_id) + struct.pack(">b", 0))
        response.take(">i")  # throttle time
        error = response.take(">h")
        response.string()  # error message
        response.take(">i")  # node id
        host = response.string() or ""
        port = response.take(">i")
        if error:
            raise ToolError(f"Error: finding the coordinator of group '{group_id}' failed: {error_text(error)}")
        return host, port

    def offset_delete(
        self, group_id: str, partitions: list[Partition]
    ) -> tuple[str | None, dict[Partition, str | None]]:
        by_topic: dict[str, list[int]] = {}
        for topic, partition in partitions:
            by_topic.setdefault(topic, []).append(partition)
        body = string(group_id) + struct.pack(">i", len(by_topic))
        for topic, numbers in by_topic.items():
            body += string(topic) + struct.pack(">i", len(numbers)) + b"".join(struct.pack(">i", n) for n in numbers)
        response = self.request(OFFSET_DELETE, 0, body)
        top_error = response.take(">h")
        response.take(">i")  # throttle time
        results: dict[Partition, str | None] = {}
        partition_errors = []
        for _ in range(response.take(">i")):
            topic = response.string() or ""
            for _ in range(response.take(">i")):
                partition, error = response.take(">i"), response.take(">h")
                results[(topic, partition)] = error_text(error) if error else None
                partition_errors += [error] if error else []
        if top_error:
            results = {p: results.get(p, error_text(top_error)) for p in partitions}
        # as the Java admin client's all(): the top-level error, else the first partition's
        first_error = top_error or (partition_errors[0] if partition_errors else 0)
        return (error_name(first_error) if first_error else None), results


def tls_context(config: dict) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=config.get("ssl.ca.location"), cadata=config.get("ssl.ca.pem"))
    if str(config.get("ssl.endpoint.identification.algorithm", "https")).lower() == "none":
        context.check_hostname = False
    if "ssl.certificate.location" in config:
        context.load_cert_chain(
            config["ssl.certificate.location"], config.get("ssl.key.location"), config.get("ssl.key.password")
        )
    return context
