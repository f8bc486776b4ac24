"""Connections to other brokers, for the requests brokers send each other (replica fetches,
ControlledShutdown, transaction markers and verification), built on the project's codec.

    connection = await BrokerConnection.open("127.0.0.1", 9092, client_id="broker-1-fetcher",
                                             timeout_s=30)
    response = await connection.request(ApiKey.FETCH, 12, fetch_request)
    await connection.aclose()

One request at a time: each waits for its response (at most `timeout_s`, plus what the request
itself asks the other broker to wait). Any failure closes the connection; the caller opens a
new one.

`BrokerConnectionPool` keeps one connection per broker id for senders that talk to any broker:

    pool = BrokerConnectionPool(metadata, "PLAINTEXT", client_id="broker-1-txn-marker-sender",
                                timeout_s=30)
    response = await pool.request(2, ApiKey.WRITE_TXN_MARKERS, 1, markers_request)

`security` is how the inter-broker listener is reached (`InterBrokerSecurity`): over TLS when it
carries a client `ssl.SSLContext` (built from the broker's `ssl.*` keys of that listener, see
`security/ssl_config.client_ssl_context`), the host name checked as the context says; then, on a
SASL listener (SASL_PLAINTEXT, SASL_SSL), authenticated with its `SaslClientCredentials`
(SaslHandshake v1, SaslAuthenticate v2) and re-authenticated before the other broker's session
expires (KIP-368). A refused TLS handshake or authentication is a BrokerConnectionError.
"""

from __future__ import annotations

import struct
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from ..cluster.store import MetadataStore
from ..common.time import SYSTEM_CLOCK
from ..protocol import headers, messages
from .inter_broker_security import InterBrokerSecurity

if TYPE_CHECKING:
    from ..security.sasl.client import SaslClientCredentials

_SIZE = struct.Struct(">i")
MAX_RESPONSE_BYTES = 1 << 30


Connect = Callable[..., Awaitable["BrokerConnection"]]


class BrokerConnectionError(Exception):
    """The connection failed, timed out, or the answer made no sense; it is closed."""


class BrokerConnection:
    def __init__(self, stream: anyio.abc.ByteStream, *, client_id: str, timeout_s: float) -> None:
        self._stream = stream
        self._receive = BufferedByteReceiveStream(stream)
        self.client_id = client_id
        self.timeout_s = timeout_s
        self._correlation_id = 0
        self.closed = False
        self.sasl: SaslClientCredentials | None = None
        self._reauthenticate_at_ms: float | None = None

    @classmethod
    async def open(
        cls,
        host: str,
        port: int,
        *,
        client_id: str,
        timeout_s: float,
        security: InterBrokerSecurity | None = None,
    ) -> BrokerConnection:
        context = security.ssl_context if security is not None else None
        stream: anyio.abc.ByteStream
        try:
            with anyio.fail_after(timeout_s):
                if context is None:
                    stream = await anyio.connect_tcp(host, port)
                else:
                    stream = await anyio.connect_tcp(
                        host, port, ssl_context=context, tls_hostname=host, tls_standard_compatible=False
                    )
        except (OSError, TimeoutError, anyio.BrokenResourceError) as exc:
            cause = exc.__cause__ if isinstance(exc, anyio.BrokenResourceError) and exc.__cause__ else exc
            raise BrokerConnectionError(f"cannot connect to {host}:{port}: {cause}") from exc
        connection = cls(stream, client_id=client_id, timeout_s=timeout_s)
        if security is not None and security.sasl is not None:
            connection.sasl = security.sasl
            await connection._authenticate()
        return connection

    async def _authenticate(self) -> None:
        from ..security.sasl.client import SaslClientError, authenticate, reauthentication_delay_ms

        assert self.sasl is not None
        try:
            lifetime_ms = await authenticate(self.sasl, self._exchange)
        except SaslClientError as exc:
            await self.aclose()
            raise BrokerConnectionError(f"SASL authentication failed: {exc}") from exc
        delay = reauthentication_delay_ms(lifetime_ms)
        self._reauthenticate_at_ms = None if delay is None else SYSTEM_CLOCK.monotonic_ms() + delay

    async def request(self, api_key: int, version: int, body: object, *, extra_wait_s: float = 0.0) -> Any:
        """Send one request and return its decoded response body."""
        if self.closed:
            raise BrokerConnectionError("connection is closed")
        if self._reauthenticate_at_ms is not None and SYSTEM_CLOCK.monotonic_ms() >= self._reauthenticate_at_ms:
            await self._authenticate()  # KIP-368: before the other broker's session expires
        return await self._exchange(api_key, version, body, extra_wait_s=extra_wait_s)

    async def _exchange(self, api_key: int, version: int, body: object, *, extra_wait_s: float = 0.0) -> Any:
        self._correlation_id += 1
        correlation_id = self._correlation_id
        payload = headers.encode_request_header(api_key, version, correlation_id, self.client_id)
        payload += messages.request(api_key).encode_bytes(body, version=version)
        try:
            with anyio.fail_after(self.timeout_s + extra_wait_s):
                await self._stream.send(_SIZE.pack(len(payload)) + payload)
                size = _SIZE.unpack(await self._receive.receive_exactly(4))[0]
                if not 0 <= size <= MAX_RESPONSE_BYTES:
                    raise BrokerConnectionError(f"bad response size {size}")
                frame = bytearray(await self._receive.receive_exactly(size))
        except (
            OSError,
            TimeoutError,
            anyio.EndOfStream,
            anyio.BrokenResourceError,
            anyio.ClosedResourceError,
            anyio.IncompleteRead,
        ) as exc:
            await self.aclose()
            raise BrokerConnectionError(f"{type(exc).__name__}: {exc}") from exc
        header, pos = headers.decode_response_header(frame, api_key, version)
        if header.correlation_id != correlation_id:
            await self.aclose()
            raise BrokerConnectionError("response for another request")
        body, _ = messages.response(api_key).decode(frame, pos, version=version)
        return body

    async def aclose(self) -> None:
        if not self.closed:
            self.closed = True
            with anyio.CancelScope(shield=True):
                try:
                    await self._stream.aclose()
                except (OSError, anyio.BrokenResourceError):
                    pass


class BrokerConnectionPool:
    """Connections to other brokers by broker id: a broker's endpoint on `listener_name` is looked
    up in the metadata store, its connection reused while open and dropped when a request fails."""

    def __init__(
        self,
        metadata: MetadataStore,
        listener_name: str,
        *,
        client_id: str,
        timeout_s: float,
        connect: Connect = BrokerConnection.open,
    ) -> None:
        self.metadata = metadata
        self.listener_name = listener_name
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.connect = connect
        self._connections: dict[int, BrokerConnection] = {}

    async def request(self, broker_id: int, api_key: int, version: int, body: object) -> Any:
        """Send one request to the broker and return its decoded response body; raises
        BrokerConnectionError or OSError when the broker cannot be reached."""
        try:
            connection = await self._connection(broker_id)
            return await connection.request(api_key, version, body)
        except (BrokerConnectionError, OSError):
            self._connections.pop(broker_id, None)
            raise

    def pop_all(self) -> list[BrokerConnection]:
        """Forget every connection; the caller closes them."""
        connections = list(self._connections.values())
        self._connections.clear()
        return connections

    async def _connection(self, broker_id: int) -> BrokerConnection:
        connection = self._connections.get(broker_id)
        if connection is not None and not connection.closed:
            return connection
        endpoint = self.metadata.broker_endpoint(broker_id, self.listener_name)
        if endpoint is None:
            raise BrokerConnectionError(f"broker {broker_id} has no endpoint on {self.listener_name}")
        connection = await self.connect(
            endpoint.host, endpoint.port, client_id=self.client_id, timeout_s=self.timeout_s
        )
        self._connections[broker_id] = connection
        return connection
