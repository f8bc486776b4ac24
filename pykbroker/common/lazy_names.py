"""A package's names imported from its modules on first use.

A package that keeps a broker's start light lists which of its names live in which of its
modules, and takes its module-level `__getattr__` from here:

    _MODULE_OF = {"GroupCoordinator": "coordinator", "JoinRequest": "join"}
    __getattr__ = names_from_modules(__name__, _MODULE_OF)

`from package import GroupCoordinator` then imports `package.coordinator` the first time it is
asked for; a name not in the map is an AttributeError, as for any module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def names_from_modules(package: str, module_of: Mapping[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: each name of `module_of` from `package.<its module>`."""

    def name_from_its_module(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return name_from_its_module
