"""What handlers ask of the client quotas (`quota/client_quotas.py`), as Kafka's KafkaApis does.

A request is quoted by its principal's sanitized name and its client id. Produce and Fetch record
their bytes (and the request quota) themselves and set the throttle on the context; every other
request's time is recorded against the request quota by the dispatcher after its handler, which
also puts the throttle in the response's `throttle_time_ms` and mutes the connection for it.
"""

from __future__ import annotations

import functools

from ...protocol.errors import ErrorCode, KafkaError
from ...quota.client_quotas import (
    ClientQuotaManager,
    ControllerMutationQuota,
    ThrottlingQuotaExceeded,
    sanitized_client_id,
)
from ...security.sanitizer import sanitize
from .context import RequestContext


@functools.lru_cache(maxsize=4096)
def _sanitized_user(name: str) -> str:
    return sanitize(name)


def quota_user(ctx: RequestContext) -> str:
    """The request's user as quotas name it: the sanitized principal name (Kafka's sanitizedUser)."""
    return _sanitized_user(ctx.principal.name)


def quota_client_id(ctx: RequestContext) -> str:
    return sanitized_client_id(ctx.client_id or "")


def request_throttle_ms(ctx: RequestContext, at_ms: int) -> int:
    """Record the request's time so far against the request quota (once) and answer the throttle
    it calls for (Kafka's quotas.request.maybeRecordAndGetThrottleTimeMs)."""
    quotas = ctx.services.quotas
    if quotas is None or not quotas.request.enabled or ctx.request_quota_recorded:
        return 0
    ctx.request_quota_recorded = True
    used = ctx.request_clock.percentage() if ctx.request_clock is not None else 0.0
    return quotas.request.record_and_get_throttle_time_ms(quota_user(ctx), quota_client_id(ctx), used, at_ms)


def throttle(ctx: RequestContext, manager: ClientQuotaManager, throttle_ms: int) -> None:
    """Throttle the request (the larger throttle wins), naming the quota that called for it."""
    if throttle_ms > ctx.throttle_time_ms:
        ctx.throttle_time_ms = throttle_ms
        ctx.throttled_by = manager


def controller_mutation_quota(ctx: RequestContext, strict_since_version: int) -> ControllerMutationQuota | None:
    """The request's controller mutation quota (`controller_mutation_rate`); strict from the
    API's version that knows THROTTLING_QUOTA_EXCEEDED. None while no such quota was ever set."""
    quotas = ctx.services.quotas
    if quotas is None or not quotas.controller_mutation.enabled:
        return None
    return ControllerMutationQuota(
        quotas.controller_mutation,
        quota_user(ctx),
        quota_client_id(ctx),
        strict=ctx.api_version >= strict_since_version,
    )


def throttle_mutations(ctx: RequestContext, quota: ControllerMutationQuota | None) -> None:
    """After the mutations: the throttle time the controller mutation quota calls for."""
    quotas = ctx.services.quotas
    if quota is not None and quotas is not None:
        throttle(ctx, quotas.controller_mutation, quota.throttle_time_ms())


def record_mutations(quota: ControllerMutationQuota | None, permits: int) -> None:
    """Record partitions about to be created or deleted; KafkaError THROTTLING_QUOTA_EXCEEDED when
    a strict quota refuses them (the mutation is then not made)."""
    if quota is None:
        return
    try:
        quota.record(permits)
    except ThrottlingQuotaExceeded:
        raise KafkaError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, ErrorCode.THROTTLING_QUOTA_EXCEEDED.message) from None
