"""ExpireDelegationToken (key 40), versions 0-2.

Brings a token's expiry forward to now + `expiry_time_period_ms` (never past its max lifetime),
or, with a negative period, removes the token at once (the answer's expiry is then now), as Kafka
3.9's DelegationTokenManager does. Only the token's owner or one of its renewers may
(DELEGATION_TOKEN_OWNER_MISMATCH otherwise); DELEGATION_TOKEN_NOT_FOUND for an HMAC of no token,
DELEGATION_TOKEN_EXPIRED for a token already past its expiry (unless removed at once),
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over PLAINTEXT, SSL without a client certificate, or a
token-authenticated connection, DELEGATION_TOKEN_AUTH_DISABLED without a secret key. Errors carry
the expiry -1.
"""

from __future__ import annotations

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import ExpireDelegationTokenRequest, ExpireDelegationTokenResponse
from .support.context import RequestContext
from .support.token_requests import change_token_expiry

API_KEY = ApiKey.EXPIRE_DELEGATION_TOKEN
MIN_VERSION = 0
MAX_VERSION = 2


async def handle(request: ExpireDelegationTokenRequest, ctx: RequestContext) -> ExpireDelegationTokenResponse:
    token_hmac, period_ms = bytes(request.hmac), request.expiry_time_period_ms
    error, expiry = await change_token_expiry(ctx, lambda tokens: tokens.expire(ctx.principal, token_hmac, period_ms))
    return ExpireDelegationTokenResponse(error_code=error, expiry_timestamp_ms=expiry, throttle_time_ms=0)
