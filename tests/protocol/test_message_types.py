"""The static declarations of the message classes (`message_types.pyi`): up to date with the
schemas, and in agreement with the run-time classes that `codegen` builds."""

import ast
import inspect
import uuid

import pytest

from pykbroker.protocol import message_types, messages, stubs
from pykbroker.protocol.schema import SCHEMA_DIR

from .samples import sample

ALL_MESSAGES = sorted(p.stem for p in SCHEMA_DIR.glob("*.json"))
STUB = ast.parse(stubs.STUB_PATH.read_text())
DECLARED = {node.name: node for node in STUB.body if isinstance(node, ast.ClassDef)}


def test_the_checked_in_declarations_are_those_the_schemas_give():
    assert stubs.render_stub() == stubs.STUB_PATH.read_text(), (
        f"{stubs.STUB_PATH.name} is out of date with protocol/messages/: "
        f"run `make protocol-types` (or `{stubs.REGENERATE}`) and commit it"
    )


def test_every_message_is_declared_and_given_by_the_module():
    assert sorted(DECLARED) == ALL_MESSAGES
    assert dir(message_types) == ALL_MESSAGES
    for name in ALL_MESSAGES[::17]:
        assert getattr(message_types, name) is messages.by_name(name).cls
    with pytest.raises(AttributeError):
        message_types.NoSuchRequest  # noqa: B018


def test_importing_the_module_builds_no_class():
    # a fresh interpreter: nothing but the import itself
    import subprocess
    import sys

    code = (
        "from pykbroker.protocol import message_types, messages; "
        "assert messages.by_name.cache_info().currsize == 0, messages.by_name.cache_info()"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", ALL_MESSAGES)
def test_the_declarations_agree_with_the_run_time_classes(name):
    message = messages.by_name(name)
    root = DECLARED[name]
    nested = {node.name: node for node in root.body if isinstance(node, ast.ClassDef)}
    assert set(nested) == set(message.classes) - {name}, "the nested struct classes"
    for struct_name, node in nested.items():
        assert getattr(message.cls, struct_name) is message.classes[struct_name]
        _assert_class_agrees(node, message.classes[struct_name])
    _assert_class_agrees(root, message.cls)


def _assert_class_agrees(node: ast.ClassDef, cls: type) -> None:
    fields = list(_read_types(node))
    assert fields == list(cls.FIELDS), f"the fields of {node.name}"
    init = next(f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__")
    declared_params = [arg.arg for arg in init.args.kwonlyargs]
    assert declared_params == fields and all(d is not None for d in init.args.kw_defaults)
    assert not init.args.args[1:] and init.args.vararg is None and init.args.kwarg is None
    runtime = list(inspect.signature(cls.__init__).parameters.values())[1:]
    assert [p.name for p in runtime] == fields
    assert all(p.kind is p.KEYWORD_ONLY and p.default is not p.empty for p in runtime), f"{node.name}.__init__"


def _read_types(node: ast.ClassDef) -> dict[str, ast.expr]:
    """{field: the annotation of its value as read} in declaration order."""
    types: dict[str, ast.expr] = {}
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id != "FIELDS":
            types[item.target.id] = item.annotation
        elif isinstance(item, ast.FunctionDef) and _is_getter(item):
            assert item.returns is not None
            types[item.name] = item.returns
    return types


def _is_getter(function: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "property" for d in function.decorator_list)


@pytest.mark.parametrize("name", ALL_MESSAGES)
def test_what_the_decoder_makes_has_the_declared_types(name):
    """Every field set (samples of every version) and absent fields at their defaults, decoded
    from bytes and from a bytearray frame; and objects made with no arguments."""
    message = messages.by_name(name)
    checker = _TypeChecker(message)
    for cls in message.classes.values():
        checker.check(cls())
    for version in message.versions:
        encoded = message.encode_bytes(sample(message, version), version=version)
        for frame in (encoded, bytearray(encoded)):
            checker.check(message.decode(frame, version=version)[0])


@pytest.mark.parametrize("name", ALL_MESSAGES)
def test_nullable_fields_are_declared_optional(name):
    message = messages.by_name(name)
    for struct in message.spec.structs.values():
        node = DECLARED[name] if struct is message.spec.root else _nested(DECLARED[name], struct.name)
        declared = _read_types(node)
        for f in struct.fields:
            if f.nullable_versions.low <= f.nullable_versions.high:
                assert ast.unparse(declared[f.attr]).endswith("| None"), f"{struct.name}.{f.attr}"


def _nested(root: ast.ClassDef, name: str) -> ast.ClassDef:
    return next(node for node in root.body if isinstance(node, ast.ClassDef) and node.name == name)


class _TypeChecker:
    """Checks run-time values against the declared annotations (the subset the stub uses)."""

    PRIMITIVES = {"int": int, "bool": bool, "float": float, "str": str, "bytes": bytes, "bytearray": bytearray}

    def __init__(self, message: messages.MessageType) -> None:
        self.message = message
        root = DECLARED[message.name]
        self.declared = {message.cls: _read_types(root)}
        for node in root.body:
            if isinstance(node, ast.ClassDef):
                self.declared[message.classes[node.name]] = _read_types(node)

    def check(self, obj: object) -> None:
        for attr, annotation in self.declared[type(obj)].items():
            value = getattr(obj, attr)
            assert self._conforms(value, annotation), (
                f"{type(obj).__name__}.{attr} = {value!r} is not {ast.unparse(annotation)}"
            )

    def _conforms(self, value: object, annotation: ast.expr) -> bool:
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            return self._conforms(value, annotation.left) or self._conforms(value, annotation.right)
        if isinstance(annotation, ast.Constant) and annotation.value is None:
            return value is None
        if isinstance(annotation, ast.Name):
            return isinstance(value, self.PRIMITIVES[annotation.id])
        if isinstance(annotation, ast.Subscript):
            assert ast.unparse(annotation.value) == "list"
            return isinstance(value, list) and all(self._conforms(item, annotation.slice) for item in value)
        assert isinstance(annotation, ast.Attribute), ast.unparse(annotation)
        if ast.unparse(annotation) == "uuid.UUID":
            return isinstance(value, uuid.UUID)
        assert ast.unparse(annotation.value) == self.message.name
        if type(value) is not self.message.classes[annotation.attr]:
            return False
        self.check(value)
        return True
