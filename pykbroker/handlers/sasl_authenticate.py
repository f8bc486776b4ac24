"""SaslAuthenticate (key 36), versions 0-2.

The tokens of a SASL exchange travel in SaslAuthenticate requests that the connection's
authenticator handles (`security/sasl/authenticator.py`); one that reaches this handler comes
after the authentication (or on a listener without SASL) and is answered as Kafka's KafkaApis
does: ILLEGAL_SASL_STATE, "SaslAuthenticate request received after successful authentication".
"""

from __future__ import annotations

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import SaslAuthenticateRequest, SaslAuthenticateResponse
from .support.context import RequestContext

API_KEY = ApiKey.SASL_AUTHENTICATE
MIN_VERSION = 0
MAX_VERSION = 2


async def handle(request: SaslAuthenticateRequest, ctx: RequestContext) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(
        error_code=ErrorCode.ILLEGAL_SASL_STATE,
        error_message="SaslAuthenticate request received after successful authentication",
        auth_bytes=b"",
        session_lifetime_ms=0,
    )
