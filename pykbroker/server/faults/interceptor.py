"""The one place the dispatcher meets injected faults: `FaultInterceptor.serve` stands around the
call of a request's handler. The config requests pass through `FaultConfigs` (the fault keys are
answered there, the rest by the handler); then the rules that match the request
(`FaultInjector.for_request`) shape what the handler is given and what it answers.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ...handlers.support.context import RequestContext
from .configs import CONFIG_APIS, FaultConfigs
from .injector import FaultInjector, Handler


class FaultInterceptor:
    """Injected faults around the handlers of one broker."""

    def __init__(self, injector: FaultInjector) -> None:
        self.injector = injector
        self.configs = FaultConfigs(injector)

    async def serve(self, handle: Handler, request: Any, ctx: RequestContext) -> Any:
        """The response to one request (None when none is due) with the faults applied;
        CloseConnection when one drops the connection."""
        if ctx.api_key in CONFIG_APIS:
            handle = partial(self.configs.serve, handle)
        faults = self.injector.for_request(ctx.api_key, ctx.client_id)
        if faults is None:
            return await handle(request, ctx)
        return await faults.serve(handle, request, ctx)
