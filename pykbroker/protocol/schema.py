"""The message schemas of `protocol/messages/` as Python objects.

A schema is the structural extract of one Kafka message definition: its fields, their types and
the versions in which they exist, are nullable or are tagged. This module only reads and models
them; `codegen` turns them into encoders and decoders.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

PACKAGED_SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"  # in a wheel (see setup.py)
CHECKOUT_SCHEMA_DIR = Path(__file__).resolve().parents[2] / "protocol" / "messages"


def find_schema_dir() -> Path:
    """The schemas an installed package carries, else the checkout's top-level folder."""
    for candidate in (PACKAGED_SCHEMA_DIR, CHECKOUT_SCHEMA_DIR):
        if (candidate / "RequestHeader.json").is_file():
            return candidate
    raise FileNotFoundError(
        f"pykbroker's protocol schemas are missing: neither {PACKAGED_SCHEMA_DIR} nor "
        f"{CHECKOUT_SCHEMA_DIR} holds them (reinstall the package)"
    )


SCHEMA_DIR = find_schema_dir()

PRIMITIVE_TYPES = frozenset(
    {
        "bool",
        "int8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "float64",
        "string",
        "bytes",
        "records",
        "uuid",
    }
)


@dataclass(frozen=True)
class Versions:
    """An inclusive version range as written in the schemas: "0+", "1-3", "5" or "none"."""

    low: int
    high: int  # inclusive; a large number for "N+"

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return NO_VERSIONS
        if text.endswith("+"):
            return cls(int(text[:-1]), 0x7FFF)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high

    def intersect(self, other: Versions) -> Versions:
        low, high = max(self.low, other.low), min(self.high, other.high)
        return Versions(low, high) if low <= high else NO_VERSIONS


NO_VERSIONS = Versions(1, 0)


@dataclass
class FieldSpec:
    """One field of a struct: its wire type and the versions it lives in."""

    name: str
    type: str
    versions: Versions
    nullable_versions: Versions
    tagged_versions: Versions
    tag: int | None
    default: object
    flexible_versions: Versions | None  # a per-field override (only RequestHeader.ClientId uses it)
    struct: StructSpec | None = None  # for struct and array-of-struct fields

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type

    @property
    def attr(self) -> str:
        return snake_case(self.name)


@dataclass
class StructSpec:
    """A struct: a top-level message, a nested struct, or a common struct."""

    name: str
    fields: list[FieldSpec] = field(default_factory=list)


@dataclass
class MessageSpec:
    """A whole message definition (request, response, header or data)."""

    name: str
    kind: str  # "request", "response", "header" or "data"
    api_key: int | None
    valid_versions: Versions
    flexible_versions: Versions
    latest_version_unstable: bool
    root: StructSpec
    structs: dict[str, StructSpec]  # every struct of the message by name, the root included


def snake_case(name: str) -> str:
    """Kafka's CamelCase field names as Python attribute names (TopicId -> topic_id)."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and (not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _parse_default(type_name: str, raw: object) -> object:
    if raw is None:
        raw_text = None
    else:
        raw_text = str(raw).lower() if isinstance(raw, bool) else str(raw)
    if type_name.startswith("[]") or type_name not in PRIMITIVE_TYPES:
        return None if raw_text == "null" else ""  # arrays/structs: null, or empty/default
    if type_name == "bool":
        return raw_text == "true"
    if type_name in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
        return 0 if raw_text is None else int(raw_text, 0)
    if type_name == "float64":
        return 0.0 if raw_text is None else float(raw_text)
    if type_name == "string":
        if raw_text is None:
            return ""
        return None if raw_text == "null" else raw_text
    if type_name in ("bytes", "records"):
        return None if raw_text == "null" else b""
    return None  # uuid: the zero uuid, filled in by the codec


def _parse_field(raw: dict, structs: dict[str, StructSpec], pending: list) -> FieldSpec:
    spec = FieldSpec(
        name=raw["name"],
        type=raw["type"],
        versions=Versions.parse(raw.get("versions")),
        nullable_versions=Versions.parse(raw.get("nullableVersions")),
        tagged_versions=Versions.parse(raw.get("taggedVersions")),
        tag=raw.get("tag"),
        default=_parse_default(raw["type"], raw.get("default")),
        flexible_versions=(Versions.parse(raw["flexibleVersions"]) if "flexibleVersions" in raw else None),
    )
    if "fields" in raw:
        struct = StructSpec(spec.element_type)
        struct.fields = [_parse_field(f, structs, pending) for f in raw["fields"]]
        structs[struct.name] = struct
        spec.struct = struct
    elif spec.element_type not in PRIMITIVE_TYPES:
        pending.append(spec)  # refers to a common struct, resolved once all are read
    return spec


def parse_message(raw: dict) -> MessageSpec:
    structs: dict[str, StructSpec] = {}
    pending: list[FieldSpec] = []
    for common in raw.get("commonStructs", []):
        struct = StructSpec(common["name"])
        structs[struct.name] = struct
        struct.fields = [_parse_field(f, structs, pending) for f in common["fields"]]
    root = StructSpec(raw["name"])
    root.fields = [_parse_field(f, structs, pending) for f in raw["fields"]]
    structs[root.name] = root
    for spec in pending:
        spec.struct = structs[spec.element_type]
    return MessageSpec(
        name=raw["name"],
        kind=raw["type"],
        api_key=raw.get("apiKey"),
        valid_versions=Versions.parse(raw["validVersions"]),
        flexible_versions=Versions.parse(raw.get("flexibleVersions")),
        latest_version_unstable=bool(raw.get("latestVersionUnstable", False)),
        root=root,
        structs=structs,
    )


@cache
def load_message(name: str) -> MessageSpec:
    """The schema of one message by its name, e.g. "MetadataRequest"."""
    return parse_message(json.loads((SCHEMA_DIR / f"{name}.json").read_text()))
