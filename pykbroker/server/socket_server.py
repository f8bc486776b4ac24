"""Listening sockets and the accept loop: one task per client connection, on one event loop.

A listener on a configured port is bound when the broker opens (a port in use stops the start)
but listens only once the broker serves (`SocketServer.listen`), as Kafka's Acceptor opens a
configured port only when it starts: until then a client connecting is refused and looks
elsewhere, instead of waiting on a connection nobody reads (a broker restarted after kill -9
waits there for its previous ZooKeeper registration to expire). Port 0 listens at once, as in
Kafka: its number is only known once the port is open.

With `ConnectionQuotas` (the broker always gives them) each accepted connection passes Kafka's
connection limits first (`pykbroker/quota/connection_quotas.py`): the listener's accept loop waits
for a slot or a creation-rate throttle (a timer of its own task, the other connections go on), a
connection from an address at its `max.connections.per.ip` is closed at once with Kafka's log
line, and one over its IP's `connection_creation_rate` is closed unserved once its throttle time
has passed.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from ..quota.connection_quotas import ConnectionQuotas, TooManyConnections, normalized_ip
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


@dataclass(eq=False)  # holds its socket: one object per listener
class BoundListener:
    """A listener's bound socket and how its connections are served (security protocol, TLS)."""

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
        connection_quotas: ConnectionQuotas | None = None,
    ) -> None:
        self.listeners = listeners
        self.connection_quotas = connection_quotas
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
                    conn, address = listener.sock.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError as exc:  # e.g. out of file descriptors: keep serving the others
                    log.warning("accept on %s failed: %s", listener.name, exc)
                    await anyio.sleep(0.1)
                    continue
                self._tune(conn)
                if self.connection_quotas is None:
                    tasks.start_soon(
                        serve_connection,
                        conn,
                        self.dispatcher,
                        listener,
                        self.max_request_size,
                        self.authentication.get(listener.name),
                        None,
                        self.send_buffer_bytes,
                    )
                else:
                    await self._admit(conn, normalized_ip(address[0]), listener, self.connection_quotas, tasks)
        finally:
            listener.sock.close()

    async def _admit(
        self,
        conn: socket.socket,
        ip: str,
        listener: BoundListener,
        quotas: ConnectionQuotas,
        tasks: anyio.abc.TaskGroup,
    ) -> None:
        """Kafka's Acceptor with ConnectionQuotas.inc: wait for a slot (and a creation-rate
        throttle), then serve the connection, refuse it (per-IP maximum), or close it unserved
        after its IP's throttle time."""
        try:
            await quotas.wait_for_slot(listener.name)
        except BaseException:  # the broker stops while the listener waits
            conn.close()
            raise
        try:
            throttle_ms = quotas.admit(listener.name, ip)
        except TooManyConnections as exc:
            log.info(
                "Rejected connection from /%s, address already has the configured maximum of %d connections.",
                exc.ip,
                exc.maximum,
            )
            conn.close()
            return
        if throttle_ms > 0:
            log.debug("Delaying closing of connection from /%s for %d ms", ip, throttle_ms)
            tasks.start_soon(_close_after, conn, throttle_ms / 1000.0)
            return
        tasks.start_soon(self._serve_counted, conn, ip, listener, quotas)

    async def _serve_counted(
        self, conn: socket.socket, ip: str, listener: BoundListener, quotas: ConnectionQuotas
    ) -> None:
        tracked = quotas.track(listener.name, ip)
        try:
            with anyio.CancelScope() as scope:
                tracked.close = scope.cancel
                quotas.close_excess()  # an inter-broker connection beyond max.connections makes room
                await serve_connection(
                    conn,
                    self.dispatcher,
                    listener,
                    self.max_request_size,
                    self.authentication.get(listener.name),
                    on_request=tracked.touch,
                    send_buffer_bytes=self.send_buffer_bytes,
                )
        finally:
            conn.close()
            quotas.release(tracked)

    def _tune(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.send_buffer_bytes > 0:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.send_buffer_bytes)
        if self.receive_buffer_bytes > 0:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.receive_buffer_bytes)


async def _close_after(conn: socket.socket, delay_s: float) -> None:
    """Close a throttled connection unserved once its throttle time has passed (Kafka's
    DelayedCloseSocket)."""
    try:
        await anyio.sleep(delay_s)
    finally:
        conn.close()
