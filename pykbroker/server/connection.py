"""One client connection: read a request, answer it, then read the next.

Requests on one connection are handled one at a time, in the order they arrive, and their
responses are written in that order (as Kafka does: it reads no further request from a connection
until the previous one is answered). Pipelined requests simply wait in the socket buffer.

On a TLS listener the connection first completes its handshake (bounded by the listener's
handshake timeout); the client certificate, if any, names the connection's principal.
"""

from __future__ import annotations

import logging
import socket
import ssl
from typing import Protocol

import anyio

from ..security.principal import ANONYMOUS, KafkaPrincipal
from ..security.ssl_config import ServerSsl
from ..security.ssl_principal import NoMatchingRule
from .dispatcher import CloseConnection, Dispatcher
from .socket_io import FrameTooLarge, InvalidFrameSize, SocketIO, size_prefix
from .tls_io import TlsSocketIO


class ServedListener(Protocol):
    """What a connection needs of its listener (socket_server.BoundListener)."""

    name: str
    security_protocol: str
    tls: ServerSsl | None
    handshake_timeout_s: float


log = logging.getLogger(__name__)

_TLS_HANDSHAKE_RECORD = (0x16, 0x03)  # a TLS record of type handshake, version 3.x


async def serve_connection(
    sock: socket.socket,
    dispatcher: Dispatcher,
    listener: ServedListener,
    max_request_size: int,
) -> None:
    listener_name, tls, protocol = listener.name, listener.tls, listener.security_protocol
    peer = _peer_name(sock)
    io: SocketIO
    principal: KafkaPrincipal = ANONYMOUS
    if tls is None:
        io = SocketIO(sock)
    else:
        sock.setblocking(False)
        try:
            io = TlsSocketIO(tls.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False))
        except OSError as exc:  # the peer went away before anything happened
            log.info("Connection from %s on listener %s failed: %s", peer, listener_name, exc)
            sock.close()
            return
        established = await _tls_handshake(io, tls, peer, listener_name, listener.handshake_timeout_s)
        if established is None:
            io.close()
            return
        principal = established
    try:
        while True:
            frame = await io.read_frame(max_request_size)
            if frame is None:
                return
            pieces = await dispatcher.dispatch(
                frame, peer, listener_name, principal=principal, security_protocol=protocol
            )
            if pieces is not None:
                await io.send_pieces([size_prefix(pieces), *pieces])
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


async def _tls_handshake(
    io: TlsSocketIO, tls, peer: str, listener_name: str, timeout_s: float
) -> KafkaPrincipal | None:
    """The principal of a completed handshake; None (after one log line) when it failed."""
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
    cipher = io.sock.cipher()
    log.debug(
        "TLS connection from %s on listener %s (%s, %s): principal %s",
        peer,
        listener_name,
        io.sock.version(),
        cipher[0] if cipher else "?",
        principal,
    )
    return principal


def _peer_name(sock: socket.socket) -> str:
    try:
        return sock.getpeername()[0]
    except OSError:
        return "unknown"
