"""The directions between the rooms hold (`../shared/ARCHITECTURE.md`), checked on the source:

- `common/` imports nothing else of pykbroker; `protocol/` and `records/` import only `common/`;
- nothing below `handlers/` (storage, replication, cluster, coordinators, security, quotas) imports `handlers/`
  or `server/`;
- `tools/` (the command-line tools, clients of a cluster) imports nothing else of pykbroker but `common/`;
- `handlers/` imports nothing of `server/`, and no handler module speaks of injected faults: they
  sit at the dispatcher's seam (`server/faults/`), around the handlers;
- `testkit/` (the test harness) imports the broker, and nothing of the broker imports it: only the
  package's `__init__` names its public classes, loaded lazily (`pykbroker.EmbeddedBroker`, ...);
- the package (and the compatibility suite, `compat/`) has no import cycles between modules;
- only the ZooKeeper client (`cluster/zk_client.py` and its session) imports kazoo: everything
  else asks it, as Kafka's code asks `KafkaZkClient`.

Imports are read with `ast`, so a lazy import inside a function counts as much as one at the top.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "pykbroker"
COMPAT_ROOT = PACKAGE_ROOT.parent / "compat"  # the compatibility suite: no cycles either

LIBRARIES = {"common": set(), "protocol": {"common"}, "records": {"common"}}
BELOW_HANDLERS = ("log", "replication", "cluster", "coordinator", "security", "quota", "records", "protocol", "common")


def module_name(path: Path, root: Path = PACKAGE_ROOT) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path = PACKAGE_ROOT) -> set[str]:
    """The modules of the package at `root` that `path` imports, as absolute dotted names."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve(package, node.module, node.level)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {module for module in found if module.split(".")[0] == root.name}


def resolve(package: str, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = ".".join(parts[:len(parts) - level + 1])
    return f"{base}.{module}" if module else base


def existing_module(name: str, root: Path = PACKAGE_ROOT) -> str | None:
    """`name` if it is a module or package under `root` (not a name imported from one)."""
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    candidate = root / relative
    if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
        return name
    return None


def room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def import_graph(root: Path = PACKAGE_ROOT) -> dict[str, set[str]]:
    graph = {}
    for path in sorted(root.rglob("*.py")):
        modules = {existing_module(name, root) for name in imported_modules(path, root)}
        graph[module_name(path, root)] = {m for m in modules if m and m != module_name(path, root)}
    return graph


GRAPH = import_graph()


@pytest.mark.parametrize("room", sorted(LIBRARIES))
def test_libraries_import_only_what_lies_below_them(room):
    allowed = LIBRARIES[room] | {room}
    offending = sorted(f"{module} imports {target}"
                       for module, targets in GRAPH.items() if room_of(module) == room
                       for target in targets if room_of(target) not in allowed)
    assert offending == []


@pytest.mark.parametrize("room", BELOW_HANDLERS)
def test_nothing_below_the_handlers_imports_handlers_or_the_server(room):
    offending = sorted(f"{module} imports {target}"
                       for module, targets in GRAPH.items() if room_of(module) == room
                       for target in targets if room_of(target) in ("handlers", "server"))
    assert offending == []


def test_the_tools_are_clients_that_import_nothing_of_the_broker():
    """`tools/` speaks to a cluster through confluent-kafka only (of the broker it may use the
    `common/` library); of pykbroker only `cli.py` imports it."""
    offending = sorted(f"{module} imports {target}"
                       for module, targets in GRAPH.items() if room_of(module) == "tools"
                       for target in targets if room_of(target) not in ("tools", "common"))
    importers = sorted(module for module, targets in GRAPH.items()
                       if room_of(module) != "tools" and any(room_of(t) == "tools" for t in targets))
    assert offending == []
    assert importers in ([], ["pykbroker.cli"])


def test_the_handlers_import_nothing_of_the_server():
    offending = sorted(f"{module} imports {target}"
                       for module, targets in GRAPH.items() if room_of(module) == "handlers"
                       for target in targets if room_of(target) == "server")
    assert offending == []


# "fault" as a word of its own, not inside "default"
FAULT = re.compile(r"(?<!de)fault", re.IGNORECASE)


def test_no_handler_module_speaks_of_faults():
    """Injected faults stand around the handlers (`server/faults/`), never inside one."""
    handler_files = sorted((PACKAGE_ROOT / "handlers").rglob("*.py"))
    offending = [f"{path.relative_to(PACKAGE_ROOT)}:{number}: {line.strip()}"
                 for path in handler_files
                 for number, line in enumerate(path.read_text().splitlines(), 1) if FAULT.search(line)]
    assert handler_files
    assert offending == []
    assert FAULT.search("from ..server.faults import FaultRule") and not FAULT.search("setdefault(Default)")


def test_the_testkit_imports_the_broker_and_nothing_of_the_broker_imports_it():
    """The harness stands outside the broker: it may use any room, no room (nor `broker.py`,
    `cli.py`) uses it. `cli.py` runs `pykbroker cluster` by its module's name, as it runs the tools."""
    importers = sorted(f"{module} imports {target}"
                       for module, targets in GRAPH.items() if room_of(module) != "testkit"
                       for target in targets if room_of(target) == "testkit")
    assert importers in ([], ["pykbroker imports pykbroker.testkit.cluster",
                              "pykbroker imports pykbroker.testkit.embedded",
                              "pykbroker imports pykbroker.testkit.process"])


def test_the_package_root_holds_only_the_brokers_wiring():
    """Everything else lives in a room; the harness in `testkit/`."""
    modules = sorted(path.name for path in PACKAGE_ROOT.glob("*.py"))
    assert modules == ["__init__.py", "__main__.py", "broker.py", "cli.py", "maintenance.py", "shutdown.py"]


@pytest.mark.parametrize("root", [PACKAGE_ROOT, COMPAT_ROOT], ids=lambda root: root.name)
def test_there_are_no_import_cycles(root):
    """Package `__init__` modules are left out of the edges: importing `a.b` runs `a/__init__`,
    which is not a dependency of `a.b`'s own code."""
    graph = GRAPH if root == PACKAGE_ROOT else import_graph(root)
    edges = {module: {t for t in targets if not _is_package(t, root)} for module, targets in graph.items()}
    cycles = _cycles(edges)
    assert cycles == []


def _is_package(module: str, root: Path = PACKAGE_ROOT) -> bool:
    relative = Path(*module.split(".")[1:]) if "." in module else Path()
    return (root / relative / "__init__.py").exists()


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


ZOOKEEPER_CLIENT = ["pykbroker.cluster.zk_client", "pykbroker.cluster.zk_session"]


def third_party_packages(path: Path) -> set[str]:
    """The top-level names of the packages outside pykbroker that `path` imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found - {"pykbroker"}


def test_only_the_zookeeper_client_imports_kazoo():
    importers = sorted(module_name(path) for path in PACKAGE_ROOT.rglob("*.py")
                       if "kazoo" in third_party_packages(path))
    assert importers == ZOOKEEPER_CLIENT


def test_the_checks_see_the_imports_they_judge():
    """A guard against a checker that passes because it reads nothing."""
    assert any(room_of(target) == "records"
               for module, targets in GRAPH.items() if room_of(module) == "log" for target in targets)
    assert any(room_of(target) == "handlers" for target in GRAPH["pykbroker.broker"])
    assert "pykbroker.broker" in GRAPH["pykbroker.testkit.embedded"]
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
