"""Run a pykbroker (and a ZooKeeper) as separate processes, for tests, the compat suite and
benchmarks.

    with BrokerProcess(tmp_path) as broker:
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)

    with ZooKeeperProcess(tmp_path / "zk") as zk:
        with BrokerProcess(tmp_path / "b1", {"zookeeper.connect": zk.connect}, broker_id=1):
            ...

The broker listens on 127.0.0.1 on a free port, keeps its data and its log file under the given
directory, and is always stopped (SIGTERM, then SIGKILL) when the block ends. ZooKeeper is
Debian's package (`/usr/share/java/zookeeper.jar`, or `$ZOOKEEPER_CLASSPATH`) run standalone on
a free loopback port with its data under the given directory.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

_STARTED = re.compile(r"pykbroker started: listening on \w+://([\d.]+):(\d+)")


class BrokerProcess:
    def __init__(
        self,
        directory: str | os.PathLike,
        overrides: dict[str, str] | None = None,
        *,
        broker_id: int = 0,
        start_timeout: float = 30.0,
        keep_port_on_restart: bool = False,
        command: list[str] | None = None,
    ) -> None:
        """With `keep_port_on_restart`, a restarted broker listens on the port of its first
        start (as a real broker restarts on its configured port). `command` is how to start it
        (default: this interpreter's `-m pykbroker`); it runs in `directory`."""
        self.directory = Path(directory)
        self.command = command or [sys.executable, "-m", "pykbroker"]
        self.keep_port_on_restart = keep_port_on_restart and "listeners" not in (overrides or {})
        self.directory.mkdir(parents=True, exist_ok=True)
        self.overrides = {
            "broker.id": str(broker_id),
            "listeners": "PLAINTEXT://127.0.0.1:0",
            "log.dirs": str(self.directory / "kafka-logs"),
            "offsets.topic.replication.factor": "1",  # one broker, as in Kafka's dev configs
            "transaction.state.log.replication.factor": "1",
            "transaction.state.log.min.isr": "1",
            **(overrides or {}),
        }
        self.start_timeout = start_timeout
        self.process: subprocess.Popen | None = None
        self.log_path = self.directory / "broker.log"
        self.host = "127.0.0.1"
        self.port = 0

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self) -> BrokerProcess:
        if self.keep_port_on_restart and self.port:
            self.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{self.port}"
        args = list(self.command)
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        log_file = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            args, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.directory
        )
        log_file.close()
        self._wait_until_listening()
        return self

    def _wait_until_listening(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        process = self.process
        if process is None:
            raise RuntimeError("the broker process was not started")
        while time.monotonic() < deadline:
            text = self.log_path.read_text(errors="replace")
            match = _STARTED.search(text, offset if offset <= len(text) else 0)
            if match:
                self.host, self.port = match.group(1), int(match.group(2))
                return
            if process.poll() is not None:
                raise RuntimeError(f"broker exited with {process.returncode}:\n{text}")
            time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"broker did not start within {self.start_timeout}s")

    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM and wait; SIGKILL if it does not stop in time. Returns the exit code."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()

    def kill(self) -> None:
        """kill -9: no chance to flush or close anything."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def pause(self) -> None:
        """SIGSTOP: the process stops answering anyone (ZooKeeper included) until `resume()`."""
        if self.process is not None and self.is_running():
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None and self.is_running():
            self.process.send_signal(signal.SIGCONT)

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


ZOOKEEPER_CLASSPATH = os.environ.get("ZOOKEEPER_CLASSPATH", "/usr/share/java/zookeeper.jar")
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"


def zookeeper_available() -> bool:
    return shutil.which("java") is not None and all(
        os.path.exists(path) for path in ZOOKEEPER_CLASSPATH.split(os.pathsep)
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ZooKeeperProcess:
    """A standalone ZooKeeper on a free loopback port; stopped (SIGTERM, then SIGKILL) on exit.

    `connect` is its connection string; `chroot` is appended when given. The data survives
    `stop()` and `start()`, as a restarted ZooKeeper's does.
    """

    def __init__(self, directory: str | os.PathLike, *, tick_time_ms: int = 500, start_timeout: float = 30.0) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.tick_time_ms = tick_time_ms
        self.start_timeout = start_timeout
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.log_path = self.directory / "zookeeper.log"

    def connect_string(self, chroot: str = "") -> str:
        return f"127.0.0.1:{self.port}{chroot}"

    @property
    def connect(self) -> str:
        return self.connect_string()

    def start(self) -> ZooKeeperProcess:
        if not self.port:
            self.port = free_port()
        config = self.directory / "zoo.cfg"
        config.write_text(
            "\n".join(
                [
                    f"tickTime={self.tick_time_ms}",
                    f"dataDir={self.directory / 'data'}",
                    f"clientPort={self.port}",
                    "clientPortAddress=127.0.0.1",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=ruok,srvr",
                    f"maxSessionTimeout={self.tick_time_ms * 60}",
                ]
            )
            + "\n"
        )
        log_file = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            ["java", "-Xmx256m", "-cp", ZOOKEEPER_CLASSPATH, ZOOKEEPER_MAIN, str(config)],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log_file.close()
        self._wait_until_serving()
        return self

    def _wait_until_serving(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        process = self.process
        if process is None:
            raise RuntimeError("the ZooKeeper process was not started")
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(
                    f"ZooKeeper exited with {process.returncode}:\n{self.log_path.read_text(errors='replace')}"
                )
            if self.is_serving():
                return
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"ZooKeeper did not start within {self.start_timeout}s")

    def is_serving(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"ruok")
                return sock.recv(4) == b"imok"
        except OSError:
            return False

    def stop(self, timeout: float = 15.0) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def __enter__(self) -> ZooKeeperProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def wait_until(condition, what: str = "condition", *, timeout: float = 30.0, interval: float = 0.05):
    """Poll `condition` until it returns something truthy (which is returned); raise
    AssertionError naming `what` after `timeout` seconds. Tests wait with this, never with sleeps
    of a guessed length."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)
