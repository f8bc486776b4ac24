"""The parser of server.properties files (Java properties syntax).

parse_properties("broker.id=1\\nlog.dirs: /data")    # {'broker.id': '1', 'log.dirs': '/data'}
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

_WHITESPACE = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def load_properties(path: str | Path) -> dict[str, str]:
    """Read a properties file. Bytes are ISO-8859-1 as for Java; use \\u escapes for other characters."""
    return parse_properties(Path(path).read_text(encoding="iso-8859-1"))


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java properties text: `key=value`, `key: value` or `key value`; later keys win."""
    properties = {}
    for line in _logical_lines(text):
        key, value = _split_key_value(line)
        properties[_unescape(key)] = _unescape(value)
    return properties


def _logical_lines(text: str) -> Iterable[str]:
    """Non-blank, non-comment lines with continuations (odd trailing backslashes) joined."""
    pending: str | None = None
    for natural in re.split(r"\r\n|\r|\n", text):
        line = natural.lstrip(_WHITESPACE)
        if pending is None and (not line or line[0] in "#!"):
            continue
        continues = _ends_with_continuation(line)
        line = (pending or "") + (line[:-1] if continues else line)
        if continues:
            pending = line
        else:
            pending = None
            yield line
    if pending:
        yield pending


def _ends_with_continuation(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split_key_value(line: str) -> tuple[str, str]:
    key_end = _key_end(line)
    rest = line[key_end:]
    stripped = rest.lstrip(_WHITESPACE)
    if stripped[:1] in ("=", ":"):
        stripped = stripped[1:].lstrip(_WHITESPACE)
    return line[:key_end], stripped


def _key_end(line: str) -> int:
    escaped = False
    for index, char in enumerate(line):
        if not escaped and (char in "=:" or char in _WHITESPACE):
            return index
        escaped = char == "\\" and not escaped
    return len(line)


def _unescape(text: str) -> str:
    out, index = [], 0
    while index < len(text):
        char = text[index]
        if char != "\\" or index + 1 == len(text):
            out.append("" if char == "\\" else char)
            index += 1
            continue
        escaped = text[index + 1]
        if escaped == "u":
            out.append(_unicode_escape(text, index))
            index += 6
        else:
            out.append(_ESCAPES.get(escaped, escaped))
            index += 2
    return "".join(out)


def _unicode_escape(text: str, index: int) -> str:
    digits = text[index + 2 : index + 6]
    if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
        raise ValueError(f"Malformed \\uxxxx encoding: \\u{digits}")
    return chr(int(digits, 16))
