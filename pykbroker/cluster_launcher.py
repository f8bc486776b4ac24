"""`pykbroker cluster`: a local cluster in one command, ZooKeeper and N brokers as child processes.

    pykbroker cluster [--brokers 3] [--dir ./pykbroker-cluster] [--base-port 9092]
                      [--zookeeper-home DIR | --zookeeper-classpath CLASSPATH] [--zookeeper-port 0]
                      [--override key=value ...]

ZooKeeper comes from the system's installation (`zookeeper_process`); broker N (ids 1..N) listens
on PLAINTEXT://127.0.0.1:BASE+N-1 (free ports with `--base-port 0`) with the replication settings
of a cluster (replication factor min(3, N) for new and internal topics, `min.insync.replicas` one
less, at least 1) and Kafka's development setting `group.initial.rebalance.delay.ms=0`; every
`--override` applies to every broker after those. Everything lives under one directory, kept
between runs so that the next run finds the same cluster:

    DIR/zookeeper/     zoo.cfg, data/, zookeeper.log
    DIR/broker-N/      kafka-logs/, broker.log (the broker's output)

Once every broker answers Metadata listing all N brokers, the bootstrap list is printed on stdout
(one line, for scripts); the layout and progress go to stderr. Ctrl-C (SIGINT) or SIGTERM stops
the brokers in parallel with SIGTERM, each a controlled shutdown, the controller after the others
so that their requests find it; then ZooKeeper; the exit status is then 0. The children run in
their own process group, so a terminal's Ctrl-C reaches only this launcher, and on Linux they get
SIGTERM should the launcher itself die. A broker that exits meanwhile is reported and the others
keep running (stopping one by hand is how failover is tried out).

This module only spawns processes and asks brokers for Metadata: it imports nothing of the broker.
"""

from __future__ import annotations

import argparse
import re
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .protocol import headers, messages
from .protocol.api_keys import ApiKey
from .zookeeper_process import ZooKeeperNotFound, ZooKeeperProcess, find_java, find_zookeeper

PROG = "pykbroker cluster"
DEFAULT_DIRECTORY = "pykbroker-cluster"
LAUNCHER_KEYS = ("broker.id", "listeners", "advertised.listeners", "log.dirs", "zookeeper.connect")
STARTED = re.compile(r"pykbroker started: listening on \w+://([\d.]+):(\d+)")
METADATA_VERSION = 1
BROKER_STOP_TIMEOUT_S = 60.0
POLL_INTERVAL_S = 0.2


class UsageError(Exception):
    """A command line that cannot be run: one line on stderr, exit status 2."""


class StartError(Exception):
    """The cluster could not start: one line on stderr (details in the named log), exit status 1."""


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
        if key in LAUNCHER_KEYS:
            raise UsageError(f"--override {key}: set by {PROG} for each broker")
        overrides[key] = value.strip()
    return overrides


def cluster_settings(brokers: int) -> dict[str, str]:
    """What every broker of an N-broker cluster gets before the user's overrides."""
    replication_factor = min(3, brokers)
    min_isr = max(1, replication_factor - 1)
    return {
        "default.replication.factor": str(replication_factor),
        "min.insync.replicas": str(min_isr),
        "offsets.topic.replication.factor": str(replication_factor),
        "transaction.state.log.replication.factor": str(replication_factor),
        "transaction.state.log.min.isr": str(min_isr),
        "group.initial.rebalance.delay.ms": "0",
    }


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


@dataclass
class BrokerChild:
    """One broker process: its id, directory, settings, and the address it announced in its log."""

    broker_id: int
    directory: Path
    overrides: dict[str, str]
    process: subprocess.Popen | None = None
    address: str | None = None
    reported_exit: bool = False
    log_offset: int = 0

    @property
    def log_path(self) -> Path:
        return self.directory / "broker.log"

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pykbroker"]
        for key, value in self.overrides.items():
            command += ["--override", f"{key}={value}"]
        self.log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log_file:
            self.process = subprocess.Popen(
                command,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.directory,
                **CHILD_OPTIONS,
            )

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def announced_address(self) -> str | None:
        """host:port from this run's "pykbroker started" line, once it is in the log."""
        if self.address is None and self.log_path.exists():
            with open(self.log_path, "rb") as log_file:
                log_file.seek(self.log_offset)
                match = STARTED.search(log_file.read().decode(errors="replace"))
            if match:
                self.address = f"{match.group(1)}:{match.group(2)}"
        return self.address

    def last_log_line(self) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines() if self.log_path.exists() else []
        return lines[-1].strip() if lines else "(no output)"

    def send(self, signum: int) -> None:
        if self.process is not None and self.is_running():
            self.process.send_signal(signum)


def metadata_of(address: str, timeout: float = 2.0):
    """Ask a broker for Metadata (no topics), as a client does; the decoded response."""
    host, port = address.rsplit(":", 1)
    request_class = messages.request(ApiKey.METADATA).cls
    payload = headers.encode_request_header(ApiKey.METADATA, METADATA_VERSION, 1, PROG.replace(" ", "-"))
    payload += messages.request(ApiKey.METADATA).encode_bytes(request_class(topics=[]), version=METADATA_VERSION)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.sendall(struct.pack(">i", len(payload)) + payload)
        frame = _read_frame(sock)
    _, position = headers.decode_response_header(frame, ApiKey.METADATA, METADATA_VERSION)
    response, _ = messages.response(ApiKey.METADATA).decode(frame, position, version=METADATA_VERSION)
    return response


def _read_frame(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", _read_exactly(sock, 4))[0]
    return _read_exactly(sock, size)


def _read_exactly(sock: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError("connection closed")
        data += chunk
    return data


# -- the cluster ----------------------------------------------------------------------------
class LocalCluster:
    """ZooKeeper and the brokers under one directory: started, watched, stopped."""

    def __init__(self, args: argparse.Namespace, classpath: str, overrides: dict[str, str]) -> None:
        self.directory = Path(args.dir).resolve()
        self.start_timeout = args.start_timeout
        self.zookeeper = ZooKeeperProcess(
            self.directory / "zookeeper", classpath=classpath, port=args.zookeeper_port, popen_options=CHILD_OPTIONS
        )
        self.base_port = args.base_port
        self.overrides = {**cluster_settings(args.brokers), **overrides}
        self.brokers = [BrokerChild(i, self.directory / f"broker-{i}", {}) for i in range(1, args.brokers + 1)]
        self.controller_id = -1

    @property
    def bootstrap(self) -> str:
        return ",".join(broker.address or "" for broker in self.brokers)

    def start(self) -> None:
        say(f"Starting ZooKeeper (data and log in {self.zookeeper.directory})")
        try:
            self.zookeeper.start()
        except (RuntimeError, TimeoutError) as error:
            raise StartError(f"ZooKeeper did not start; see {self.zookeeper.log_path}") from error
        say(f"Starting {len(self.brokers)} broker(s), ZooKeeper at {self.zookeeper.connect}")
        for broker in self.brokers:
            port = self.base_port + broker.broker_id - 1 if self.base_port else 0
            broker.overrides = {
                "broker.id": str(broker.broker_id),
                "listeners": f"PLAINTEXT://127.0.0.1:{port}",
                "log.dirs": str(broker.directory / "kafka-logs"),
                "zookeeper.connect": self.zookeeper.connect,
                **self.overrides,
            }
            broker.start()
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while not self._all_answer_metadata():
            for broker in self.brokers:
                if not broker.is_running():
                    last_line = broker.last_log_line()
                    raise StartError(f"broker {broker.broker_id} exited: {last_line} (see {broker.log_path})")
            if time.monotonic() > deadline:
                raise StartError(f"the brokers did not start within {self.start_timeout:g} s (see their logs)")
            time.sleep(POLL_INTERVAL_S)

    def _all_answer_metadata(self) -> bool:
        for broker in self.brokers:
            address = broker.announced_address()
            if address is None:
                return False
            try:
                response = metadata_of(address)
            except OSError:
                return False
            if len(response.brokers) < len(self.brokers):
                return False
            self.controller_id = response.controller_id
        return True

    def describe(self) -> None:
        for broker in self.brokers:
            say(f"  broker {broker.broker_id}: {broker.address}  log {broker.log_path}")
        say(f"  ZooKeeper: {self.zookeeper.connect}  log {self.zookeeper.log_path}")
        say("Ctrl-C stops the cluster.")

    def watch(self) -> None:
        """Until a signal: report brokers that exit; give up when none is left."""
        while True:
            time.sleep(POLL_INTERVAL_S * 2)
            for broker in self.brokers:
                if not broker.is_running() and not broker.reported_exit:
                    broker.reported_exit = True
                    code = broker.process.returncode if broker.process else None
                    say(f"broker {broker.broker_id} exited with status {code} (see {broker.log_path})")
            if not any(broker.is_running() for broker in self.brokers):
                raise StartError("every broker has exited")
            if not self.zookeeper.is_running():
                raise StartError(f"ZooKeeper exited (see {self.zookeeper.log_path})")

    def stop(self) -> None:
        """The brokers (the controller last), then ZooKeeper; SIGKILL for what does not stop in time."""
        running = [broker for broker in self.brokers if broker.is_running()]
        if running:
            say(f"Stopping {len(running)} broker(s)")
            controller_id = self._current_controller(running)
            others = [b for b in running if b.broker_id != controller_id]
            controller = [b for b in running if b.broker_id == controller_id]
            deadline = time.monotonic() + BROKER_STOP_TIMEOUT_S
            for group in (others, controller):
                for broker in group:
                    broker.send(signal.SIGTERM)
                wait_for_exit(group, deadline)
        if self.zookeeper.is_running():
            say("Stopping ZooKeeper")
        self.zookeeper.stop()

    def _current_controller(self, running: list[BrokerChild]) -> int:
        """The controller as a running broker sees it now (it moves when brokers stop), else as last seen."""
        for broker in running:
            if broker.address is not None:
                try:
                    return metadata_of(broker.address).controller_id
                except OSError:
                    continue
        return self.controller_id


def wait_for_exit(brokers: list[BrokerChild], deadline: float) -> None:
    for broker in brokers:
        if broker.process is None:
            continue
        try:
            broker.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            say(f"broker {broker.broker_id} did not stop in time: killing it")
            broker.process.kill()
            broker.process.wait()


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- signals ----------------------------------------------------------------------------------
def request_stop(signum, _frame) -> None:
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
    cluster = LocalCluster(args, classpath, overrides)
    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    status = 0
    try:
        try:
            cluster.start()
            cluster.describe()
            print(cluster.bootstrap, flush=True)
            cluster.watch()
        except StartError as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            status = 1
        finally:
            cluster.stop()
    except StopRequested:
        cluster.stop()  # a signal while stopping after an error: finish stopping
    return status
