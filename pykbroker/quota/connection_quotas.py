"""Connection limits, as Kafka 3.9's `ConnectionQuotas` (SocketServer) enforces them at accept.

Each listener's acceptor asks `wait_for_slot` before it takes a new connection in, then `admit`:

- `max.connections.per.ip` and `max.connections.per.ip.overrides` (`host:count,...`): a connection
  from an address that already has its maximum is refused (`TooManyConnections`), closed at once;
- `max.connections` (broker-wide) and `listener.name.<l>.max.connections` (falling back to the
  broker value, as Kafka's per-listener quota reads its configs with the listener prefix
  overriding): at the limit the listener's acceptor waits until a connection closes. The
  inter-broker listener is protected when there is more than one listener: it waits only for its
  own listener limit and may exceed the broker-wide one; then the least recently active connection
  of another listener is closed until the broker is back at its limit (`close_excess`);
- `max.connection.creation.rate` (broker, and per listener): the connection is recorded in
  Kafka's rate sensors and the acceptor waits the throttle time (at most one quota window) before
  taking it in;
- the IP quota `connection_creation_rate` (`ips` entities, `<default>` too): a connection over its
  IP's rate is not served but closed once the throttle time has passed (Kafka's
  ConnectionThrottledException); it is un-recorded from every rate it was counted in.

Rates are Kafka's windowed `Rate` over `quota.window.num` × `quota.window.size.seconds`. Counting
is a few dictionary updates per connection; nothing waits unless a limit is reached, and a wait
is a timer of the acceptor's task, never of the event loop. Everything runs on the event loop.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import anyio

from ..common.time import SYSTEM_CLOCK
from .client_quotas import DEFAULT_ENTITY, IP_CONNECTION_RATE, throttle_time_ms
from .sensor import QuotaSensor, SampledAverage, WindowConfig

log = logging.getLogger(__name__)

INT_MAX = 2**31 - 1  # Kafka's Int.MaxValue: no limit
LIMIT_KEYS = ("max.connections", "max.connection.creation.rate")  # the per-listener ones


class TooManyConnections(Exception):
    """The address already has its configured maximum of connections."""

    def __init__(self, ip: str, maximum: int) -> None:
        super().__init__(f"Too many connections from /{ip} (maximum = {maximum})")
        self.ip = ip
        self.maximum = maximum


@dataclass(frozen=True)
class ConnectionLimits:
    """The limits in force, read from the broker's (static and dynamic) configs."""

    max_connections: int = INT_MAX
    max_connections_per_ip: int = INT_MAX
    per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    max_connection_creation_rate: int = INT_MAX
    listener_max_connections: Mapping[str, int] = field(default_factory=dict)
    listener_creation_rate: Mapping[str, int] = field(default_factory=dict)


def read_limits(value: Callable[[str], object], listeners: list[str]) -> ConnectionLimits:
    """The limits from a config lookup (`value(key)` is the typed value or the raw string of a
    `listener.name.<l>.<key>` key, None when unset)."""
    broker_max = _int(value("max.connections"))
    broker_rate = _int(value("max.connection.creation.rate"))

    def per_listener(key: str, fallback: int) -> dict[str, int]:
        found = {name: value(f"listener.name.{name.lower()}.{key}") for name in listeners}
        return {name: fallback if raw is None else _int(raw) for name, raw in found.items()}

    return ConnectionLimits(
        max_connections=broker_max,
        max_connections_per_ip=_int(value("max.connections.per.ip")),
        per_ip_overrides=parse_overrides(str(value("max.connections.per.ip.overrides") or "")),
        max_connection_creation_rate=broker_rate,
        listener_max_connections=per_listener("max.connections", broker_max),
        listener_creation_rate=per_listener("max.connection.creation.rate", broker_rate),
    )


def parse_overrides(text: str) -> dict[str, int]:
    """`max.connections.per.ip.overrides`: `host:count` pairs, hosts resolved to addresses as
    Kafka's InetAddress.getByName does; an unresolvable host is skipped with a warning."""
    overrides: dict[str, int] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        host, _, count = item.rpartition(":")
        try:
            overrides[_resolve(host.strip("[]"))] = int(count)
        except (OSError, ValueError) as exc:
            log.warning("Ignoring max.connections.per.ip.overrides entry %r: %s", item, exc)
    return overrides


def _resolve(host: str) -> str:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return normalized_ip(str(socket.getaddrinfo(host, None)[0][4][0]))


def normalized_ip(ip: str) -> str:
    """The address as Kafka names it: an IPv4-mapped IPv6 peer is its IPv4 address."""
    if ip.startswith("::ffff:") and "." in ip:
        return ip[7:]
    return ip


def _int(value: object) -> int:
    if value is None:
        return INT_MAX
    return int(float(str(value)))


@dataclass(frozen=True, eq=False)  # read by the metrics, never compared
class ListenerView:
    """One listener's connection metrics, read now."""

    name: str
    count: int
    accept_rate: float  # connection-accept-rate (per second)
    throttle_time: float  # connection-accept-throttle-time (average ms)
    ip_throttle_time: float  # ip-connection-accept-throttle-time (average ms)


class ListenerQuota:
    """One listener's count, limit, creation-rate sensor and throttle-time averages."""

    def __init__(self, name: str, window: WindowConfig) -> None:
        self.name = name
        self.count = 0
        self.max_connections = INT_MAX
        self.rate = QuotaSensor(window, None)
        self.throttle_time = SampledAverage(window)  # connection-accept-throttle-time
        self.ip_throttle_time = SampledAverage(window)  # ip-connection-accept-throttle-time


class TrackedConnection:
    """A served connection: its listener and address, when it was last active, and how to close it."""

    __slots__ = ("listener", "ip", "last_active_ms", "counted", "close")

    def __init__(self, listener: str, ip: str, now_ms: float) -> None:
        self.listener = listener
        self.ip = ip
        self.last_active_ms = now_ms
        self.counted = True
        self.close: Callable[[], None] = lambda: None

    def touch(self) -> None:
        self.last_active_ms = SYSTEM_CLOCK.monotonic_ms()


class ConnectionQuotas:
    """The broker's connection counts and limits (Kafka's ConnectionQuotas)."""

    def __init__(self, listeners: list[str], inter_broker_listener: str, samples: int = 11, window_s: int = 1) -> None:
        self.window = WindowConfig(samples, window_s * 1000)
        self.max_throttle_ms = window_s * 1000
        self.inter_broker_listener = inter_broker_listener
        self.listeners = {name: ListenerQuota(name, self.window) for name in listeners}
        self.limits = ConnectionLimits()
        self.broker_rate = QuotaSensor(self.window, None)
        self.counts: dict[str, int] = {}
        self.total = 0
        self.connections: dict[TrackedConnection, None] = {}  # in order of acceptance
        self.ip_rates: dict[str, int] = {}  # connection_creation_rate per IP entity
        self.default_ip_rate = INT_MAX
        self.ip_sensors: dict[str, QuotaSensor] = {}
        self._slot_freed: anyio.Event | None = None  # set when a slot may have freed

    # -- configuration -------------------------------------------------------------------
    def reconfigure(self, limits: ConnectionLimits) -> None:
        """New limits in force (static configs at start, then every dynamic change)."""
        if limits == self.limits:
            return
        self.limits = limits
        self.broker_rate.bound = _bound(limits.max_connection_creation_rate)
        for name, quota in self.listeners.items():
            quota.max_connections = limits.listener_max_connections.get(name, limits.max_connections)
            quota.rate.bound = _bound(limits.listener_creation_rate.get(name, limits.max_connection_creation_rate))
        self._wake_acceptors()
        self.close_excess()

    def ip_quota_changed(self, name: str, configs: Mapping[str, str]) -> None:
        """An `ips` entity's quota configs changed (Kafka's IpConfigHandler): at once in force."""
        raw = configs.get(IP_CONNECTION_RATE)
        rate = None if raw is None else _int(raw)
        if name == DEFAULT_ENTITY:
            self.default_ip_rate = INT_MAX if rate is None else rate
            log.info("Updated default max IP connection rate to %d", self.default_ip_rate)
        else:
            try:
                ip = _resolve(name)
            except (OSError, ValueError) as exc:
                log.warning("Ignoring the connection rate quota of IP entity %r: %s", name, exc)
                return
            if rate is None:
                if self.ip_rates.pop(ip, None) is not None:
                    log.info("Removing max connection rate override for /%s", ip)
            else:
                log.info("Updating max connection rate override for /%s to %d", ip, rate)
                self.ip_rates[ip] = rate
        for ip, sensor in self.ip_sensors.items():
            sensor.bound = _bound(self.connection_rate_for_ip(ip))

    def connection_rate_for_ip(self, ip: str) -> int:
        return self.ip_rates.get(ip, self.default_ip_rate)

    # -- accepting ----------------------------------------------------------------------
    async def wait_for_slot(self, listener: str) -> None:
        """Kafka's waitForConnectionSlot: record the connection in the broker and listener rates,
        then wait out the throttle time and until the listener may take one more connection."""
        start = SYSTEM_CLOCK.monotonic_ms()
        throttle_ms = self._record_connection_and_get_throttle_ms(listener, int(SYSTEM_CLOCK.now_ms()))
        if throttle_ms <= 0 and self._slot_available(listener):
            return
        end = start + throttle_ms
        while True:
            remaining_ms = end - SYSTEM_CLOCK.monotonic_ms()
            if remaining_ms <= 0 and self._slot_available(listener):
                return
            if self._slot_freed is None:
                self._slot_freed = anyio.Event()
            freed = self._slot_freed
            if remaining_ms > 0:
                with anyio.move_on_after(remaining_ms / 1000.0):
                    await freed.wait()
            else:
                await freed.wait()

    def admit(self, listener: str, ip: str) -> int:
        """Count a new connection from `ip` on `listener` (after `wait_for_slot`): 0 when it is
        admitted, else the IP throttle time after which it must be closed unserved.
        TooManyConnections when the address has its maximum already."""
        throttle_ms = self._record_ip_maybe_throttle(listener, ip)
        if throttle_ms > 0:
            return throttle_ms
        count = self.counts.get(ip, 0)
        maximum = self.limits.per_ip_overrides.get(ip, self.limits.max_connections_per_ip)
        if count >= maximum:
            raise TooManyConnections(ip, maximum)
        self.counts[ip] = count + 1
        self.total += 1
        quota = self.listeners.get(listener)
        if quota is not None:
            quota.count += 1
        return 0

    def track(self, listener: str, ip: str) -> TrackedConnection:
        """Remember an admitted connection (to close it if the broker must make room)."""
        connection = TrackedConnection(listener, ip, SYSTEM_CLOCK.monotonic_ms())
        self.connections[connection] = None
        self.close_excess()
        return connection

    def release(self, connection: TrackedConnection) -> None:
        """The connection closed: its count is given back and a waiting acceptor may go on."""
        self.connections.pop(connection, None)
        if not connection.counted:
            return
        connection.counted = False
        self._dec(connection.listener, connection.ip)

    def _dec(self, listener: str, ip: str) -> None:
        count = self.counts.get(ip, 0)
        if count <= 1:
            self.counts.pop(ip, None)
        else:
            self.counts[ip] = count - 1
        self.total -= 1
        quota = self.listeners.get(listener)
        if quota is not None and quota.count > 0:
            quota.count -= 1
        self._wake_acceptors()

    def max_connections_exceeded(self, listener: str) -> bool:
        return self.total > self.limits.max_connections and not self._protected(listener)

    def close_excess(self) -> None:
        """Kafka's closeExcessConnections: while the broker is over `max.connections` (the
        protected inter-broker listener went beyond it), close the least recently active
        connection of another listener."""
        while self.total > self.limits.max_connections:
            candidates = [c for c in self.connections if c.counted and not self._protected(c.listener)]
            if not candidates:
                return
            victim = min(candidates, key=lambda c: c.last_active_ms)
            log.info(
                "Closing connection from /%s on %s: the broker is over max.connections", victim.ip, victim.listener
            )
            self.release(victim)
            victim.close()

    # -- Kafka's rules ------------------------------------------------------------------
    def _slot_available(self, listener: str) -> bool:
        quota = self.listeners.get(listener)
        if quota is not None and quota.count >= quota.max_connections:
            return False
        if self._protected(listener):
            return True
        return self.total < self.limits.max_connections

    def _protected(self, listener: str) -> bool:
        return listener == self.inter_broker_listener and len(self.listeners) > 1

    def _record_connection_and_get_throttle_ms(self, listener: str, now_ms: int) -> int:
        broker_throttle_ms = (
            0 if self._protected(listener) else self._record_and_get_throttle_ms(self.broker_rate, now_ms)
        )
        quota = self.listeners.get(listener)
        if quota is None:
            return 0
        throttle_ms = max(broker_throttle_ms, self._record_and_get_throttle_ms(quota.rate, now_ms))
        if throttle_ms > 0:
            quota.throttle_time.record(throttle_ms, now_ms)
        return throttle_ms

    def _record_ip_maybe_throttle(self, listener: str, ip: str) -> int:
        rate = self.connection_rate_for_ip(ip)
        if rate == INT_MAX:
            return 0
        sensor = self.ip_sensors.get(ip)
        if sensor is None:
            sensor = self.ip_sensors[ip] = QuotaSensor(self.window, float(rate))
        now_ms = int(SYSTEM_CLOCK.now_ms())
        throttle_ms = self._record_and_get_throttle_ms(sensor, now_ms)
        if throttle_ms > 0:  # not accepted: un-record it everywhere it was counted
            sensor.record(-1.0, now_ms, check=False)
            if not self._protected(listener):
                self.broker_rate.record(-1.0, now_ms, check=False)
            quota = self.listeners.get(listener)
            if quota is not None:
                quota.ip_throttle_time.record(throttle_ms, now_ms)
                quota.rate.record(-1.0, now_ms, check=False)
        return throttle_ms

    def _record_and_get_throttle_ms(self, sensor: QuotaSensor, now_ms: int) -> int:
        violation = sensor.record(1.0, now_ms)
        if violation is None:
            return 0
        return min(throttle_time_ms(violation), self.max_throttle_ms)

    def _wake_acceptors(self) -> None:
        if self._slot_freed is not None:
            self._slot_freed.set()
            self._slot_freed = None

    # -- metrics ------------------------------------------------------------------------
    def listener_views(self, now_ms: int) -> Iterator[ListenerView]:
        for name, quota in self.listeners.items():
            yield ListenerView(
                name,
                quota.count,
                quota.rate.measured(now_ms),
                quota.throttle_time.measure(now_ms),
                quota.ip_throttle_time.measure(now_ms),
            )

    def ip_rates_measured(self, now_ms: int) -> Iterator[tuple[str, float]]:
        for ip, sensor in self.ip_sensors.items():
            yield ip, sensor.measured(now_ms)


def _bound(limit: int) -> float | None:
    return None if limit >= INT_MAX else float(limit)
