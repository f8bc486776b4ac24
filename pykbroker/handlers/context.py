"""What a request handler is given besides the request: who asked, in which version, and the broker.

`broker` is the running broker's service container (see `pykbroker/broker.py`): handlers reach
the cluster metadata, the replica manager and the coordinators through it, never each other.
"""
from __future__ import annotations

from dataclasses import dataclass


class CloseConnection(Exception):
    """Raised (by the server or a handler) when a request cannot be answered: the connection is
    closed after one log line. A produce with acks=0 that failed uses it to make the client
    refresh its metadata, as Kafka does."""


@dataclass
class RequestContext:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    client_host: str
    listener_name: str
    broker: object
    request_size: int = 0
