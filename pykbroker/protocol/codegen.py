"""Build Python classes, encoders and decoders from message schemas.

For each message there is one class per struct (the union of its fields over all versions, like
Kafka's generated `...Data` classes). For each (message, version) this module writes the source of
one decoder and one encoder function per struct, specialised to that version (fixed-size fields
packed by one `struct` call, lengths compact or not, tagged fields or not), and compiles it once.
No schema is interpreted while a message is being read or written.

Decoders take `bytes` and a start position and return `(object, end position)`. Encoders append
the encoded pieces to a list; a `records` field may hold a region of a file (`FileRegionLike`)
and is appended as it is, so that responses can carry file ranges.

The classes exist only at run time. `message_types.pyi`, written by `stubs.py` from the same
schemas, declares them (fields, nested struct classes, constructors) for the type checker.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Callable
from typing import Any, Protocol, TypeAlias

from ..common.uuids import ZERO_UUID
from .schema import FieldSpec, MessageSpec, StructSpec

FIXED_FORMATS = {
    "bool": "?",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "float64": "d",
}


class FileRegionLike(Protocol):
    """`length` bytes at `position` of an open file, sent as they are (a log's `FileRegion`)."""

    @property
    def fd(self) -> int: ...
    @property
    def position(self) -> int: ...
    @property
    def length(self) -> int: ...
    def __len__(self) -> int: ...


# What a `records` field may hold for the encoder: bytes, or a file region. (The decoder leaves a
# slice of the frame: bytes or bytearray.)
RecordsData: TypeAlias = bytes | bytearray | memoryview | FileRegionLike


class DecodeError(ValueError):
    """The bytes do not hold a valid message of the expected type and version."""


# ---------------------------------------------------------------------------------------------
# Helpers the generated code calls.

_UVARINT_SMALL = [bytes([i]) for i in range(128)]


def write_uvarint(value: int) -> bytes:
    if value < 128:
        return _UVARINT_SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_uvarint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise DecodeError("unsigned varint is longer than 5 bytes")


_DEFAULT = object()  # marks an __init__ argument that was not given


class EncodedStructs:
    """The elements of an array of structs, already encoded for one version of their message
    (`MessageType.encode_structs`). Given as the array's value, the encoder writes the array's
    length and these bytes, as if it had encoded the elements itself: for parts of a response
    that stay the same across many responses (Metadata's topics and partitions)."""

    __slots__ = ("count", "data")

    def __init__(self, count: int, data: bytes) -> None:
        self.count = count
        self.data = data

    def __len__(self) -> int:
        return self.count

    @classmethod
    def joined(cls, parts: list[EncodedStructs]) -> EncodedStructs:
        return cls(sum(part.count for part in parts), b"".join(part.data for part in parts))


_HELPERS = {
    "_Encoded": EncodedStructs,
    "_uv": write_uvarint,
    "_UVS": _UVARINT_SMALL,
    "_ruv": read_uvarint,
    "_UUID": uuid.UUID,
    "_ZERO_UUID": ZERO_UUID,
    "_DEFAULT": _DEFAULT,
    "_new": object.__new__,
    "_unpack": struct.unpack_from,
    "_pack": struct.pack,
    "DecodeError": DecodeError,
}


# ---------------------------------------------------------------------------------------------
# Classes.


def _default_expr(spec: FieldSpec) -> str:
    """A Python expression for a field's default value (evaluated in the generated namespace)."""
    if spec.is_array:
        return "None" if spec.default is None else "[]"
    if spec.struct is not None:
        return "None" if spec.default is None else f"{spec.struct.name}()"
    if spec.type == "uuid":
        return "_ZERO_UUID"
    return repr(spec.default)


def _is_mutable_default(spec: FieldSpec) -> bool:
    return _default_expr(spec).endswith(("[]", "()"))


def build_classes(message: MessageSpec) -> dict[str, type[Any]]:
    """One class per struct of the message, with keyword-only __init__, __eq__ and __repr__.

    The methods of all the message's classes are generated as one source and compiled at once.
    """
    namespace = dict(_HELPERS)
    specs = _structs_in_dependency_order(message)
    exec("\n".join(line for spec in specs for line in _method_source(spec)), namespace)  # noqa: S102
    classes: dict[str, type[Any]] = {}
    for spec in specs:
        cls = _make_class(spec, namespace)
        namespace[spec.name] = cls  # __init__ defaults like `Struct()` resolve at call time
        classes[spec.name] = cls
    root = classes[message.root.name]
    for name, cls in classes.items():
        if cls is not root:
            setattr(root, name, cls)
    return classes


def _structs_in_dependency_order(message: MessageSpec) -> list[StructSpec]:
    ordered: list[StructSpec] = []
    seen: set[str] = set()

    def visit(spec: StructSpec) -> None:
        if spec.name in seen:
            return
        seen.add(spec.name)
        for f in spec.fields:
            if f.struct is not None:
                visit(f.struct)
        ordered.append(spec)

    for spec in message.structs.values():
        visit(spec)
    return ordered


def _method_source(spec: StructSpec) -> list[str]:
    """Source of `__init__<Name>` and `__eq__<Name>` for one struct."""
    params = ", ".join(
        f"{f.attr}=_DEFAULT" if _is_mutable_default(f) else f"{f.attr}={_default_expr(f)}" for f in spec.fields
    )
    lines = [f"def __init__{spec.name}(self{', *, ' + params if params else ''}):"]
    for f in spec.fields:
        if _is_mutable_default(f):
            lines.append(f"    self.{f.attr} = {_default_expr(f)} if {f.attr} is _DEFAULT else {f.attr}")
        else:
            lines.append(f"    self.{f.attr} = {f.attr}")
    if not spec.fields:
        lines.append("    pass")
    comparisons = "".join(f" and self.{f.attr} == other.{f.attr}" for f in spec.fields)
    lines.append(f"def __eq__{spec.name}(self, other):")
    lines.append(f"    return type(self) is type(other){comparisons}")
    return lines


def _make_class(spec: StructSpec, namespace: dict) -> type:
    attrs = tuple(f.attr for f in spec.fields)

    def __repr__(self: object) -> str:  # noqa: N807
        body = ", ".join(f"{a}={getattr(self, a)!r}" for a in attrs)
        return f"{type(self).__name__}({body})"

    return type(
        spec.name,
        (),
        {
            "__slots__": attrs,
            "__init__": namespace[f"__init__{spec.name}"],
            "__eq__": namespace[f"__eq__{spec.name}"],
            "__repr__": __repr__,
            "__hash__": None,
            "FIELDS": attrs,
        },
    )


# ---------------------------------------------------------------------------------------------
# Source generation.


class _Writer:
    """Accumulates indented source lines and hands out fresh local variable names."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._counter = 0

    def emit(self, indent: int, line: str) -> None:
        self.lines.append("    " * indent + line)

    def var(self, stem: str) -> str:
        self._counter += 1
        return f"{stem}{self._counter}"


class VersionCodegen:
    """Writes the decoder and encoder functions of one message at one version."""

    def __init__(self, message: MessageSpec, version: int) -> None:
        self.message = message
        self.version = version
        self.flexible = version in message.flexible_versions
        self.w = _Writer()
        self.done: set[str] = set()

    def _fields(self, spec: StructSpec) -> tuple[list[FieldSpec], list[FieldSpec], list[FieldSpec]]:
        """(regular fields, tagged fields, absent fields) of a struct at this version."""
        regular, tagged, absent = [], [], []
        for f in spec.fields:
            if self.version not in f.versions:
                absent.append(f)
            elif self.flexible and self.version in f.tagged_versions:
                tagged.append(f)
            else:
                regular.append(f)
        tagged.sort(key=lambda f: -1 if f.tag is None else f.tag)  # a tagged field always has a tag
        return regular, tagged, absent

    def _is_compact(self, spec: FieldSpec) -> bool:
        if spec.flexible_versions is not None:
            return self.version in spec.flexible_versions
        return self.flexible

    def _nullable(self, spec: FieldSpec) -> bool:
        return self.version in spec.nullable_versions

    # -- decoding ------------------------------------------------------------------------

    def gen_decoder(self, spec: StructSpec) -> None:
        key = "d_" + spec.name
        if key in self.done:
            return
        self.done.add(key)
        regular, tagged, absent = self._fields(spec)
        for f in regular + tagged:
            if f.struct is not None:
                self.gen_decoder(f.struct)
        w = self.w
        w.emit(0, f"def d_{spec.name}(buf, pos):")
        w.emit(1, f"o = _new({spec.name})")
        for group in _group_fixed(regular):
            if isinstance(group, list):
                fmt = ">" + "".join(FIXED_FORMATS[f.type] for f in group)
                targets = ", ".join(f"o.{f.attr}" for f in group)
                w.emit(1, f"{targets}{',' if len(group) == 1 else ''} = _unpack({fmt!r}, buf, pos)")
                w.emit(1, f"pos += {struct.calcsize(fmt)}")
            else:
                self._decode_value(group, 1, f"o.{group.attr}", "pos")
        for f in absent + tagged:
            w.emit(1, f"o.{f.attr} = {_default_expr(f)}")
        if self.flexible:
            self._decode_tagged_section(tagged)
        w.emit(1, "return o, pos")
        w.emit(0, "")

    def _decode_tagged_section(self, tagged: list[FieldSpec]) -> None:
        w = self.w
        w.emit(1, "n = buf[pos]")
        w.emit(1, "if n < 128: pos += 1")
        w.emit(1, "else: n, pos = _ruv(buf, pos)")
        w.emit(1, "for _ in range(n):")
        w.emit(2, "tag, pos = _ruv(buf, pos)")
        w.emit(2, "size, pos = _ruv(buf, pos)")
        for i, f in enumerate(tagged):
            w.emit(2, f"{'if' if i == 0 else 'elif'} tag == {f.tag}:")
            self._decode_value(f, 3, f"o.{f.attr}", "tp", start="pos")
        w.emit(2, "pos += size")

    def _read_length(self, indent: int, target: str, pos: str, compact: bool, width: str) -> None:
        """Emit code reading a length into `target`, -1 meaning null."""
        w = self.w
        if compact:
            w.emit(indent, f"{target} = buf[{pos}]")
            w.emit(indent, f"if {target} < 128: {pos} += 1")
            w.emit(indent, f"else: {target}, {pos} = _ruv(buf, {pos})")
            w.emit(indent, f"{target} -= 1")
        else:
            size = 2 if width == "h" else 4
            w.emit(indent, f"{target}, = _unpack('>{width}', buf, {pos})")
            w.emit(indent, f"{pos} += {size}")

    def _decode_value(self, f: FieldSpec, indent: int, target: str, pos: str, start: str | None = None) -> None:
        """Emit code decoding the value of field `f` at `pos` into `target`."""
        w = self.w
        if start is not None:
            w.emit(indent, f"{pos} = {start}")
        compact = self._is_compact(f)
        nullable = self._nullable(f)
        if f.is_array:
            n = w.var("n")
            self._read_length(indent, n, pos, compact, "i")
            self._null_check(indent, n, target, nullable)
            w.emit(indent, "else:")
            self._decode_array_body(f, indent + 1, target, pos, n)
        elif f.struct is not None:
            if nullable:
                w.emit(indent, f"if buf[{pos}] == 255:")
                w.emit(indent + 1, f"{target} = None")
                w.emit(indent + 1, f"{pos} += 1")
                w.emit(indent, "else:")
                w.emit(indent + 1, f"{target}, {pos} = d_{f.struct.name}(buf, {pos} + 1)")
            else:
                w.emit(indent, f"{target}, {pos} = d_{f.struct.name}(buf, {pos})")
        else:
            self._decode_primitive(f.type, indent, target, pos, compact, nullable)

    def _null_check(self, indent: int, n: str, target: str, nullable: bool) -> None:
        w = self.w
        if nullable:
            w.emit(indent, f"if {n} == -1:")
            w.emit(indent + 1, f"{target} = None")
            w.emit(indent, f"elif {n} < -1:")
        else:
            w.emit(indent, f"if {n} < 0:")
        w.emit(indent + 1, f"raise DecodeError('invalid length %d' % {n})")

    def _decode_array_body(self, f: FieldSpec, indent: int, target: str, pos: str, n: str) -> None:
        w = self.w
        element = f.element_type
        if element in FIXED_FORMATS:
            w.emit(indent, f"{target} = list(_unpack('>%d{FIXED_FORMATS[element]}' % {n}, buf, {pos}))")
            w.emit(indent, f"{pos} += {struct.calcsize(FIXED_FORMATS[element])} * {n}")
            return
        items = w.var("items")
        w.emit(indent, f"{items} = []")
        w.emit(indent, f"for _ in range({n}):")
        if f.struct is not None:
            item = w.var("item")
            w.emit(indent + 1, f"{item}, {pos} = d_{f.struct.name}(buf, {pos})")
            w.emit(indent + 1, f"{items}.append({item})")
        else:
            item = w.var("item")
            self._decode_primitive(element, indent + 1, item, pos, self._is_compact(f), False)
            w.emit(indent + 1, f"{items}.append({item})")
        w.emit(indent, f"{target} = {items}")

    def _decode_primitive(
        self, type_name: str, indent: int, target: str, pos: str, compact: bool, nullable: bool
    ) -> None:
        w = self.w
        if type_name in FIXED_FORMATS:
            fmt = ">" + FIXED_FORMATS[type_name]
            w.emit(indent, f"{target}, = _unpack({fmt!r}, buf, {pos})")
            w.emit(indent, f"{pos} += {struct.calcsize(fmt)}")
        elif type_name == "uuid":
            w.emit(indent, f"{target} = _UUID(bytes=bytes(buf[{pos}:{pos} + 16]))")
            w.emit(indent, f"{pos} += 16")
        elif type_name in ("string", "bytes", "records"):
            n = w.var("n")
            self._read_length(indent, n, pos, compact, "h" if type_name == "string" else "i")
            if type_name == "string" and compact:  # as Kafka's readers: no string is longer than an int16 says
                w.emit(indent, f"if {n} > 0x7FFF: raise DecodeError('a string longer than 32767 bytes')")
            self._null_check(indent, n, target, nullable)
            w.emit(indent, "else:")
            value = f"buf[{pos}:{pos} + {n}]"
            if type_name == "string":
                value = f"str({value}, 'utf-8')"
            elif type_name == "bytes":
                value = f"bytes({value})"
            # records stay a slice of the frame: a bytearray frame gives a mutable batch buffer
            w.emit(indent + 1, f"if {pos} + {n} > len(buf): raise DecodeError('truncated')")
            w.emit(indent + 1, f"{target} = {value}")
            w.emit(indent + 1, f"{pos} += {n}")
        else:
            raise ValueError(f"unknown type {type_name}")

    # -- encoding ------------------------------------------------------------------------

    def gen_encoder(self, spec: StructSpec) -> None:
        key = "e_" + spec.name
        if key in self.done:
            return
        self.done.add(key)
        regular, tagged, _ = self._fields(spec)
        for f in regular + tagged:
            if f.struct is not None:
                self.gen_encoder(f.struct)
        w = self.w
        w.emit(0, f"def e_{spec.name}(o, out):")
        w.emit(1, "ap = out.append")
        for group in _group_fixed(regular):
            if isinstance(group, list):
                fmt = ">" + "".join(FIXED_FORMATS[f.type] for f in group)
                args = ", ".join(f"o.{f.attr}" for f in group)
                w.emit(1, f"ap(_pack({fmt!r}, {args}))")
            else:
                self._encode_value(group, 1, f"o.{group.attr}")
        if self.flexible:
            self._encode_tagged_section(tagged)
        w.emit(1, "return out")
        w.emit(0, "")

    def _encode_tagged_section(self, tagged: list[FieldSpec]) -> None:
        w = self.w
        if not tagged:
            w.emit(1, "ap(b'\\x00')")
            return
        w.emit(1, "tagged = []")
        for f in tagged:
            value = w.var("v")
            w.emit(1, f"{value} = o.{f.attr}")
            w.emit(1, f"if {self._differs_from_default(f, value)}:")
            w.emit(2, "sub = []")
            w.emit(2, "ap = sub.append")
            self._encode_value(f, 2, value, out="sub")
            w.emit(2, "ap = out.append")
            w.emit(2, f"tagged.append(({f.tag}, b''.join(sub)))")
        w.emit(1, "ap(_uv(len(tagged)))")
        w.emit(1, "for tag, data in tagged:")
        w.emit(2, "ap(_uv(tag))")
        w.emit(2, "ap(_uv(len(data)))")
        w.emit(2, "ap(data)")

    def _differs_from_default(self, f: FieldSpec, value: str) -> str:
        default = _default_expr(f)
        if default == "[]":
            return f"{value}"
        if default == "None":
            return f"{value} is not None"
        if f.struct is not None:  # compare with one shared default instance, built once
            return f"{value} is not None and {value} != _DEFAULTS[{f.struct.name!r}]"
        return f"{value} != {default}"

    def _write_length(self, indent: int, n: str, compact: bool, width: str) -> None:
        if compact:
            self.w.emit(indent, f"ap(_UVS[{n} + 1] if {n} < 127 else _uv({n} + 1))")
        else:
            self.w.emit(indent, f"ap(_pack('>{width}', {n}))")

    def _write_null(self, indent: int, compact: bool, width: str) -> None:
        if compact:
            self.w.emit(indent, "ap(b'\\x00')")
        else:
            self.w.emit(indent, f"ap({struct.pack('>' + width, -1)!r})")

    def _encode_value(self, f: FieldSpec, indent: int, value: str, out: str = "out") -> None:
        w = self.w
        compact = self._is_compact(f)
        nullable = self._nullable(f)
        if f.is_array:
            v = w.var("arr")
            w.emit(indent, f"{v} = {value}")
            if nullable:
                w.emit(indent, f"if {v} is None:")
                self._write_null(indent + 1, compact, "i")
                w.emit(indent, "else:")
                indent += 1
            self._write_length(indent, f"len({v})", compact, "i")
            element = f.element_type
            if element in FIXED_FORMATS:
                w.emit(indent, f"ap(_pack('>%d{FIXED_FORMATS[element]}' % len({v}), *{v}))")
            elif f.struct is not None:
                w.emit(indent, f"if {v}.__class__ is _Encoded: {out}.append({v}.data)")
                w.emit(indent, "else:")
                w.emit(indent + 1, f"for item in {v}: e_{f.struct.name}(item, {out})")
            else:
                item = w.var("item")
                w.emit(indent, f"for {item} in {v}:")
                self._encode_primitive(element, indent + 1, item, compact, False)
        elif f.struct is not None:
            if nullable:
                v = w.var("s")
                w.emit(indent, f"{v} = {value}")
                w.emit(indent, f"if {v} is None: ap(b'\\xff')")
                w.emit(indent, "else:")
                w.emit(indent + 1, "ap(b'\\x01')")
                w.emit(indent + 1, f"e_{f.struct.name}({v}, {out})")
            else:
                w.emit(indent, f"e_{f.struct.name}({value}, {out})")
        else:
            self._encode_primitive(f.type, indent, value, compact, nullable)

    def _encode_primitive(self, type_name: str, indent: int, value: str, compact: bool, nullable: bool) -> None:
        w = self.w
        if type_name in FIXED_FORMATS:
            w.emit(indent, f"ap(_pack('>{FIXED_FORMATS[type_name]}', {value}))")
            return
        if type_name == "uuid":
            w.emit(indent, f"ap({value}.bytes)")
            return
        width = "h" if type_name == "string" else "i"
        v = w.var("v")
        w.emit(indent, f"{v} = {value}")
        if nullable:
            w.emit(indent, f"if {v} is None:")
            self._write_null(indent + 1, compact, width)
            w.emit(indent, "else:")
            indent += 1
        if type_name == "string":
            w.emit(indent, f"{v} = {v}.encode('utf-8')")
        self._write_length(indent, f"len({v})", compact, width)
        w.emit(indent, f"ap({v})")


def _group_fixed(fields: list[FieldSpec]) -> list:
    """Runs of consecutive fixed-size fields as lists; every other field on its own."""
    groups: list = []
    for f in fields:
        if f.type in FIXED_FORMATS:
            if groups and isinstance(groups[-1], list):
                groups[-1].append(f)
            else:
                groups.append([f])
        else:
            groups.append(f)
    return groups


def compile_version(
    message: MessageSpec, version: int, classes: dict[str, type[Any]]
) -> tuple[Callable, Callable, str, dict[str, Callable]]:
    """(decoder, encoder, source, the codec functions of each struct: `e_<struct name>` and
    `d_<struct name>`) for one message at one version."""
    gen = VersionCodegen(message, version)
    gen.gen_decoder(message.root)
    gen.gen_encoder(message.root)
    source = "\n".join(gen.w.lines)
    namespace: dict[str, Any] = dict(_HELPERS)
    namespace.update(classes)
    namespace["_DEFAULTS"] = {name: cls() for name, cls in classes.items()}
    code = compile(source, f"<{message.name} v{version}>", "exec")
    exec(code, namespace)  # noqa: S102 - source generated from the schemas
    struct_codecs = {name: value for name, value in namespace.items() if name.startswith(("e_", "d_"))}
    return namespace["d_" + message.root.name], namespace["e_" + message.root.name], source, struct_codecs
