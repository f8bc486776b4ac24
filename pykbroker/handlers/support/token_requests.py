"""What the four delegation-token APIs share: whether a connection may ask for tokens at all, and
the refusals that renewing and expiring a token answer alike.

Kafka's `allowTokenRequests`: never over a PLAINTEXT listener, over SSL only with a client
certificate (not as ANONYMOUS), and never on a connection that itself authenticated with a
delegation token (a token cannot make, renew or list tokens).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from ...protocol.errors import ErrorCode
from ...security.principal import ANONYMOUS
from .context import RequestContext

if TYPE_CHECKING:
    from .services import DelegationTokenService

NO_EXPIRY = -1  # the expiry an error answer carries


def token_requests_allowed(ctx: RequestContext) -> bool:
    protocol = ctx.security_protocol
    if ctx.principal.token_authenticated or protocol == "PLAINTEXT":
        return False
    return not (protocol == "SSL" and ctx.principal == ANONYMOUS)


async def change_token_expiry(
    ctx: RequestContext, change: Callable[[DelegationTokenService], Awaitable[tuple[ErrorCode, int]]]
) -> tuple[ErrorCode, int]:
    """The error and expiry a RenewDelegationToken or ExpireDelegationToken answers: the
    connection's and the broker's refusals first, else what `change` makes of the token."""
    if not token_requests_allowed(ctx):
        return ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, NO_EXPIRY
    tokens = ctx.services.delegation_tokens
    if tokens is None:
        return ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, NO_EXPIRY
    return await change(tokens)
