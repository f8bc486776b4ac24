"""Injected faults for client tests: the broker answers chosen requests with an error, late, or
not at all, and pauses chosen partitions' fetches.

    fault_id = broker.faults.add(FaultRule(api="Produce", topic="t", error="NOT_LEADER_OR_FOLLOWER", count=3))
    broker.faults.remove(fault_id)

A rule matches requests by API (Kafka's name, "Produce", or key), client id, topic and partition;
it fires on a matching request `count` times (None: until removed), each time with `probability`.
What a firing rule does:

* `error`: the response carries that error code, shaped for the request's API and version. For
  the APIs whose requests name partitions (Produce, Fetch, ListOffsets, OffsetCommit,
  TxnOffsetCommit, DeleteRecords, OffsetForLeaderEpoch) only the matching partitions get it: they
  are not handed to the handler (a Produce writes nothing to them) and the other partitions of the
  request are served as usual. Metadata gets it on the matching topics; FindCoordinator on every
  key; the other APIs as their top-level error code (APIs without one cannot be given an error).
* `latency_ms`: the response is sent that much later (the connection waits; the others do not).
* `drop_connection`: the request is served, then the connection closes without a response.
* `pause_fetch`: consumers' fetches return no records for the matching partitions, as when
  nothing new arrived (the partitions' offsets are still reported); followers keep replicating.

Every rule added or removed is logged at INFO with its id, and so is a rule's first firing (later
firings at DEBUG; the count is logged when the rule goes). Everything runs on the broker's event
loop: `add`, `remove`, `clear` and `list` are not thread-safe.
"""

from __future__ import annotations

import builtins
import json
import logging
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

import anyio

from ..handlers.support.context import CloseConnection, PartitionFault, RequestContext
from ..protocol import messages
from ..protocol.api_keys import MESSAGE_NAMES, ApiKey
from ..protocol.codegen import EncodedStructs
from ..protocol.errors import ErrorCode

METADATA_RESPONSE = messages.response(ApiKey.METADATA)

log = logging.getLogger(__name__)

_API_KEYS_BY_NAME = {name.lower(): key for key, name in MESSAGE_NAMES.items()}


@dataclass(frozen=True)
class _PartitionedApi:
    """Where a request and its response name partitions: topics[topic].partitions[partition]."""

    request_topics: str
    response_topics: str
    topic: str
    request_partitions: str
    response_partitions: str
    partition_index: str


def _shape(topic: str = "name", partition_index: str = "partition_index") -> _PartitionedApi:
    """topics[topic].partitions[partition_index] in the request and the response."""
    return _PartitionedApi("topics", "topics", topic, "partitions", "partitions", partition_index)


PARTITIONED_APIS: dict[int, _PartitionedApi] = {
    ApiKey.PRODUCE: _PartitionedApi(
        "topic_data",
        "responses",
        "name",
        request_partitions="partition_data",
        response_partitions="partition_responses",
        partition_index="index",
    ),
    ApiKey.LIST_OFFSETS: _shape(),
    ApiKey.OFFSET_COMMIT: _shape(),
    ApiKey.TXN_OFFSET_COMMIT: _shape(),
    ApiKey.DELETE_RECORDS: _shape(),
    ApiKey.OFFSET_FOR_LEADER_EPOCH: _shape(topic="topic", partition_index="partition"),
}
# the APIs whose injected errors go to partitions (or Metadata's topics), not to the response itself
_ERRORS_BELOW_THE_TOP = {*PARTITIONED_APIS, ApiKey.FETCH, ApiKey.METADATA}
# offsets and epochs of a partition answered with an error: -1, as Kafka's error responses
_UNKNOWN_WHEN_FAILED = {
    "base_offset",
    "log_append_time_ms",
    "log_start_offset",
    "timestamp",
    "offset",
    "leader_epoch",
    "end_offset",
    "low_watermark",
}


def api_key_of(api: str | int) -> int:
    """The API key of a Kafka API name ("Produce", case-insensitive) or key."""
    if isinstance(api, int):
        if api not in MESSAGE_NAMES:
            raise ValueError(f"unknown API key {api}")
        return api
    if not isinstance(api, str):
        raise ValueError(f"an API is a name or a key, not {api!r}")
    key = _API_KEYS_BY_NAME.get(api.replace("_", "").lower())  # "Produce", "produce", "LIST_OFFSETS"
    if key is None:
        raise ValueError(f"unknown API {api!r} (Kafka's names: Produce, Fetch, Metadata, ...)")
    return int(key)


def error_code_of(error: str | int) -> ErrorCode:
    """An error code from Kafka's name ("NOT_LEADER_OR_FOLLOWER") or number."""
    try:
        return ErrorCode(error) if isinstance(error, int) else ErrorCode[error.upper()]
    except (KeyError, ValueError, AttributeError):
        raise ValueError(f"unknown error {error!r}") from None


@dataclass
class FaultRule:
    """Which requests a fault hits, and what it does to them (see the module's description)."""

    api: str | int | None = None
    topic: str | None = None
    partition: int | None = None
    client_id: str | None = None
    error: str | int | None = None
    count: int | None = None
    probability: float = 1.0
    latency_ms: int = 0
    drop_connection: bool = False
    pause_fetch: bool = False

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """ValueError naming what makes the rule unusable."""
        api_key = self.api_key
        if self.error is not None:
            error_code_of(self.error)
            if api_key is None:
                raise ValueError("an error needs an API: its responses are shaped per API")
            if not can_carry_error(api_key):
                raise ValueError(f"{MESSAGE_NAMES[api_key]} responses have no error code to inject")
        if not (self.error is not None or self.latency_ms > 0 or self.drop_connection or self.pause_fetch):
            raise ValueError("a fault needs an effect: error, latency_ms, drop_connection or pause_fetch")
        if self.pause_fetch and api_key not in (None, ApiKey.FETCH):
            raise ValueError("pause_fetch applies to Fetch requests only")
        if self.partition is not None and self.topic is None:
            raise ValueError("a partition needs its topic")
        if self.count is not None and self.count < 1:
            raise ValueError("count must be at least 1 (or absent: until removed)")
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        if self.latency_ms < 0:
            raise ValueError("latency_ms must not be negative")

    @property
    def api_key(self) -> int | None:
        if self.pause_fetch and self.api is None:
            return int(ApiKey.FETCH)
        return None if self.api is None else api_key_of(self.api)

    @property
    def error_code(self) -> ErrorCode | None:
        return None if self.error is None else error_code_of(self.error)

    def to_dict(self) -> dict[str, Any]:
        """The fields that differ from the defaults, with names for the API and the error."""
        defaults = FaultRule.__dataclass_fields__
        values = {name: value for name, value in asdict(self).items() if value != defaults[name].default}
        if self.api is not None:
            values["api"] = MESSAGE_NAMES[api_key_of(self.api)]
        if self.error is not None:
            values["error"] = error_code_of(self.error).name
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> FaultRule:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown fault field(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        try:
            return cls(**values)
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    def __str__(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    # -- matching ------------------------------------------------------------------------
    def matches_request(self, api_key: int, client_id: str | None) -> bool:
        own_key = self.api_key
        return (own_key is None or own_key == api_key) and (self.client_id is None or self.client_id == client_id)

    def matches_partition(self, topic: str | None, partition: int) -> bool:
        return (self.topic is None or self.topic == topic) and (self.partition is None or self.partition == partition)

    @property
    def per_partition(self) -> bool:
        """Whether the rule's effect is on partitions (and fires only when one matches)."""
        return self.topic is not None or self.pause_fetch


def can_carry_error(api_key: int) -> bool:
    """Whether a response of the API can be given an injected error."""
    if api_key in PARTITIONED_APIS or api_key in (ApiKey.FETCH, ApiKey.METADATA, ApiKey.FIND_COORDINATOR):
        return True
    try:
        root = messages.response(api_key).spec.root
    except (KeyError, FileNotFoundError):
        return False
    return any(f.attr == "error_code" for f in root.fields)


@dataclass
class _ActiveFault:
    fault_id: int
    rule: FaultRule
    remaining: int | None
    fired: int = 0


class FaultInjector:
    """The broker's injected faults, in the order they were added."""

    def __init__(self, rng: random.Random | None = None) -> None:
        self._faults: dict[int, _ActiveFault] = {}  # in the order added
        self._next_id = 1
        self.rng = rng or random.Random()

    def add(self, rule: FaultRule) -> int:
        rule.check()
        fault_id = self._next_id
        self._next_id += 1
        self._faults[fault_id] = _ActiveFault(fault_id, rule, rule.count)
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

    def list(self) -> list[tuple[int, FaultRule]]:
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

    def _fired(self, fault: _ActiveFault, api_key: int, correlation_id: int) -> None:
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

    def __init__(self, injector: FaultInjector, api_key: int, candidates: list[_ActiveFault]) -> None:
        self.injector = injector
        self.api_key = api_key
        self.candidates = candidates
        self.hit: dict[int, _ActiveFault] = {}  # by id, in order

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

    async def serve(self, handle: Callable[[Any, RequestContext], Awaitable[Any]], request, ctx: RequestContext) -> Any:
        """The handler's response with the faults applied; CloseConnection when one drops it."""
        response = await self._respond(handle, request, ctx)
        for fault in self._request_level():
            self.hit.setdefault(fault.fault_id, fault)
        hit = list(self.hit.values())
        for fault in hit:
            self.injector._fired(fault, self.api_key, ctx.correlation_id)
        latency_ms = sum(fault.rule.latency_ms for fault in hit)
        if latency_ms > 0:
            await anyio.sleep(latency_ms / 1000)
        dropping = [fault.fault_id for fault in hit if fault.rule.drop_connection]
        if dropping:
            raise CloseConnection(f"fault {dropping[0]} drops the connection after {MESSAGE_NAMES[self.api_key]}")
        return response

    def _request_level(self) -> Iterator[_ActiveFault]:
        """Rules that hit the request as a whole: no topic, and an effect on the request (an
        error too, for APIs whose errors are not per partition)."""
        for fault in self.candidates:
            rule = fault.rule
            if rule.per_partition:
                continue
            if rule.latency_ms > 0 or rule.drop_connection:
                yield fault
            elif rule.error is not None and self.api_key not in _ERRORS_BELOW_THE_TOP:
                yield fault

    async def _respond(self, handle, request, ctx: RequestContext) -> Any:
        api_key = self.api_key
        if api_key == ApiKey.FETCH:
            ctx.partition_fault = self.partition_fault  # the fetch handler asks per partition
            return await handle(request, ctx)
        shape = PARTITIONED_APIS.get(api_key)
        if shape is not None:
            return await self._respond_partitioned(shape, handle, request, ctx)
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

    async def _respond_partitioned(self, shape: _PartitionedApi, handle, request, ctx: RequestContext) -> Any:
        failed: dict[str, list[tuple[int, int]]] = {}
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
        if not failed:
            return await handle(request, ctx)
        setattr(request, shape.request_topics, served_topics)
        response_type = messages.response(self.api_key)
        if served_topics:
            response = await handle(request, ctx)
        elif self.api_key == ApiKey.PRODUCE and request.acks == 0:
            response = None
        else:
            response = response_type.cls()
        if response is None:  # acks=0: Kafka closes the connection so that the client refreshes its metadata
            raise CloseConnection(f"acks=0 produce failed with injected error(s) on {sorted(failed)}")
        _add_partition_errors(response, response_type, shape, failed)
        return response

    def _metadata_errors(self, response, version: int) -> Any:
        if isinstance(response.topics, EncodedStructs):  # the handler's pre-encoded entries
            encoded = response.topics
            response.topics = METADATA_RESPONSE.decode_structs("MetadataResponseTopic", encoded, version=version)
        for topic in response.topics:
            for fault in self.candidates:
                rule = fault.rule
                if rule.error is not None and (rule.topic is None or rule.topic == topic.name):
                    topic.error_code = rule.error_code
                    topic.partitions = []
                    self.hit[fault.fault_id] = fault
                    break
        return response


def _struct_class(message_type: messages.MessageType, owner_class, attr: str):
    spec = next(s for s in _struct_specs(message_type) if s.name == owner_class.__name__)
    field_spec = next(f for f in spec.fields if f.attr == attr)
    return message_type.classes[field_spec.struct.name]


def _struct_specs(message_type: messages.MessageType):
    pending = [message_type.spec.root]
    while pending:
        spec = pending.pop()
        yield spec
        pending.extend(f.struct for f in spec.fields if f.struct is not None)


def _add_partition_errors(response, response_type, shape: _PartitionedApi, failed: dict) -> None:
    topic_class = _struct_class(response_type, response_type.cls, shape.response_topics)
    partition_class = _struct_class(response_type, topic_class, shape.response_partitions)
    topics = {getattr(t, shape.topic): t for t in getattr(response, shape.response_topics)}
    for name, errors in failed.items():
        topic = topics.get(name)
        if topic is None:
            topic = topic_class(**{shape.topic: name, shape.response_partitions: []})
            getattr(response, shape.response_topics).append(topic)
            topics[name] = topic
        for index, error in errors:
            partition = partition_class(**{shape.partition_index: index, "error_code": error})
            for attr in _UNKNOWN_WHEN_FAILED:
                if hasattr(partition, attr):
                    setattr(partition, attr, -1)
            getattr(topic, shape.response_partitions).append(partition)


def error_response(api_key: int, request, error: ErrorCode) -> Any:
    """A response of the API carrying `error` at its top level, every other field at its default
    (FindCoordinator from v4: the error for each key asked)."""
    response_type = messages.response(api_key)
    response = response_type.cls()
    response.error_code = error
    if api_key == ApiKey.FIND_COORDINATOR:
        keys = getattr(request, "coordinator_keys", None) or []
        response.node_id, response.port = -1, -1
        response.coordinators = [
            response_type.cls.Coordinator(key=key, node_id=-1, host="", port=-1, error_code=error) for key in keys
        ]
    return response
