"""CreateDelegationToken (key 38), versions 0-3.

A delegation token for the caller, or (v3, KIP-373) for another owner named in the request, as
Kafka 3.9's ZooKeeper-mode KafkaApis and DelegationTokenManager make it. In order:
DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over a PLAINTEXT listener, an SSL one without a client
certificate, or a connection authenticated with a token; DELEGATION_TOKEN_AUTHORIZATION_FAILED
for another owner without CREATE_TOKENS on that `User` resource (named `User:<name>`);
INVALID_PRINCIPAL_TYPE for a renewer that is not a `User`; DELEGATION_TOKEN_AUTH_DISABLED without
`delegation.token.secret.key`. Every error answer carries the owner (and, v3, the requester) with
-1 timestamps, an empty token id and an empty HMAC. A `max_lifetime_ms` of 0 or less means
`delegation.token.max.lifetime.ms`; a longer one is cut to it. The token is written where tokens
are kept (ZooKeeper's `/delegation_token/tokens/<id>` with a change notification, so every broker
knows it at once) before the answer.
"""

from __future__ import annotations

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import CreateDelegationTokenRequest, CreateDelegationTokenResponse
from ..security.principal import KafkaPrincipal
from .support.authorization import check
from .support.context import RequestContext
from .support.token_requests import token_requests_allowed

API_KEY = ApiKey.CREATE_DELEGATION_TOKEN
MIN_VERSION = 0
MAX_VERSION = 3

CREATE_TOKENS_FOR_OWNER = check(API_KEY, "owner")
USER_TYPE = "User"


async def handle(request: CreateDelegationTokenRequest, ctx: RequestContext) -> CreateDelegationTokenResponse:
    requester = ctx.principal
    owner = _owner(request, requester)
    if not token_requests_allowed(ctx):
        return _error(ErrorCode.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, owner, requester, ctx.api_version)
    if owner != requester and not CREATE_TOKENS_FOR_OWNER.allows(ctx, str(owner)):
        return _error(CREATE_TOKENS_FOR_OWNER.denied, owner, requester, ctx.api_version)
    renewers = [KafkaPrincipal(r.principal_type, r.principal_name) for r in request.renewers]
    if any(renewer.principal_type != USER_TYPE for renewer in renewers):
        return _error(ErrorCode.INVALID_PRINCIPAL_TYPE, owner, requester, ctx.api_version)
    tokens = ctx.services.delegation_tokens
    if tokens is None:
        return _error(ErrorCode.DELEGATION_TOKEN_AUTH_DISABLED, owner, requester, ctx.api_version)
    result = await tokens.create(owner, requester, renewers, request.max_lifetime_ms)
    response = _error(result.error, owner, requester, ctx.api_version)
    response.issue_timestamp_ms = result.issue_timestamp
    response.expiry_timestamp_ms = result.expiry_timestamp
    response.max_timestamp_ms = result.max_timestamp
    response.token_id = result.token_id
    response.hmac = result.hmac
    return response


def _owner(request: CreateDelegationTokenRequest, requester: KafkaPrincipal) -> KafkaPrincipal:
    """The owner named in the request (v3), else the caller."""
    if not request.owner_principal_name:
        return requester
    return KafkaPrincipal(request.owner_principal_type or "", request.owner_principal_name)


def _error(
    error: ErrorCode, owner: KafkaPrincipal, requester: KafkaPrincipal, version: int
) -> CreateDelegationTokenResponse:
    """Kafka's `CreateDelegationTokenResponse.prepareResponse` (the requester from v3 on)."""
    response = CreateDelegationTokenResponse(
        error_code=error,
        principal_type=owner.principal_type,
        principal_name=owner.name,
        issue_timestamp_ms=-1,
        expiry_timestamp_ms=-1,
        max_timestamp_ms=-1,
        token_id="",
        hmac=b"",
        throttle_time_ms=0,
    )
    if version >= 3:
        response.token_requester_principal_type = requester.principal_type
        response.token_requester_principal_name = requester.name
    return response
