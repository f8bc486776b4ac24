"""Run a pykbroker (and a ZooKeeper) as separate processes, for tests, the compat suite and
benchmarks.

    with BrokerProcess(tmp_path) as broker:
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)

Without a directory, a BrokerProcess (public as `pykbroker.BrokerProcess`) keeps its data and
log in a temporary directory, removed when the `with` block ends; `BrokerCluster` (at the end)
is ZooKeeper and three brokers. Importing this module starts nothing and loads none of the
broker's modules.

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
import tempfile
import time
from pathlib import Path

from .zookeeper_process import ZooKeeperProcess, free_port, zookeeper_available

__all__ = ["BrokerProcess", "ZooKeeperProcess", "free_port", "wait_until", "zookeeper_available"]

_STARTED = re.compile(r"pykbroker started: listening on \w+://([\d.]+):(\d+)")


class BrokerProcess:
    """A pykbroker in a process of its own: isolated from the caller (its own interpreter, log
    file and signals), restartable, and killable like a real broker."""

    def __init__(
        self,
        directory: str | os.PathLike | None = None,
        overrides: dict[str, str] | None = None,
        *,
        broker_id: int = 0,
        start_timeout: float = 30.0,
        keep_port_on_restart: bool = False,
        command: list[str] | None = None,
    ) -> None:
        """With `keep_port_on_restart`, a restarted broker listens on the port of its first
        start (as a real broker restarts on its configured port). `command` is how to start it
        (default: this interpreter's `-m pykbroker`); it runs in `directory`. Without a
        `directory`, a temporary one holds the data and the log until the `with` block ends (or
        `cleanup()`); `stop()` alone keeps them, for a restart."""
        self.directory, self._temporary = _directory_or_temporary(directory, "pykbroker-")
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

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: dict[str, str] | None = None
    ) -> str:
        """Create a topic (CreateTopics, as a client would) and wait for its leaders."""
        from .wire_admin import create_topic

        return create_topic(self.bootstrap, name, partitions, replication_factor, configs)

    def cleanup(self) -> None:
        """Stop the broker and remove its temporary directory (none when a directory was given)."""
        self.stop()
        if self._temporary is not None:
            self._temporary.cleanup()

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cleanup()


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


class BrokerCluster:
    """A ZooKeeper and `size` brokers (ids 1..size), each a process on a free loopback port,
    with their data under `directory` (a temporary one, removed at the end, without it).

    `bootstrap` lists every broker; `start()` returns once every broker is registered.
    """

    def __init__(
        self, directory: str | os.PathLike | None = None, *, size: int = 3, overrides: dict[str, str] | None = None
    ) -> None:
        self.directory, self._temporary = _directory_or_temporary(directory, "pykbroker-cluster-")
        self.zookeeper = ZooKeeperProcess(self.directory / "zookeeper")
        self.size = size
        self.overrides = {
            "offsets.topic.num.partitions": "3",
            "group.initial.rebalance.delay.ms": "0",
            "zookeeper.session.timeout.ms": "6000",
            **(overrides or {}),
        }
        self.brokers: dict[int, BrokerProcess] = {}

    @property
    def bootstrap(self) -> str:
        return ",".join(broker.bootstrap for broker in self.brokers.values() if broker.is_running())

    def start(self) -> BrokerCluster:
        try:
            self.zookeeper.start()
            settings = {
                "offsets.topic.replication.factor": str(min(3, self.size)),
                "transaction.state.log.replication.factor": str(min(3, self.size)),
                "transaction.state.log.min.isr": str(min(2, self.size)),
                **self.overrides,
                "zookeeper.connect": self.zookeeper.connect,
            }
            for broker_id in range(1, self.size + 1):
                broker = BrokerProcess(self.directory / f"broker-{broker_id}", settings, broker_id=broker_id)
                self.brokers[broker_id] = broker.start()
            from .wire_admin import registered_brokers

            wait_until(lambda: len(registered_brokers(self.bootstrap)) == self.size, "every broker registered")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for broker in self.brokers.values():
            broker.stop()
        self.zookeeper.stop()

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: dict[str, str] | None = None
    ) -> str:
        """Create a topic (CreateTopics, as a client would) and wait for its leaders."""
        from .wire_admin import create_topic

        return create_topic(self.bootstrap, name, partitions, replication_factor, configs)

    def __enter__(self) -> BrokerCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        if self._temporary is not None:
            self._temporary.cleanup()


def _directory_or_temporary(
    directory: str | os.PathLike | None, prefix: str
) -> tuple[Path, tempfile.TemporaryDirectory | None]:
    """`directory`, or a new temporary directory (removed by its `cleanup()`, or at exit)."""
    if directory is not None:
        return Path(directory), None
    temporary = tempfile.TemporaryDirectory(prefix=prefix)
    return Path(temporary.name), temporary
