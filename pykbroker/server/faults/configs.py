"""The admin requests for injected faults: two per-broker config keys, answered here, beside the
config handlers, so that any Kafka admin client can manage faults from outside the process.

* `pykbroker.fault.injection` on a broker resource named by the broker's id (faults are per
  broker; the cluster-wide default resource is refused with INVALID_REQUEST):
  APPEND a JSON object (or array of objects) of `FaultRule` fields adds faults; SUBTRACT an id (or
  comma-separated ids) removes them; DELETE removes every fault; SET a JSON array replaces them
  all. DescribeConfigs shows the faults as a JSON array of `{"id", "rule", "fired"}` (when the
  key is named, or while there are faults: as any dynamic config once set). A malformed rule or
  an unknown id fails with INVALID_CONFIG.
* `pykbroker.partition.leader.move` on the broker resource of the active controller: SET
  `{"topic": "t", "partition": 0, "leader": 2}` moves the partition's leadership to broker 2 (a
  live in-sync replica) through the controller's election; another broker answers NOT_CONTROLLER,
  a single broker INVALID_REQUEST (it needs a cluster). The moves of a request are made before
  anything else of it (the controller answers asynchronously).

Neither key is kept in the metadata store: faults last until removed or the broker stops. Both
need what every broker config change needs when an authorizer is configured: the "cluster" check
of the serving API's entry in the authorization table (ALTER_CONFIGS on the cluster for
IncrementalAlterConfigs, DESCRIBE_CONFIGS for DescribeConfigs). `validate_only` checks without
changing anything.

How a request is split between this module and its handler:

* IncrementalAlterConfigs: a broker resource that names the keys is answered here (the checks
  every resource gets first, as the handler makes them: named once, authorized, no config named
  twice, values where needed); its other keys, if any, then go to the handler, whose answer is
  the resource's. The handler gets a resource named twice, with the keys left out, so that it
  refuses both copies as it refuses any resource named twice.
* AlterConfigs: the keys are left out of the broker resources the handler gets, so that tools
  that send back every dynamic config they described (Kafka's kafka-configs.sh) neither change
  nor trip on them; faults change through IncrementalAlterConfigs only. A key named twice or
  without a value stays, for the handler to refuse as it refuses any such config.
* DescribeConfigs: the faults are added to the handler's answer for this broker's resource.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ...config import ConfigSource, ConfigType
from ...handlers.support.authorization import check
from ...handlers.support.config_admin import (
    ConfigResourceType,
    OpType,
    check_config_entries,
    parse_node_id,
    resource_result,
)
from ...handlers.support.context import RequestContext
from ...protocol import messages
from ...protocol.api_keys import ApiKey
from ...protocol.errors import ErrorCode, KafkaError
from .injector import FaultInjector

FAULT_INJECTION = "pykbroker.fault.injection"
LEADER_MOVE = "pykbroker.partition.leader.move"
SPECIAL_KEYS = (FAULT_INJECTION, LEADER_MOVE)

ALTER_CLUSTER = check(ApiKey.INCREMENTAL_ALTER_CONFIGS, "cluster")
DESCRIBE_RESPONSE = messages.response(ApiKey.DESCRIBE_CONFIGS).cls
ALTER_RESPONSE = messages.response(ApiKey.INCREMENTAL_ALTER_CONFIGS).cls

Handler = Callable[[Any, RequestContext], Awaitable[Any]]
Operation = tuple[str, int, "str | None"]  # (config name, operation, value)


@dataclass(frozen=True)
class LeaderMove:
    topic: str
    partition: int
    leader: int


class FaultConfigs:
    """The fault keys of the config requests, answered beside their handlers."""

    def __init__(self, injector: FaultInjector) -> None:
        self.injector = injector

    async def serve(self, handle: Handler, request: Any, ctx: RequestContext) -> Any:
        """The answer to a config request: the handler's, with the fault keys answered here."""
        if ctx.api_key == ApiKey.ALTER_CONFIGS:
            _leave_keys_out_of_alter_configs(request)
            return await handle(request, ctx)
        if ctx.api_key == ApiKey.INCREMENTAL_ALTER_CONFIGS:
            return await self._incremental_alter(handle, request, ctx)
        if ctx.api_key == ApiKey.DESCRIBE_CONFIGS:
            return self._add_described_faults(await handle(request, ctx), request)
        return await handle(request, ctx)

    # -- IncrementalAlterConfigs ----------------------------------------------------------------
    async def _incremental_alter(self, handle: Handler, request: Any, ctx: RequestContext) -> Any:
        ours = [r for r in request.resources if _names_special_keys(r)]
        if not ours:
            return await handle(request, ctx)
        answered = await self._answer_fault_keys(ours, request, ctx)
        everything = request.resources
        request.resources = [r for r in everything if id(r) not in answered]
        response = await handle(request, ctx)
        served = iter(response.responses)
        response.responses = [answered[id(r)] if id(r) in answered else next(served) for r in everything]
        return response

    async def _answer_fault_keys(self, ours: list[Any], request: Any, ctx: RequestContext) -> dict[int, Any]:
        """Apply the fault keys of the resources that name them, and take the keys out of them;
        {id of a resource: its answer} for those the handler is not to get (failed, or with no
        other key)."""
        twice = _named_twice(request.resources)
        moved = await _move_leaderships(ours, request.validate_only, ctx)
        answered: dict[int, Any] = {}
        for resource in ours:
            others = [entry for entry in resource.configs if entry.name not in SPECIAL_KEYS]
            if _key(resource) in twice:
                resource.configs = others  # refused by the handler, as each copy of it
                continue
            alter = partial(self._alter, resource, request.validate_only, ctx, moved)
            answer = resource_result(ALTER_RESPONSE.AlterConfigsResourceResponse, resource, alter)
            if answer.error_code != ErrorCode.NONE or not others:
                answered[id(resource)] = answer
            resource.configs = others
        return answered

    def _alter(self, resource: Any, validate_only: bool, ctx: RequestContext, moved: dict[int, KafkaError]) -> None:
        """The fault keys' operations of one resource (the leadership moves were made first)."""
        if not ALTER_CLUSTER.allows(ctx):
            raise KafkaError(ALTER_CLUSTER.denied, None)
        check_config_entries(resource.configs, value_required=lambda entry: entry.config_operation != OpType.DELETE)
        failed_move = moved.get(id(resource))
        if failed_move is not None:
            raise failed_move
        _check_resource_name(resource.resource_name, ctx)
        operations = [(e.name, e.config_operation, e.value) for e in resource.configs if e.name == FAULT_INJECTION]
        if operations:
            self._alter_faults(operations, validate_only=validate_only)

    def _alter_faults(self, operations: list[Operation], *, validate_only: bool) -> None:
        """Apply the operations on `pykbroker.fault.injection`, all checked before any is applied."""
        for _, op, value in operations:
            self._check_fault_operation(op, value)
        if validate_only:
            return
        for _, op, value in operations:
            if op in (OpType.DELETE, OpType.SET):
                self.injector.clear()
            if op in (OpType.APPEND, OpType.SET) and value and value.strip():
                self.injector.add_json(value)
            elif op == OpType.SUBTRACT:
                for fault_id in _fault_ids(value):
                    self.injector.remove(fault_id)

    def _check_fault_operation(self, op: int, value: str | None) -> None:
        try:
            if op in (OpType.APPEND, OpType.SET) and value and value.strip():
                self.injector.add_json(value, validate_only=True)
            elif op == OpType.APPEND:
                raise ValueError("APPEND needs a fault as a JSON object")
            elif op == OpType.SUBTRACT:
                known = {entry["id"] for entry in self.injector.describe()}
                unknown = [fault_id for fault_id in _fault_ids(value) if fault_id not in known]
                if unknown:
                    raise ValueError(f"no fault {unknown[0]}")
        except ValueError as exc:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value for {FAULT_INJECTION}: {exc}") from None

    # -- DescribeConfigs --------------------------------------------------------------------------
    def _add_described_faults(self, response: Any, request: Any) -> Any:
        """Add `pykbroker.fault.injection` to each result of this broker's resource the handler
        described (its name was this broker's id, the caller may describe it) that shows it."""
        asked: dict[tuple[int, str], list[Any]] = {}
        for resource in request.resources:
            asked.setdefault(_key(resource), []).append(resource)
        for result in response.results:
            resources = asked.get(_key(result))
            if not resources:
                continue
            wanted = resources.pop(0).configuration_keys
            described = result.resource_type == ConfigResourceType.BROKER and bool(result.resource_name)
            if described and result.error_code == ErrorCode.NONE and self._shown(wanted):
                result.configs.append(self._described_entry())
        return response

    def _shown(self, wanted: list[str] | None) -> bool:
        """Whether a broker's DescribeConfigs shows the faults: when named, or while there are some
        and every config is asked for (as any dynamic config shows once set)."""
        if wanted:
            return FAULT_INJECTION in wanted
        return bool(self.injector.describe())

    def _described_entry(self) -> Any:
        """`pykbroker.fault.injection` as DescribeConfigs shows it: the faults now active."""
        return DESCRIBE_RESPONSE.DescribeConfigsResourceResult(
            name=FAULT_INJECTION,
            value=json.dumps(self.injector.describe(), separators=(",", ":")),
            read_only=False,
            is_default=False,
            config_source=ConfigSource.DYNAMIC_BROKER_CONFIG,
            is_sensitive=False,
            synonyms=[],
            config_type=ConfigType.LIST,
            documentation=None,
        )


def _key(resource: Any) -> tuple[int, str]:
    return (resource.resource_type, resource.resource_name)


def _names_special_keys(resource: Any) -> bool:
    return resource.resource_type == ConfigResourceType.BROKER and any(
        entry.name in SPECIAL_KEYS for entry in resource.configs
    )


def _named_twice(resources: list[Any]) -> set[tuple[int, str]]:
    counts = Counter(_key(resource) for resource in resources)
    return {key for key, count in counts.items() if count > 1}


def _leave_keys_out_of_alter_configs(request: Any) -> None:
    """AlterConfigs: the broker resources' fault keys are not configs to keep (see above)."""
    for resource in request.resources:
        if resource.resource_type != ConfigResourceType.BROKER:
            continue
        special = [entry for entry in resource.configs if entry.name in SPECIAL_KEYS]
        names = [entry.name for entry in special]
        if len(names) == len(set(names)) and all(entry.value is not None for entry in special):
            resource.configs = [entry for entry in resource.configs if entry.name not in SPECIAL_KEYS]


def _check_resource_name(name: str, ctx: RequestContext) -> None:
    if not name:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"{FAULT_INJECTION} and {LEADER_MOVE} are per broker: name a broker id"
        )
    parse_node_id(name, ctx.services.broker_id)


def _fault_ids(value: str | None) -> list[int]:
    try:
        return [int(part) for part in (value or "").split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"SUBTRACT takes fault ids, not {value!r}") from None


async def _move_leaderships(resources: list[Any], validate_only: bool, ctx: RequestContext) -> dict[int, KafkaError]:
    """Leadership moves asked through `pykbroker.partition.leader.move`, done first: {id of a
    resource: what went wrong} (a resource the caller may not alter is refused later, as every
    alteration of it)."""
    failed: dict[int, KafkaError] = {}
    for resource in resources:
        asked = [entry for entry in resource.configs if entry.name == LEADER_MOVE]
        if not asked or not ALTER_CLUSTER.allows(ctx):
            continue
        try:
            _check_resource_name(resource.resource_name, ctx)
            moves = _leader_moves([(e.name, e.config_operation, e.value) for e in asked])
            if not validate_only:
                await _move(moves, ctx)
        except KafkaError as error:
            failed[id(resource)] = error
    return failed


def _leader_moves(operations: list[Operation]) -> list[LeaderMove]:
    """The moves asked by SET operations on `pykbroker.partition.leader.move` (INVALID_CONFIG for
    anything else)."""
    moves = []
    for _, op, value in operations:
        if op != OpType.SET:
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"{LEADER_MOVE} can only be SET")
        try:
            values = json.loads(value or "")
            moves.append(LeaderMove(str(values["topic"]), int(values["partition"]), int(values["leader"])))
        except (ValueError, TypeError, KeyError):
            raise KafkaError(
                ErrorCode.INVALID_CONFIG,
                f'{LEADER_MOVE} takes {{"topic": "...", "partition": N, "leader": BROKER_ID}}, not {value!r}',
            ) from None
    return moves


async def _move(moves: list[LeaderMove], ctx: RequestContext) -> None:
    for move in moves:
        error, message = await ctx.services.controller.move_leadership(move.topic, move.partition, move.leader)
        if error not in (ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED):
            raise KafkaError(error, message or error.message)
