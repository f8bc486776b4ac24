"""The `pykbroker` command: start a broker from a server.properties file and overrides, or run one
of Kafka's command-line tools.

    pykbroker [server.properties] [--dev] [--dir DIR] [--override key=value ...] [--log-level INFO]
    pykbroker --print-config                             (Kafka's example server.properties for one node)
    pykbroker TOOL --bootstrap-server HOST:PORT ...      (TOOL: one of TOOLS, e.g. `topics`)

Like Kafka's `kafka-server-start.sh`: the file is optional here (Kafka's defaults apply), and
every `--override` wins over the file. `--dev` starts from the development profile
(`config/dev_profile.py`: the settings of Kafka's example file for one node, on 127.0.0.1:9092,
data in ./pykbroker-data), under the file; `--dir` names the data directory (`log.dirs`) over the
file. Exit status: 2 for a usage or configuration error, 1 when the broker cannot start (a port
in use, ZooKeeper unreachable), each with one line on stderr.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys
from pathlib import Path

import anyio

from . import __version__
from .config import BrokerConfig, ConfigError, load_properties
from .config.dev_profile import DEV_DATA_DIRECTORY, DEV_PROFILE, example_server_properties

TRACE = 5  # below DEBUG, for Kafka's TRACE
LOG_LEVELS = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
}
# What log4j calls Python's levels in a log line
LOG4J_LEVEL_NAMES = {
    logging.CRITICAL: "FATAL",
    logging.ERROR: "ERROR",
    logging.WARNING: "WARN",
    logging.INFO: "INFO",
    logging.DEBUG: "DEBUG",
    TRACE: "TRACE",
}


# The tools: a first argument -> the module whose `main(argv) -> int` runs it (pykbroker/tools/)
TOOLS = {
    "topics": "pykbroker.tools.topics",
    "configs": "pykbroker.tools.configs",
    "get-offsets": "pykbroker.tools.get_offsets",
    "delete-records": "pykbroker.tools.delete_records",
    "leader-election": "pykbroker.tools.leader_election",
    "consumer-groups": "pykbroker.tools.consumer_groups",
    "groups": "pykbroker.tools.groups",
    "share-groups": "pykbroker.tools.share_groups",
    "console-producer": "pykbroker.tools.console_producer",
    "console-consumer": "pykbroker.tools.console_consumer",
    "faults": "pykbroker.tools.faults",
    "cluster": "pykbroker.testkit.cluster_command",  # ZooKeeper and N brokers on this machine
}
TOOL_SUMMARIES = {
    "topics": "create, list, describe, alter and delete topics (kafka-topics.sh)",
    "configs": "describe and alter topic, broker and user configs (kafka-configs.sh)",
    "get-offsets": "print partitions' offsets (kafka-get-offsets.sh)",
    "delete-records": "delete records up to offsets (kafka-delete-records.sh)",
    "leader-election": "elect preferred or unclean leaders (kafka-leader-election.sh)",
    "consumer-groups": "list, describe, reset offsets of and delete consumer groups (kafka-consumer-groups.sh)",
    "groups": "list the groups of every type: classic, consumer, share (kafka-groups.sh)",
    "share-groups": "list, describe, reset offsets of and delete share groups (kafka-share-groups.sh)",
    "console-producer": "produce stdin's lines as records (kafka-console-producer.sh)",
    "console-consumer": "print records to stdout (kafka-console-consumer.sh)",
    "faults": "inject faults into pykbroker brokers for client tests: errors, latency, drops, leadership moves",
    "cluster": "start ZooKeeper and N brokers on this machine until Ctrl-C",
}


class UsageError(Exception):
    """A command line that cannot be run: reported in one line, exit status 2."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="pykbroker",
        description="A Kafka broker in Python.",
        epilog=tools_epilog(),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("config", nargs="?", help="a server.properties file")
    parser.add_argument(
        "--dev",
        action="store_true",
        help="one development broker: Kafka's example settings for a single node (internal topics with "
        f"one replica, no initial rebalance delay) on 127.0.0.1:9092, data in ./{DEV_DATA_DIRECTORY}; "
        "the file and --override win over them",
    )
    parser.add_argument("--dir", metavar="DIR", help="the data directory (log.dirs), over the file's")
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print Kafka's example server.properties for one node (the settings of --dev) and exit",
    )
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config setting that wins over the file (repeatable)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=["TRACE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR"],
        help="Kafka's level names: TRACE, DEBUG, INFO, WARN, ERROR",
    )
    parser.add_argument("--version", action="version", version=f"pykbroker {__version__}")
    return parser.parse_args(argv)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """argparse's layout of the help (description and epilog as written) at the terminal's
    width. argparse makes a formatter for every argument it adds, and its own asks `shutil`
    for the width: this one does not, so that a start imports neither shutil nor bz2 and lzma."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=terminal_width() - 2)


def terminal_width() -> int:
    """The terminal's columns as `shutil.get_terminal_size` gives them: $COLUMNS first, else
    the terminal's, else 80."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.__stdout__ is None:
        return 80
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (ValueError, OSError):
        return 80


def tools_epilog() -> str:
    width = max(len(name) for name in TOOLS)
    lines = [f"  {name:<{width}}  {TOOL_SUMMARIES.get(name, '')}".rstrip() for name in TOOLS]
    return "Kafka's tools, run as `pykbroker TOOL --help` for their flags:\n" + "\n".join(lines)


def run_tool(name: str, argv: list[str]) -> int:
    """Run the tool `name` (a key of TOOLS) with its own arguments."""
    import importlib

    module = importlib.import_module(TOOLS[name])
    return int(module.main(argv))


def mistyped_tool_message(first: str) -> str | None:
    """'unknown tool ...; did you mean ...?' when `first` is no file (nor a path) but close to a tool's name."""
    looks_like_a_path = "/" in first or "." in first or os.sep in first
    if first.startswith("-") or looks_like_a_path or os.path.exists(first):
        return None
    import difflib  # only for a first argument that may be a mistyped tool

    close = difflib.get_close_matches(first, list(TOOLS), n=1)
    return f"unknown tool {first!r}; did you mean {close[0]!r}?" if close else None


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--override expects key=value, got {pair!r}")
        overrides[key.strip()] = value.strip()
    return overrides


def load_config(args: argparse.Namespace) -> BrokerConfig:
    """The profile (with `--dev`), under the file, under `--dir`, under the overrides."""
    overrides = parse_overrides(args.override)
    if args.dir is not None:
        overrides = {"log.dirs": args.dir, **overrides}
    from_file = read_properties(args.config)
    properties = dev_settings() if args.dev else {}
    if "log.dir" in from_file or "log.dir" in overrides:
        properties.pop("log.dirs", None)  # a log.dirs of the profile would win over the user's log.dir
    return BrokerConfig({**properties, **from_file}, overrides)


def dev_settings() -> dict[str, str]:
    """`DEV_PROFILE` with its data directory, made absolute so that the start line names it."""
    return {**DEV_PROFILE, "log.dirs": str(Path(DEV_DATA_DIRECTORY).resolve())}


def read_properties(path: str | None) -> dict[str, str]:
    if path is None:
        return {}
    try:
        return load_properties(path)
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None


class Log4jLevelFormatter(logging.Formatter):
    """Kafka's log line, `[time] LEVEL message (logger)`, with log4j's level names (WARN, not WARNING)."""

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 (logging's name)
        log4j_record = logging.makeLogRecord(record.__dict__)
        log4j_record.levelname = log4j_level_name(record.levelno)
        return super().formatMessage(log4j_record)


def log4j_level_name(level: int) -> str:
    """The log4j level at or below `level` (a level between two counts as the lower one)."""
    for value, name in sorted(LOG4J_LEVEL_NAMES.items(), reverse=True):
        if level >= value:
            return name
    return "TRACE"


def configure_logging(level: str) -> None:
    logging.addLevelName(TRACE, "TRACE")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Log4jLevelFormatter("[%(asctime)s] %(levelname)s %(message)s (%(name)s)"))
    logging.basicConfig(level=LOG_LEVELS[level], handlers=[handler])


def log_dev_profile(config: BrokerConfig) -> None:
    logging.getLogger("pykbroker").info(
        "Development profile (Kafka's example server.properties for one node): data in %s",
        ", ".join(str(Path(directory).resolve()) for directory in config.log_dirs),
    )


def raise_open_file_limit() -> None:
    """Segments keep files open: allow as many as the hard limit permits, like Kafka's scripts."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass


def collect_garbage_from_now_on() -> None:
    """Turn the cyclic garbage collector back on where `__main__` turned it off for start-up,
    freezing what start-up made first: it lives as long as the process, so no collection needs
    to scan it again."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments and arguments[0] in TOOLS:
        collect_garbage_from_now_on()
        return run_tool(arguments[0], arguments[1:])
    mistyped = mistyped_tool_message(arguments[0]) if arguments else None
    if mistyped is not None:
        print(f"pykbroker: error: {mistyped}", file=sys.stderr)
        return 2
    args = parse_args(arguments)
    if args.print_config:
        sys.stdout.write(example_server_properties())
        return 0
    configure_logging(args.log_level)
    raise_open_file_limit()
    from .broker import Broker  # after logging is set up, so import-time logs are formatted

    try:
        config = load_config(args)
        config.warn_unknown_keys()
        if args.dev:
            log_dev_profile(config)
        broker = Broker(config)
        broker.open()
    except UsageError as exc:
        print(f"pykbroker: error: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        logging.getLogger("pykbroker").error("Invalid configuration: %s", exc)
        return 2
    except (OSError, RuntimeError) as exc:  # RuntimeError: ZooKeeper unreachable, wrong cluster
        logging.getLogger("pykbroker").error("Cannot start: %s", exc)
        return 1
    collect_garbage_from_now_on()
    anyio.run(broker.run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
