"""`pykbroker share-groups`: Kafka 4's `kafka-share-groups.sh` (ShareGroupCommand) with its flags,
its checks and its output, against any cluster that serves share groups (KIP-932).

    pykbroker share-groups --bootstrap-server HOST:PORT --list [--state [STATES]]
    pykbroker share-groups --bootstrap-server HOST:PORT --describe --group g [--members | --state] [--verbose]
    pykbroker share-groups --bootstrap-server HOST:PORT --reset-offsets --group g --topic t --to-earliest --execute
    pykbroker share-groups --bootstrap-server HOST:PORT --delete --group g
    pykbroker share-groups --bootstrap-server HOST:PORT --delete-offsets --group g --topic t

This module owns the command line and the text Kafka's tool prints; `share_group_protocol` speaks
the share group requests (ShareGroupDescribe, Describe/Alter/DeleteShareGroupOffsets),
`group_protocol` ListGroups v5 (type filter "share"), `group_admin` (confluent-kafka) the topic
metadata, ListOffsets and DeleteGroups, `offset_reset` the new offsets of a reset.

A share partition's LAG is the records after its start offset: the partition's log end (the high
watermark, ListOffsets latest) minus the share-partition start offset; `-` while the start offset
is not yet chosen.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from confluent_kafka import KafkaException

from ..common.java_order import hash_map_order, string_hash, topic_partition_hash
from . import group_protocol
from .client_config import ToolError, add_common_arguments, client_config, run_tool
from .group_admin import GroupAdmin, error_name, java_exception, kafka_error_text, topic_partitions_arg
from .offset_reset import ResetRequest, plan_reset, read_reset_plan, required
from .share_group_protocol import (
    KafkaErrorInfo,
    ShareGroupClient,
    ShareGroupDescription,
    SharePartitionOffset,
)
from .tool_support import (
    Partition,
    assignment_string,
    check_describe,
    check_describe_only,
    check_invalid_together,
    flag,
    given,
    usage_error,
)

MISSING = "-"
ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets")
RESET_SCOPES = ("all_topics", "from_file", "topic")
RESET_SCENARIOS = ("from_file", "to_current", "to_datetime", "to_earliest", "to_latest", "to_offset")
# GroupState.groupStatesForType(SHARE)
SHARE_GROUP_STATES = ("Empty", "Stable", "Dead")
FAILED = "Executing share group command failed due to "

T = TypeVar("T")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pykbroker share-groups",
        description="This tool helps to list, describe, delete and manage the offsets of share groups "
        "(Kafka's kafka-share-groups.sh).",
        allow_abbrev=False,
    )
    add_common_arguments(parser)
    actions = parser.add_argument_group("actions (exactly one)")
    actions.add_argument("--list", action="store_true", help="List all share groups.")
    actions.add_argument(
        "--describe", action="store_true", help="Describe share group, members and offset information."
    )
    actions.add_argument("--delete", action="store_true", help="Delete share group.")
    actions.add_argument(
        "--reset-offsets",
        action="store_true",
        help="Reset offsets of share group. Supports one share group at a time, and instances must be inactive.",
    )
    actions.add_argument(
        "--delete-offsets",
        action="store_true",
        help="Delete offsets of share group. Supports one share group at a time, and multiple topics.",
    )
    parser.add_argument("--group", action="append", metavar="GROUP", help="The share group id.")
    parser.add_argument("--all-groups", action="store_true", help="Apply to all share groups.")
    parser.add_argument(
        "--topic",
        action="append",
        metavar="TOPIC",
        help="The topic whose offset information should be deleted or reset (topic:0,1,2 for some partitions).",
    )
    parser.add_argument("--all-topics", action="store_true", help="Apply to all topics (--reset-offsets).")
    parser.add_argument("--timeout", type=int, default=30000, metavar="MS", help="Timeout of requests (default 30000).")
    parser.add_argument("--members", action="store_true", help="Describe members of the group (--describe).")
    parser.add_argument("--offsets", action="store_true", help="The group's partitions and offsets (the default).")
    parser.add_argument(
        "--state", nargs="?", const="", metavar="STATES", help="The group's state; with --list a filter."
    )
    parser.add_argument("--verbose", action="store_true", help="Provide additional information (--describe).")
    scenarios = parser.add_argument_group("reset specifications (one, with --reset-offsets)")
    scenarios.add_argument("--to-offset", type=int, metavar="OFFSET", help="Reset offsets to a specific offset.")
    scenarios.add_argument(
        "--to-datetime", metavar="DATETIME", help="Reset offsets to offset from datetime: YYYY-MM-DDThh:mm:ss.sss"
    )
    scenarios.add_argument("--to-earliest", action="store_true", help="Reset offsets to earliest offset.")
    scenarios.add_argument("--to-latest", action="store_true", help="Reset offsets to latest offset.")
    scenarios.add_argument("--to-current", action="store_true", help="Reset offsets to current offset.")
    scenarios.add_argument("--from-file", metavar="CSV", help="Reset offsets to values defined in CSV file.")
    parser.add_argument("--dry-run", action="store_true", help="Output offset reset information without executing.")
    parser.add_argument("--execute", action="store_true", help="Execute the offset reset operation.")
    parser.add_argument("--export", action="store_true", help="Generate offset reset information in CSV format.")
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Kafka's ShareGroupCommandOptions.checkArgs, then the one-action check, with their messages."""
    check_describe_only(parser, args, ("members", "offsets", "verbose"))
    if args.describe:
        check_describe(parser, args)
    if args.delete:
        check_delete(parser, args)
    if args.delete_offsets and not (args.group and args.topic):
        usage_error(parser, "Option [delete-offsets] takes the following options: [group], [topic]")
    if args.reset_offsets:
        check_reset(parser, args)
    check_invalid_together(parser, args, "group", ["all_groups", "list"])
    check_invalid_together(parser, args, "topic", ["delete", "describe", "list"])
    if sum(bool(getattr(args, action)) for action in ACTIONS) != 1:
        usage_error(
            parser,
            "Command must include exactly one action: --list, --describe, --delete, --reset-offsets, --delete-offsets.",
        )


def check_delete(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if not args.group and not args.all_groups:
        usage_error(parser, "Option [delete] takes the options [group] or [all-groups].")
    if args.group and args.all_groups:
        usage_error(parser, "Option [delete] takes either [group] or [all-groups], not both.")
    if args.topic or args.all_topics:
        usage_error(parser, "Option [delete] does not take the options [topic] or [all-topics].")


def check_reset(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.dry_run and args.execute:
        usage_error(parser, "Option [reset-offsets] only accepts one of [execute] and [dry-run]")
    if not args.dry_run and not args.execute:
        usage_error(parser, "Option [reset-offsets] takes the option: [execute] or [dry-run]")
    if not args.group:
        usage_error(parser, "Option [reset-offsets] takes the option: [group]")
    if not any(given(args, scope) for scope in RESET_SCOPES):
        usage_error(parser, "Option [reset-offsets] takes one of these options: [all-topics], [from-file], [topic]")
    for scope in ("topic", "all_topics", "from_file"):
        check_invalid_together(parser, args, scope, [s for s in RESET_SCOPES if s != scope])
    if not any(given(args, scenario) for scenario in RESET_SCENARIOS):
        scenarios = ", ".join(flag(s) for s in RESET_SCENARIOS)
        usage_error(parser, f"Option [reset-offsets] takes one of these options: {scenarios}")
    for scenario in ("to_offset", "to_datetime", "to_earliest", "to_latest", "to_current", "from_file"):
        check_invalid_together(parser, args, scenario, [s for s in RESET_SCENARIOS if s != scenario])


@dataclass
class Outcome:
    """Whether a command reported a failure: any makes the exit status 1."""

    errors: int = 0


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    return run_tool(lambda: run(args), "share-groups")


def run(args: argparse.Namespace) -> int:
    try:
        return run_action(args)
    except KafkaException as error:
        raise ToolError(f"Error: {FAILED}{error_name(error)}: {kafka_error_text(error)}") from None


@dataclass
class Cluster:
    """What the tool talks to: the share group requests and confluent-kafka's admin client."""

    share: ShareGroupClient
    admin: GroupAdmin

    def share_groups(self) -> list[group_protocol.ListedGroup]:
        """Every share group, in the order of Kafka's admin client (a HashMap by group id)."""
        listed = group_protocol.list_groups(
            self.admin.config, self.admin.broker_addresses(), self.admin.timeout_s, ["share"]
        )
        by_id = {group.group_id: group for group in listed if group.type.lower() == "share"}
        return [by_id[group_id] for group_id in hash_map_order(by_id, string_hash)]


def run_action(args: argparse.Namespace) -> int:
    config = client_config(args.bootstrap_server, args.command_config)
    timeout_s = args.timeout / 1000
    cluster = Cluster(ShareGroupClient(config, timeout_s), GroupAdmin(config, timeout_s))
    outcome = Outcome()
    if args.list:
        list_groups(cluster, args)
    elif args.describe:
        describe_groups(cluster, args, outcome)
    elif args.delete:
        delete_groups(cluster, args, outcome)
    elif args.reset_offsets:
        reset_offsets(cluster, args, outcome)
    else:
        delete_offsets(cluster, args, outcome)
    return 1 if outcome.errors else 0


def failure(error: KafkaErrorInfo) -> ToolError:
    """An error that ends the command, as Kafka's tool reports an exception of its admin client."""
    return ToolError(f"Error: {FAILED}{error.java_text()}")


# --list


def state_name(text: str) -> str:
    """GroupState.parse: Kafka's name of a state, any case; `Unknown` for another."""
    by_upper = {name.upper(): name for name in ("Unknown", "PreparingRebalance", "CompletingRebalance", "Stable")}
    by_upper.update({name.upper(): name for name in ("Dead", "Empty", "Assigning", "Reconciling", "NotReady")})
    return by_upper.get(text.strip().upper(), "Unknown")


def parse_states(text: str) -> set[str]:
    states = {state_name(part) for part in text.split(",")}
    if not states <= set(SHARE_GROUP_STATES):
        raise ToolError(f"Invalid state list '{text}'. Valid states are: {', '.join(SHARE_GROUP_STATES)}")
    return states


def list_groups(cluster: Cluster, args: argparse.Namespace) -> None:
    states = parse_states(args.state) if args.state else set()
    groups = cluster.share_groups()
    if args.state is None:
        for group in groups:
            print(group.group_id)
        return
    listed = [(g.group_id, state_name(g.state)) for g in groups if not states or state_name(g.state) in states]
    print(format_group_states(listed), end="")


def format_group_states(groups: list[tuple[str, str]]) -> str:
    """printGroupInfo: GROUP as wide as the widest id (at least 15), then STATE."""
    width = max([15] + [len(group_id) for group_id, _ in groups])
    return "".join(f"{group_id:<{width}} {state}\n" for group_id, state in [("GROUP", "STATE"), *groups])


# --describe


def describe_groups(cluster: Cluster, args: argparse.Namespace, outcome: Outcome) -> None:
    group_ids = [g.group_id for g in cluster.share_groups()] if args.all_groups else list(dict.fromkeys(args.group))
    descriptions = [describe(cluster.share, group_id) for group_id in sorted(set(group_ids))]
    for description in descriptions:
        if args.members:
            print_members(description, args.verbose, outcome)
        elif args.state is not None:
            print_state(description, args.verbose, outcome)
        else:
            print(
                format_offsets(description.group_id, offset_rows(cluster, description.group_id), args.verbose), end=""
            )


def describe(share: ShareGroupClient, group_id: str) -> ShareGroupDescription:
    description = share.describe_group(group_id)
    if description.error is not None:
        raise failure(description.error)
    return description


@dataclass(frozen=True)
class OffsetRow:
    """One row of `--describe --offsets`; None prints as `-`."""

    topic: str
    partition: int
    start_offset: int | None
    leader_epoch: int | None
    lag: int | None


def offset_rows(cluster: Cluster, group_id: str) -> list[OffsetRow]:
    """The group's share partitions with their start offsets and lag, sorted by topic and partition."""
    offsets = cluster.share.describe_offsets(group_id)
    if offsets.error is not None:
        raise failure(offsets.error)
    known = [p for p in offsets.partitions if p.error is None]  # the admin client skips partitions in error
    started = [p for p in known if p.start_offset >= 0]
    ends = cluster.admin.log_end_offsets((p.topic, p.partition) for p in started)
    return sorted((row_of(p, ends.get((p.topic, p.partition))) for p in known), key=lambda r: (r.topic, r.partition))


def row_of(offset: SharePartitionOffset, log_end: int | None) -> OffsetRow:
    if offset.start_offset < 0:
        return OffsetRow(offset.topic, offset.partition, None, None, None)
    lag = None if log_end is None else max(log_end - offset.start_offset, 0)
    return OffsetRow(offset.topic, offset.partition, offset.start_offset, offset.leader_epoch, lag)


def text(value: object) -> str:
    return MISSING if value is None else str(value)


def format_offsets(group_id: str, rows: list[OffsetRow], verbose: bool) -> str:
    """printOffsets: GROUP, TOPIC, PARTITION, [LEADER-EPOCH,] START-OFFSET, LAG; each line opens
    with a newline and one closes the table."""
    if not rows:
        return f"\nShare group '{group_id}' has no offset information.\n"
    group_width = max(15, len(group_id))
    topic_width = max([15] + [len(row.topic) for row in rows])

    def line(*cells: object) -> str:
        texts = [str(cell) for cell in cells]
        head = f"\n{texts[0]:<{group_width}} {texts[1]:<{topic_width}} {texts[2]:<10} "
        if verbose:
            return head + f"{texts[3]:<13} {texts[4]:<13} {texts[5]}"
        return head + f"{texts[3]:<13} {texts[4]}"

    if verbose:
        lines = [line("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET", "LAG")]
        lines += [
            line(group_id, r.topic, r.partition, text(r.leader_epoch), text(r.start_offset), text(r.lag)) for r in rows
        ]
    else:
        lines = [line("GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG")]
        lines += [line(group_id, r.topic, r.partition, text(r.start_offset), text(r.lag)) for r in rows]
    return "".join(lines) + "\n"


def report_empty_or_dead(group_id: str, state: str, rows: int, outcome: Outcome) -> bool:
    """maybePrintEmptyGroupState: whether the group's table is printed."""
    if state == "Dead":
        print(f"\nError: Share group '{group_id}' does not exist.")
        outcome.errors += 1
    elif state == "Empty":
        print(f"\nShare group '{group_id}' has no active members.", file=sys.stderr)
    return state != "Dead" and rows > 0


def print_members(description: ShareGroupDescription, verbose: bool, outcome: Outcome) -> None:
    state = state_name(description.state)
    if report_empty_or_dead(description.group_id, state, len(description.members), outcome):
        print(format_members(description, verbose), end="")


def format_members(description: ShareGroupDescription, verbose: bool) -> str:
    """printMembers: GROUP, CONSUMER-ID, HOST, CLIENT-ID, #PARTITIONS, [MEMBER-EPOCH,] ASSIGNMENT,
    members sorted by id."""
    group_id = description.group_id
    members = sorted(description.members, key=lambda m: m.member_id)
    widths = (
        max(15, len(group_id)),
        max([15] + [len(m.member_id) for m in members]),
        max([15] + [len(m.client_host) for m in members]),
        max([15] + [len(m.client_id) for m in members]),
    )

    def line(*cells: object) -> str:
        texts = [str(cell) for cell in cells]
        head = "\n" + "".join(f"{texts[i]:<{widths[i]}} " for i in range(4)) + f"{texts[4]:<12} "
        if verbose:
            return head + f"{texts[5]:<13} {texts[6]}"
        return head + texts[5]

    if verbose:
        lines = [line("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT")]
    else:
        lines = [line("GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT")]
    for m in members:
        identity = (group_id, m.member_id, m.client_host, m.client_id, len(m.assignment))
        epoch = (m.member_epoch,) if verbose else ()
        lines.append(line(*identity, *epoch, assignment_string(m.assignment, "")))
    return "".join(lines) + "\n"


def print_state(description: ShareGroupDescription, verbose: bool, outcome: Outcome) -> None:
    report_empty_or_dead(description.group_id, state_name(description.state), 1, outcome)
    print(format_state(description, verbose), end="")


def format_state(description: ShareGroupDescription, verbose: bool) -> str:
    """printStates: GROUP, COORDINATOR (ID), STATE, [GROUP-EPOCH, ASSIGNMENT-EPOCH,] #MEMBERS."""
    node_id, host, port = description.coordinator or (-1, "", -1)
    coordinator = f"{host}:{port}  ({node_id})"
    group_width = max(15, len(description.group_id))
    coordinator_width = max(25, len(coordinator))

    def line(*cells: object) -> str:
        texts = [str(cell) for cell in cells]
        head = f"\n{texts[0]:<{group_width}} {texts[1]:<{coordinator_width}} {texts[2]:<15} "
        if verbose:
            return head + f"{texts[3]:<12} {texts[4]:<17} {texts[5]}"
        return head + texts[3]

    state = state_name(description.state)
    members = len(description.members)
    if verbose:
        header = line("GROUP", "COORDINATOR (ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS")
        row = line(
            description.group_id, coordinator, state, description.group_epoch, description.assignment_epoch, members
        )
    else:
        header = line("GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS")
        row = line(description.group_id, coordinator, state, members)
    return header + row + "\n"


# --delete


def delete_groups(cluster: Cluster, args: argparse.Namespace, outcome: Outcome) -> None:
    """deleteShareGroups: groups that are no share group, or not empty, fail before any request."""
    listed = {group.group_id: group for group in cluster.share_groups()}
    group_ids = list(listed) if args.all_groups else list(dict.fromkeys(args.group))
    failed: dict[str, str] = {}
    for group_id in group_ids:
        group = listed.get(group_id)
        if group is None:
            failed[group_id] = (
                f"org.apache.kafka.common.errors.GroupIdNotFoundException: Group '{group_id}' is not a share group."
            )
        elif state_name(group.state) == "Dead":
            failed[group_id] = f"java.lang.IllegalStateException: Share group '{group_id}' group state is DEAD."
        elif state_name(group.state) != "Empty":
            failed[group_id] = (
                f"org.apache.kafka.common.errors.GroupNotEmptyException: Share group '{group_id}' is not EMPTY."
            )
    deleted = []
    for group_id, error in cluster_delete(cluster.admin, [g for g in group_ids if g not in failed]).items():
        if error is None:
            deleted.append(group_id)
        else:
            failed[group_id] = error
    print(format_deletion(deleted, failed), end="")
    outcome.errors += len(failed)


def cluster_delete(admin: GroupAdmin, group_ids: list[str]) -> dict[str, str | None]:
    """DeleteGroups through the admin client: each group's error as Kafka's exception prints."""
    if not group_ids:
        return {}
    futures = admin.client.delete_consumer_groups(group_ids, request_timeout=admin.timeout_s)
    results: dict[str, str | None] = {}
    for group_id, future in futures.items():
        try:
            future.result(timeout=admin.timeout_s + 5)
            results[group_id] = None
        except KafkaException as error:
            results[group_id] = java_exception(error)
    return results


def format_deletion(deleted: list[str], failed: dict[str, str]) -> str:
    """Kafka's messages; the groups in the order of its HashMaps."""

    def quoted(groups: Iterable[str]) -> str:
        return ", ".join(f"'{group}'" for group in hash_map_order(list(groups), string_hash))

    if not failed:
        return f"Deletion of requested share groups ({quoted(deleted)}) was successful.\n"
    lines = ["", "Error: Deletion of some share groups failed:"]
    lines += [
        f"* Group '{group}' could not be deleted due to: {failed[group]}"
        for group in hash_map_order(failed, string_hash)
    ]
    if deleted:
        lines += ["", f"These share groups were deleted successfully: {quoted(deleted)}"]
    return "\n".join(lines) + "\n"


# --reset-offsets


def reset_offsets(cluster: Cluster, args: argparse.Namespace, outcome: Outcome) -> None:
    group_id = args.group[0]
    description = cluster.share.describe_group(group_id)
    if description.error is not None and description.error.name != "GROUP_ID_NOT_FOUND":
        raise failure(description.error)
    if description.error is None and state_name(description.state) not in ("Empty", "Dead"):
        raise ToolError(f"Share group '{group_id}' is not empty.")
    plan = plan_offsets(cluster, args, group_id)
    if args.execute and plan:
        change = cluster.share.alter_offsets(group_id, plan)
        first_error = change.error or next((e for e in change.partitions.values() if e is not None), None)
        if first_error is not None:
            raise failure(first_error)
    if args.export:
        print(export_csv(plan))
    else:
        print(format_reset_plan({group_id: plan} if plan else {}), end="")


def plan_offsets(cluster: Cluster, args: argparse.Namespace, group_id: str) -> dict[Partition, int]:
    """getPartitionsToReset, then prepareOffsetsToReset."""
    if args.topic:
        partitions = topic_partitions(cluster.admin, args.topic)
        current: dict[Partition, int | None] | None = None
    else:
        current = current_start_offsets(cluster.share, group_id)
        partitions = list(current)
    check_partitions_exist(cluster.admin, partitions)
    if args.to_current:
        starts = current if current is not None else current_start_offsets(cluster.share, group_id)
        return to_current(cluster.admin, partitions, starts)
    file_plan = read_reset_plan(args.from_file, [group_id]) if args.from_file else None
    request = ResetRequest.from_args(reset_namespace(args))
    return plan_reset(cluster.admin, group_id, partitions, request, file_plan)


def reset_namespace(args: argparse.Namespace) -> argparse.Namespace:
    """The scenario as `offset_reset` reads it (share groups have no --shift-by or --by-duration)."""
    return argparse.Namespace(
        to_offset=args.to_offset,
        shift_by=None,
        to_datetime=args.to_datetime,
        by_duration=None,
        to_earliest=args.to_earliest,
        to_latest=args.to_latest,
        to_current=False,
    )


def current_start_offsets(share: ShareGroupClient, group_id: str) -> dict[Partition, int | None]:
    """listShareGroupOffsets: each partition of the group, None where its start offset is not chosen."""
    offsets = share.describe_offsets(group_id)
    if offsets.error is not None:
        if offsets.error.name == "GROUP_ID_NOT_FOUND":
            return {}
        raise failure(offsets.error)
    return {
        (p.topic, p.partition): (p.start_offset if p.start_offset >= 0 else None)
        for p in offsets.partitions
        if p.error is None
    }


def topic_partitions(admin: GroupAdmin, topic_args: list[str]) -> list[Partition]:
    """parseTopicPartitionsToReset: `topic:0,1` as given, then every partition of each `topic`."""
    explicit = [p for arg in topic_args if ":" in arg for p in parse_topic_arg(arg)]
    whole = [arg for arg in topic_args if ":" not in arg]
    known, unknown = admin.partitions_of_known(whole)
    if unknown:
        raise ToolError(
            f"Error: {FAILED}org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
            "This server does not host this topic-partition."
        )
    return explicit + known


def parse_topic_arg(arg: str) -> list[Partition]:
    try:
        return topic_partitions_arg(arg)
    except ToolError as error:  # an IllegalArgumentException in Kafka: its message, status 1
        raise ToolError(str(error)) from None


def check_partitions_exist(admin: GroupAdmin, partitions: list[Partition]) -> None:
    """checkAllTopicPartitionsValid: every partition must exist."""
    topics = sorted({topic for topic, _ in partitions})
    existing, _ = admin.partitions_of_known(topics)
    missing = [p for p in partitions if p not in set(existing)]
    if missing:
        names = ",".join(f"{topic}-{partition}" for topic, partition in missing)
        raise ToolError(
            f"Error: {FAILED}org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
            f'The partitions "{names}" do not exist'
        )


def to_current(
    admin: GroupAdmin, partitions: list[Partition], starts: dict[Partition, int | None]
) -> dict[Partition, int]:
    """resetToCurrentForShareGroup: the start offset where there is one, else the log end."""
    result = {p: offset for p in partitions if (offset := starts.get(p)) is not None}
    without = [p for p in partitions if p not in result]
    result.update(required(admin.log_end_offsets(without), "Error getting ending offset of topic partition"))
    return result


def in_java_order(plan: dict[Partition, T]) -> list[Partition]:
    return hash_map_order(sorted(plan), topic_partition_hash)


def format_reset_plan(plans: dict[str, dict[Partition, int]]) -> str:
    """GroupOffsetsResetter.printOffsetsToReset: the header only when there are rows."""
    group_width = max([15] + [len(group) for group in plans])
    topic_width = max([15] + [len(topic) for plan in plans.values() for topic, _ in plan])

    def line(*cells: object) -> str:
        texts = [str(cell) for cell in cells]
        return f"\n{texts[0]:<{group_width}} {texts[1]:<{topic_width}} {texts[2]:<10} {texts[3]}"

    lines = [line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")] if plans else []
    for group, plan in plans.items():
        lines += [line(group, t, p, plan[(t, p)]) for t, p in in_java_order(plan)]
    return "".join(lines) + "\n"


def export_csv(plan: dict[Partition, int]) -> str:
    """exportOffsetsToCsv: `topic,partition,offset` lines."""
    return "".join(f"{topic},{partition},{plan[(topic, partition)]}\n" for topic, partition in in_java_order(plan))


# --delete-offsets

# top-level errors Kafka's tool prints as their message; the topic-level ones show in the table
MESSAGE_ERRORS = ("INVALID_GROUP_ID", "GROUP_ID_NOT_FOUND", "GROUP_AUTHORIZATION_FAILED", "NON_EMPTY_GROUP")
TOPIC_ERRORS = ("TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION")


def delete_offsets(cluster: Cluster, args: argparse.Namespace, outcome: Outcome) -> None:
    group_id, topics = args.group[0], list(dict.fromkeys(args.topic))
    change = cluster.share.delete_offsets(group_id, topics)
    # as the admin client's result: a top-level error fails every topic; else each topic's own
    results = {topic: change.error or change.topics.get(topic) for topic in topics}
    first = change.error or next((e for e in results.values() if e is not None), None)
    print(format_delete_offsets(first, results), end="")
    outcome.errors += first is not None


def format_delete_offsets(error: KafkaErrorInfo | None, results: dict[str, KafkaErrorInfo | None]) -> str:
    out = ""
    if error is not None and error.name in MESSAGE_ERRORS:
        out += f"\nError: {error.message}\n"
    elif error is not None and error.name not in TOPIC_ERRORS:
        out += f"\nError: Encounter some unknown error: {error.java_text()}\n"
    if results:
        width = max([15] + [len(topic) for topic in results])
        out += f"\n{'TOPIC':<{width}} STATUS"
        for topic in sorted(results):
            result = results[topic]
            out += f"\n{topic:<{width}} " + ("Successful" if result is None else f"Error: {result.message}")
    return out + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
