"""pykbroker: a Kafka broker in Python that speaks the real Kafka wire protocol.

For tests and applications that run a broker of their own (`docs/testing.md`):

    from pykbroker import EmbeddedBroker, BrokerProcess, BrokerCluster

They live in `pykbroker.testkit` and load on first use, so that `import pykbroker` (the command,
the pytest plugin) stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["BrokerCluster", "BrokerProcess", "EmbeddedBroker", "__version__"]

if TYPE_CHECKING:
    from .testkit.cluster import BrokerCluster
    from .testkit.embedded import EmbeddedBroker
    from .testkit.process import BrokerProcess

_LAZY = {
    "EmbeddedBroker": "testkit.embedded",
    "BrokerProcess": "testkit.process",
    "BrokerCluster": "testkit.cluster",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'pykbroker' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
