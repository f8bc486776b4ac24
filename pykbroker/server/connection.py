"""One client connection: read a request, answer it, then read the next.

Requests on one connection are handled one at a time, in the order they arrive, and their
responses are written in that order (as Kafka does: it reads no further request from a connection
until the previous one is answered). Pipelined requests simply wait in the socket buffer.
"""

from __future__ import annotations

import logging
import socket

from .dispatcher import CloseConnection, Dispatcher
from .socket_io import FrameTooLarge, InvalidFrameSize, SocketIO, size_prefix

log = logging.getLogger(__name__)


async def serve_connection(
    sock: socket.socket, dispatcher: Dispatcher, listener_name: str, max_request_size: int
) -> None:
    io = SocketIO(sock)
    peer = _peer_name(sock)
    try:
        while True:
            frame = await io.read_frame(max_request_size)
            if frame is None:
                return
            pieces = await dispatcher.dispatch(frame, peer, listener_name)
            if pieces is not None:
                await io.send_pieces([size_prefix(pieces), *pieces])
    except FrameTooLarge as exc:
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


def _peer_name(sock: socket.socket) -> str:
    try:
        return sock.getpeername()[0]
    except OSError:
        return "unknown"
