"""The record library stands alone (on `common/` only) and exposes its main names at the package level."""
import ast
import pathlib

import pykbroker.records as records

PACKAGE_DIR = pathlib.Path(records.__file__).parent


def reaches_common(node: ast.ImportFrom) -> bool:
    """`from ..common...` or `from pykbroker.common...`: the bottom layer every room may use."""
    module = node.module or ""
    return ((node.level == 2 and module.split(".")[0] == "common")
            or (node.level == 0 and module.startswith("pykbroker.common")))


def test_the_library_imports_nothing_else_from_pykbroker_but_common():
    for source in PACKAGE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.ImportFrom) and not reaches_common(node):
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
