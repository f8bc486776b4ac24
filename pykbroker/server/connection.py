"""One client connection: read a request, answer it, then read the next.

Requests on one connection are handled one at a time, in the order they arrive, and their
responses are written in that order (as Kafka does: it reads no further request from a connection
until the previous one is answered). Pipelined requests simply wait in the socket buffer. A client
throttled by a quota has its connection muted for the throttle time after the response (Kafka's
KIP-219): the connection's task sleeps, the other connections go on.

On a TLS listener (SSL, SASL_SSL) the connection first completes its handshake (bounded by the
listener's handshake timeout); on an SSL listener the client certificate, if any, names the
connection's principal.

On a SASL listener (SASL_PLAINTEXT, SASL_SSL: `ListenerAuthentication`), the connection then
authenticates: every frame (at most `sasl.server.max.receive.size` bytes) goes to the connection's
authenticator until it completes, and requests then carry the authenticated principal (on SASL_SSL
the SASL user, as Kafka does, not the certificate's name). A failed authentication closes the
connection after `connection.failed.authentication.delay.ms` (with Kafka's error response, if it
sends one) and one log line. Afterwards a SaslHandshake may begin a re-authentication (KIP-368),
and a request arriving after the session expired closes the connection. The authenticator sees
only frames, so the same loop serves a TLS connection's frames.
"""

from __future__ import annotations

import itertools
import logging
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import anyio

from ..protocol import headers
from ..protocol.api_keys import ApiKey
from ..protocol.codegen import DecodeError
from ..security.principal import ANONYMOUS, KafkaPrincipal
from .dispatcher import ChannelThrottle, CloseConnection, Dispatcher, describe_request
from .socket_io import FrameTooLarge, InvalidFrameSize, SocketIO, size_prefix

if TYPE_CHECKING:  # the SASL and TLS modules load with the first listener that uses them
    from ..security.sasl.authenticator import (
        AuthenticationFailed,
        CredentialLookup,
        SaslServerAuthenticator,
        TokenCredentialLookup,
    )
    from ..security.sasl.config import SaslListenerSettings
    from ..security.ssl_config import ServerSsl
    from .tls_io import TlsSocketIO


class ServedListener(Protocol):
    """What a connection needs of its listener (socket_server.BoundListener)."""

    name: str
    security_protocol: str
    tls: ServerSsl | None
    handshake_timeout_s: float


@dataclass(eq=False)  # one per SASL listener, never compared
class ListenerAuthentication:
    """How connections of one SASL listener authenticate."""

    security_protocol: str
    settings: SaslListenerSettings
    credentials: CredentialLookup
    failed_authentication_delay_ms: Callable[[], int]
    token_credentials: TokenCredentialLookup | None = None  # delegation tokens (None: not enabled)


log = logging.getLogger(__name__)

_CONNECTION_NUMBERS = itertools.count()  # tells apart connections from the same host
_TLS_HANDSHAKE_RECORD = (0x16, 0x03)  # a TLS record of type handshake, version 3.x


async def serve_connection(
    sock: socket.socket,
    dispatcher: Dispatcher,
    listener: ServedListener,
    max_request_size: int,
    authentication: ListenerAuthentication | None = None,
    on_request: Callable[[], None] | None = None,
    send_buffer_bytes: int = -1,
) -> None:
    """Serve one accepted connection until it ends; `on_request` hears of each request (the
    connection's activity, for closing the least recently active one when the broker must).
    `send_buffer_bytes`: the SO_SNDBUF the socket was given (-1: none)."""
    listener_name, tls, protocol = listener.name, listener.tls, listener.security_protocol
    peer = _peer_name(sock)
    connection_id = f"{listener_name}-{peer}-{next(_CONNECTION_NUMBERS)}"
    io: SocketIO
    principal: KafkaPrincipal = ANONYMOUS
    if tls is None:
        io = SocketIO(sock, send_buffer_bytes)
    else:
        from .tls_io import TlsSocketIO  # loaded with the first TLS connection

        try:
            io = TlsSocketIO(sock, tls.context, send_buffer_bytes)
        except OSError as exc:  # the peer went away before anything happened (ssl.SSLError is an OSError)
            log.info("Connection from %s on listener %s failed: %s", peer, listener_name, exc)
            sock.close()
            return
        established = await _tls_handshake(io, tls, peer, listener_name, listener.handshake_timeout_s)
        if established is None:
            io.close()
            return
        principal = established
    try:
        if authentication is None:
            await _serve_requests(
                io, dispatcher, peer, listener_name, max_request_size, principal, protocol, connection_id, on_request
            )
        else:
            await _serve_authenticated(
                io, dispatcher, peer, listener_name, max_request_size, authentication, connection_id, on_request
            )
    except FrameTooLarge as exc:
        if tls is None and tuple(io.peek(2)) == _TLS_HANDSHAKE_RECORD:
            log.warning(
                "Closing connection from %s: a TLS handshake on %s listener %s (is the client configured "
                "with security.protocol=SSL for a PLAINTEXT listener?)",
                peer,
                protocol,
                listener_name,
            )
        else:
            log.warning(
                "Closing connection from %s: request of %d bytes exceeds socket.request.max.bytes (%d)",
                peer,
                exc.size,
                max_request_size,
            )
    except (CloseConnection, InvalidFrameSize) as exc:
        log.warning("Closing connection from %s: %s", peer, exc)
    except (EOFError, ConnectionError):
        log.debug("Connection from %s ended", peer)
    except OSError as exc:
        log.info("Connection from %s failed: %s", peer, exc)
    except Exception:  # a bug must cost one connection, never the broker
        log.exception("Closing connection from %s after an unexpected error", peer)
    finally:
        io.close()
        dispatcher.connection_closed(connection_id)


async def _serve_requests(
    io: SocketIO,
    dispatcher: Dispatcher,
    peer: str,
    listener_name: str,
    max_request_size: int,
    principal: KafkaPrincipal,
    protocol: str,
    connection_id: str,
    on_request: Callable[[], None] | None = None,
) -> None:
    channel = ChannelThrottle()
    while True:
        frame = await _next_request(io, max_request_size, on_request)
        if frame is None:
            return
        await _answer(io, dispatcher, frame, peer, listener_name, principal, protocol, connection_id, channel)


async def _serve_authenticated(
    io: SocketIO,
    dispatcher: Dispatcher,
    peer: str,
    listener_name: str,
    max_request_size: int,
    authentication: ListenerAuthentication,
    connection_id: str,
    on_request: Callable[[], None] | None = None,
) -> None:
    from ..security.sasl.authenticator import SaslServerAuthenticator

    protocol = authentication.security_protocol

    async def serve_api_versions(frame: bytearray) -> list | None:
        return await dispatcher.dispatch(frame, peer, listener_name, security_protocol=protocol)

    auth = SaslServerAuthenticator(
        authentication.settings,
        authentication.credentials,
        serve_api_versions,
        api_versions_range=dispatcher.version_range(ApiKey.API_VERSIONS),
        peer=peer,
        token_credentials=authentication.token_credentials,
    )
    channel = ChannelThrottle()
    while True:
        if not auth.complete:
            if not await _authenticate(io, auth, peer, listener_name, authentication):
                return
            continue
        frame = await _next_request(io, max_request_size, on_request)
        if frame is None:
            return
        if _api_key(frame) == ApiKey.SASL_HANDSHAKE and auth.maybe_begin_reauthentication():
            if not await _authentication_step(io, auth, frame, peer, listener_name, authentication):
                return
            continue
        if auth.session_expired():
            log.info("Closing connection from %s: the SASL session of %s expired", peer, auth.principal)
            return
        principal: KafkaPrincipal = auth.principal or ANONYMOUS
        await _answer(io, dispatcher, frame, peer, listener_name, principal, protocol, connection_id, channel)


async def _next_request(io: SocketIO, max_request_size: int, on_request: Callable[[], None] | None) -> bytearray | None:
    """The connection's next request frame (None: the client closed), counted by `on_request`."""
    frame = await io.read_frame(max_request_size)
    if frame is not None and on_request is not None:
        on_request()
    return frame


async def _answer(
    io: SocketIO,
    dispatcher: Dispatcher,
    frame: bytearray,
    peer: str,
    listener_name: str,
    principal: KafkaPrincipal,
    protocol: str,
    connection_id: str,
    channel: ChannelThrottle,
) -> None:
    """Serve one request, send its response (if it has one), then hold the connection for as long
    as the client is throttled: its next request waits (KIP-219)."""
    pieces = await dispatcher.dispatch(
        frame,
        peer,
        listener_name,
        principal=principal,
        security_protocol=protocol,
        connection_id=connection_id,
        channel=channel,
    )
    if pieces is not None:
        await io.send_pieces([size_prefix(pieces), *pieces])
    await channel.wait()


async def _authenticate(
    io: SocketIO, auth: SaslServerAuthenticator, peer: str, listener_name: str, authentication: ListenerAuthentication
) -> bool:
    """Read and process one authentication frame; False when the connection must close."""
    from ..security.sasl.authenticator import AuthenticationFailed

    try:
        frame = await io.read_frame(auth.max_receive_size)
    except (FrameTooLarge, InvalidFrameSize) as exc:
        size = exc.size if isinstance(exc, FrameTooLarge) else "invalid"
        failure = AuthenticationFailed(
            f"Failing SASL authentication due to invalid receive size ({size}; "
            f"sasl.server.max.receive.size is {auth.max_receive_size})"
        )
        await _fail(io, failure, peer, authentication)
        return False
    if frame is None:
        return False
    return await _authentication_step(io, auth, frame, peer, listener_name, authentication)


async def _authentication_step(
    io: SocketIO,
    auth: SaslServerAuthenticator,
    frame: bytearray,
    peer: str,
    listener_name: str,
    authentication: ListenerAuthentication,
) -> bool:
    from ..security.sasl.authenticator import AuthenticationFailed

    try:
        pieces = await auth.handle(frame)
    except AuthenticationFailed as failure:
        await _fail(io, failure, peer, authentication)
        return False
    except CloseConnection:  # a malformed ApiVersions request: logged by whoever catches it
        raise
    except Exception:  # a bug in the authenticator costs this connection, and names the request
        log.exception(
            "Unexpected error authenticating %s; closing the connection", describe_request(frame, peer, listener_name)
        )
        return False
    if pieces is not None:
        await io.send_pieces([size_prefix(pieces), *pieces])
    if auth.complete:
        log.debug("Connection from %s authenticated as %s", peer, auth.principal)
    return True


async def _fail(io: SocketIO, failure: AuthenticationFailed, peer: str, authentication: ListenerAuthentication) -> None:
    """Kafka's delayed close: wait, send the failure response (if any), close."""
    log.info("Closing connection from %s: SASL authentication failed: %s", peer, failure.reason)
    if failure.delayed:
        await anyio.sleep(max(0, authentication.failed_authentication_delay_ms()) / 1000)
    if failure.response is not None:
        try:
            await io.send_pieces([size_prefix(failure.response), *failure.response])
        except OSError:
            pass


async def _tls_handshake(
    io: TlsSocketIO, tls: ServerSsl, peer: str, listener_name: str, timeout_s: float
) -> KafkaPrincipal | None:
    """The principal of a completed handshake; None (after one log line) when it failed."""
    from ..security.ssl_principal import NoMatchingRule

    try:
        with anyio.fail_after(timeout_s if timeout_s > 0 else None):
            await io.handshake()
        principal = tls.principal(io.peer_certificate())
    except TimeoutError:
        log.warning(
            "Closing connection from %s on listener %s: no TLS handshake within %d ms",
            peer,
            listener_name,
            int(timeout_s * 1000),
        )
        return None
    except ssl.SSLError as exc:
        log.warning(
            "Failed authentication with %s on listener %s (SSL handshake failed: %s)",
            peer,
            listener_name,
            exc.reason or exc,
        )
        return None
    except (EOFError, ConnectionError, OSError) as exc:
        log.info("Connection from %s on listener %s ended during the TLS handshake: %s", peer, listener_name, exc)
        return None
    except (NoMatchingRule, ValueError) as exc:
        log.warning(
            "Closing connection from %s on listener %s: failed to map the certificate's name based on "
            "ssl.principal.mapping.rules: %s",
            peer,
            listener_name,
            exc,
        )
        return None
    cipher = io.cipher()
    log.debug(
        "TLS connection from %s on listener %s (%s, %s): principal %s",
        peer,
        listener_name,
        io.version(),
        cipher[0] if cipher else "?",
        principal,
    )
    return principal


def _api_key(frame: bytearray) -> int | None:
    try:
        return headers.read_request_prefix(frame).api_key
    except DecodeError:
        return None


def _peer_name(sock: socket.socket) -> str:
    try:
        return sock.getpeername()[0]
    except OSError:
        return "unknown"
