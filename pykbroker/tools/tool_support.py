"""Small pieces the group and console tools share: Kafka's `key=value` argument lists, the
`--output json` flag, the usage-error exit, the option checks Kafka's group commands have in common
(with their messages) and the assignment text of a group member.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from typing import Any, NoReturn

Partition = tuple[str, int]  # (topic, partition)

# librdkafka logs every failed connection attempt to stderr; the tools report failures themselves
# (one line), as errors of the requests they make.
QUIET = {"log_level": 0}


def parse_key_value_args(pairs: list[str] | None) -> dict[str, str]:
    """`--property k=v` and friends, as Kafka's CommandLineUtils.parseKeyValueArgs reads them: split
    at the first `=`; a key without a value gets the empty string."""
    properties: dict[str, str] = {}
    for pair in pairs or []:
        key, _, value = pair.partition("=")
        properties[key] = value
    return properties


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output",
        choices=["text", "json"],
        default="text",
        help="text (Kafka's format, the default) or json (one JSON document on stdout)",
    )


def print_json(document: Any) -> None:
    json.dump(document, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
    sys.stdout.flush()


def usage_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """A command line Kafka's tool would refuse: the usage, one error line, exit status 2."""
    parser.error(message)


def decode_text(data: bytes | None) -> str | None:
    """Bytes as text for a JSON document (UTF-8, undecodable bytes replaced)."""
    return None if data is None else data.decode("utf-8", errors="replace")


def flag(dest: str) -> str:
    """An option as Kafka's messages name it: `[reset-offsets]` for `reset_offsets`."""
    return "[" + dest.replace("_", "-") + "]"


def given(args: argparse.Namespace, option: str) -> bool:
    """Whether the command line has the option (a flag set, a value given, a list not empty)."""
    value = getattr(args, option)
    return value is not None and value is not False and value != []


def check_invalid_together(
    parser: argparse.ArgumentParser, args: argparse.Namespace, option: str, others: list[str]
) -> None:
    """CommandLineUtils.checkInvalidArgs: `option` given refuses each of `others`."""
    if not given(args, option):
        return
    for other in others:
        if given(args, other):
            usage_error(parser, f'Option "{flag(option)}" can\'t be used with option "{flag(other)}"')


def check_describe_only(parser: argparse.ArgumentParser, args: argparse.Namespace, options: Iterable[str]) -> None:
    """The options joptsimple makes `availableIf` --describe (in the order given), then [state],
    available with --describe or --list."""
    for option in options:
        if getattr(args, option) and not args.describe:
            usage_error(parser, f"Option(s) {flag(option)} are unavailable given other options on the command line")
    if args.state is not None and not (args.describe or args.list):
        usage_error(parser, "Option(s) [state] are unavailable given other options on the command line")


def check_describe(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--describe of the consumer and share group commands: some groups, and one view at the most."""
    if not args.group and not args.all_groups:
        usage_error(parser, "Option [describe] takes one of these options: [all-groups], [group]")
    if sum((args.members, args.offsets, args.state is not None)) > 1:
        usage_error(parser, "Option [describe] takes at most one of these options: [members], [offsets], [state]")
    if args.state:
        usage_error(parser, "Option [describe] does not take a value for [state]")


def assignment_string(partitions: Iterable[Partition], empty: str) -> str:
    """Kafka 4's getAssignmentString: `topic:0,1` per topic, partitions ascending, topics joined by
    `;` in text order; `empty` for none."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in partitions:
        by_topic.setdefault(topic, []).append(partition)
    if not by_topic:
        return empty
    return ";".join(sorted(f"{topic}:" + ",".join(str(p) for p in sorted(ps)) for topic, ps in by_topic.items()))
