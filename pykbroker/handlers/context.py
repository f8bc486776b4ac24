"""What a request handler is given besides the request: who asked, in which version, and the broker.

`broker` is the running broker's service container (see `pykbroker/broker.py`): handlers reach
the cluster metadata, the replica manager and the coordinators through it, never each other.
"""
from __future__ import annotations

from dataclasses import dataclass


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
