"""A pykbroker in a process of its own: the one way the harness spawns a broker (for tests, the
compatibility suite, benchmarks, `BrokerCluster` and `pykbroker cluster`).

    with BrokerProcess(tmp_path) as broker:
        client = KafkaAdminClient(bootstrap_servers=broker.bootstrap)

The broker runs `python -m pykbroker` (or `command`) in its directory with every setting as an
`--override`: the harness's single-broker settings (`settings.py`: the development profile on a
free 127.0.0.1 port, data in `DIRECTORY/kafka-logs`) under the caller's. Its output goes to
`DIRECTORY/broker.log`; it is ready once its log says `pykbroker started: listening on ...`,
which also tells its port. Without a directory, a temporary one holds the data and the log until
the `with` block ends. It is always stopped (SIGTERM, then SIGKILL) when the block ends. Importing
this module starts nothing and loads none of the broker's modules.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .settings import FREE_PORT_LISTENER, single_broker_settings

LOADED_DIR = re.compile(r"Loaded \d+ logs in \d+ms in log dir ")
STARTED = re.compile(r"pykbroker started: listening on \w+://([\d.]+):(\d+)")


class BrokerProcess:
    """A pykbroker in a process of its own: isolated from the caller (its own interpreter, log
    file and signals), restartable, and killable like a real broker."""

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        overrides: Mapping[str, object] | None = None,
        *,
        broker_id: int = 0,
        start_timeout: float = 30.0,
        keep_port_on_restart: bool = False,
        command: list[str] | None = None,
        popen_options: Mapping[str, Any] | None = None,
    ) -> None:
        """With `keep_port_on_restart`, a restarted broker listens on the port of its first
        start (as a real broker restarts on its configured port). `command` is how to start it
        (default: this interpreter's `-m pykbroker`); it runs in `directory`. Without a
        `directory`, a temporary one holds the data and the log until the `with` block ends (or
        `cleanup()`); `stop()` alone keeps them, for a restart. `popen_options` are extra
        `subprocess.Popen` arguments (a launcher puts its brokers in their own session)."""
        self.directory, self._temporary = directory_or_temporary(directory, "pykbroker-")
        self.directory.mkdir(parents=True, exist_ok=True)
        self.command = command or [sys.executable, "-m", "pykbroker"]
        self.broker_id = broker_id
        # only the harness's own listener moves to a fixed port; the caller's listeners stay as given
        given_listeners = (overrides or {}).get("listeners", FREE_PORT_LISTENER)
        self.keep_port_on_restart = keep_port_on_restart and given_listeners == FREE_PORT_LISTENER
        self.overrides = single_broker_settings(overrides, broker_id=broker_id, log_dirs=self.directory / "kafka-logs")
        self.start_timeout = start_timeout
        self.popen_options = dict(popen_options or {})
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.directory / "broker.log"
        self.host = "127.0.0.1"
        self.port = 0
        self._log_offset = 0

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"

    # -- start ------------------------------------------------------------------------------
    def start(self) -> BrokerProcess:
        """Spawn the broker and return once it listens."""
        self.spawn()
        self.wait_until_listening()
        return self

    def spawn(self) -> None:
        """Start the process without waiting for it (`wait_until_listening` waits)."""
        if self.keep_port_on_restart and self.port:
            self.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{self.port}"
        args = list(self.command)
        for key, value in self.overrides.items():
            args += ["--override", f"{key}={value}"]
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log_file:
            self.process = subprocess.Popen(
                args,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.directory,
                **self.popen_options,
            )

    def wait_until_listening(self) -> None:
        """Wait for this run's start line (its address becomes `host`, `port`); RuntimeError
        with the log when the process exits first, TimeoutError (after stopping it) when
        `start_timeout` passes."""
        process = self.process
        if process is None:
            raise RuntimeError("the broker process was not started")
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self.announced_address() is not None:
                return
            if process.poll() is not None:
                raise RuntimeError(f"broker exited with {process.returncode}:\n{self.log_text()}")
            time.sleep(0.02)
        self.stop()
        raise TimeoutError(f"broker did not start within {self.start_timeout}s")

    def wait_until_logs_loaded(self, timeout_s: float = 60.0) -> None:
        """Wait until this run has loaded the logs of every log dir it began loading: a broker
        listens before its logs are loaded, and answers for a partition still loading as Kafka
        answers for one it does not lead yet."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            run_log = self.run_log_text()
            began = run_log.count("Loading logs from log dir ")
            if began and len(LOADED_DIR.findall(run_log)) >= began:
                return
            time.sleep(0.02)
        raise TimeoutError(f"the broker did not load its logs within {timeout_s}s:\n{self.log_text()}")

    def run_log_text(self) -> str:
        """The log lines of the current run only."""
        if not self.log_path.exists():
            return ""
        with open(self.log_path, "rb") as log_file:
            log_file.seek(self._log_offset)
            return log_file.read().decode(errors="replace")

    def announced_address(self) -> str | None:
        """`host:port` from this run's start line once it is in the log (then also `host`, `port`)."""
        if not self.log_path.exists():
            return None
        with open(self.log_path, "rb") as log_file:
            log_file.seek(self._log_offset)
            match = STARTED.search(log_file.read().decode(errors="replace"))
        if match is None:
            return None
        self.host, self.port = match.group(1), int(match.group(2))
        return self.bootstrap

    # -- stop -------------------------------------------------------------------------------
    def stop(self, timeout: float = 15.0) -> int | None:
        """SIGTERM and wait; SIGKILL if it does not stop in time. Returns the exit code."""
        self.terminate()
        return self.wait_for_exit(timeout)

    def terminate(self) -> None:
        """SIGTERM (a controlled shutdown), without waiting."""
        self.send_signal(signal.SIGTERM)

    def wait_for_exit(self, timeout: float) -> int | None:
        """Wait for the process to end; SIGKILL after `timeout` seconds. Its exit code."""
        if self.process is None:
            return None
        try:
            return self.process.wait(max(0.0, timeout))
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
        self.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.send_signal(signal.SIGCONT)

    def send_signal(self, signum: int) -> None:
        if self.process is not None and self.is_running():
            self.process.send_signal(signum)

    # -- state ------------------------------------------------------------------------------
    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def last_log_line(self) -> str:
        lines = self.log_text().splitlines()
        return lines[-1].strip() if lines else "(no output)"

    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: dict[str, str] | None = None
    ) -> str:
        """Create a topic (CreateTopics, as a client would) and wait for its leaders."""
        from .wire import create_topic

        return create_topic(self.bootstrap, name, partitions, replication_factor, configs)

    def cleanup(self) -> None:
        """Stop the broker and remove its temporary directory (none when a directory was given)."""
        self.stop()
        if self._temporary is not None:
            self._temporary.cleanup()

    def __enter__(self) -> BrokerProcess:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.cleanup()


def directory_or_temporary(
    directory: str | os.PathLike[str] | None, prefix: str
) -> tuple[Path, tempfile.TemporaryDirectory[str] | None]:
    """`directory`, or a new temporary directory (removed by its `cleanup()`, or at exit)."""
    if directory is not None:
        return Path(directory), None
    temporary = tempfile.TemporaryDirectory(prefix=prefix)
    return Path(temporary.name), temporary
