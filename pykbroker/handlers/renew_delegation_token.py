"""RenewDelegationToken (key 39), versions 0-2.

Moves a token's expiry to now + `renew_period_ms` (a negative period: the default,
`delegation.token.expiry.time.ms`), never past the token's max lifetime, as Kafka 3.9's
DelegationTokenManager does; the answer carries the new expiry. Only the token's owner or one of
its renewers may (DELEGATION_TOKEN_OWNER_MISMATCH otherwise); DELEGATION_TOKEN_NOT_FOUND for an
HMAC of no token, DELEGATION_TOKEN_EXPIRED for a token past its expiry or max lifetime,
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over PLAINTEXT, SSL without a client certificate, or a
token-authenticated connection, DELEGATION_TOKEN_AUTH_DISABLED without a secret key. Errors carry
the expiry -1.
"""

from __future__ import annotations

from ..protocol.api_keys import ApiKey
from ..protocol.message_types import RenewDelegationTokenRequest, RenewDelegationTokenResponse
from .support.context import RequestContext
from .support.token_requests import change_token_expiry

API_KEY = ApiKey.RENEW_DELEGATION_TOKEN
MIN_VERSION = 0
MAX_VERSION = 2


async def handle(request: RenewDelegationTokenRequest, ctx: RequestContext) -> RenewDelegationTokenResponse:
    token_hmac, period_ms = bytes(request.hmac), request.renew_period_ms
    error, expiry = await change_token_expiry(ctx, lambda tokens: tokens.renew(ctx.principal, token_hmac, period_ms))
    return RenewDelegationTokenResponse(error_code=error, expiry_timestamp_ms=expiry, throttle_time_ms=0)
