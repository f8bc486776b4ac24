"""DescribeDelegationToken (key 41), versions 0-3.

The tokens the caller may see, as Kafka 3.9's KafkaApis and `DelegationTokenManager.filterToken`
choose them: with owners named, only tokens one of them owns, requested or may renew; of those, the
caller sees the tokens it owns, requested or may renew, and others only with DESCRIBE on the
`DelegationToken` resource (the token id) or DESCRIBE_TOKENS on the owner's `User` resource
(`User:<name>`, KIP-373). An empty owner list answers no tokens; a null one asks for every owner.
Each token carries its owner, (v3) requester, timestamps, HMAC and renewers.
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over PLAINTEXT, SSL without a client certificate, or a
token-authenticated connection; DELEGATION_TOKEN_AUTH_DISABLED without a secret key.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import DescribeDelegationTokenRequest, DescribeDelegationTokenResponse
from ..security.principal import KafkaPrincipal
from .support.authorization import check
from .support.context import RequestContext
from .support.token_requests import token_requests_allowed

if TYPE_CHECKING:  # the token modules load with the broker's token manager only
    from ..security.delegation_tokens import TokenInformation

API_KEY = ApiKey.DESCRIBE_DELEGATION_TOKEN
MIN_VERSION = 0
MAX_VERSION = 3

DESCRIBE_TOKEN = check(API_KEY, "token")
DESCRIBE_OWNERS_TOKENS = check(API_KEY, "owner")

Described = DescribeDelegationTokenResponse.DescribedDelegationToken
Renewer = DescribeDelegationTokenResponse.DescribedDelegationTokenRenewer


async def handle(request: DescribeDelegationTokenRequest, ctx: RequestContext) -> DescribeDelegationTokenResponse:
    if not token_requests_allowed(ctx):
        return _response(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, [])
    tokens = ctx.services.delegation_tokens
    if tokens is None or not tokens.enabled:
        return _response(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, [])
    if request.owners is not None and not request.owners:
        return _response(ErrorCode.NONE, [])
    owners = None
    if request.owners is not None:
        owners = [KafkaPrincipal(o.principal_type, o.principal_name) for o in request.owners]

    def eligible(info: TokenInformation) -> bool:
        if owners is not None and not any(info.owner_or_renewer(owner) for owner in owners):
            return False
        if info.owner_or_renewer(ctx.principal):
            return True
        return DESCRIBE_TOKEN.allows(ctx, info.token_id) or DESCRIBE_OWNERS_TOKENS.allows(ctx, str(info.owner))

    described = [_described(info, token_hmac, ctx.api_version) for info, token_hmac in tokens.tokens(eligible)]
    return _response(ErrorCode.NONE, described)


def _described(info: TokenInformation, token_hmac: bytes, version: int) -> Described:
    described = Described(
        principal_type=info.owner.principal_type,
        principal_name=info.owner.name,
        issue_timestamp=info.issue_timestamp,
        expiry_timestamp=info.expiry_timestamp,
        max_timestamp=info.max_timestamp,
        token_id=info.token_id,
        hmac=token_hmac,
        renewers=[Renewer(principal_type=r.principal_type, principal_name=r.name) for r in info.renewers],
    )
    if version >= 3:
        described.token_requester_principal_type = info.token_requester.principal_type
        described.token_requester_principal_name = info.token_requester.name
    return described


def _response(error: ErrorCode, tokens: list[Described]) -> DescribeDelegationTokenResponse:
    return DescribeDelegationTokenResponse(error_code=error, tokens=tokens, throttle_time_ms=0)
