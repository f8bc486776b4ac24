"""One connection's SASL authentication on the broker, as Kafka 3.9's SaslServerAuthenticator.

The authenticator knows frames, not sockets: the server hands it every request frame read while
the connection is not authenticated (at most `max_receive_size` bytes each) and sends what it
returns, so it runs the same over a plaintext socket (SASL_PLAINTEXT) and a TLS one (SASL_SSL).

    auth = SaslServerAuthenticator(settings, credentials, serve_api_versions, clock=SYSTEM_CLOCK)
    while not auth.complete:
        pieces = await auth.handle(frame)       # response pieces to send (None: nothing)
    auth.principal                              # KafkaPrincipal("User", "alice")

States (Kafka's): INITIAL_REQUEST -> (ApiVersions) -> HANDSHAKE_REQUEST -> (SaslHandshake) ->
AUTHENTICATE -> COMPLETE, or FAILED. Before the handshake only ApiVersions (once) and
SaslHandshake are accepted; anything else fails the authentication. SaslHandshake v0 means the
tokens that follow are raw size-prefixed frames (answered by raw frames); v1 means they travel
in SaslAuthenticate requests. A failure raises `AuthenticationFailed`: an authentication failure
(`delayed`) is answered after `connection.failed.authentication.delay.ms` with the response
Kafka would send (if any), then the connection closes; any other error closes it at once.

KIP-368: with `connections.max.reauth.ms` > 0 a session lasts that long (SaslAuthenticate's
`session_lifetime_ms`); the server closes a connection whose session expired when its next
request arrives, unless that request is a SaslHandshake beginning a re-authentication (same
mechanism, same principal, at most one per second), which this same object then runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...common.java_order import hash_set_order
from ...common.time import SYSTEM_CLOCK, Clock
from ...protocol import headers, messages
from ...protocol.api_keys import ApiKey
from ...protocol.codegen import DecodeError
from ...protocol.errors import ErrorCode
from ..principal import KafkaPrincipal
from .config import PLAIN, SaslListenerSettings
from .errors import SaslAuthenticationFailure, SaslFailure
from .plain import PlainSaslServer, plain_users
from .scram import MECHANISMS as SCRAM_MECHANISMS
from .scram import ScramCredential, ScramSaslServer, TokenScramCredential

log = logging.getLogger(__name__)

INITIAL_REQUEST = "INITIAL_REQUEST"
HANDSHAKE_OR_VERSIONS_REQUEST = "HANDSHAKE_OR_VERSIONS_REQUEST"
HANDSHAKE_REQUEST = "HANDSHAKE_REQUEST"
AUTHENTICATE = "AUTHENTICATE"
COMPLETE = "COMPLETE"
FAILED = "FAILED"
REAUTH_PROCESS_HANDSHAKE = "REAUTH_PROCESS_HANDSHAKE"
REAUTH_BAD_MECHANISM = "REAUTH_BAD_MECHANISM"

_HANDSHAKE_STATES = (INITIAL_REQUEST, HANDSHAKE_OR_VERSIONS_REQUEST, HANDSHAKE_REQUEST, REAUTH_PROCESS_HANDSHAKE)
MIN_REAUTH_INTERVAL_MS = 1000
HANDSHAKE_VERSIONS = (0, 1)
AUTHENTICATE_VERSIONS = (0, 2)

# (mechanism name, user name) -> the user's SCRAM credential, or None
CredentialLookup = Callable[[str, str], "ScramCredential | None"]
# (mechanism name, token id) -> a delegation token's credential, or None
TokenCredentialLookup = Callable[[str, str], "TokenScramCredential | None"]
# an ApiVersions request frame -> its response pieces (the server's own ApiVersions answer)
ApiVersionsServer = Callable[[bytearray], Awaitable["list | None"]]


class AuthenticationFailed(Exception):
    """The connection must close: `reason` for the log, `response` (pieces) to send first, and
    `delayed`: whether Kafka waits `connection.failed.authentication.delay.ms` before closing."""

    def __init__(self, reason: str, response: list | None = None, *, delayed: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.response = response
        self.delayed = delayed


class _AuthError(Exception):
    """Kafka's AuthenticationException: fails with a delayed close."""


class _Fatal(Exception):
    """Any other exception of Kafka's authenticate(): the connection closes at once."""


class SaslServerAuthenticator:
    def __init__(
        self,
        settings: SaslListenerSettings,
        credentials: CredentialLookup,
        serve_api_versions: ApiVersionsServer,
        *,
        api_versions_range: tuple[int, int] = (0, 3),
        clock: Clock = SYSTEM_CLOCK,
        peer: str = "unknown",
        token_credentials: TokenCredentialLookup | None = None,
    ) -> None:
        self.settings = settings
        self.credentials = credentials
        self.token_credentials = token_credentials
        self.serve_api_versions = serve_api_versions
        self.api_versions_range = api_versions_range
        self.clock = clock
        self.peer = peer
        self.enabled_mechanisms = hash_set_order(settings.enabled_mechanisms)
        self.state = INITIAL_REQUEST
        self.principal: KafkaPrincipal | None = None
        self.mechanism: str | None = None
        self.session_expiration_ms: float | None = None
        self.session_lifetime_ms = 0
        self.client_supports_reauthentication = False
        self._server: Any = None
        self._authenticate_headers = False
        self._failure_response: list | None = None
        self._previous: tuple[str, KafkaPrincipal] | None = None  # (mechanism, principal) when re-authenticating
        self._bad_mechanism_message = ""
        self._last_reauth_start_ms = 0.0

    # -- what the server asks --------------------------------------------------------------
    @property
    def complete(self) -> bool:
        return self.state == COMPLETE

    @property
    def max_receive_size(self) -> int:
        return self.settings.max_receive_size

    @property
    def reauthenticating(self) -> bool:
        return self._previous is not None

    def session_expired(self) -> bool:
        return self.session_expiration_ms is not None and self.clock.monotonic_ms() > self.session_expiration_ms

    def maybe_begin_reauthentication(self) -> bool:
        """Called with a SaslHandshake received on an authenticated connection: True if it begins
        a re-authentication (then `handle` it); False if it is an ordinary request (answered
        ILLEGAL_SASL_STATE by its handler), as when the session has no expiration or the last
        re-authentication began less than a second ago."""
        if self.state != COMPLETE or self.session_expiration_ms is None:
            return False
        now = self.clock.monotonic_ms()
        if self._last_reauth_start_ms and now - self._last_reauth_start_ms < MIN_REAUTH_INTERVAL_MS:
            return False
        self._last_reauth_start_ms = now
        assert self.mechanism is not None and self.principal is not None
        self._previous = (self.mechanism, self.principal)
        self._server = None
        self._authenticate_headers = False
        self._failure_response = None
        self.session_expiration_ms = None
        self.state = REAUTH_PROCESS_HANDSHAKE
        return True

    # -- one frame ---------------------------------------------------------------------------
    async def handle(self, frame: bytearray) -> list | None:
        """Process one frame received during (re-)authentication; its response pieces, if any."""
        try:
            if self.state in _HANDSHAKE_STATES:
                return await self._kafka_request(frame)
            if self.state == REAUTH_BAD_MECHANISM:
                raise _AuthError(self._bad_mechanism_message)
            if self.state == AUTHENTICATE:
                return self._sasl_token(frame)
            raise _Fatal(f"unexpected request in SASL state {self.state}")
        except _AuthError as exc:
            self.state = FAILED
            raise AuthenticationFailed(str(exc), self._failure_response, delayed=True) from None
        except (_Fatal, DecodeError) as exc:
            self.state = FAILED
            raise AuthenticationFailed(str(exc), None, delayed=False) from None

    @property
    def _text(self) -> str:
        return "re-authentication" if self.reauthenticating else "authentication"

    async def _kafka_request(self, frame: bytearray) -> list | None:
        try:
            prefix = headers.read_request_prefix(frame)
            api_key = ApiKey(prefix.api_key)
        except (DecodeError, ValueError):
            if self.state == INITIAL_REQUEST:
                # Kafka 3.9 takes such a first packet for a GSSAPI token of a pre-KIP-43 client
                raise _AuthError(
                    "Unsupported SASL mechanism GSSAPI: the first packet is not a Kafka request "
                    "(a client configured with the wrong security protocol, or not a Kafka client)"
                ) from None
            raise _Fatal("Invalid request during SASL handshake") from None
        if api_key not in (ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE):
            raise _AuthError(f"Unexpected Kafka request of type {api_key.name} during SASL handshake.")
        if api_key == ApiKey.API_VERSIONS:
            if self.state == INITIAL_REQUEST:
                self.state = HANDSHAKE_OR_VERSIONS_REQUEST
            return await self._api_versions(frame, prefix.api_version)
        low, high = HANDSHAKE_VERSIONS
        if not low <= prefix.api_version <= high:
            if self.state == INITIAL_REQUEST:
                raise _AuthError(f"Unsupported version {prefix.api_version} of SaslHandshake")
            raise _Fatal(f"Unsupported version {prefix.api_version} of SaslHandshake")
        request, _ = self._decode(frame, prefix.api_key, prefix.api_version)
        if self.state == INITIAL_REQUEST:
            self.state = HANDSHAKE_OR_VERSIONS_REQUEST
        return self._handshake(request, prefix.api_version, prefix.correlation_id)

    async def _api_versions(self, frame: bytearray, version: int) -> list | None:
        if self.state != HANDSHAKE_OR_VERSIONS_REQUEST:
            raise _Fatal(f"Unexpected ApiVersions request received during SASL authentication state {self.state}")
        pieces = await self.serve_api_versions(frame)
        low, high = self.api_versions_range
        if low <= version <= high:
            self.state = HANDSHAKE_REQUEST
        return pieces

    def _handshake(self, request: Any, version: int, correlation_id: int) -> list:
        mechanism = request.mechanism
        if version >= 1:
            self._authenticate_headers = True
        response_cls = messages.response(ApiKey.SASL_HANDSHAKE).cls
        if mechanism not in self.enabled_mechanisms:
            self._failure_response = _response(
                ApiKey.SASL_HANDSHAKE,
                version,
                correlation_id,
                response_cls(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms=list(self.enabled_mechanisms)),
            )
            raise _AuthError(f"Unsupported SASL mechanism {mechanism}")
        pieces = _response(
            ApiKey.SASL_HANDSHAKE,
            version,
            correlation_id,
            response_cls(error_code=ErrorCode.NONE, mechanisms=list(self.enabled_mechanisms)),
        )
        if self._previous is not None and self._previous[0] != mechanism:
            self._bad_mechanism_message = (
                f"SASL mechanism '{mechanism}' requested by client is not supported for re-authentication "
                f"of mechanism '{self._previous[0]}'"
            )
            self.state = REAUTH_BAD_MECHANISM
            return pieces
        self.mechanism = mechanism
        self._server = self._create_server(mechanism)
        self.state = AUTHENTICATE
        return pieces

    def _create_server(self, mechanism: str) -> PlainSaslServer | ScramSaslServer:
        if mechanism == PLAIN:
            return PlainSaslServer(plain_users(self.settings.jaas[PLAIN]))
        scram = SCRAM_MECHANISMS[mechanism]
        tokens = self.token_credentials
        token_lookup = None if tokens is None else (lambda token_id: tokens(mechanism, token_id))
        return ScramSaslServer(scram, lambda user: self.credentials(mechanism, user), token_lookup)

    def _decode(self, frame: bytearray, api_key: int, version: int) -> tuple[Any, Any]:
        header, pos = headers.decode_request_header(frame, api_key, version)
        request, _ = messages.request(api_key).decode(frame, pos, version=version)
        return request, header

    # -- tokens -------------------------------------------------------------------------------
    def _sasl_token(self, frame: bytearray) -> list | None:
        if not self._authenticate_headers:
            try:
                token = self._server.evaluate(bytes(frame))
            except SaslAuthenticationFailure as exc:
                raise _AuthError(str(exc)) from None
            except SaslFailure as exc:
                raise _AuthError(f"Authentication failed during {self._text} ({self.mechanism}): {exc}") from None
            except ValueError as exc:
                raise _Fatal(str(exc)) from None
            if self._server.complete:
                self._complete()
            return [token]
        try:
            prefix = headers.read_request_prefix(frame)
            api_key = ApiKey(prefix.api_key)
        except (DecodeError, ValueError):
            raise _Fatal("Invalid request during SASL authentication") from None
        version = prefix.api_version
        if api_key != ApiKey.SASL_AUTHENTICATE:
            self._failure_response = _illegal_state_response(api_key, version, prefix.correlation_id)
            raise _AuthError(f"Unexpected Kafka request of type {api_key.name} during SASL authentication.")
        low, high = AUTHENTICATE_VERSIONS
        if not low <= version <= high:
            raise _Fatal(f"Version {version} is not supported for apiKey SASL_AUTHENTICATE")
        request, _ = self._decode(frame, api_key, version)
        if version > 0:
            self.client_supports_reauthentication = True
        response_cls = messages.response(ApiKey.SASL_AUTHENTICATE).cls
        try:
            token = self._server.evaluate(bytes(request.auth_bytes))
            message = None
        except SaslAuthenticationFailure as exc:
            message = reason = str(exc)
        except SaslFailure as exc:
            message = (
                f"Authentication failed during {self._text} due to invalid credentials with SASL mechanism "
                f"{self.mechanism}"
            )
            reason = f"{message}: {exc}"
        except ValueError as exc:
            raise _Fatal(str(exc)) from None
        if message is not None:
            self._failure_response = _response(
                ApiKey.SASL_AUTHENTICATE,
                version,
                prefix.correlation_id,
                response_cls(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=message),
            )
            raise _AuthError(reason)
        lifetime = 0
        if self._server.complete:
            try:
                self._complete()
            except _AuthError as exc:
                self._failure_response = _response(
                    ApiKey.SASL_AUTHENTICATE,
                    version,
                    prefix.correlation_id,
                    response_cls(error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=str(exc)),
                )
                raise
            lifetime = self.session_lifetime_ms
        return _response(
            ApiKey.SASL_AUTHENTICATE,
            version,
            prefix.correlation_id,
            response_cls(error_code=ErrorCode.NONE, auth_bytes=token, session_lifetime_ms=lifetime),
        )

    def _complete(self) -> None:
        token_authenticated = bool(getattr(self._server, "token_authenticated", False))
        principal = KafkaPrincipal("User", self._server.authorization_id, token_authenticated)
        if self._previous is not None and self._previous[1] != principal:
            previous = self._previous[1]
            raise _AuthError(
                f"Cannot change principals during re-authentication from {previous.principal_type}."
                f"{previous.name}: {principal.principal_type}.{principal.name}"
            )
        assert self.mechanism is not None
        self._set_session_lifetime(getattr(self._server, "token_expiry_ms", None))
        self.principal = principal
        text = self._text  # before _previous is cleared: "re-authentication" when it was one
        self._previous = None
        self.state = COMPLETE
        log.debug("%s of %s from %s complete (%s)", text, principal, self.peer, self.mechanism)

    def _set_session_lifetime(self, credential_expiry_ms: int | None) -> None:
        """Kafka's session lifetime: `connections.max.reauth.ms`, or what is left of the credential's
        life (a delegation token's expiry) when that is shorter; no expiration with neither."""
        assert self.mechanism is not None
        max_reauth_ms = self.settings.max_reauth_ms.get(self.mechanism, 0)
        if credential_expiry_ms is None and max_reauth_ms <= 0:
            self.session_lifetime_ms = 0
            self.session_expiration_ms = None
            return
        lifetime = max_reauth_ms
        if credential_expiry_ms is not None:
            left = max(0, credential_expiry_ms - self.clock.now_ms())
            lifetime = left if max_reauth_ms <= 0 else min(left, max_reauth_ms)
        self.session_lifetime_ms = lifetime
        self.session_expiration_ms = self.clock.monotonic_ms() + lifetime


def _response(api_key: int, version: int, correlation_id: int, body: Any) -> list:
    head = headers.encode_response_header(api_key, version, correlation_id)
    return [head, *messages.response(api_key).encode(body, version=version)]


def _illegal_state_response(api_key: ApiKey, version: int, correlation_id: int) -> list | None:
    """Kafka answers an unexpected request during SASL authentication with that request's error
    response (ILLEGAL_SASL_STATE) before closing; built here for SaslHandshake and ApiVersions
    (any other request just sees its connection closed)."""
    try:
        if api_key == ApiKey.SASL_HANDSHAKE and version in (0, 1):
            cls = messages.response(api_key).cls
            return _response(api_key, version, correlation_id, cls(error_code=ErrorCode.ILLEGAL_SASL_STATE))
        if api_key == ApiKey.API_VERSIONS and 0 <= version <= 3:
            cls = messages.response(api_key).cls
            return _response(api_key, version, correlation_id, cls(error_code=ErrorCode.ILLEGAL_SASL_STATE))
    except Exception:  # an encoding problem must not hide the failure itself
        log.debug("could not build the ILLEGAL_SASL_STATE response", exc_info=True)
    return None
