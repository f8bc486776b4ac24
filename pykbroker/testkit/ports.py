"""Free loopback ports, for a broker or a ZooKeeper that must know its port before it starts."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (another process may take it before it is used)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
