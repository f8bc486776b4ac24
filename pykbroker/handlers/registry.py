"""The table of request handlers: which module serves which API, in which versions.

A handler module declares `API_KEY`, `MIN_VERSION`, `MAX_VERSION` (the versions it fully handles;
only these are advertised in ApiVersions) and `async def handle(request, ctx) -> response | None`.
An API is served only when the authorization table (`authorization.py`) has its entry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType

from ..protocol import messages
from .authorization import entry_of


@dataclass(frozen=True)
class HandlerEntry:
    api_key: int
    min_version: int
    max_version: int
    handle: Callable[..., Awaitable[object]]
    request_type: messages.MessageType
    response_type: messages.MessageType

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


def entry_for(module: ModuleType) -> HandlerEntry:
    entry_of(module.API_KEY)  # raises LookupError: no API is served before its ACLs are written down
    request_type = messages.request(module.API_KEY)
    response_type = messages.response(module.API_KEY)
    for version in (module.MIN_VERSION, module.MAX_VERSION):
        if version not in request_type.versions:
            raise ValueError(
                f"{module.__name__} claims {request_type.name} v{version}, which the schema does not define"
            )
    return HandlerEntry(
        module.API_KEY, module.MIN_VERSION, module.MAX_VERSION, module.handle, request_type, response_type
    )


def build_registry(modules: list[ModuleType]) -> dict[int, HandlerEntry]:
    return {int(module.API_KEY): entry_for(module) for module in modules}


def default_modules() -> list[ModuleType]:
    """Every handler module of this package: each module that declares an API_KEY."""
    import importlib
    import pkgutil

    package = importlib.import_module(__package__)
    modules = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{__package__}.{info.name}")
        if hasattr(module, "API_KEY"):
            modules.append(module)
    return modules
