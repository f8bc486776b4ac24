"""Client quotas, as Kafka 3.9's ClientQuotaManager, ClientRequestQuotaManager and
ControllerMutationQuotaManager enforce them.

Quotas are set per user, per client id, per (user, client id), and their defaults (`<default>`),
through the user and client entity configs (`producer_byte_rate`, `consumer_byte_rate`,
`request_percentage`, `controller_mutation_rate`). For a request from user U with client id C the
most specific quota set applies, in Kafka's order:

    /config/users/U/clients/C, /config/users/U/clients/<default>, /config/users/U,
    /config/users/<default>/clients/C, /config/users/<default>/clients/<default>,
    /config/users/<default>, /config/clients/C, /config/clients/<default>

A quota is shared by everyone it applies to: a user quota by all the user's client ids (one
sensor, tagged by the user only), exactly as Kafka's `quotaMetricTags` groups them. Every manager
keeps one sensor per metric tags (user, client id); until a quota of its type is first set, it
records nothing (Kafka's `quotasEnabled`), so unquoted brokers pay nothing per request.

Throttle times are Kafka's: for a rate O over window W with bound T, `(O - T) / T × W`, rounded;
the request quota's is capped at one window (`quota.window.size.seconds`); the controller
mutation quota's is the time to refill an overdrawn token bucket, `-tokens / T` seconds.
Everything is called on the event loop.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from ..common.time import now_ms
from ..security.sanitizer import sanitize
from .sensor import QuotaSensor, QuotaViolation, WindowConfig

DEFAULT_ENTITY = "<default>"  # Kafka's ConfigEntityName.Default
PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
IP_CONNECTION_RATE = "connection_creation_rate"
# Kafka's QuotaConfigs: each client quota key and whether it is an integer (LONG) or a DOUBLE
CLIENT_QUOTA_KEYS = {
    PRODUCER_BYTE_RATE: "LONG",
    CONSUMER_BYTE_RATE: "LONG",
    REQUEST_PERCENTAGE: "DOUBLE",
    CONTROLLER_MUTATION_RATE: "DOUBLE",
}
IP_QUOTA_KEYS = {IP_CONNECTION_RATE: "INT"}

INACTIVE_SENSOR_EXPIRATION_MS = 3600 * 1000  # Kafka's InactiveSensorExpirationTimeSeconds
NANOS_TO_PERCENTAGE = 100.0 / 1e9  # request thread time (ns) to a percentage of one second

_CLIENT_ID_ENABLED, _USER_ENABLED, _USER_CLIENT_ID_ENABLED = 1, 2, 4

# (sanitized user | "<default>" | None, sanitized client id | "<default>" | None)
Entity = tuple[str | None, str | None]
Tags = tuple[str, str]  # a sensor's metric tags: (sanitized user or "", sanitized client id or "")


@functools.lru_cache(maxsize=4096)
def sanitized_client_id(client_id: str) -> str:
    return sanitize(client_id)


def throttle_time_ms(violation: QuotaViolation) -> int:
    """Kafka's ClientQuotaManager.throttleTime: the delay that brings the observed rate back to
    the bound over the measured window."""
    return _round((violation.value - violation.bound) / violation.bound * violation.window_ms)


def _round(value: float) -> int:
    return int(math.floor(value + 0.5))  # Java's Math.round


@dataclass(eq=False)  # read by the metrics, never compared
class SensorView:
    """One sensor as the metrics show it."""

    quota_type: str
    user: str  # sanitized, or ""
    client_id: str  # sanitized, or ""
    value: float  # byte-rate, request-time or mutation-rate
    throttle_time: float  # the average throttle time (ms)


class ClientQuotaManager:
    """The quotas of one type (Produce, Fetch, Request or ControllerMutation) and their sensors."""

    def __init__(
        self,
        quota_type: str,
        config: WindowConfig,
        *,
        token_bucket: bool = False,
        max_throttle_ms: int | None = None,
    ) -> None:
        self.quota_type = quota_type
        self.config = config
        self.token_bucket = token_bucket
        self.max_throttle_ms = max_throttle_ms
        self._overrides: dict[Entity, float] = {}
        self._enabled = 0
        self._sensors: dict[Tags, QuotaSensor] = {}
        self._last_expiry_ms = 0

    @property
    def enabled(self) -> bool:
        """Once any quota of this type was set, until the broker restarts (as Kafka)."""
        return self._enabled != 0

    # -- quota changes --------------------------------------------------------------------
    def update_quota(self, user: str | None, client_id: str | None, bound: float | None) -> None:
        """Set (or, with None, remove) the quota of an entity; names sanitized, `<default>` for defaults."""
        if user is not None:
            self._enabled |= _USER_CLIENT_ID_ENABLED if client_id is not None else _USER_ENABLED
        elif client_id is not None:
            self._enabled |= _CLIENT_ID_ENABLED
        if bound is None:
            self._overrides.pop((user, client_id), None)
        else:
            self._overrides[(user, client_id)] = bound
        for tags, sensor in self._sensors.items():
            sensor.bound = self.quota_limit(tags)

    def quota_limit(self, tags: Tags) -> float | None:
        """The bound of the sensor with these tags (Kafka's DefaultQuotaCallback.quotaLimit); None:
        unlimited."""
        user, client_id = tags
        found: float | None = None
        if user and client_id:
            candidates: tuple[Entity, ...] = (
                (user, client_id),
                (user, DEFAULT_ENTITY),
                (DEFAULT_ENTITY, client_id),
                (DEFAULT_ENTITY, DEFAULT_ENTITY),
            )
        elif user:
            candidates = ((user, None), (DEFAULT_ENTITY, None))
        elif client_id:
            candidates = ((None, client_id), (None, DEFAULT_ENTITY))
        else:
            candidates = ()
        for entity in candidates:
            found = self._overrides.get(entity)
            if found is not None:
                break
        return found

    def metric_tags(self, user: str, client_id: str) -> Tags:
        """Which sensor a (sanitized user, sanitized client id) records into: Kafka's quotaMetricTags."""
        enabled = self._enabled
        if enabled in (0, _CLIENT_ID_ENABLED):
            return ("", client_id)
        if enabled == _USER_ENABLED:
            return (user, "")
        if enabled == _USER_CLIENT_ID_ENABLED:
            return (user, client_id)
        has = self._overrides.__contains__
        if has((user, client_id)) or has((user, DEFAULT_ENTITY)):
            return (user, client_id)
        if has((user, None)):
            return (user, "")
        if has((DEFAULT_ENTITY, client_id)) or has((DEFAULT_ENTITY, DEFAULT_ENTITY)):
            return (user, client_id)
        if has((DEFAULT_ENTITY, None)):
            return (user, "")
        return ("", client_id)

    # -- recording ------------------------------------------------------------------------
    def sensor(self, user: str, client_id: str) -> QuotaSensor:
        tags = self.metric_tags(user, client_id)
        sensor = self._sensors.get(tags)
        if sensor is None:
            self._expire_idle_sensors()
            sensor = QuotaSensor(self.config, self.quota_limit(tags), token_bucket=self.token_bucket)
            sensor.last_used_ms = now_ms()
            self._sensors[tags] = sensor
        return sensor

    def _expire_idle_sensors(self) -> None:
        """Drop the sensors idle for an hour (Kafka's sensor expiration), at most once a minute."""
        at = now_ms()
        if at - self._last_expiry_ms < 60_000:
            return
        self._last_expiry_ms = at
        idle = [tags for tags, s in self._sensors.items() if at - s.last_used_ms > INACTIVE_SENSOR_EXPIRATION_MS]
        for tags in idle:
            del self._sensors[tags]

    def record_and_get_throttle_time_ms(self, user: str, client_id: str, value: float, at_ms: int | None = None) -> int:
        """Kafka's maybeRecordAndGetThrottleTimeMs: record `value` (when quotas are enabled) and
        answer the throttle time its violation calls for (0: none)."""
        if not self._enabled:
            return 0
        violation = self.sensor(user, client_id).record(value, now_ms() if at_ms is None else at_ms)
        if violation is None:
            return 0
        return self.throttle_time(violation)

    def throttle_time(self, violation: QuotaViolation) -> int:
        if self.token_bucket:
            return _round(-violation.value / violation.bound * 1000)
        throttle = throttle_time_ms(violation)
        return throttle if self.max_throttle_ms is None else min(throttle, self.max_throttle_ms)

    def unrecord(self, user: str, client_id: str, value: float, at_ms: int) -> None:
        """Take back a value recorded for a request answered empty (a throttled fetch)."""
        if self._enabled:
            self.sensor(user, client_id).record(-value, at_ms, check=False)

    def record_no_throttle(self, user: str, client_id: str, value: float) -> None:
        if self._enabled:
            self.sensor(user, client_id).record(value, now_ms(), check=False)

    def max_value_in_quota_window(self, user: str, client_id: str) -> float:
        """Kafka's getMaxValueInQuotaWindow: what can be taken at once without a certain throttle."""
        if not self._enabled:
            return math.inf
        bound = self.sensor(user, client_id).bound
        if bound is None:
            return math.inf
        return bound * (self.config.samples - 1) * (self.config.window_ms / 1000.0)

    def record_throttle(self, user: str, client_id: str, throttle_ms: int) -> None:
        """The throttle-time sensor of the client (Kafka's `throttle`: its Avg)."""
        if self._enabled and throttle_ms > 0:
            self.sensor(user, client_id).throttle_time.record(throttle_ms, now_ms())

    # -- metrics --------------------------------------------------------------------------
    def sensors(self) -> Iterator[SensorView]:
        """Every live sensor; sensors idle for an hour are dropped (as Kafka expires them)."""
        at = now_ms()
        self._last_expiry_ms = 0
        self._expire_idle_sensors()
        for (user, client_id), sensor in list(self._sensors.items()):
            yield SensorView(self.quota_type, user, client_id, sensor.measured(at), sensor.throttle_time.measure(at))


class ClientQuotas:
    """The broker's client quota managers (Kafka's QuotaManagers: produce, fetch, request,
    controllerMutation), fed by the quota entity configs."""

    def __init__(
        self, samples: int = 11, window_s: int = 1, controller_samples: int = 11, controller_window_s: int = 1
    ):
        config = WindowConfig(samples, window_s * 1000)
        self.produce = ClientQuotaManager("Produce", config)
        self.fetch = ClientQuotaManager("Fetch", config)
        self.request = ClientQuotaManager("Request", config, max_throttle_ms=window_s * 1000)
        controller_config = WindowConfig(controller_samples, controller_window_s * 1000)
        self.controller_mutation = ClientQuotaManager("ControllerMutation", controller_config, token_bucket=True)
        self._by_key = {
            PRODUCER_BYTE_RATE: self.produce,
            CONSUMER_BYTE_RATE: self.fetch,
            REQUEST_PERCENTAGE: self.request,
            CONTROLLER_MUTATION_RATE: self.controller_mutation,
        }
        self._configs: dict[Entity, dict[str, str]] = {}

    def managers(self) -> tuple[ClientQuotaManager, ...]:
        return (self.produce, self.fetch, self.request, self.controller_mutation)

    def entity_configs_changed(self, entity_type: str, name: str, configs: dict[str, str]) -> None:
        """A user, user/client or client entity's configs changed (Kafka's QuotaConfigHandler):
        each quota key present sets that quota, each absent one removes it."""
        entity = _entity(entity_type, name)
        if entity is None:
            return
        quotas = {key: value for key, value in configs.items() if key in CLIENT_QUOTA_KEYS}
        previous = self._configs.get(entity, {})
        if not quotas and not previous:
            return  # e.g. a SCRAM credential changed: no quota was or is set
        self._configs[entity] = quotas
        for key, manager in self._by_key.items():
            manager.update_quota(entity[0], entity[1], _bound(quotas.get(key)))


def _entity(entity_type: str, name: str) -> Entity | None:
    if entity_type == "users":
        user, sep, client = name.partition("/clients/")
        return (user, client if sep else None)
    if entity_type == "clients":
        return (None, name)
    return None


def _bound(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


class ThrottlingQuotaExceeded(Exception):
    """A strict controller mutation quota refused a mutation (THROTTLING_QUOTA_EXCEEDED)."""

    def __init__(self, throttle_ms: int) -> None:
        super().__init__(f"throttled for {throttle_ms} ms")
        self.throttle_ms = throttle_ms


class ControllerMutationQuota:
    """One request's controller mutation quota (Kafka's Strict/PermissiveControllerMutationQuota).
    A strict quota (the request versions that know THROTTLING_QUOTA_EXCEEDED) refuses a mutation
    while the client's token bucket is overdrawn, and records it otherwise (it may overdraw the
    bucket); a permissive one records every mutation. Either remembers the throttle time the
    response carries."""

    def __init__(self, manager: ClientQuotaManager, user: str, client_id: str, *, strict: bool) -> None:
        self._manager = manager
        self._sensor = manager.sensor(user, client_id) if manager.enabled else None
        self.strict = strict
        self._throttle_ms = 0
        self._recorded_ms = 0

    def record(self, permits: float) -> None:
        """Record `permits` mutations (partitions created or deleted); ThrottlingQuotaExceeded
        when a strict quota refuses them."""
        sensor = self._sensor
        if sensor is None:
            return
        at = now_ms()
        if self.strict:
            violation = sensor.check(at)
            if violation is not None:
                self._remember(violation, at)
                raise ThrottlingQuotaExceeded(self.throttle_time_ms())
            sensor.record(permits, at, check=False)
        else:
            violation = sensor.record(permits, at)
            if violation is not None:
                self._remember(violation, at)

    def _remember(self, violation: QuotaViolation, at: int) -> None:
        self._throttle_ms = self._manager.throttle_time(violation)
        self._recorded_ms = at

    def throttle_time_ms(self) -> int:
        """What is left of the last throttle time (Kafka's ControllerMutationQuota.throttleTime)."""
        return max(0, self._throttle_ms - (now_ms() - self._recorded_ms))
