"""What the four delegation-token APIs share: whether a connection may ask for tokens at all.

Kafka's `allowTokenRequests`: never over a PLAINTEXT listener, over SSL only with a client
certificate (not as ANONYMOUS), and never on a connection that itself authenticated with a
delegation token (a token cannot make, renew or list tokens).
"""

from __future__ import annotations

from ...security.principal import ANONYMOUS
from .context import RequestContext


def token_requests_allowed(ctx: RequestContext) -> bool:
    protocol = ctx.security_protocol
    if ctx.principal.token_authenticated or protocol == "PLAINTEXT":
        return False
    return not (protocol == "SSL" and ctx.principal == ANONYMOUS)
