"""The message classes by name, statically typed:

    from pykbroker.protocol.message_types import ListGroupsRequest, ListGroupsResponse

    def handle(request: ListGroupsRequest) -> ListGroupsResponse:
        groups = [ListGroupsResponse.ListedGroup(group_id="g", protocol_type="consumer")]
        return ListGroupsResponse(error_code=0, groups=groups)

Each name is the run-time class of `messages.by_name(name)`, built when it is first imported
(importing this module builds nothing). `message_types.pyi` beside it declares every class, its
nested struct classes, fields and constructor for the type checker; `stubs.py` writes it from the
schemas (`python -m pykbroker.protocol.stubs`).
"""

from __future__ import annotations

from typing import Any

from . import messages
from .schema import SCHEMA_DIR


def __getattr__(name: str) -> Any:
    if name[:1].isupper() and (SCHEMA_DIR / f"{name}.json").is_file():
        cls = globals()[name] = messages.by_name(name).cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(path.stem for path in SCHEMA_DIR.glob("*.json"))
