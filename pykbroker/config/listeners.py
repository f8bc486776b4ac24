"""Listeners (`listeners`, `advertised.listeners`) and `listener.security.protocol.map`.

parse_listeners("listeners", "PLAINTEXT://127.0.0.1:9092")   # [Listener('PLAINTEXT', '127.0.0.1', 9092)]
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .definitions import SECURITY_PROTOCOLS
from .types import invalid_value


class Listener(NamedTuple):
    """One listener: name (upper case), host ('' = all interfaces), port (0 = any free port)."""

    name: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.name}://{host}:{self.port}"


_LISTENER = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")


def parse_listeners(key: str, text: str | None) -> list[Listener]:
    """Parse a comma separated listener list such as 'PLAINTEXT://127.0.0.1:9092,SSL://:9093'."""
    listeners = [_parse_listener(key, item) for item in re.split(r"\s*,\s*", (text or "").strip()) if item]
    names = [listener.name for listener in listeners]
    if len(names) != len(set(names)):
        raise invalid_value(key, text, "Each listener must have a different name")
    return listeners


def _parse_listener(key: str, text: str) -> Listener:
    match = _LISTENER.fullmatch(text)
    if match is None:
        raise invalid_value(key, text, "Unable to parse as a listener (NAME://host:port)")
    name, host, port = match.group(1).upper(), match.group(2), int(match.group(3))
    if not 0 <= port <= 65535:
        raise invalid_value(key, text, f"Port {port} is out of range")
    return Listener(name, host, port)


def parse_security_protocol_map(key: str, text: str) -> dict[str, str]:
    """Parse 'NAME:PROTOCOL,...' into {listener name: security protocol}, both upper case."""
    mapping = {}
    for item in re.split(r"\s*,\s*", text.strip()):
        name, sep, protocol = item.partition(":")
        protocol = protocol.strip().upper()
        if not sep or not name.strip() or protocol not in SECURITY_PROTOCOLS:
            raise invalid_value(key, text, f"Map entry '{item}' is not NAME:PROTOCOL with a known protocol")
        mapping[name.strip().upper()] = protocol
    return mapping
