"""The one place the dispatcher meets injected faults: `FaultInterceptor.serve` stands around the
call of a request's handler. The config requests pass through `FaultConfigs` (the fault keys are
answered there, the rest by the handler); then the rules that match the request
(`FaultInjector.for_request`) shape what the handler is given and what it answers.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from ...handlers.support.context import RequestContext
from . import CONFIG_APIS
from .injector import FaultInjector, Handler

if TYPE_CHECKING:
    from .configs import FaultConfigs


class FaultInterceptor:
    """Injected faults around the handlers of one broker."""

    def __init__(self, injector: FaultInjector) -> None:
        self.injector = injector
        self._configs: FaultConfigs | None = None

    @property
    def configs(self) -> FaultConfigs:
        """Built on the first config request: its module (and the config-admin code it uses) is
        imported then, on the event loop, once, for a few milliseconds."""
        if self._configs is None:
            from .configs import FaultConfigs

            self._configs = FaultConfigs(self.injector)
        return self._configs

    async def serve(self, handle: Handler, request: Any, ctx: RequestContext) -> Any:
        """The response to one request (None when none is due) with the faults applied;
        CloseConnection when one drops the connection."""
        if ctx.api_key in CONFIG_APIS:
            handle = partial(self.configs.serve, handle)
        faults = self.injector.for_request(ctx.api_key, ctx.client_id)
        if faults is None:
            return await handle(request, ctx)
        return await faults.serve(handle, request, ctx)
