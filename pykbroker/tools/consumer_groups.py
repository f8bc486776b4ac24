"""`pykbroker consumer-groups`: Kafka's `kafka-consumer-groups.sh` (ConsumerGroupCommand) with its
flags and its output, against any Kafka cluster.

    pykbroker consumer-groups --bootstrap-server HOST:PORT --list [--state [STATES]]
    pykbroker consumer-groups --bootstrap-server HOST:PORT --describe --group g [--members [--verbose] | --state]
    pykbroker consumer-groups --bootstrap-server HOST:PORT --reset-offsets --group g --topic t --to-earliest --execute
    pykbroker consumer-groups --bootstrap-server HOST:PORT --delete --group g
    pykbroker consumer-groups --bootstrap-server HOST:PORT --delete-offsets --group g --topic t

This module owns the command line (Kafka's checks and messages) and the text and JSON output;
`group_admin` talks to the cluster (`offset_delete` for the one request confluent-kafka lacks),
`offset_reset` computes new offsets, `common.java_order` puts rows in the order Kafka's tool prints them.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaException

from ..common.java_order import hash_map_order, string_hash, topic_partition_hash
from . import consumer_group_view, group_protocol
from .client_config import ToolError, add_common_arguments, client_config, run_tool
from .group_admin import (
    KAFKA_GROUP_STATES,
    GroupAdmin,
    GroupDescription,
    GroupListing,
    OffsetRow,
    collect_offset_rows,
    error_name,
    kafka_error_text,
    parse_topic_partitions,
)
from .offset_reset import ResetRequest, plan_reset, read_reset_plan
from .tool_support import (
    add_output_argument,
    check_describe,
    check_describe_only,
    check_invalid_together,
    flag,
    given,
    print_json,
    usage_error,
)

MISSING = "-"
ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets")
SCENARIOS = (
    "to_offset",
    "shift_by",
    "to_datetime",
    "by_duration",
    "to_earliest",
    "to_latest",
    "to_current",
    "from_file",
)
NO_EXECUTE_WARNING = (
    "WARN: No action will be performed as the --execute option is missing."
    "In a future major release, the default behavior of this command will be to prompt the user before "
    "executing the reset rather than doing a dry run. You should add the --dry-run option explicitly "
    "if you are scripting this command and want to keep the current default behavior without prompting."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker consumer-groups",
        description="This tool helps to list all consumer groups, describe a consumer group, delete "
        "consumer group info, or reset consumer group offsets (Kafka's kafka-consumer-groups.sh).",
        allow_abbrev=False,
    )
    add_common_arguments(parser)
    actions = parser.add_argument_group("actions (exactly one)")
    actions.add_argument("--list", action="store_true", help="List all consumer groups.")
    actions.add_argument("--describe", action="store_true", help="Describe a consumer group and its offset lag.")
    actions.add_argument("--delete", action="store_true", help="Delete the groups (--group g1 --group g2).")
    actions.add_argument("--reset-offsets", action="store_true", help="Reset offsets of inactive groups.")
    actions.add_argument("--delete-offsets", action="store_true", help="Delete offsets of a group (--topic).")
    parser.add_argument("--group", action="append", metavar="GROUP", help="The consumer group we wish to act on.")
    parser.add_argument("--all-groups", action="store_true", help="Apply to all consumer groups.")
    parser.add_argument(
        "--topic", action="append", metavar="TOPIC", help="A topic, or topic:0,1,2 with --reset-offsets."
    )
    parser.add_argument("--all-topics", action="store_true", help="All topics assigned to the group (--reset-offsets).")
    parser.add_argument("--timeout", type=int, default=5000, metavar="MS", help="Timeout of requests (default 5000).")
    parser.add_argument("--members", action="store_true", help="Describe the members of the group.")
    parser.add_argument("--verbose", action="store_true", help="More about the members (their assignment).")
    parser.add_argument("--offsets", action="store_true", help="Describe the group's offsets and lag (the default).")
    parser.add_argument(
        "--state", nargs="?", const="", metavar="STATES", help="The group's state; with --list a filter."
    )
    parser.add_argument(
        "--type", nargs="?", const="", metavar="TYPES", help="With --list: the groups' types (classic,consumer)."
    )
    scenarios = parser.add_argument_group("reset scenarios (one, with --reset-offsets)")
    scenarios.add_argument("--to-offset", type=int, metavar="OFFSET", help="Reset offsets to a specific offset.")
    scenarios.add_argument(
        "--shift-by", type=int, metavar="N", help="Shift the current offsets by n (may be negative)."
    )
    scenarios.add_argument(
        "--to-datetime", metavar="DATETIME", help="Reset to the offset of a datetime: YYYY-MM-DDTHH:mm:SS.sss"
    )
    scenarios.add_argument(
        "--by-duration", metavar="DURATION", help="Reset to the offset of now minus a duration: PnDTnHnMnS"
    )
    scenarios.add_argument("--to-earliest", action="store_true", help="Reset offsets to the earliest offset.")
    scenarios.add_argument("--to-latest", action="store_true", help="Reset offsets to the latest offset.")
    scenarios.add_argument("--to-current", action="store_true", help="Reset offsets to the current offset.")
    scenarios.add_argument("--from-file", metavar="CSV", help="Reset offsets to the values in a CSV file.")
    parser.add_argument("--dry-run", action="store_true", help="Only show the new offsets (the default).")
    parser.add_argument("--execute", action="store_true", help="Commit the new offsets.")
    parser.add_argument("--export", action="store_true", help="Print the new offsets as CSV.")
    add_output_argument(parser)
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Kafka's ConsumerGroupCommandOptions.checkArgs, with its messages (usage errors, status 2)."""
    chosen = [action for action in ACTIONS if getattr(args, action)]
    if len(chosen) != 1:
        usage_error(
            parser,
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets",
        )
    check_availability(parser, args)
    groups_chosen = bool(args.group) or args.all_groups
    if args.describe:
        check_describe(parser, args)
    if args.delete:
        if not groups_chosen:
            usage_error(parser, "Option [delete] takes one of these options: [all-groups], [group]")
        if args.topic:
            usage_error(parser, "The consumer does not support topic-specific offset deletion from a consumer group.")
    if args.delete_offsets and (not args.group or not args.topic):
        usage_error(parser, "Option [delete-offsets] takes the following options: [topic], [group]")
    if args.reset_offsets:
        check_reset(parser, args, groups_chosen)
    check_invalid_together(parser, args, "group", ["all_groups", "list"])
    check_invalid_together(parser, args, "topic", ["list", "describe"])


def check_availability(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Options that joptsimple makes `availableIf` another."""
    check_describe_only(parser, args, ("members", "verbose", "offsets"))
    if args.type is not None and not args.list:
        usage_error(parser, "Option(s) [type] are unavailable given other options on the command line")


def check_reset(parser: argparse.ArgumentParser, args: argparse.Namespace, groups_chosen: bool) -> None:
    if args.dry_run and args.execute:
        usage_error(parser, "Option [reset-offsets] only accepts one of [execute] and [dry-run]")
    if not args.dry_run and not args.execute:
        print(NO_EXECUTE_WARNING, file=sys.stderr)
    if not groups_chosen:
        usage_error(parser, "Option [reset-offsets] takes one of these options: [all-groups], [group]")
    used = [scenario for scenario in SCENARIOS if given(args, scenario)]
    if len(used) > 1:
        usage_error(parser, f'Option "{flag(used[0])}" can\'t be used with option "{flag(used[1])}"')
    if not used:
        scenarios = ", ".join(flag(scenario) for scenario in SCENARIOS)
        usage_error(parser, f"Option '[reset-offsets]' requires one of the following scenarios: {scenarios}")
    if not args.all_topics and not args.topic and not args.from_file:
        usage_error(parser, "One of the reset scopes should be defined: --all-topics, --topic.")


@dataclass
class Outcome:
    """What a command printed as errors: any makes the exit status 1."""

    errors: int = 0

    def error(self, message: str) -> None:
        """Kafka prints "\\nError: ..." on stdout; here it is one line on stderr."""
        print(f"Error: {message}", file=sys.stderr)
        self.errors += 1


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    return run_tool(lambda: run(args), "consumer-groups")


def run(args: argparse.Namespace) -> int:
    try:
        return run_action(args)
    except KafkaException as error:
        raise ToolError(
            f"Error: Executing consumer group command failed due to {error_name(error)}: {kafka_error_text(error)}"
        ) from None


def run_action(args: argparse.Namespace) -> int:
    config = client_config(args.bootstrap_server, args.command_config)
    admin = GroupAdmin(config, args.timeout / 1000)
    outcome = Outcome()
    if args.list:
        list_groups(admin, args)
    elif args.describe:
        describe_groups(admin, args, outcome)
    elif args.delete:
        delete_groups(admin, args, outcome)
    elif args.reset_offsets:
        reset_offsets(admin, args, outcome)
    else:
        delete_offsets(admin, args, outcome)
    return 1 if outcome.errors else 0


def selected_groups(admin: GroupAdmin, args: argparse.Namespace) -> list[str]:
    if args.all_groups:
        return [listing.group_id for listing in admin.list_groups()]
    return list(dict.fromkeys(args.group))


# --list


def parse_states(text: str) -> set[str]:
    """Kafka's state names, case-insensitive ("stable,empty")."""
    by_upper = {name.upper(): name for name in KAFKA_GROUP_STATES}
    states = {by_upper.get(part.strip().upper()) for part in text.split(",")}
    if None in states:
        raise ToolError(f"Invalid state list '{text}'. Valid states are: {', '.join(KAFKA_GROUP_STATES)}")
    return {state for state in states if state}


def parse_types(text: str) -> set[str]:
    by_lower = {"classic": "Classic", "consumer": "Consumer"}
    types = {by_lower.get(part.strip().lower()) for part in text.split(",")}
    if None in types:
        raise ToolError(f"Invalid types list '{text}'. Valid types are: classic, consumer")
    return {kind for kind in types if kind}


def with_kafka_4_states(admin: GroupAdmin, listings: list[GroupListing]) -> list[GroupListing]:
    """confluent-kafka knows no `Assigning` or `Reconciling` (a consumer-protocol group's states):
    where it says `Unknown`, the state ListGroups v5 answers (best effort: not over SASL)."""
    if not any(listing.type == "Consumer" and listing.state == "Unknown" for listing in listings):
        return listings
    try:
        answered = group_protocol.list_groups(admin.config, admin.broker_addresses(), admin.timeout_s)
    except ToolError:
        return listings
    states = {group.group_id: consumer_group_view.state_name(group.state) for group in answered}
    for listing in listings:
        if listing.state == "Unknown":
            listing.state = states.get(listing.group_id, listing.state)
    return listings


def list_groups(admin: GroupAdmin, args: argparse.Namespace) -> None:
    listings = admin.list_groups()
    if args.state is not None or args.output == "json":
        listings = with_kafka_4_states(admin, listings)
    include_state, include_type = args.state is not None, args.type is not None
    if include_state and args.state:
        states = parse_states(args.state)
        listings = [listing for listing in listings if listing.state in states]
    if include_type and args.type:
        types = parse_types(args.type)
        listings = [listing for listing in listings if listing.type in types]
    if args.output == "json":
        print_json({"groups": [{"group": g.group_id, "state": g.state, "type": g.type} for g in listings]})
    elif include_state or include_type:
        print(format_group_listing(listings, include_type, include_state), end="")
    else:
        for listing in listings:
            print(listing.group_id)


def format_group_listing(listings: list, include_type: bool, include_state: bool) -> str:
    width = max([15] + [len(listing.group_id) for listing in listings]) + 10
    columns = [("GROUP", lambda g: g.group_id, width)]
    if include_type:
        columns.append(("TYPE", lambda g: g.type, 20))
    if include_state:
        columns.append(("STATE", lambda g: g.state, 20))
    lines = [" ".join(f"{title:<{size}}" for title, _, size in columns)]
    for listing in listings:
        lines.append(" ".join(f"{value(listing):<{size}}" for _, value, size in columns))
    return "".join(line + "\n" for line in lines)


# --describe


def describe_groups(admin: GroupAdmin, args: argparse.Namespace, outcome: Outcome) -> None:
    descriptions = admin.describe_groups(selected_groups(admin, args))
    kip848 = consumer_protocol_groups(admin, descriptions)
    if args.members:
        documents = [describe_members(kip848, description, args, outcome) for description in descriptions]
    elif args.state is not None:
        documents = [describe_state(kip848, description, args, outcome) for description in descriptions]
    else:
        documents = [describe_offsets(admin, description, args, outcome) for description in descriptions]
    if args.output == "json":
        print_json({"groups": [document for document in documents if document is not None]})


def should_print_group(group: str, state: str, rows: int, outcome: Outcome) -> bool:
    """Kafka's shouldPrintMemberState: what it says about the group's state, and whether a table follows."""
    if state == "Dead":
        outcome.error(f"Consumer group '{group}' does not exist.")
        return False
    if state == "Empty":
        print(f"\nConsumer group '{group}' has no active members.", file=sys.stderr)
    elif state in ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"):
        print(f"\nWarning: Consumer group '{group}' is rebalancing.", file=sys.stderr)
    return rows > 0


def group_is_dead(description: GroupDescription, outcome: Outcome) -> bool:
    """For --output json: a Dead group is an error, and no document follows."""
    if description.state != "Dead":
        return False
    outcome.error(f"Consumer group '{description.group_id}' does not exist.")
    return True


def describe_offsets(
    admin: GroupAdmin, description: GroupDescription, args: argparse.Namespace, outcome: Outcome
) -> dict | None:
    rows = collect_offset_rows(admin, description)
    if args.output == "json":
        if group_is_dead(description, outcome):
            return None
        return {"group": description.group_id, "state": description.state, "offsets": [row.as_json() for row in rows]}
    if should_print_group(description.group_id, description.state, len(rows), outcome):
        print(format_offsets(rows), end="", flush=True)
    return None


def format_offsets(rows: list[OffsetRow]) -> str:
    group_width = max([15] + [len(row.group) for row in rows])
    topic_width = max([15] + [len(row.topic or MISSING) for row in rows])
    consumer_width = max([15] + [len(row.consumer_id or MISSING) for row in rows])
    host_width = max([15] + [len(row.host or MISSING) for row in rows])

    def line(*cells: Any) -> str:
        text = [MISSING if cell is None else str(cell) for cell in cells]
        return (
            f"{text[0]:<{group_width}} {text[1]:<{topic_width}} {text[2]:<10} {text[3]:<15} {text[4]:<15} "
            f"{text[5]:<15} {text[6]:<{consumer_width}} {text[7]:<{host_width}} {text[8]}"
        )

    lines = [
        line(
            "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"
        )
    ]
    for row in rows:
        lines.append(
            line(
                row.group,
                row.topic,
                row.partition,
                row.offset,
                row.log_end_offset,
                row.lag,
                row.consumer_id,
                row.host,
                row.client_id,
            )
        )
    # Kafka starts each line with its line break: a blank line first, none after the last row
    return "".join("\n" + line for line in lines)


ConsumerProtocolGroups = dict[str, group_protocol.DescribedConsumerGroup]


def consumer_protocol_groups(admin: GroupAdmin, descriptions: list[GroupDescription]) -> ConsumerProtocolGroups:
    """ConsumerGroupDescribe of the consumer-protocol groups: what confluent-kafka leaves out
    (epochs, target assignments, Kafka 4's state names, which replace the description's). Where
    it cannot be asked (a SASL listener), the groups are described as confluent-kafka sees them."""
    described: ConsumerProtocolGroups = {}
    for description in descriptions:
        if description.type != "Consumer":
            continue
        try:
            group = group_protocol.describe_consumer_group(admin.config, description.group_id, admin.timeout_s)
        except ToolError:
            continue
        if group.error is None:
            described[description.group_id] = group
            description.state = consumer_group_view.state_name(group.state)
    return described


def describe_members(
    kip848: ConsumerProtocolGroups, description: GroupDescription, args: argparse.Namespace, outcome: Outcome
) -> dict | None:
    described = kip848.get(description.group_id)
    if described is not None and args.output != "json":
        state = consumer_group_view.state_name(described.state)
        should_print_group(description.group_id, state, len(described.members), outcome)
        print(consumer_group_view.format_consumer_members(described, args.verbose), end="")
        return None
    members = description.members
    if args.output == "json":
        if group_is_dead(description, outcome):
            return None
        return {
            "group": description.group_id,
            "state": description.state,
            "members": [member.as_json() for member in members],
        }
    if (
        should_print_group(description.group_id, description.state, len(members), outcome)
        or description.state != "Dead"
    ):
        print(format_members(description.group_id, members, args.verbose), end="")
    return None


def format_members(group: str, members: list, verbose: bool) -> str:
    with_instance_id = any(member.group_instance_id for member in members)
    widths = {
        "group": max([15] + [len(group) for _ in members]),  # Kafka measures the members' rows only
        "consumer": max([15] + [len(member.consumer_id) for member in members]),
        "instance": max([17] + [len(member.group_instance_id or "") for member in members]),
        "host": max([15] + [len(member.host) for member in members]),
        "client": max([15] + [len(member.client_id) for member in members]),
    }

    def line(group_cell: str, consumer: str, instance: str, host: str, client: str, partitions: Any) -> str:
        text = f"{group_cell:<{widths['group']}} {consumer:<{widths['consumer']}} "
        if with_instance_id:
            text += f"{instance:<{widths['instance']}} "
        return text + f"{host:<{widths['host']}} {client:<{widths['client']}} {str(partitions):<15} "

    lines = [
        line("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS")
        + ("ASSIGNMENT" if verbose else "")
    ]
    for member in members:
        text = line(
            group,
            member.consumer_id,
            member.group_instance_id or "",
            member.host,
            member.client_id,
            len(member.assignment),
        )
        lines.append(text + (member.assignment_text() if verbose else ""))
    return "\n" + "\n".join(lines) + "\n"


def describe_state(
    kip848: ConsumerProtocolGroups, description: GroupDescription, args: argparse.Namespace, outcome: Outcome
) -> dict | None:
    described = kip848.get(description.group_id)
    if args.output != "json" and (args.verbose or described is not None):
        print_state_as_kafka_4(described, description, args.verbose, outcome)
        return None
    coordinator = description.coordinator
    if args.output == "json":
        if group_is_dead(description, outcome):
            return None
        return {
            "group": description.group_id,
            "coordinator": None
            if coordinator is None
            else {"id": coordinator.id, "host": coordinator.host, "port": coordinator.port},
            "assignment_strategy": description.assignment_strategy,
            "state": description.state,
            "members": len(description.members),
        }
    if should_print_group(description.group_id, description.state, 1, outcome):
        print(format_state(description), end="")
    return None


def print_state_as_kafka_4(
    described: group_protocol.DescribedConsumerGroup | None,
    description: GroupDescription,
    verbose: bool,
    outcome: Outcome,
) -> None:
    """Kafka 4's `--state` table: a consumer-protocol group's own state and epochs (from
    ConsumerGroupDescribe), a classic group's epochs as `-`."""
    state, strategy, members = description.state, description.assignment_strategy, len(description.members)
    epochs = None
    if described is not None:
        state, strategy, members = (
            consumer_group_view.state_name(described.state),
            described.assignor_name,
            len(described.members),
        )
        epochs = (described.group_epoch, described.assignment_epoch)
    if not should_print_group(description.group_id, state, 1, outcome):
        return
    coordinator = description.coordinator
    node = MISSING if coordinator is None else f"{coordinator.host}:{coordinator.port}  ({coordinator.id})"
    print(
        consumer_group_view.format_state(description.group_id, node, strategy, state, members, epochs, verbose), end=""
    )


def format_state(description: GroupDescription) -> str:
    coordinator = description.coordinator
    node = MISSING if coordinator is None else f"{coordinator.host}:{coordinator.port}  ({coordinator.id})"
    width = max(25, len(node))

    def line(*cells: Any) -> str:
        return f"{cells[0]:<{width}} {cells[1]:<25} {cells[2]:<20} {cells[3]:<15} {cells[4]}"

    header = line("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
    row = line(description.group_id, node, description.assignment_strategy, description.state, len(description.members))
    return f"\n{header}\n{row}\n"


# --delete


def delete_groups(admin: GroupAdmin, args: argparse.Namespace, outcome: Outcome) -> None:
    results = admin.delete_groups(selected_groups(admin, args))
    deleted = [group for group, error in results.items() if error is None]
    failed = {group: error for group, error in results.items() if error is not None}
    if args.output == "json":
        print_json({"deleted": deleted, "failed": failed})
    elif not failed:
        print(f"Deletion of requested consumer groups ('{', '.join(deleted)}') was successful.")
    else:
        print("Error: Deletion of some consumer groups failed:", file=sys.stderr)
        for group, error in failed.items():
            print(f"* Group '{group}' could not be deleted due to: {error}")
        if deleted:
            print(f"\nThese consumer groups were deleted successfully: '{', '.join(deleted)}'")
    outcome.errors += len(failed)


# --reset-offsets


def reset_offsets(admin: GroupAdmin, args: argparse.Namespace, outcome: Outcome) -> None:
    groups = selected_groups(admin, args)
    file_plan = read_reset_plan(args.from_file, groups) if args.from_file else None
    request = ResetRequest.from_args(args)
    plans: dict[str, dict[tuple[str, int], int]] = {}
    for description in admin.describe_groups(groups):
        group = description.group_id
        if description.state not in ("Empty", "Dead"):
            outcome.error(
                f"Assignments can only be reset if the group '{group}' is inactive, "
                f"but the current state is {description.state}."
            )
            continue
        partitions = partitions_to_reset(admin, args, group, file_plan)
        plan = plan_reset(admin, group, partitions, request, file_plan)
        if args.execute:
            admin.alter_offsets(group, plan)
        plans[group] = plan
    print_reset_plans(plans, args)


def partitions_to_reset(
    admin: GroupAdmin, args: argparse.Namespace, group: str, file_plan: dict[str, dict[tuple[str, int], int]] | None
) -> list[tuple[str, int]]:
    if args.all_topics:
        return sorted(admin.committed_offsets(group))
    if args.topic:
        return parse_topic_partitions(admin, args.topic)
    return sorted((file_plan or {}).get(group, {}))


def print_reset_plans(plans: dict[str, dict[tuple[str, int], int]], args: argparse.Namespace) -> None:
    if args.output == "json":
        groups = [
            {
                "group": group,
                "offsets": [{"topic": t, "partition": p, "new_offset": o} for (t, p), o in sorted(plan.items())],
            }
            for group, plan in plans.items()
        ]
        print_json({"executed": bool(args.execute), "groups": groups})
    elif args.export:
        print(export_csv(plans, single_group=len(args.group or []) == 1))
    elif plans:
        print(format_reset_plans(plans), end="")


def format_reset_plans(plans: dict[str, dict[tuple[str, int], int]]) -> str:
    def line(*cells: Any) -> str:
        return f"{cells[0]!s:<30} {cells[1]!s:<30} {cells[2]!s:<10} {cells[3]!s:<15}"

    lines = [line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")]
    for group in hash_map_order(plans, string_hash):  # Kafka's rows come from HashMaps
        plan = plans[group]
        lines += [line(group, t, p, plan[(t, p)]) for t, p in hash_map_order(sorted(plan), topic_partition_hash)]
    return "\n" + "\n".join(lines) + "\n"


def export_csv(plans: dict[str, dict[tuple[str, int], int]], single_group: bool) -> str:
    """Kafka's --export: `topic,partition,offset` for one group, `group,topic,partition,offset` otherwise."""
    lines = []
    for group in hash_map_order(plans, string_hash):  # the rows of Kafka's HashMaps, as the table's
        plan = plans[group]
        for topic, partition in hash_map_order(sorted(plan), topic_partition_hash):
            prefix = "" if single_group else f"{group},"
            lines.append(f"{prefix}{topic},{partition},{plan[(topic, partition)]}\n")
    return "".join(lines)


# --delete-offsets


def delete_offsets(admin: GroupAdmin, args: argparse.Namespace, outcome: Outcome) -> None:
    group = args.group[0]
    top_error, results = admin.delete_offsets(group, args.topic)
    if args.output == "json":
        partitions = [{"topic": t, "partition": p, "error": error} for (t, p), error in sorted(results.items())]
        print_json({"group": group, "error": top_error, "partitions": partitions})
    else:
        report_delete_offsets(group, args.topic, top_error, results, outcome)
    if top_error is not None and args.output == "json":
        outcome.errors += 1


def report_delete_offsets(
    group: str, topics: list[str], top_error: str | None, results: dict[tuple[str, int], str | None], outcome: Outcome
) -> None:
    messages = {
        "INVALID_GROUP_ID": f"'{group}' is not valid.",
        "GROUP_ID_NOT_FOUND": f"'{group}' does not exist.",
        "GROUP_AUTHORIZATION_FAILED": f"Access to '{group}' is not authorized.",
        "NON_EMPTY_GROUP": f"Deleting offsets of a consumer group '{group}' is forbidden if the group is not empty.",
        "GROUP_SUBSCRIBED_TO_TOPIC": "Encounter some partition level error, see the follow-up details:",
        "TOPIC_AUTHORIZATION_FAILED": "Encounter some partition level error, see the follow-up details:",
        "UNKNOWN_TOPIC_OR_PARTITION": "Encounter some partition level error, see the follow-up details:",
    }
    if top_error is None:
        print(f"Request succeed for deleting offsets with topic {', '.join(topics)} group {group}")
        outcome.errors += any(error is not None for error in results.values())  # an unknown topic's row
    else:
        outcome.error(messages.get(top_error, f"Encounter some unknown error: {top_error}"))

    def line(*cells: Any) -> str:
        return f"{cells[0]!s:<30} {cells[1]!s:<15} {cells[2]!s:<15}"

    lines = [line("TOPIC", "PARTITION", "STATUS")]
    for (topic, partition), error in sorted(results.items(), key=lambda item: item[0][0] + str(item[0][1])):
        status = "Successful" if error is None else f"Error: :{error}"
        lines.append(line(topic, partition if partition >= 0 else "Not Provided", status))
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
