"""The `pykbroker` command: start a broker from a server.properties file and overrides.

    pykbroker [server.properties] [--override key=value ...] [--log-level INFO]
    pykbroker SUBCOMMAND ...     (see TOOLS: `pykbroker cluster --help`, ...)

Like Kafka's `kafka-server-start.sh`: the file is optional here (defaults apply), and every
`--override` wins over the file. Exit status: 2 for a usage or configuration error, 1 when the
broker cannot start (a port in use, ZooKeeper unreachable), each with one line on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

import anyio

from . import __version__
from .config import BrokerConfig, ConfigError

TRACE = 5  # below DEBUG, for Kafka's TRACE
LOG_LEVELS = {
    "TRACE": TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
}


# `pykbroker NAME ...` runs the module's `main(argv: list[str]) -> int` instead of a broker.
TOOLS = {
    "cluster": "pykbroker.cluster_launcher",  # ZooKeeper and N brokers on this machine
}


class UsageError(Exception):
    """A command line that cannot be run: reported in one line, exit status 2."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="pykbroker",
        description="A Kafka broker in Python.",
        epilog="subcommands (pykbroker SUBCOMMAND --help): " + ", ".join(sorted(TOOLS)),
    )
    parser.add_argument("config", nargs="?", help="a server.properties file")
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


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--override expects key=value, got {pair!r}")
        overrides[key.strip()] = value.strip()
    return overrides


def load_config(args: argparse.Namespace) -> BrokerConfig:
    overrides = parse_overrides(args.override)
    if args.config is None:
        return BrokerConfig(overrides)
    try:
        return BrokerConfig.from_file(args.config, overrides)
    except OSError as error:
        raise UsageError(f"cannot read {args.config}: {error.strerror or error}") from None


def configure_logging(level: str) -> None:
    logging.addLevelName(TRACE, "TRACE")
    logging.basicConfig(
        level=LOG_LEVELS[level],
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stderr,
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


def run_tool(argv: list[str]) -> int | None:
    """The exit status of the subcommand `argv` names, or None when it names none (a broker to start)."""
    if not argv or argv[0] not in TOOLS:
        return None
    return importlib.import_module(TOOLS[argv[0]]).main(argv[1:])


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    status = run_tool(argv)
    if status is not None:
        return status
    args = parse_args(argv)
    configure_logging(args.log_level)
    raise_open_file_limit()
    from .broker import Broker  # after logging is set up, so import-time logs are formatted

    try:
        config = load_config(args)
        config.warn_unknown_keys()
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
    anyio.run(broker.run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
