"""The record library stands alone and exposes its main names at the package level."""
import ast
import pathlib

import pykbroker.records as records

PACKAGE_DIR = pathlib.Path(records.__file__).parent


def test_the_library_imports_nothing_else_from_pykbroker():
    for source in PACKAGE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{source.name} reaches outside the package"
                assert not (node.module or "").startswith("pykbroker"), source.name
            elif isinstance(node, ast.Import):
                assert not any(alias.name.startswith("pykbroker") for alias in node.names), \
                    source.name


def test_every_module_says_what_it_owns():
    for source in PACKAGE_DIR.glob("*.py"):
        assert ast.get_docstring(ast.parse(source.read_text())), source.name


def test_main_names_are_re_exported():
    for name in records.__all__:
        assert hasattr(records, name), name
    assert records.decode_batch(records.build_batch([(b"k", b"v")]))[1][0].value == b"v"
