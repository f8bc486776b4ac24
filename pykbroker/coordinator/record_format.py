"""The records coordinators keep in their internal topics, encoded from schemas as data.

Kafka describes each key and value of `__consumer_offsets` and `__transaction_state` with a JSON
schema (like the protocol's messages) and writes it as an int16 version followed by the fields of
that version. `RecordFormat` builds a codec per version from such a schema with the protocol's
generator, so that the bytes are Kafka's:

    fmt = RecordFormat({"type": "data", "name": "TransactionLogKey", "validVersions": "0", ...})
    data = fmt.encode(fmt.cls(transactional_id="t"), 0)   # version prefix included
    key = fmt.decode(data, 0)

It also owns what the formats of the coordinators share: a schema field as Kafka's JSON writes it
(`schema_field`), the int16 version a key or value starts with (`record_version`), and the framing
of Kafka 4's coordinator records (`record_type_key`: the record type is the key's version;
`flexible_value`: values of version 0, flexible).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import cached_property
from typing import Any

from ..protocol.codegen import build_classes, compile_version
from ..protocol.schema import MessageSpec, parse_message

# (decoder, encoder, source, the codec functions of each struct), as `compile_version` gives them
Codec = tuple[Callable, Callable, str, dict[str, Callable]]


class RecordFormat:
    """One record format: its classes and a codec per version, from its schema."""

    def __init__(self, raw: dict[str, Any]) -> None:
        # The schema is parsed and its classes generated on first use: a broker loads the formats
        # of every coordinator but uses those of the records it meets.
        self._raw = raw
        self._codecs: dict[int, Codec] = {}

    @cached_property
    def spec(self) -> MessageSpec:
        return parse_message(self._raw)

    @cached_property
    def classes(self) -> dict[str, type[Any]]:
        return build_classes(self.spec)

    @cached_property
    def cls(self) -> type[Any]:
        return self.classes[self.spec.root.name]  # generated at run time: untyped

    def _codec(self, version: int) -> Codec:
        if version not in self.spec.valid_versions:
            raise ValueError(f"{self.spec.name} has no version {version}")
        if version not in self._codecs:
            self._codecs[version] = compile_version(self.spec, version, self.classes)
        return self._codecs[version]

    # The records are instances of `classes`, generated at run time from the schema: typed Any.
    def encode(self, obj: Any, version: int) -> bytes:
        return struct.pack(">h", version) + b"".join(self._codec(version)[1](obj, []))

    def decode(self, data: bytes, version: int) -> Any:
        obj, end = self._codec(version)[0](data, 2)
        if end != len(data):
            raise ValueError(f"{self.spec.name} v{version} has {len(data) - end} trailing bytes")
        return obj


def schema_field(name: str, type_: str, versions: str = "0+", **extra: object) -> dict[str, object]:
    """One field of a record schema, as Kafka's JSON writes it."""
    return {"name": name, "type": type_, "versions": versions, **extra}


def record_version(data: bytes) -> int:
    """The int16 version a key or value starts with (a Kafka 4 key's: its record type)."""
    return int(struct.unpack_from(">h", data)[0])


def record_type_key(name: str, record_type: int, *fields: str) -> RecordFormat:
    """A key of Kafka 4's coordinator records: its one version is the record type, its fields strings."""
    version = str(record_type)
    return RecordFormat(
        {
            "type": "data",
            "name": name,
            "validVersions": version,
            "flexibleVersions": "none",
            "fields": [schema_field(field, "string", version) for field in fields],
        }
    )


def flexible_value(
    name: str, fields: list[dict[str, object]], structs: list[dict[str, object]] | None = None
) -> RecordFormat:
    """A value of Kafka 4's coordinator records: version 0, flexible; `structs` its common structs."""
    raw: dict[str, Any] = {
        "type": "data",
        "name": name,
        "validVersions": "0",
        "flexibleVersions": "0+",
        "fields": fields,
    }
    if structs:
        raw["commonStructs"] = structs
    return RecordFormat(raw)
