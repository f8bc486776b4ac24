"""`pykbroker groups`: Kafka 4's `kafka-groups.sh` (GroupsCommand), which lists the groups of every
type, with Kafka's flags and output.

    pykbroker groups --bootstrap-server HOST:PORT --list
        [--group-type TYPE [--protocol P] | --protocol P | --consumer | --share | --streams]

The groups come from ListGroups v5 asked of every broker (`group_protocol`); the table is Kafka's:
GROUP, TYPE and PROTOCOL columns as wide as the widest value (at least 20), each row's cells
followed by one space. `--group-type` keeps one type (and `--protocol` then narrows it),
`--protocol` alone one protocol type, `--consumer` every consumer group (type consumer, or a
classic group whose protocol type is `consumer` or empty), `--share` and `--streams` those types.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka.admin import AdminClient

from ..common.java_order import hash_map_order, string_hash
from . import group_protocol
from .client_config import ToolError, add_common_arguments, client_config, run_tool
from .group_protocol import ListedGroup
from .tool_support import QUIET, flag, usage_error

# Kafka's GroupType names: the broker sends them in lower case, the admin client prints these
GROUP_TYPES = {"classic": "Classic", "consumer": "Consumer", "share": "Share", "streams": "Streams"}
FILTER_OPTIONS = ("consumer", "group_type", "protocol", "share", "streams")


@dataclass(frozen=True)
class GroupFilter:
    """GroupsCommand's combinedFilter."""

    group_type: str | None = None  # a GroupType name ("Consumer")
    protocol: str | None = None
    consumer: bool = False
    share: bool = False
    streams: bool = False

    def passes(self, group: ListedGroup) -> bool:
        kind = group_type_name(group.type)
        if self.group_type is not None:
            return kind == self.group_type and (self.protocol is None or group.protocol_type == self.protocol)
        if self.protocol is not None:
            return group.protocol_type == self.protocol
        if self.consumer:
            return group.protocol_type in ("consumer", "") or kind == "Consumer"
        if self.share:
            return kind == "Share"
        if self.streams:
            return kind == "Streams"
        return True


def group_type_name(wire_type: str) -> str:
    return GROUP_TYPES.get(wire_type.strip().lower(), "Unknown")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker groups",
        description="This tool helps to list groups of all types (Kafka's kafka-groups.sh).",
        allow_abbrev=False,
    )
    add_common_arguments(parser)
    parser.add_argument("--list", action="store_true", help="List the groups.")
    parser.add_argument(
        "--group-type",
        metavar="TYPE",
        help="Filter the groups based on group type. Valid types are: 'classic', 'consumer', 'share' and 'streams'.",
    )
    parser.add_argument("--protocol", metavar="PROTOCOL", help="Filter the groups based on protocol type.")
    parser.add_argument(
        "--consumer",
        action="store_true",
        help="Filter the groups to show all kinds of consumer groups, including classic and simple consumer "
        "groups. This matches group type 'consumer', and group type 'classic' where the protocol type is "
        "'consumer' or empty.",
    )
    parser.add_argument("--share", action="store_true", help="Filter the groups to show share groups.")
    parser.add_argument("--streams", action="store_true", help="Filter the groups to show streams groups.")
    parser.add_argument("--timeout", type=int, default=30000, metavar="MS", help=argparse.SUPPRESS)
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> GroupFilter:
    """GroupsCommandOptions.checkArgs, with its messages."""
    if not args.list:
        usage_error(parser, "Command must include exactly one action: --list.")
    for option in ("consumer", "share", "streams"):
        if getattr(args, option):
            for other in FILTER_OPTIONS:
                if other != option and getattr(args, other):
                    usage_error(parser, f'Option "{flag(option)}" can\'t be used with option "{flag(other)}"')
    group_type = None
    if args.group_type is not None:
        group_type = GROUP_TYPES.get(args.group_type.strip().lower())
        if group_type is None:
            raise ToolError("--group-type must be a valid group type.")
    return GroupFilter(group_type, args.protocol, args.consumer, args.share, args.streams)


def format_groups(groups: Iterable[ListedGroup], group_filter: GroupFilter) -> str:
    """Kafka's printGroupDetails: the header, then one row per group that passes the filter."""
    rows = [
        [group.group_id, group_type_name(group.type), group.protocol_type]
        for group in groups
        if group_filter.passes(group)
    ]
    width = max([20] + [len(cell) for row in rows for cell in row])
    header = " ".join(f"{title:<{width}}" for title in ("GROUP", "TYPE", "PROTOCOL"))
    lines = [header] + ["".join(f"{cell:<{width}} " for cell in row) for row in rows]
    return "".join(line + "\n" for line in lines)


def in_admin_order(groups: list[ListedGroup]) -> list[ListedGroup]:
    """The order of Kafka's admin client, which gathers the listings in a HashMap by group id."""
    by_id = {group.group_id: group for group in groups}
    return [by_id[group_id] for group_id in hash_map_order(by_id, string_hash)]


def broker_addresses(config: dict, timeout_s: float) -> list[tuple[str, int]]:
    metadata = AdminClient({**QUIET, **config}).list_topics(timeout=timeout_s)
    return [(str(broker.host), int(broker.port)) for _, broker in sorted(metadata.brokers.items())]


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    group_filter = check_arguments_or_report(parser, args)
    if group_filter is None:
        return 1
    return run_tool(lambda: list_groups(args, group_filter), "groups")


def check_arguments_or_report(parser: argparse.ArgumentParser, args: argparse.Namespace) -> GroupFilter | None:
    try:
        return check_arguments(parser, args)
    except ToolError as error:  # Kafka throws from the options' parsing: the message, status 1
        print(error, file=sys.stderr)
        return None


def list_groups(args: argparse.Namespace, group_filter: GroupFilter) -> int:
    config = client_config(args.bootstrap_server, args.command_config)
    timeout_s = args.timeout / 1000
    groups = group_protocol.list_groups(config, broker_addresses(config, timeout_s), timeout_s)
    print(format_groups(in_admin_order(groups), group_filter), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
