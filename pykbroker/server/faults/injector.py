"""The broker's injected faults (`FaultInjector`: add, remove, list, in the order added) and what
they do to one request (`RequestFaults`): the handler is given the request without its partitions
answered with an error, and its response gets those errors back, arrives late or not at all.

Every rule added or removed is logged at INFO with its id, and so is a rule's first firing (later
firings at DEBUG; the count is logged when the rule goes), under the package's logger
(`pykbroker.server.faults`). Everything runs on the broker's event loop: `add`, `remove`, `clear`
and `list` are not thread-safe.
"""

from __future__ import annotations

import builtins
import json
import logging
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import anyio

from ...handlers.support.context import CloseConnection, RequestContext
from ...protocol.api_keys import MESSAGE_NAMES, ApiKey
from ...protocol.errors import ErrorCode
from .fetch import services_under_faults
from .responses import (
    ERRORS_BELOW_THE_TOP,
    PARTITIONED_APIS,
    FailedPartitions,
    add_partition_errors,
    empty_response,
    error_response,
    metadata_topics,
)
from .rules import FaultRule, PartitionFault

log = logging.getLogger(__package__ or __name__)  # "pykbroker.server.faults", as the docs show

Handler = Callable[[Any, RequestContext], Awaitable[Any]]


@dataclass
class ActiveFault:
    fault_id: int
    rule: FaultRule
    remaining: int | None
    fired: int = 0


class FaultInjector:
    """The broker's injected faults, in the order they were added."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._faults: dict[int, ActiveFault] = {}  # in the order added
        self._next_id = 1
        self.rng = rng or random.Random()

    def add(self, rule: FaultRule) -> int:
        rule.check()
        fault_id = self._next_id
        self._next_id += 1
        self._faults[fault_id] = ActiveFault(fault_id, rule, rule.count)
        log.info("Fault %d added: %s", fault_id, rule)
        return fault_id

    def remove(self, fault_id: int) -> bool:
        fault = self._faults.pop(fault_id, None)
        if fault is None:
            return False
        log.info("Fault %d removed after firing %d time(s): %s", fault_id, fault.fired, fault.rule)
        return True

    def clear(self) -> None:
        for fault_id in list(self._faults):
            self.remove(fault_id)

    def list(self) -> builtins.list[tuple[int, FaultRule]]:
        return [(fault.fault_id, fault.rule) for fault in self._faults.values()]

    def add_json(self, text: str, *, validate_only: bool = False) -> builtins.list[int]:
        """Add the rules of a JSON object or array of objects (FaultRule's fields); their ids.
        With `validate_only`, only check them. ValueError when one is unusable (none is added)."""
        try:
            values = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"a fault is a JSON object: {exc}") from None
        items = values if isinstance(values, list) else [values]
        if not all(isinstance(item, dict) for item in items):
            raise ValueError("a fault is a JSON object")
        rules = [FaultRule.from_dict(item) for item in items]
        return [] if validate_only else [self.add(rule) for rule in rules]

    def describe(self) -> builtins.list[dict[str, Any]]:
        """Each fault as {"id", "rule", "fired"}: what the admin request shows."""
        return [{"id": f.fault_id, "rule": f.rule.to_dict(), "fired": f.fired} for f in self._faults.values()]

    # -- serving requests ------------------------------------------------------------------
    def for_request(self, api_key: int, client_id: str | None) -> RequestFaults | None:
        """The faults that may hit one request (their probability drawn now), or None."""
        if not self._faults:
            return None
        candidates = [
            fault
            for fault in self._faults.values()
            if fault.rule.matches_request(api_key, client_id) and self.rng.random() < fault.rule.probability
        ]
        return RequestFaults(self, api_key, candidates) if candidates else None

    def fired(self, fault: ActiveFault, api_key: int, correlation_id: int) -> None:
        """Count one firing of `fault` (on a request it hit), and remove it once spent."""
        if fault.fault_id not in self._faults:
            return  # removed while the request was served
        fault.fired += 1
        level = logging.INFO if fault.fired == 1 else logging.DEBUG
        api = MESSAGE_NAMES[api_key]
        log.log(level, "Fault %d fired on %s (correlation id %d)", fault.fault_id, api, correlation_id)
        if fault.remaining is not None:
            fault.remaining -= 1
            if fault.remaining <= 0:
                self.remove(fault.fault_id)


class RequestFaults:
    """The faults that may hit one request, and which of them did."""

    def __init__(self, injector: FaultInjector, api_key: int, candidates: list[ActiveFault]) -> None:
        self.injector = injector
        self.api_key = api_key
        self.candidates = candidates
        self.hit: dict[int, ActiveFault] = {}  # by id, in order

    def partition_fault(self, topic: str | None, partition: int) -> PartitionFault | None:
        """An injected error or pause for one partition of the request (the first rule that
        applies wins), or None: the partition is served as usual."""
        for fault in self.candidates:
            rule = fault.rule
            if not rule.matches_partition(topic, partition):
                continue
            if rule.error is not None:
                self.hit[fault.fault_id] = fault
                return PartitionFault(error=rule.error_code)
            if rule.pause_fetch:
                self.hit[fault.fault_id] = fault
                return PartitionFault(paused=True)
            if rule.per_partition:
                self.hit[fault.fault_id] = fault  # latency or drop for this partition's request
        return None

    async def serve(self, handle: Handler, request: Any, ctx: RequestContext) -> Any:
        """The handler's response with the faults applied; CloseConnection when one drops it."""
        response = await self._respond(handle, request, ctx)
        for fault in self._request_level():
            self.hit.setdefault(fault.fault_id, fault)
        hit = list(self.hit.values())
        for fault in hit:
            self.injector.fired(fault, self.api_key, ctx.correlation_id)
        latency_ms = sum(fault.rule.latency_ms for fault in hit)
        if latency_ms > 0:
            await anyio.sleep(latency_ms / 1000)
        dropping = [fault.fault_id for fault in hit if fault.rule.drop_connection]
        if dropping:
            raise CloseConnection(f"fault {dropping[0]} drops the connection after {MESSAGE_NAMES[self.api_key]}")
        return response

    def _request_level(self) -> Iterator[ActiveFault]:
        """Rules that hit the request as a whole: no topic, and an effect on the request (an
        error too, for APIs whose errors are not per partition)."""
        for fault in self.candidates:
            rule = fault.rule
            if rule.per_partition:
                continue
            if rule.latency_ms > 0 or rule.drop_connection:
                yield fault
            elif rule.error is not None and self.api_key not in ERRORS_BELOW_THE_TOP:
                yield fault

    async def _respond(self, handle: Handler, request: Any, ctx: RequestContext) -> Any:
        api_key = self.api_key
        if api_key == ApiKey.FETCH:  # a consumer's fetch reads through services that apply the faults
            return await handle(
                request, replace(ctx, services=services_under_faults(ctx.services, self.partition_fault))
            )
        if api_key in PARTITIONED_APIS:
            return await self._respond_partitioned(handle, request, ctx)
        if api_key == ApiKey.METADATA:
            return self._metadata_errors(await handle(request, ctx), ctx.api_version)
        error = self._request_error()
        if error is None:
            return await handle(request, ctx)
        return error_response(api_key, request, error)

    def _request_error(self) -> ErrorCode | None:
        for fault in self.candidates:
            if fault.rule.error is not None and not fault.rule.per_partition:
                return fault.rule.error_code
        return None

    async def _respond_partitioned(self, handle: Handler, request: Any, ctx: RequestContext) -> Any:
        """The handler serves the partitions given no error; the others are added to its answer."""
        failed = self._take_failed_partitions(request)
        if not failed:
            return await handle(request, ctx)
        shape = PARTITIONED_APIS[self.api_key]
        if getattr(request, shape.request_topics):
            response = await handle(request, ctx)
        elif self.api_key == ApiKey.PRODUCE and request.acks == 0:
            response = None
        else:
            response = empty_response(self.api_key)
        if response is None:  # acks=0: Kafka closes the connection so that the client refreshes its metadata
            raise CloseConnection(f"acks=0 produce failed with injected error(s) on {sorted(failed)}")
        add_partition_errors(response, self.api_key, failed)
        return response

    def _take_failed_partitions(self, request: Any) -> FailedPartitions:
        """Take the partitions given an error out of the request (and the topics left without
        partitions, when there are any); {topic: [(partition, error)]}."""
        shape = PARTITIONED_APIS[self.api_key]
        failed: FailedPartitions = {}
        served_topics = []
        for topic in getattr(request, shape.request_topics):
            name = getattr(topic, shape.topic)
            served = []
            for partition in getattr(topic, shape.request_partitions):
                index = getattr(partition, shape.partition_index)
                fault = self.partition_fault(name, index)
                if fault is not None and fault.error is not None:
                    failed.setdefault(name, []).append((index, fault.error))
                else:
                    served.append(partition)
            setattr(topic, shape.request_partitions, served)
            if served:
                served_topics.append(topic)
        if failed:
            setattr(request, shape.request_topics, served_topics)
        return failed

    def _metadata_errors(self, response: Any, version: int) -> Any:
        for topic in metadata_topics(response, version):
            for fault in self.candidates:
                rule = fault.rule
                if rule.error is not None and (rule.topic is None or rule.topic == topic.name):
                    topic.error_code = rule.error_code
                    topic.partitions = []
                    self.hit[fault.fault_id] = fault
                    break
        return response
