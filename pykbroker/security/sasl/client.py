"""The client side of SASL, for the connections brokers open to each other (Kafka's
SaslClientAuthenticator, with SaslHandshake v1 and SaslAuthenticate v2).

    credentials = SaslClientCredentials("SCRAM-SHA-512", "admin", "admin-secret")
    lifetime_ms = await authenticate(credentials, send)   # send(api_key, version, body) -> response

`authenticate` raises `SaslClientError` with the broker's error when the exchange fails. The
broker's session lifetime (KIP-368) comes back so that the caller re-authenticates in time, as
Kafka's clients do (at 85-95% of the lifetime).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ...protocol import messages
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode
from .config import PLAIN
from .errors import SaslFailure
from .plain import plain_client_token
from .scram import MECHANISMS as SCRAM_MECHANISMS
from .scram import ScramSaslClient

HANDSHAKE_VERSION = 1
AUTHENTICATE_VERSION = 2

Send = Callable[[int, int, Any], Awaitable[Any]]


class SaslClientError(Exception):
    """The broker refused the authentication (or answered nonsense)."""


@dataclass(frozen=True)
class SaslClientCredentials:
    mechanism: str
    username: str
    password: str

    def __repr__(self) -> str:  # never the password in logs
        return f"SaslClientCredentials({self.mechanism!r}, {self.username!r})"


def reauthentication_delay_ms(session_lifetime_ms: int) -> float | None:
    """When to re-authenticate after a session of this lifetime began (None: never)."""
    if session_lifetime_ms <= 0:
        return None
    return session_lifetime_ms * (0.85 + 0.1 * random.random())


async def authenticate(credentials: SaslClientCredentials, send: Send) -> int:
    """Run one SASL exchange on a connection; the session lifetime in ms (0: no expiry)."""
    handshake = messages.request(ApiKey.SASL_HANDSHAKE).cls(mechanism=credentials.mechanism)
    response = await send(ApiKey.SASL_HANDSHAKE, HANDSHAKE_VERSION, handshake)
    if response.error_code != ErrorCode.NONE:
        raise SaslClientError(
            f"SaslHandshake for {credentials.mechanism} failed: {ErrorCode(response.error_code).name} "
            f"(enabled mechanisms: {', '.join(response.mechanisms)})"
        )
    if credentials.mechanism == PLAIN:
        answer = await _token(send, plain_client_token(credentials.username, credentials.password))
        return int(answer.session_lifetime_ms)
    mechanism = SCRAM_MECHANISMS.get(credentials.mechanism)
    if mechanism is None:
        raise SaslClientError(f"SASL mechanism {credentials.mechanism} is not supported by this client")
    client = ScramSaslClient(mechanism, credentials.username, credentials.password)
    try:
        server_first = await _token(send, client.first_message())
        server_final = await _token(send, client.final_message(bytes(server_first.auth_bytes)))
        client.verify_server_final(bytes(server_final.auth_bytes))
    except SaslFailure as exc:
        raise SaslClientError(str(exc)) from None
    return int(server_final.session_lifetime_ms)


async def _token(send: Send, token: bytes) -> Any:
    request = messages.request(ApiKey.SASL_AUTHENTICATE).cls(auth_bytes=token)
    response = await send(ApiKey.SASL_AUTHENTICATE, AUTHENTICATE_VERSION, request)
    if response.error_code != ErrorCode.NONE:
        raise SaslClientError(
            f"SaslAuthenticate failed: {ErrorCode(response.error_code).name}: {response.error_message}"
        )
    return response
