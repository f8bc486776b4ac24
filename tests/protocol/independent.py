"""kafka-python's hand-written protocol classes (kafka.protocol.old), indexed by (api, version).

They are an implementation independent of ours, used to check our encoding byte for byte.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache


@lru_cache(maxsize=1)
def independent_classes() -> dict[tuple[int, int, str], type]:
    """(api key, version, "request" | "response") -> kafka-python class."""
    import kafka.protocol.old as old
    from kafka.protocol.old.api import Request, Response

    found = {}
    for module_info in pkgutil.iter_modules(old.__path__):
        module = importlib.import_module(f"{old.__name__}.{module_info.name}")
        for value in vars(module).values():
            if not (isinstance(value, type) and issubclass(value, (Request, Response))):
                continue
            if value in (Request, Response) or not isinstance(getattr(value, "API_KEY", None), int):
                continue
            kind = "request" if issubclass(value, Request) else "response"
            found[(value.API_KEY, value.API_VERSION, kind)] = value
    return found
