"""Run a pykbroker (and a ZooKeeper) as separate processes, for tests, the compat suite and
benchmarks.

    with BrokerProcess(tmp_path) as broker:
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)

    with ZooKeeperProcess(tmp_path / "zk") as zk:
        with BrokerProcess(tmp_path / "b1", {"zookeeper.connect": zk.connect}, broker_id=1):
            ...

The broker listens on 127.0.0.1 on a free port, keeps its data and its log file under the given
directory, and is always stopped (SIGTERM, then SIGKILL) when the block ends. ZooKeeper is
the system's installation (`pykbroker.zookeeper_process`: Debian's package, or
`$ZOOKEEPER_CLASSPATH`, `$ZOOKEEPER_HOME`) run standalone on a free loopback port with its data
under the given directory.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from .zookeeper_process import ZooKeeperProcess, free_port, zookeeper_available

__all__ = ["BrokerProcess", "ZooKeeperProcess", "free_port", "wait_until", "zookeeper_available"]

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
