"""`pykbroker cluster`: a local cluster in one command, ZooKeeper and N brokers as child processes.

    pykbroker cluster [--brokers 3] [--dir ./pykbroker-cluster] [--base-port 9092]
                      [--zookeeper-home DIR | --zookeeper-classpath CLASSPATH] [--zookeeper-port 0]
                      [--override key=value ...]

It runs a `BrokerCluster` (`cluster.py`, which says what lives where in DIR, kept between runs so
that the next run finds the same cluster). ZooKeeper comes from the system's installation
(`zookeeper.py`); broker N (ids 1..N) listens on PLAINTEXT://127.0.0.1:BASE+N-1 (free ports with
`--base-port 0`) with the development profile and the replication settings of a cluster
(replication factor min(3, N) for new and internal topics, `min.insync.replicas` one less, at
least 1); every `--override` applies to every broker after those.

Once every broker answers Metadata listing all N brokers, the bootstrap list is printed on stdout
(one line, for scripts); the layout and progress go to stderr. Ctrl-C (SIGINT) or SIGTERM stops
the brokers in parallel with SIGTERM, each a controlled shutdown, the controller after the others
so that their requests find it; then ZooKeeper; the exit status is then 0. The children run in
their own process group, so a terminal's Ctrl-C reaches only this launcher, and on Linux they get
SIGTERM should the launcher itself die. A broker that exits meanwhile is reported and the others
keep running (stopping one by hand is how failover is tried out).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from .cluster import PER_BROKER_KEYS, POLL_INTERVAL_S, BrokerCluster, ClusterStartError
from .zookeeper import ZooKeeperNotFound, ZooKeeperProcess, find_java, find_zookeeper

PROG = "pykbroker cluster"
DEFAULT_DIRECTORY = "pykbroker-cluster"


class UsageError(Exception):
    """A command line that cannot be run: one line on stderr, exit status 2."""


class StopRequested(BaseException):
    """SIGINT or SIGTERM reached the launcher (a BaseException, like KeyboardInterrupt)."""


# -- the command line ---------------------------------------------------------------------
def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Start ZooKeeper and a cluster of pykbroker brokers on 127.0.0.1; Ctrl-C stops them all.",
    )
    parser.add_argument("--brokers", type=int, default=3, metavar="N", help="number of brokers (ids 1..N; default 3)")
    parser.add_argument(
        "--dir",
        default=DEFAULT_DIRECTORY,
        metavar="DIR",
        help=f"where ZooKeeper's and the brokers' data and logs are kept (default ./{DEFAULT_DIRECTORY})",
    )
    parser.add_argument(
        "--base-port",
        type=int,
        default=9092,
        metavar="PORT",
        help="broker N listens on PORT+N-1 (default 9092); 0 picks free ports",
    )
    parser.add_argument(
        "--zookeeper-port", type=int, default=0, metavar="PORT", help="ZooKeeper's client port (default: a free one)"
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--zookeeper-home",
        metavar="DIR",
        help="a ZooKeeper installation (an Apache release with lib/, or a Kafka distribution with libs/)",
    )
    where.add_argument("--zookeeper-classpath", metavar="CLASSPATH", help="the Java classpath of ZooKeeper's server")
    parser.add_argument(
        "--override",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a broker config setting for every broker (repeatable)",
    )
    parser.add_argument(
        "--start-timeout", type=float, default=60.0, metavar="SECONDS", help="how long to wait for the brokers"
    )
    args = parser.parse_args(argv)
    if args.brokers < 1:
        parser.error("--brokers must be at least 1")
    if not 0 <= args.base_port <= 65535 - args.brokers:
        parser.error("--base-port must leave room for every broker's port")
    return args


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    overrides = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(f"--override expects key=value, got {pair!r}")
        if key in PER_BROKER_KEYS:
            raise UsageError(f"--override {key}: set by {PROG} for each broker")
        overrides[key] = value.strip()
    return overrides


# -- the children ---------------------------------------------------------------------------
def _terminate_with_parent() -> None:
    """In a child before it runs: SIGTERM when the launcher dies (Linux's PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # 1 is PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# A child's own process group (a terminal's Ctrl-C reaches the launcher only), ended with the launcher.
CHILD_OPTIONS: dict[str, Any] = {"start_new_session": True, "preexec_fn": _terminate_with_parent}


def launched_cluster(args: argparse.Namespace, classpath: str, overrides: dict[str, str]) -> BrokerCluster:
    return BrokerCluster(
        Path(args.dir),
        size=args.brokers,
        overrides=overrides,
        base_port=args.base_port,
        zookeeper_port=args.zookeeper_port,
        zookeeper_classpath=classpath,
        start_timeout=args.start_timeout,
        popen_options=CHILD_OPTIONS,
    )


def describe(cluster: BrokerCluster) -> None:
    for broker_id, broker in cluster.brokers.items():
        say(f"  broker {broker_id}: {broker.bootstrap}  log {broker.log_path}")
    say(f"  ZooKeeper: {cluster.zookeeper_connect}  log {own_zookeeper(cluster).log_path}")
    say("Ctrl-C stops the cluster.")


def watch(cluster: BrokerCluster) -> None:
    """Until a signal: report brokers that exit; give up when none is left."""
    reported: set[int] = set()
    while True:
        time.sleep(POLL_INTERVAL_S * 2)
        for broker_id, broker in cluster.brokers.items():
            if not broker.is_running() and broker_id not in reported:
                reported.add(broker_id)
                say(f"broker {broker_id} exited with status {broker.returncode} (see {broker.log_path})")
        if not any(broker.is_running() for broker in cluster.brokers.values()):
            raise ClusterStartError("every broker has exited")
        if not own_zookeeper(cluster).is_running():
            raise ClusterStartError(f"ZooKeeper exited (see {own_zookeeper(cluster).log_path})")


def stop(cluster: BrokerCluster) -> None:
    running = sum(broker.is_running() for broker in cluster.brokers.values())
    if running:
        say(f"Stopping {running} broker(s)")
    if own_zookeeper(cluster).is_running():
        say("Stopping ZooKeeper after them")
    cluster.stop()


def own_zookeeper(cluster: BrokerCluster) -> ZooKeeperProcess:
    """The ZooKeeper the launched cluster runs (this command never uses an external one)."""
    if cluster.zookeeper is None:
        raise RuntimeError(f"{PROG} runs its own ZooKeeper")
    return cluster.zookeeper


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- signals ----------------------------------------------------------------------------------
def request_stop(signum: int, _frame: FrameType | None) -> None:
    for handled in (signal.SIGINT, signal.SIGTERM):
        signal.signal(handled, signal.SIG_IGN)  # one stop at a time; the stop itself is bounded
    raise StopRequested(signal.Signals(signum).name)


def main(argv: list[str]) -> int:
    try:
        args = parse_args(argv)
        overrides = parse_overrides(args.override)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    try:
        find_java()
        classpath = find_zookeeper(home=args.zookeeper_home, classpath=args.zookeeper_classpath)
    except ZooKeeperNotFound as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    cluster = launched_cluster(args, classpath, overrides)
    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    status = 0
    try:
        try:
            say(f"Starting ZooKeeper and {args.brokers} broker(s) under {cluster.directory}")
            cluster.start()
            describe(cluster)
            print(cluster.bootstrap, flush=True)
            watch(cluster)
        except ClusterStartError as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            status = 1
        finally:
            stop(cluster)
    except StopRequested:
        cluster.stop()  # a signal while stopping after an error: finish stopping
    return status
