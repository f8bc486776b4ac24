"""ZooKeeper from the system's installation, run standalone on 127.0.0.1: found, started, stopped.

    classpath = find_zookeeper()          # or find_zookeeper(home="/opt/zookeeper")
    with ZooKeeperProcess(directory, classpath=classpath) as zookeeper:
        zookeeper.connect                 # "127.0.0.1:PORT"

Where ZooKeeper is looked for, the first match winning: the classpath or the installation
directory the caller names, `$ZOOKEEPER_CLASSPATH`, `$ZOOKEEPER_HOME`, then the usual places:
Debian's and Ubuntu's `zookeeper` package (`/usr/share/java/zookeeper.jar`, whose manifest names
its dependencies), Homebrew's formula, `/opt/zookeeper`. An installation directory is an Apache
ZooKeeper release (its jars in `lib/`) or a Kafka distribution (`libs/`, which carries ZooKeeper).
Java is `$JAVA_HOME/bin/java`, else `java` on the PATH. What cannot be found is a
`ZooKeeperNotFound` whose message is one line saying what to install or name.

The server keeps its `zoo.cfg`, its data (`data/`) and its output (`zookeeper.log`) under the
given directory, so a stopped ZooKeeper started again on the same directory has the same data.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .ports import free_port

DEBIAN_JAR = "/usr/share/java/zookeeper.jar"
USUAL_HOMES = (
    "/opt/homebrew/opt/zookeeper/libexec",
    "/usr/local/opt/zookeeper/libexec",
    "/opt/zookeeper",
    "/usr/share/zookeeper",
)
ZOOKEEPER_MAIN = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
NOT_FOUND = (
    "ZooKeeper not found: install it (Debian, Ubuntu: apt-get install zookeeper) or name an installation "
    "with --zookeeper-home DIR or --zookeeper-classpath CLASSPATH"
)


class ZooKeeperNotFound(Exception):
    """No ZooKeeper (or no Java to run it): the message says what to install or name, in one line."""


def find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.access(os.path.join(java_home, "bin", "java"), os.X_OK):
        return os.path.join(java_home, "bin", "java")
    java = shutil.which("java")
    if java is None:
        raise ZooKeeperNotFound(
            "java not found: ZooKeeper needs a Java runtime (Debian, Ubuntu: apt-get install default-jre-headless)"
        )
    return java


def find_zookeeper(home: str | os.PathLike[str] | None = None, classpath: str | None = None) -> str:
    """The Java classpath that runs ZooKeeper's server, from what is named or else the usual places."""
    if classpath is not None:
        return checked_classpath(classpath, "ZooKeeper classpath")
    if home is not None:
        return home_classpath(Path(home))
    if os.environ.get("ZOOKEEPER_CLASSPATH"):
        return checked_classpath(os.environ["ZOOKEEPER_CLASSPATH"], "$ZOOKEEPER_CLASSPATH")
    if os.environ.get("ZOOKEEPER_HOME"):
        return home_classpath(Path(os.environ["ZOOKEEPER_HOME"]))
    if os.path.isfile(DEBIAN_JAR):
        return DEBIAN_JAR
    for usual in USUAL_HOMES:
        found = jar_directory(Path(usual))
        if found is not None:
            return f"{found}/*"
    raise ZooKeeperNotFound(NOT_FOUND)


def checked_classpath(classpath: str, what: str) -> str:
    for entry in classpath.split(os.pathsep):
        path = entry[:-2] if entry.endswith("/*") else entry
        if path and not os.path.exists(path):
            raise ZooKeeperNotFound(f"{what} {classpath}: {path} does not exist")
    return classpath


def home_classpath(home: Path) -> str:
    found = jar_directory(home)
    if found is None:
        raise ZooKeeperNotFound(f"no ZooKeeper installation at {home} (no zookeeper jar in {home}/lib or {home}/libs)")
    return f"{found}/*"


def jar_directory(home: Path) -> Path | None:
    """The directory of `home` holding ZooKeeper's jar: `lib/` (a release), `libs/` (Kafka), or itself."""
    for directory in (home / "lib", home / "libs", home):
        if directory.is_dir() and any(directory.glob("zookeeper-3*.jar")):
            return directory
    return None


def zookeeper_available() -> bool:
    """True when Java and ZooKeeper are found where `find_java` and `find_zookeeper` look."""
    try:
        find_java()
        find_zookeeper()
    except ZooKeeperNotFound:
        return False
    return True


class ZooKeeperProcess:
    """A standalone ZooKeeper on a loopback port (a free one unless `port` is given); stopped
    (SIGTERM, then SIGKILL) on exit.

    `connect` is its connection string; `chroot` is appended when given. The data survives
    `stop()` and `start()`, as a restarted ZooKeeper's does. `popen_options` are extra
    `subprocess.Popen` arguments (a launcher puts ZooKeeper in its own process group).
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        classpath: str | None = None,
        port: int = 0,
        tick_time_ms: int = 500,
        start_timeout: float = 30.0,
        popen_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.classpath = classpath
        self.tick_time_ms = tick_time_ms
        self.start_timeout = start_timeout
        self.popen_options = dict(popen_options or {})
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None
        self.log_path = self.directory / "zookeeper.log"

    def connect_string(self, chroot: str = "") -> str:
        return f"127.0.0.1:{self.port}{chroot}"

    @property
    def connect(self) -> str:
        return self.connect_string()

    def start(self) -> ZooKeeperProcess:
        command = [find_java(), "-Xmx256m", "-cp", self.classpath or find_zookeeper(), ZOOKEEPER_MAIN]
        if not self.port:
            self.port = free_port()
        log_file = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [*command, str(self._write_config())],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            **self.popen_options,
        )
        log_file.close()
        self._wait_until_serving()
        return self

    def _write_config(self) -> Path:
        config = self.directory / "zoo.cfg"
        settings = [
            f"tickTime={self.tick_time_ms}",
            f"dataDir={self.directory / 'data'}",
            f"clientPort={self.port}",
            "clientPortAddress=127.0.0.1",
            "admin.enableServer=false",
            "4lw.commands.whitelist=ruok,srvr",
            f"maxSessionTimeout={self.tick_time_ms * 60}",
        ]
        config.write_text("\n".join(settings) + "\n")
        return config

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
        """True once ZooKeeper accepts sessions: its `srvr` answer gives its version then
        (`ruok` answers `imok` as soon as the process runs, before it serves anyone)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"srvr")
                answer = b""
                while chunk := sock.recv(4096):
                    answer += chunk
                return answer.startswith(b"Zookeeper version")
        except OSError:
            return False

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

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

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
