"""Listening sockets and the accept loop: one task per client connection, on one event loop.

A listener on a configured port is bound when the broker opens (a port in use stops the start)
but listens only once the broker serves (`SocketServer.listen`), as Kafka's Acceptor opens a
configured port only when it starts: until then a client connecting is refused and looks
elsewhere, instead of waiting on a connection nobody reads (a broker restarted after kill -9
waits there for its previous ZooKeeper registration to expire). Port 0 listens at once, as in
Kafka: its number is only known once the port is open.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from .connection import ListenerAuthentication, serve_connection
from .dispatcher import Dispatcher
from .socket_io import bound_socket, shown_host

if TYPE_CHECKING:
    from ..security.ssl_config import ServerSsl

log = logging.getLogger(__name__)

# The security protocols the server can serve; a listener of any other protocol must stop the
# broker at start rather than be served as plaintext.
SERVED_SECURITY_PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})
# The protocols whose connections start with a TLS handshake
TLS_SECURITY_PROTOCOLS = frozenset({"SSL", "SASL_SSL"})


@dataclass
class BoundListener:
    name: str
    sock: socket.socket
    security_protocol: str = "PLAINTEXT"
    tls: ServerSsl | None = None  # the TLS server side of an SSL or SASL_SSL listener
    handshake_timeout_s: float = 0.0  # how long a TLS handshake may take (0: unbounded)
    backlog: int = 512
    listening: bool = False

    def listen(self) -> None:
        """Start accepting connections (until now a client connecting was refused). OSError
        naming the listener when the port was taken meanwhile (two sockets bound with
        SO_REUSEADDR, as a restart over TIME_WAIT needs, conflict only once one listens)."""
        if self.listening:
            return
        try:
            self.sock.listen(self.backlog)
        except OSError as error:
            host, port = self.sock.getsockname()[:2]
            raise OSError(
                f"Socket server failed to bind listener {self.name} to {shown_host(host)}:{port}: "
                f"{error.strerror or error}"
            ) from None
        self.listening = True

    @property
    def host(self) -> str:
        return self.sock.getsockname()[0]

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]


def bind_listener(name: str, host: str, port: int, backlog: int = 512) -> BoundListener:
    """Bind now (so the port is taken and known before serving); listen now for port 0, else
    later (`listen()`). Host "" means every interface.

    A failure raises OSError naming the listener, address and port."""
    try:
        sock = bound_socket(host, port)
    except OSError as error:
        raise OSError(
            f"Socket server failed to bind listener {name} to {shown_host(host)}:{port}: {error.strerror or error}"
        ) from None
    listener = BoundListener(name, sock, backlog=backlog)
    if port == 0:
        try:
            listener.listen()
        except OSError:
            sock.close()
            raise
    return listener


class SocketServer:
    def __init__(
        self,
        listeners: list[BoundListener],
        dispatcher: Dispatcher,
        max_request_size: int,
        send_buffer_bytes: int = -1,
        receive_buffer_bytes: int = -1,
        authentication: dict[str, ListenerAuthentication] | None = None,
    ) -> None:
        self.listeners = listeners
        self.authentication = authentication or {}  # by listener name: the SASL listeners
        self.dispatcher = dispatcher
        self.max_request_size = max_request_size
        self.send_buffer_bytes = send_buffer_bytes
        self.receive_buffer_bytes = receive_buffer_bytes

    def listen(self) -> None:
        """Open every listener's port to clients: called once the broker can answer them."""
        for listener in self.listeners:
            listener.listen()

    async def serve(self) -> None:
        """Accept and serve until cancelled (`listen()` first); every connection is closed on the way out."""
        async with anyio.create_task_group() as tasks:
            for listener in self.listeners:
                tasks.start_soon(self._accept_loop, listener, tasks)

    async def _accept_loop(self, listener: BoundListener, tasks: anyio.abc.TaskGroup) -> None:
        try:
            while True:
                await anyio.wait_readable(listener.sock)
                try:
                    conn, _ = listener.sock.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:  # e.g. out of file descriptors: keep serving the others
                    log.warning("accept on %s failed: %s", listener.name, exc)
                    await anyio.sleep(0.1)
                    continue
                self._tune(conn)
                tasks.start_soon(
                    serve_connection,
                    conn,
                    self.dispatcher,
                    listener,
                    self.max_request_size,
                    self.authentication.get(listener.name),
                )
        finally:
            listener.sock.close()

    def _tune(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.send_buffer_bytes > 0:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer_bytes)
        if self.receive_buffer_bytes > 0:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.receive_buffer_bytes)
