"""SaslHandshake (key 17), versions 0-1.

On a SASL listener the handshake is handled by the connection's authenticator before any request
reaches a handler (`security/sasl/authenticator.py`), and again when a client re-authenticates
(KIP-368). What reaches this handler is what Kafka's KafkaApis answers: a handshake on a listener
without SASL, or on an authenticated connection that may not re-authenticate now (no session
expiry, or less than a second since the last re-authentication): ILLEGAL_SASL_STATE.
"""

from __future__ import annotations

from ..protocol.api_keys import ApiKey
from ..protocol.errors import ErrorCode
from ..protocol.message_types import SaslHandshakeRequest, SaslHandshakeResponse
from .support.context import RequestContext

API_KEY = ApiKey.SASL_HANDSHAKE
MIN_VERSION = 0
MAX_VERSION = 1


async def handle(request: SaslHandshakeRequest, ctx: RequestContext) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
