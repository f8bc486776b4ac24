"""Small pieces the group and console tools share: Kafka's `key=value` argument lists, the
`--output json` flag, and the usage-error exit.
"""

from __future__ import annotations

import argparse
import json
import sys
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
