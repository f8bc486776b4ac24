"""`pykbroker faults`: inject faults into pykbroker brokers for client tests, from a shell.

    pykbroker faults --bootstrap-server HOST:PORT --add '{"api":"Produce","error":"NOT_LEADER_OR_FOLLOWER","count":3}'
    pykbroker faults --bootstrap-server HOST:PORT --list
    pykbroker faults --bootstrap-server HOST:PORT --remove 1 [--broker 0]
    pykbroker faults --bootstrap-server HOST:PORT --clear
    pykbroker faults --bootstrap-server HOST:PORT --move-leader --topic t --partition 0 --leader 2

Faults are per broker: `--add`, `--list`, `--remove` and `--clear` act on every broker of the
cluster unless `--broker` names one (fault ids are each broker's own). The requests are
IncrementalAlterConfigs and DescribeConfigs on the broker config key `pykbroker.fault.injection`
(APPEND a rule, SUBTRACT an id, DELETE all), and `pykbroker.partition.leader.move` SET on the
active controller for `--move-leader`, so they need what altering broker configs needs
(ALTER_CONFIGS on the cluster). A rule is a JSON object of FaultRule's fields: api, topic,
partition, client_id, error, count, probability, latency_ms, drop_connection, pause_fetch.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .client_config import ToolError, add_common_arguments, client_config, run_tool

FAULT_INJECTION = "pykbroker.fault.injection"
LEADER_MOVE = "pykbroker.partition.leader.move"
TIMEOUT_S = 30.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="pykbroker faults", description="Inject faults into pykbroker brokers (for client tests)."
    )
    add_common_arguments(parser)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--add", metavar="JSON", help="add a fault: a JSON object of the rule's fields")
    action.add_argument("--list", action="store_true", help="list the faults of the brokers")
    action.add_argument("--remove", metavar="ID", type=int, help="remove the fault with this id")
    action.add_argument("--clear", action="store_true", help="remove every fault")
    action.add_argument("--move-leader", action="store_true", help="make --leader the leader of --topic's --partition")
    parser.add_argument("--broker", type=int, metavar="ID", help="only this broker (default: every broker)")
    parser.add_argument("--topic", help="with --move-leader: the topic")
    parser.add_argument("--partition", type=int, help="with --move-leader: the partition")
    parser.add_argument("--leader", type=int, metavar="ID", help="with --move-leader: the broker to lead")
    parser.add_argument("--output", choices=["text", "json"], default="text", help="json: one JSON document")
    args = parser.parse_args(argv)
    if args.move_leader and (args.topic is None or args.partition is None or args.leader is None):
        parser.error("--move-leader needs --topic, --partition and --leader")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    return run_tool(lambda: _run(args), "pykbroker faults")


def _run(args: argparse.Namespace) -> int:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient(client_config(args.bootstrap_server, args.command_config))
    if args.move_leader:
        result = _move_leader(admin, args.topic, args.partition, args.leader)
        _print(args, result, f"Moved the leadership of {args.topic}-{args.partition} to broker {args.leader}.")
        return 0
    brokers = [args.broker] if args.broker is not None else _broker_ids(admin)
    if args.list:
        faults = [{"broker": b, **fault} for b in brokers for fault in _faults(admin, b)]
        _print(args, faults, _fault_table(faults))
    elif args.add is not None:
        added = [_add(admin, broker, args.add) for broker in brokers]
        _print(args, added, "\n".join(_added_text(entry) for entry in added))
    elif args.remove is not None:
        removed = [b for b in brokers if any(f["id"] == args.remove for f in _faults(admin, b))]
        if not removed:
            raise ToolError(f"No fault {args.remove} on broker(s) {', '.join(map(str, brokers))}")
        for broker in removed:
            _alter(admin, broker, FAULT_INJECTION, str(args.remove), "SUBTRACT")
        _print(args, {"removed": args.remove, "brokers": removed}, _removed_text(args.remove, removed))
    else:
        for broker in brokers:
            _alter(admin, broker, FAULT_INJECTION, None, "DELETE")
        _print(args, {"cleared": brokers}, f"Removed every fault on broker(s) {', '.join(map(str, brokers))}.")
    return 0


def _added_text(entry: dict) -> str:
    return f"Added fault {entry['id']} on broker {entry['broker']}: {json.dumps(entry['rule'])}"


def _removed_text(fault_id: int, brokers: list[int]) -> str:
    return f"Removed fault {fault_id} on broker(s) {', '.join(map(str, brokers))}."


def _print(args: argparse.Namespace, document: Any, text: str) -> None:
    if args.output == "json":
        print(json.dumps(document))
    elif text:
        print(text)
    sys.stdout.flush()


def _broker_ids(admin: Any) -> list[int]:
    cluster = admin.describe_cluster(request_timeout=TIMEOUT_S).result()
    return sorted(node.id for node in cluster.nodes)


def _controller_id(admin: Any) -> int:
    cluster = admin.describe_cluster(request_timeout=TIMEOUT_S).result()
    if cluster.controller is None:
        raise ToolError("The cluster has no active controller")
    return int(cluster.controller.id)


def _faults(admin: Any, broker: int) -> list[dict]:
    from confluent_kafka.admin import ConfigResource, ResourceType

    resource = ConfigResource(ResourceType.BROKER, str(broker))
    entries = admin.describe_configs([resource], request_timeout=TIMEOUT_S)[resource].result()
    entry = entries.get(FAULT_INJECTION)
    return json.loads(entry.value) if entry is not None and entry.value else []


def _alter(admin: Any, broker: int, key: str, value: str | None, operation: str) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entry = ConfigEntry(key, value, incremental_operation=getattr(AlterConfigOpType, operation))
    resource = ConfigResource(ResourceType.BROKER, str(broker), incremental_configs=[entry])
    admin.incremental_alter_configs([resource], request_timeout=TIMEOUT_S)[resource].result()


def _add(admin: Any, broker: int, rule: str) -> dict:
    try:
        values = json.loads(rule)
    except json.JSONDecodeError as error:
        raise ToolError(f"--add takes a JSON object: {error}") from None
    if not isinstance(values, dict):
        raise ToolError("--add takes a JSON object")
    before = {fault["id"] for fault in _faults(admin, broker)}
    _alter(admin, broker, FAULT_INJECTION, json.dumps(values), "APPEND")
    new = [fault for fault in _faults(admin, broker) if fault["id"] not in before]
    if not new:  # a count of 1 may already be spent
        return {"broker": broker, "id": None, "rule": values}
    return {"broker": broker, "id": new[-1]["id"], "rule": new[-1]["rule"]}


def _move_leader(admin: Any, topic: str, partition: int, leader: int) -> dict:
    move = {"topic": topic, "partition": partition, "leader": leader}
    _alter(admin, _controller_id(admin), LEADER_MOVE, json.dumps(move), "SET")
    return move


def _fault_table(faults: list[dict]) -> str:
    if not faults:
        return "No faults."
    rows = [("BROKER", "ID", "FIRED", "RULE")]
    rows += [(str(f["broker"]), str(f["id"]), str(f["fired"]), json.dumps(f["rule"])) for f in faults]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(" ".join(cell.ljust(width) for cell, width in zip(row[:3], widths)) + " " + row[3] for row in rows)
