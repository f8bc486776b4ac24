"""Hostile Kafka requests drawn from the message schemas (hypothesis strategies).

`request_frame(api_key, version)` writes a whole size-prefixed request, field by field as the
schema of that version lays it out, but each value may be hostile: negative, null or huge lengths
and counts, null where the schema does not allow it, counts that lie about what follows, 10 MB
strings, invalid UTF-8, unknown enum values, unknown and nested tagged fields, tagged sizes that
lie. With `hostile=False` every value is well-formed (the bases the byte mutations start from).

The writer mirrors `pykbroker.protocol.codegen` (which fields a version has, which are tagged,
compact or nullable) but emits bytes itself, so that it can write what the codec never would.
"""
from __future__ import annotations

import struct

from hypothesis import strategies as st

from pykbroker.protocol import headers, messages
from pykbroker.protocol.codegen import write_uvarint
from pykbroker.protocol.schema import FieldSpec, MessageSpec, StructSpec
from pykbroker.records.records import build_batch

HUGE_STRING = 10 * 1024 * 1024  # a 10 MB compact string (within socket.request.max.bytes)
MAX_INT16_STRING = 0x7FFF  # the longest non-compact string
HUGE_COUNTS = (2**31 - 1, 2**24, 1_000_000)

INT_RANGES = {
    "int8": (">b", -(2**7), 2**7 - 1),
    "int16": (">h", -(2**15), 2**15 - 1),
    "uint16": (">H", 0, 2**16 - 1),
    "int32": (">i", -(2**31), 2**31 - 1),
    "uint32": (">I", 0, 2**32 - 1),
    "int64": (">q", -(2**63), 2**63 - 1),
}

# Names a handler may recognise, so that hostile requests reach past "unknown topic".
PLAUSIBLE_NAMES = ("fuzz", "__consumer_offsets", "__transaction_state", "fuzz-group", "", ".", "a" * 250)

# For each kind of value: the well-formed choices, the rare huge ones, then the malformed ones.
# A request breaks the wire format at a few places only (its rate), so that most reach their
# handler.
LENGTH_CHOICES = (("few",), ("huge-valid",), ("null", "negative", "huge", "lie"))
STRING_CHOICES = (("plausible", "text"), ("long",), ("null", "negative", "lie", "bad-utf8"))
BYTES_CHOICES = (("random", "batch"), ("long",), ("null", "negative", "lie"))
TAGGED_CHOICES = (("known", "unknown"), ("nested",), ("lie", "huge-count"))
MALFORMED_RATES = (0, 0, 1, 5, 20)  # percent of the choices that break the format
RARE_RATE = 2  # percent of the choices that are huge


class _Writer:
    """Writes one message at one version with values drawn through `draw`."""

    def __init__(self, draw, message: MessageSpec, version: int, hostile: bool) -> None:
        self.draw = draw
        self.version = version
        self.flexible = version in message.flexible_versions
        self.hostile = hostile
        self.malformed_rate = draw(st.sampled_from(MALFORMED_RATES)) if hostile else 0
        self.huge_written = False

    def choose(self, choices: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]) -> str:
        """A well-formed choice, rarely a huge one, at the request's rate a malformed one; when
        not hostile, the first well-formed choice only."""
        well_formed, rare, malformed = choices
        if not self.hostile:
            return well_formed[0]
        dice = self.draw(st.integers(0, 99))
        if dice < self.malformed_rate:
            return self.draw(st.sampled_from(malformed))
        if dice >= 100 - RARE_RATE and not self.huge_written:
            self.huge_written = True  # one huge value per request: nested ones would multiply
            return self.draw(st.sampled_from(rare))
        return self.draw(st.sampled_from(well_formed))

    # -- structure -----------------------------------------------------------------------

    def fields_of(self, spec: StructSpec) -> tuple[list[FieldSpec], list[FieldSpec]]:
        """(regular fields, tagged fields) of a struct at this version, as the codec sees them."""
        present = [f for f in spec.fields if self.version in f.versions]
        tagged = [f for f in present if self.flexible and self.version in f.tagged_versions]
        regular = [f for f in present if f not in tagged]
        return regular, sorted(tagged, key=lambda f: f.tag or 0)

    def struct(self, spec: StructSpec, skip: int = 0) -> bytes:
        regular, tagged = self.fields_of(spec)
        out = [self.value(f) for f in regular[skip:]]
        if self.flexible:
            out.append(self.tagged_section(tagged))
        return b"".join(out)

    def value(self, f: FieldSpec) -> bytes:
        if f.is_array:
            return self.array(f)
        if f.struct is not None:
            if self.nullable(f):
                marker = self.draw(st.sampled_from((b"\x01", b"\xff") if self.hostile else (b"\x01",)))
                return marker + (self.struct(f.struct) if marker != b"\xff" else b"")
            return self.struct(f.struct)
        return self.primitive(f.type, self.compact(f), self.nullable(f))

    def nullable(self, f: FieldSpec) -> bool:
        return self.version in f.nullable_versions

    def compact(self, f: FieldSpec) -> bool:
        return self.version in f.flexible_versions if f.flexible_versions is not None else self.flexible

    def length(self, n: int, compact: bool, width: str = ">i") -> bytes:
        """A length or count as the wire writes it (-1 is null); any int, hostile ones included."""
        if compact:
            return write_uvarint((n + 1) & 0xFFFFFFFF)
        low, high = (-(2**15), 2**15 - 1) if width == ">h" else (-(2**31), 2**31 - 1)
        return struct.pack(width, max(low, min(high, n)))

    def array(self, f: FieldSpec) -> bytes:
        compact = self.compact(f)
        choice = self.choose(LENGTH_CHOICES)
        if choice == "null" or (choice == "few" and self.nullable(f) and self.draw(st.integers(0, 9)) == 0):
            return self.length(-1, compact)
        if choice == "negative":
            return self.length(self.draw(st.integers(-(2**31), -2)), compact)
        if choice == "huge-valid":  # many elements, all there: a large but honest request
            element = self.element(f)
            count = min(self.draw(st.sampled_from((1000, 100_000))), HUGE_STRING // max(1, len(element)))
            return self.length(count, compact) + element * count
        count = self.draw(st.integers(0, 3))
        elements = b"".join(self.element(f) for _ in range(count))
        if choice == "huge":
            return self.length(self.draw(st.sampled_from(HUGE_COUNTS)), compact) + elements
        if choice == "lie":
            return self.length(count + self.draw(st.integers(1, 100)), compact) + elements
        return self.length(count, compact) + elements

    def element(self, f: FieldSpec) -> bytes:
        if f.struct is not None:
            return self.struct(f.struct)
        return self.primitive(f.element_type, self.compact(f), False)

    # -- values --------------------------------------------------------------------------

    def primitive(self, type_name: str, compact: bool, nullable: bool) -> bytes:
        if type_name in INT_RANGES:
            return self.integer(type_name)
        if type_name == "bool":
            return bytes([self.draw(st.integers(0, 255) if self.hostile else st.integers(0, 1))])
        if type_name == "float64":
            return struct.pack(">d", self.draw(st.floats(allow_nan=self.hostile, allow_infinity=self.hostile)))
        if type_name == "uuid":
            return self.draw(st.sampled_from((bytes(16), b"\x01" * 16)) | st.binary(min_size=16, max_size=16))
        if type_name == "string":
            return self.string(compact, nullable)
        return self.bytes_value(compact, nullable, records=type_name == "records")

    def integer(self, type_name: str) -> bytes:
        """Boundaries, small values (error codes, enums, ids) or anything of the type's range."""
        fmt, low, high = INT_RANGES[type_name]
        if not self.hostile:
            return struct.pack(fmt, self.draw(st.integers(max(low, -1), min(high, 3))))
        edges = st.sampled_from(sorted(edge for edge in {low, high, 0, -1, 1, -2, 127} if low <= edge <= high))
        return struct.pack(fmt, self.draw(st.integers(max(low, -3), min(high, 10)) | edges | st.integers(low, high)))

    def string(self, compact: bool, nullable: bool) -> bytes:
        width = ">h"
        choice = self.choose(STRING_CHOICES)
        if choice == "null" or (nullable and self.draw(st.integers(0, 9)) == 0):
            return self.length(-1, compact, width)
        if choice == "negative":
            return self.length(self.draw(st.integers(-(2**15), -2)), compact, width)
        if choice == "long":
            size = HUGE_STRING if compact else MAX_INT16_STRING
            return self.length(size, compact, width) + b"x" * size
        if choice == "bad-utf8":
            data = b"\xff\xfe\xc3(" + self.draw(st.binary(max_size=8))
        elif choice == "text":
            data = self.draw(st.text(max_size=20)).encode()
        else:
            data = self.draw(st.sampled_from(PLAUSIBLE_NAMES)).encode()
        if choice == "lie":
            return self.length(len(data) + self.draw(st.integers(1, 2**14)), compact, width) + data
        return self.length(len(data), compact, width) + data

    def bytes_value(self, compact: bool, nullable: bool, records: bool) -> bytes:
        well_formed, rare, malformed = BYTES_CHOICES
        choice = self.choose((("batch", *well_formed), rare, malformed) if records else BYTES_CHOICES)
        if choice == "null" or (nullable and self.draw(st.integers(0, 9)) == 0):
            return self.length(-1, compact)
        if choice == "negative":
            return self.length(self.draw(st.integers(-(2**31), -2)), compact)
        if choice == "long":
            return self.length(HUGE_STRING, compact) + bytes(HUGE_STRING)
        if choice == "batch":
            data = build_batch([(b"key", self.draw(st.binary(max_size=16)))], base_timestamp=0)
        else:
            data = self.draw(st.binary(max_size=64))
        if choice == "lie":
            return self.length(len(data) + self.draw(st.integers(1, 2**20)), compact) + data
        return self.length(len(data), compact) + data

    # -- tagged fields -------------------------------------------------------------------

    def tagged_section(self, tagged: list[FieldSpec]) -> bytes:
        choice = self.choose(TAGGED_CHOICES)
        if choice == "known":
            chosen = [f for f in tagged if self.draw(st.booleans())]
            return write_uvarint(len(chosen)) + b"".join(self.tagged_field(f.tag or 0, self.value(f)) for f in chosen)
        if choice == "unknown":
            tags = self.draw(st.lists(st.integers(0, 2**31 - 1), max_size=4))
            return write_uvarint(len(tags)) + b"".join(
                self.tagged_field(tag, self.draw(st.binary(max_size=32))) for tag in tags
            )
        if choice == "nested":
            return write_uvarint(1) + self.tagged_field(10_000, nested_tagged_fields(self.draw(st.integers(1, 200))))
        if choice == "lie":
            return write_uvarint(1) + write_uvarint(0) + write_uvarint(self.draw(st.integers(1, 2**31 - 1)))
        return write_uvarint(self.draw(st.sampled_from(HUGE_COUNTS)))

    @staticmethod
    def tagged_field(tag: int, data: bytes) -> bytes:
        return write_uvarint(tag) + write_uvarint(len(data)) + data


def nested_tagged_fields(depth: int) -> bytes:
    """A tagged section whose one field holds a tagged section, `depth` levels deep."""
    data = b"\x00"
    for level in range(depth):
        data = write_uvarint(1) + write_uvarint(level) + write_uvarint(len(data)) + data
    return data


@st.composite
def request_body(draw, api_key: int, version: int, hostile: bool = True) -> bytes:
    message = messages.request(api_key).spec
    return _Writer(draw, message, version, hostile).struct(message.root)


@st.composite
def request_header(draw, api_key: int, version: int, correlation_id: int, hostile: bool = True) -> bytes:
    """The fixed prefix (API key, version, correlation id) as given; client id and tagged fields
    drawn (header v0 has neither), hostile in one request of four."""
    header_version = headers.request_header_version(api_key, version)
    spec = headers.RequestHeader.spec
    hostile = hostile and draw(st.integers(0, 3)) == 0  # mostly a readable header: the body is the target
    rest = _Writer(draw, spec, header_version, hostile).struct(spec.root, skip=3)
    return struct.pack(">hhi", api_key, version, correlation_id) + rest


@st.composite
def request_frame(draw, api_key: int, version: int, correlation_id: int = 7, hostile: bool = True) -> bytes:
    """A size-prefixed request: header and body."""
    payload = draw(request_header(api_key, version, correlation_id, hostile)) + draw(
        request_body(api_key, version, hostile)
    )
    return struct.pack(">i", len(payload)) + payload
