"""The HTTP endpoint of `pykbroker.metrics.listener`: `/metrics` and `/health`, on the broker's loop.

    GET /metrics   200, Prometheus text format 0.0.4 (`metrics.render(metrics.collect(...))`; the
                   renderer may be a coroutine function: the share groups' offsets are awaited)
    GET /health    200 {"status": "UP", ...} once the broker serves; 503 {"status": "STARTING"}
                   before (and {"status": "STOPPING"} while it stops)

One small HTTP/1.x server: each connection sends one GET (its head at most 8 KiB, within 10 s),
gets one answer and is closed. Sockets are driven by anyio, so a slow or silent scraper never
holds up the event loop; building the answer is the only work done on it.
"""

from __future__ import annotations

import inspect
import json
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
from anyio.abc import SocketListener, SocketStream

from .metrics import CONTENT_TYPE
from .socket_io import listening_socket, shown_host

log = logging.getLogger(__name__)

MAX_REQUEST_HEAD = 8192
REQUEST_TIMEOUT_S = 10.0
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 503: "Service Unavailable"}


@dataclass
class HttpResponse:
    status: int
    content_type: str
    body: bytes

    def encode(self, *, head_only: bool = False) -> bytes:
        head = (
            f"HTTP/1.1 {self.status} {_REASONS.get(self.status, '')}\r\n"
            f"Content-Type: {self.content_type}\r\n"
            f"Content-Length: {len(self.body)}\r\n"
            "Connection: close\r\n\r\n"
        ).encode("ascii")
        return head if head_only else head + self.body


@dataclass
class Health:
    """What /health answers: ready or not, and the JSON fields that say why."""

    ready: bool
    details: dict


class MetricsHttpServer:
    def __init__(self, render_metrics: Callable[[], str | Awaitable[str]], health: Callable[[], Health]) -> None:
        self.render_metrics = render_metrics
        self.health = health

    async def serve(self, listener: SocketListener) -> None:
        """Serve until cancelled."""
        async with listener:
            await listener.serve(self._serve_connection)

    async def _serve_connection(self, stream: SocketStream) -> None:
        async with stream:
            try:
                with anyio.fail_after(REQUEST_TIMEOUT_S):
                    head = await _read_head(stream)
                    response = await self._answer(head)
                    await stream.send(response.encode(head_only=head.startswith(b"HEAD ")))
            except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                pass
            except Exception:  # a bug must cost one scrape, never the broker
                log.exception("Metrics request failed")

    async def _answer(self, head: bytes) -> HttpResponse:
        parts = head.split(b"\r\n", 1)[0].split()
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/"):
            return _text(400, "Bad Request\n")
        method, target = parts[0], parts[1].split(b"?", 1)[0]
        if method not in (b"GET", b"HEAD"):
            return _text(405, "Method Not Allowed\n")
        if target == b"/metrics":
            text = self.render_metrics()
            if inspect.isawaitable(text):
                text = await text
            return HttpResponse(200, CONTENT_TYPE, text.encode())
        if target == b"/health":
            health = self.health()
            body = json.dumps(health.details).encode()
            return HttpResponse(200 if health.ready else 503, "application/json", body)
        return _text(404, "Not Found: try /metrics or /health\n")


async def _read_head(stream: SocketStream) -> bytes:
    """The request line and headers (a GET has no body)."""
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head:
        if len(head) > MAX_REQUEST_HEAD:
            break
        head += await stream.receive(4096)
    return head


def _text(status: int, text: str) -> HttpResponse:
    return HttpResponse(status, "text/plain; charset=utf-8", text.encode())


def bind_metrics_socket(host: str, port: int, backlog: int = 64) -> socket.socket:
    """Bind `pykbroker.metrics.listener` now (so a port in use stops the broker at start and port 0
    is known before serving); OSError names the address."""
    try:
        return listening_socket(host, port, backlog)
    except OSError as error:
        raise OSError(
            f"Failed to bind pykbroker.metrics.listener to {http_address(host, port)}: {error.strerror or error}"
        ) from None


def http_address(host: str, port: int) -> str:
    return f"http://{shown_host(host)}:{port}"
