"""Kafka's `Sanitizer`: user names as znode (and entity) names, URL-encoded.

    sanitize("carol@x y")        # 'carol%40x%20y'
    desanitize("carol%40x%20y")  # 'carol@x y'

Java's URLEncoder keeps letters, digits and `.-*_`, writes a space as `+`; Kafka then writes `*`
as `%2A` and `+` (a space) as `%20`.
"""

from __future__ import annotations

from urllib.parse import unquote_plus

_KEPT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")


def sanitize(name: str) -> str:
    return "".join(chr(byte) if byte in _KEPT else f"%{byte:02X}" for byte in name.encode("utf-8"))


def desanitize(name: str) -> str:
    return unquote_plus(name, encoding="utf-8")  # Java's URLDecoder: "+" is a space
