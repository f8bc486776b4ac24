"""Deterministic, non-default sample messages built from the schemas, for codec tests.

Every field that exists in the chosen version gets a value that differs from its default (so a
codec that drops or misplaces a field is caught); fields absent from the version keep their
defaults, which is what decoding that version yields.
"""
from __future__ import annotations

import itertools
import uuid

from pykbroker.protocol.messages import MessageType
from pykbroker.protocol.schema import FieldSpec, StructSpec

_INT_RANGES = {"int8": 127, "int16": 32767, "uint16": 65535, "int32": 2**31 - 1,
               "uint32": 2**32 - 1, "int64": 2**63 - 1}


class SampleBuilder:
    def __init__(self, message: MessageType, version: int, array_length: int = 2) -> None:
        self.message = message
        self.version = version
        self.array_length = array_length
        self._counter = itertools.count(1)

    def build(self) -> object:
        return self._struct(self.message.spec.root)

    def _struct(self, spec: StructSpec) -> object:
        cls = self.message.classes[spec.name]
        values = {f.attr: self._value(f) for f in spec.fields if self.version in f.versions}
        return cls(**values)

    def _value(self, f: FieldSpec) -> object:
        if f.is_array:
            return [self._element(f) for _ in range(self.array_length)]
        if f.struct is not None:
            return self._struct(f.struct)
        return self._primitive(f.type)

    def _element(self, f: FieldSpec) -> object:
        if f.struct is not None:
            return self._struct(f.struct)
        return self._primitive(f.element_type)

    def _primitive(self, type_name: str) -> object:
        n = next(self._counter)
        if type_name == "bool":
            return True
        if type_name in _INT_RANGES:
            return (n * 7919) % _INT_RANGES[type_name] + 1
        if type_name == "float64":
            return n + 0.5
        if type_name == "string":
            return f"s{n}-é"
        if type_name in ("bytes", "records"):
            return bytes([n % 256]) * (n % 5 + 1)
        if type_name == "uuid":
            return uuid.UUID(int=n * 0x1000193)
        raise ValueError(type_name)


def sample(message: MessageType, version: int, array_length: int = 2) -> object:
    return SampleBuilder(message, version, array_length).build()
