"""Kafka 3.9.0's command-line tools run as a shell runs them, many in one JVM: `ToolShell` starts
`compat/java/ToolLauncher.java` once (compiled against the jars of `../shared/realkafka/libs`,
once per process: `launcher_classes`) and runs each tool class's `main` in it with its own stdout,
stderr, stdin and exit status (Kafka's `Exit` is routed, not taken: the JVM lives on). One JVM per
broker under test keeps the tool scenario's start-up cost to one JVM start instead of one per step;
the test modules that run Kafka's tools (tests/tools/, the delegation token, reassignment,
AlterReplicaLogDirs and assign-without-group-ACL tests) keep one JVM per module (or per broker)
alike.

    with ToolShell(work_dir) as shell:
        done = shell.run("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", b, "--list")
        done.status, done.out, done.err
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from .java import end_serving_process
from .realkafka import REALKAFKA

LAUNCHER_SOURCE = Path(__file__).parent / "java" / "ToolLauncher.java"
LAUNCHER_CLASS = "ToolLauncher"
TIMED_OUT = 124  # the launcher's status for an invocation that did not end in time
# Kafka's tools log through log4j: errors only, on stderr, one line each
QUIET_LOG4J = """log4j.rootLogger=ERROR, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=%p %m (%c)%n
"""
JVM_OPTIONS = (
    "-XX:TieredStopAtLevel=1",
    "-XX:+UseSerialGC",
    "-Xmx384m",
    "-Djava.security.manager=allow",  # the launcher refuses tools' System.exit
    "--add-opens=java.base/java.lang=ALL-UNNAMED",  # and takes back their JVM shutdown hooks
)


@dataclass
class Run:
    """How one invocation ended: its exit status and what it printed."""

    status: int
    out: str
    err: str


def kafka_libs() -> Path:
    return REALKAFKA / "libs"


def unavailable() -> str | None:
    """Why Kafka's tools cannot run here, or None."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        return "`java` and `javac` (JDK 17) are not on PATH"
    if not (kafka_libs() / "kafka-tools-3.9.0.jar").exists():
        return f"no kafka-tools-3.9.0.jar in {kafka_libs()}"
    return None


def compile_launcher(out_dir: Path, libs: Path | None = None) -> Path:
    """Compiles the launcher against the jars of `libs` (default: ../shared/realkafka/libs)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["javac", "-nowarn", "-d", str(out_dir), "-cp", f"{libs or kafka_libs()}/*", str(LAUNCHER_SOURCE)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode != 0:
        raise RuntimeError(f"javac failed:\n{result.stdout}{result.stderr}")
    return out_dir


_COMPILED: dict[Path, Path] = {}  # the jars' directory -> the launcher compiled against them here


def launcher_classes(out_dir: Path, libs: Path | None = None) -> Path:
    """The launcher compiled against the jars of `libs`: once per process (into `out_dir` the
    first time), as long as those classes are still there."""
    libs = libs or kafka_libs()
    compiled = _COMPILED.get(libs)
    if compiled is None or not (compiled / f"{LAUNCHER_CLASS}.class").is_file():
        compiled = _COMPILED[libs] = compile_launcher(out_dir, libs)
    return compiled


def _encode(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _decode(field: str) -> str:
    return base64.b64decode(field).decode(errors="replace")


class ToolShell:
    """One JVM that runs Kafka's tools one after the other, from the jars of `libs` (default
    ../shared/realkafka/libs; `classpath_first`, when given, comes before them), their logs
    configured by the log4j properties `log4j`."""

    def __init__(
        self,
        work_dir: Path,
        classes: Path | None = None,
        libs: Path | None = None,
        log4j: str = QUIET_LOG4J,
        classpath_first: str | None = None,
    ) -> None:
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.classes = classes
        self.libs = libs or kafka_libs()
        self.log4j = log4j
        self.classpath_first = classpath_first
        self.process: subprocess.Popen[str] | None = None
        self.lock = threading.Lock()

    def start(self) -> ToolShell:
        classes = self.classes or launcher_classes(self.work_dir / "classes", self.libs)
        log4j = self.work_dir / "log4j.properties"
        log4j.write_text(self.log4j)
        classpath = f"{classes}:{self.libs}/*"
        if self.classpath_first:
            classpath = f"{self.classpath_first}:{classpath}"
        self.process = subprocess.Popen(
            ["java", *JVM_OPTIONS, f"-Dlog4j.configuration=file:{log4j}",
             "-cp", classpath, LAUNCHER_CLASS],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=self.work_dir,
        )  # fmt: skip
        return self

    def run(self, main_class: str, *args: str, stdin: str = "", timeout: int = 90) -> Run:
        """Runs `main_class` with `args`; waits until it ends (or `timeout` seconds: TIMED_OUT)."""
        assert self.process is not None and self.process.stdin and self.process.stdout
        fields = [str(timeout), stdin, main_class, *args]
        with self.lock:
            self.process.stdin.write("\t".join(map(_encode, fields)) + "\n")
            self.process.stdin.flush()
            answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the tool launcher's JVM ended (exit {self.process.poll()})")
        status, out, err = answer.rstrip("\n").split("\t")
        return Run(int(status), _decode(out), _decode(err))

    def stop(self) -> None:
        if self.process is None:
            return
        end_serving_process(self.process)
        self.process = None

    def __enter__(self) -> ToolShell:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
