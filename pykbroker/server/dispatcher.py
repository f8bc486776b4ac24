"""From a request frame to response pieces: header, version checks, handler call, encoding.

A request whose API or version is not served closes its connection (as Kafka does), except
ApiVersions, which answers UNSUPPORTED_VERSION with a v0 body listing the ApiVersions versions it
serves (only those, as Kafka does), so that clients can fall back.

Injected faults for client tests (`faults/`) stand around the handler's call: the dispatcher hands
each request to `FaultInterceptor.serve` with its handler (once the broker has faults or is asked
about them: `FaultSeam`), and the handlers know nothing of them.

Client quotas (Kafka's KIP-124, KIP-219): while the request quota is on, each handler's running
time is measured (`quota.request_time`) and recorded after it; the throttle a handler or the
request quota calls for goes into the response's `throttle_time_ms`, and the connection's
`ChannelThrottle` mutes it (no further request is read) for that long after the response. A client
that does not throttle itself (older versions, `client_throttles`) gets its response delayed by
the throttle time instead.

An unexpected exception while a request is handled (a bug) is logged at ERROR with its traceback
and the request it belongs to (API, version, correlation id, client id, peer, listener:
`describe_request`), and closes that connection only.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio

from ..common.time import SYSTEM_CLOCK
from ..handlers.support.context import CloseConnection, RequestContext
from ..handlers.support.quota_requests import quota_client_id, quota_user, request_throttle_ms
from ..handlers.support.registry import HandlerEntry
from ..handlers.support.services import BrokerServices
from ..protocol import headers, messages
from ..protocol.api_keys import ApiKey
from ..protocol.codegen import DecodeError
from ..protocol.errors import ErrorCode
from ..quota.request_time import RequestClock, client_throttles, timed
from ..security.principal import ANONYMOUS, KafkaPrincipal
from .faults import FaultSeam
from .request_metrics import RequestMetrics

log = logging.getLogger(__name__)

# Requests the request quota leaves alone: brokers' own requests (Kafka's cluster actions)
EXEMPT_FROM_REQUEST_QUOTA = frozenset(
    {
        ApiKey.CONTROLLED_SHUTDOWN,
        ApiKey.WRITE_TXN_MARKERS,
        ApiKey.INITIALIZE_SHARE_GROUP_STATE,
        ApiKey.READ_SHARE_GROUP_STATE,
        ApiKey.WRITE_SHARE_GROUP_STATE,
        ApiKey.DELETE_SHARE_GROUP_STATE,
        ApiKey.READ_SHARE_GROUP_STATE_SUMMARY,
    }
)


class ChannelThrottle:
    """A connection's mute: no request is read from it before `until` (monotonic seconds)."""

    __slots__ = ("until",)

    def __init__(self) -> None:
        self.until = 0.0

    def mute_for(self, throttle_ms: int) -> None:
        self.until = max(self.until, SYSTEM_CLOCK.monotonic_ms() / 1000 + throttle_ms / 1000)

    async def wait(self) -> None:
        """Return once the connection may read its next request."""
        remaining = self.until - SYSTEM_CLOCK.monotonic_ms() / 1000
        if remaining > 0:
            await anyio.sleep(remaining)


class Dispatcher:
    def __init__(
        self,
        registry: dict[int, HandlerEntry],
        services: BrokerServices,
        request_metrics: RequestMetrics | None = None,
        faults: FaultSeam | None = None,
    ) -> None:
        self.registry = registry
        self.services = services
        self.request_metrics = request_metrics or RequestMetrics()
        self.faults = faults if faults is not None else FaultSeam()

    async def dispatch(
        self,
        frame: bytearray,
        client_host: str,
        listener_name: str,
        *,
        principal: KafkaPrincipal = ANONYMOUS,
        security_protocol: str = "PLAINTEXT",
        connection_id: str = "",
        channel: ChannelThrottle | None = None,
    ) -> list | None:
        """Response pieces (size prefix not included), or None when no response is due."""
        started_ms = SYSTEM_CLOCK.monotonic_ms()
        try:
            prefix = headers.read_request_prefix(frame)
        except DecodeError as exc:
            raise CloseConnection(str(exc)) from exc
        entry = self.registry.get(prefix.api_key)
        if entry is None:
            raise CloseConnection(f"unknown or unsupported API key {prefix.api_key}")
        if not entry.supports(prefix.api_version):
            if prefix.api_key == ApiKey.API_VERSIONS:
                return self.unsupported_api_versions_response(prefix.correlation_id)
            raise CloseConnection(f"unsupported version {prefix.api_version} of API {ApiKey(prefix.api_key).name}")
        try:
            header, pos = headers.decode_request_header(frame, prefix.api_key, prefix.api_version)
            request, _ = entry.request_type.decode(frame, pos, version=prefix.api_version)
        except DecodeError as exc:
            raise CloseConnection(
                f"malformed {ApiKey(prefix.api_key).name} v{prefix.api_version} request: {exc}"
            ) from exc
        ctx = RequestContext(
            prefix.api_key,
            prefix.api_version,
            prefix.correlation_id,
            header.client_id,
            client_host,
            listener_name,
            self.services,
            len(frame),
            principal=principal,
            security_protocol=security_protocol,
            connection_id=connection_id,
        )
        try:
            pieces = await self._answer(entry, request, ctx, channel)
        except CloseConnection:
            raise
        except Exception as exc:
            where = describe_request(frame, client_host, listener_name)
            log.exception("Unexpected error handling %s; closing the connection", where)
            raise CloseConnection(f"unexpected error handling {where}: {exc!r}") from exc
        self._record(prefix.api_key, prefix.api_version, request, started_ms)
        return pieces

    async def _answer(
        self, entry: HandlerEntry, request: Any, ctx: RequestContext, channel: ChannelThrottle | None
    ) -> list | None:
        """The handler's response, encoded with its header (None when no response is due)."""
        quotas = self.services.quotas
        if quotas is not None and quotas.request.enabled:
            ctx.request_clock = RequestClock()
            response = await timed(self._serve(entry, request, ctx), ctx.request_clock)
        else:
            response = await self._serve(entry, request, ctx)
        if quotas is not None and (ctx.throttle_time_ms or quotas.request.enabled):
            await self._throttle(request, response, ctx, channel)
        if response is None:
            return None
        body = entry.response_type.encode(response, version=ctx.api_version)
        return [headers.encode_response_header(ctx.api_key, ctx.api_version, ctx.correlation_id), *body]

    async def _serve(self, entry: HandlerEntry, request: Any, ctx: RequestContext) -> Any:
        """The handler's answer, with the injected faults around it once there may be any."""
        interceptor = self.faults.interceptor_for(ctx.api_key)
        if interceptor is None:
            return await entry.handle(request, ctx)
        return await interceptor.serve(entry.handle, request, ctx)

    async def _throttle(
        self, request: Any, response: Any, ctx: RequestContext, channel: ChannelThrottle | None
    ) -> None:
        """Kafka's sendResponseMaybeThrottle: the request quota recorded (unless the handler did, or
        the request is exempt), the larger throttle in the response, the connection muted for it."""
        quotas = self.services.quotas
        assert quotas is not None
        exempt = ctx.api_key in EXEMPT_FROM_REQUEST_QUOTA or (
            ctx.api_key == ApiKey.FETCH and _fetch_replica_id(request, ctx.api_version) >= 0
        )
        if not exempt:
            requested = request_throttle_ms(ctx, SYSTEM_CLOCK.now_ms())
            if requested > ctx.throttle_time_ms:
                ctx.throttle_time_ms, ctx.throttled_by = requested, quotas.request
        throttle_ms = ctx.throttle_time_ms
        if throttle_ms <= 0 or ctx.throttled_by is None:
            return
        ctx.throttled_by.record_throttle(quota_user(ctx), quota_client_id(ctx), throttle_ms)
        if response is not None and hasattr(response, "throttle_time_ms"):
            response.throttle_time_ms = max(response.throttle_time_ms or 0, throttle_ms)
        if channel is not None:
            channel.mute_for(throttle_ms)
        if response is not None and not client_throttles(ctx.api_key, ctx.api_version):
            await anyio.sleep(throttle_ms / 1000)  # a client that does not throttle itself waits here

    def _record(self, api_key: int, api_version: int, request: Any, started_ms: float) -> None:
        elapsed_ms = SYSTEM_CLOCK.monotonic_ms() - started_ms
        from_follower = api_key == ApiKey.FETCH and _fetch_replica_id(request, api_version) >= 0
        self.request_metrics.record(api_key, api_version, elapsed_ms, fetch_from_follower=from_follower)

    def connection_closed(self, connection_id: str) -> None:
        """A client connection closed: the share sessions it opened end (Kafka's connection
        disconnect listener)."""
        share = self.services.share
        if share is not None and share.is_open:  # a connection without share sessions opens nothing
            share.partitions().connection_closed(connection_id)

    def version_range(self, api_key: int) -> tuple[int, int]:
        """(min, max) version served of an API; (0, -1) when it is not served."""
        entry = self.registry.get(api_key)
        return (entry.min_version, entry.max_version) if entry is not None else (0, -1)

    def supported_versions(self) -> list[tuple[int, int, int]]:
        return sorted((key, e.min_version, e.max_version) for key, e in self.registry.items())

    def unsupported_api_versions_response(self, correlation_id: int) -> list:
        response_type = messages.response(ApiKey.API_VERSIONS)
        cls = response_type.cls
        body = cls(
            error_code=ErrorCode.UNSUPPORTED_VERSION,
            api_keys=[
                cls.ApiVersion(api_key=key, min_version=low, max_version=high)
                for key, low, high in self.supported_versions()
                if key == ApiKey.API_VERSIONS
            ],
        )
        head = headers.encode_response_header(ApiKey.API_VERSIONS, 0, correlation_id)
        return [head, *response_type.encode(body, version=0)]


def describe_request(frame: bytes | bytearray, client_host: str, listener_name: str) -> str:
    """What a log line says of the request in `frame`: "METADATA v12 request (correlation id 7,
    client id 'app') from 10.0.0.1 on listener PLAINTEXT", as much of it as the frame holds."""
    try:
        prefix = headers.read_request_prefix(frame)
    except DecodeError:
        return f"an unreadable request from {client_host} on listener {listener_name}"
    try:
        name = ApiKey(prefix.api_key).name
    except ValueError:
        name = f"API key {prefix.api_key}"
    try:
        client_id = repr(headers.decode_request_header(frame, prefix.api_key, prefix.api_version)[0].client_id)
    except (DecodeError, KeyError, ValueError):
        client_id = "unreadable"
    return (
        f"{name} v{prefix.api_version} request (correlation id {prefix.correlation_id}, client id {client_id}) "
        f"from {client_host} on listener {listener_name}"
    )


def _fetch_replica_id(request: Any, version: int) -> int:
    """The replica id of a Fetch (a follower's broker id; -1 for consumers)."""
    return request.replica_state.replica_id if version >= 15 else request.replica_id
