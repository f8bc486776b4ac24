"""Where the broker keeps its injected faults until it has any: `FaultSeam` builds the
`FaultInjector` and `FaultInterceptor` on first use, so a broker that is never given a fault does
not import this package's modules.

A fault is given through `FaultSeam.injector` (in-process: `broker.faults`) or through the config
requests' fault keys; until one of these happens every request goes straight to its handler, as
it would through an interceptor without faults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...protocol.api_keys import ApiKey

if TYPE_CHECKING:
    from .injector import FaultInjector
    from .interceptor import FaultInterceptor

# The config requests, which may carry the fault keys (`configs.py`).
CONFIG_APIS = frozenset((ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS, ApiKey.DESCRIBE_CONFIGS))


class FaultSeam:
    """One broker's injected faults, opened on first use."""

    def __init__(self, injector: FaultInjector | None = None) -> None:
        self._interceptor: FaultInterceptor | None = None
        if injector is not None:
            self._open(injector)

    @property
    def injector(self) -> FaultInjector:
        return self.interceptor.injector

    @property
    def interceptor(self) -> FaultInterceptor:
        if self._interceptor is None:
            from .injector import FaultInjector

            self._open(FaultInjector())
        assert self._interceptor is not None
        return self._interceptor

    def interceptor_for(self, api_key: int) -> FaultInterceptor | None:
        """What stands around a request's handler: None while there can be no fault for it."""
        if self._interceptor is None and api_key not in CONFIG_APIS:
            return None
        return self.interceptor

    def _open(self, injector: FaultInjector) -> None:
        from .interceptor import FaultInterceptor

        self._interceptor = FaultInterceptor(injector)
