"""The admin requests for injected faults: two per-broker config keys that IncrementalAlterConfigs
and DescribeConfigs handle specially, so that any Kafka admin client can manage faults from
outside the process (not a handler itself).

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
  a single broker INVALID_REQUEST (it needs a cluster).

Neither key is kept in the metadata store: faults last until removed or the broker stops. Both
need what every broker config change needs when an authorizer is configured: the "cluster" check
of the serving API's entry in the authorization table (ALTER_CONFIGS on the cluster for
IncrementalAlterConfigs, DESCRIBE_CONFIGS for DescribeConfigs), which those handlers ask of the
broker resource before calling here. `validate_only` checks without changing anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ...config import ConfigSource, ConfigType
from ...config.describe import ConfigEntry
from ...protocol.errors import ErrorCode, KafkaError
from .config_admin import OpType, parse_node_id
from .context import RequestContext

FAULT_INJECTION = "pykbroker.fault.injection"
LEADER_MOVE = "pykbroker.partition.leader.move"
SPECIAL_KEYS = (FAULT_INJECTION, LEADER_MOVE)

Operation = tuple[str, int, "str | None"]  # (config name, operation, value)


@dataclass(frozen=True)
class LeaderMove:
    topic: str
    partition: int
    leader: int


def split_operations(operations: list[Operation]) -> tuple[list[Operation], list[Operation]]:
    """(operations on the special keys, the others)."""
    special = [op for op in operations if op[0] in SPECIAL_KEYS]
    return special, [op for op in operations if op[0] not in SPECIAL_KEYS]


def check_resource_name(name: str, ctx: RequestContext) -> None:
    if not name:
        raise KafkaError(
            ErrorCode.INVALID_REQUEST, f"{FAULT_INJECTION} and {LEADER_MOVE} are per broker: name a broker id"
        )
    parse_node_id(name, ctx.services.broker_id)


def alter_faults(operations: list[Operation], ctx: RequestContext, *, validate_only: bool) -> None:
    """Apply the operations on `pykbroker.fault.injection`, all checked before any is applied."""
    faults = ctx.services.faults
    if faults is None:
        raise KafkaError(ErrorCode.INVALID_CONFIG, "This broker does not inject faults")
    for _, op, value in operations:
        _check_fault_operation(faults, op, value)
    if validate_only:
        return
    for _, op, value in operations:
        if op in (OpType.DELETE, OpType.SET):
            faults.clear()
        if op in (OpType.APPEND, OpType.SET) and value and value.strip():
            faults.add_json(value)
        elif op == OpType.SUBTRACT:
            for fault_id in _fault_ids(value):
                faults.remove(fault_id)


def _check_fault_operation(faults, op: int, value: str | None) -> None:
    try:
        if op in (OpType.APPEND, OpType.SET) and value and value.strip():
            faults.add_json(value, validate_only=True)
        elif op == OpType.APPEND:
            raise ValueError("APPEND needs a fault as a JSON object")
        elif op == OpType.SUBTRACT:
            known = {entry["id"] for entry in faults.describe()}
            unknown = [fault_id for fault_id in _fault_ids(value) if fault_id not in known]
            if unknown:
                raise ValueError(f"no fault {unknown[0]}")
    except ValueError as exc:
        raise KafkaError(ErrorCode.INVALID_CONFIG, f"Invalid value for {FAULT_INJECTION}: {exc}") from None


def _fault_ids(value: str | None) -> list[int]:
    try:
        return [int(part) for part in (value or "").split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"SUBTRACT takes fault ids, not {value!r}") from None


def leader_moves(operations: list[Operation]) -> list[LeaderMove]:
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


async def move_leaderships(moves: list[LeaderMove], ctx: RequestContext) -> None:
    for move in moves:
        error, message = await ctx.services.controller.move_leadership(move.topic, move.partition, move.leader)
        if error not in (ErrorCode.NONE, ErrorCode.ELECTION_NOT_NEEDED):
            raise KafkaError(error, message or error.message)


def described(ctx: RequestContext, wanted: list[str] | None) -> bool:
    """Whether a broker's DescribeConfigs shows the faults: when named, or while there are some
    (as any dynamic config shows once set)."""
    faults = ctx.services.faults
    named = wanted is not None and FAULT_INJECTION in wanted
    return named or (faults is not None and bool(faults.describe()))


def describe_entry(ctx: RequestContext) -> ConfigEntry:
    """`pykbroker.fault.injection` as DescribeConfigs shows it: the faults now active."""
    faults = ctx.services.faults
    value = json.dumps(faults.describe() if faults is not None else [], separators=(",", ":"))
    return ConfigEntry(
        name=FAULT_INJECTION,
        value=value,
        source=ConfigSource.DYNAMIC_BROKER_CONFIG,
        is_sensitive=False,
        read_only=False,
        synonyms=(),
        type=ConfigType.LIST,
    )
