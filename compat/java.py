"""The Java Kafka client for tests and the compat suite: the kafka-clients 3.9.1 jar and its
compression libraries (lz4, snappy, zstd) and slf4j-api, as shipped under `pyflink/lib/` by the
PyPI package `shigawire-apache-flink-libraries` (in the `test` extra), and `javac`/`java` from
the JDK on the machine.

    classes = compile_sources([Path("tests/java/ClientScenarios.java")], out_dir)
    result = run_main(classes, "ClientScenarios", "producer-defaults", bootstrap)

    with ServingMain(classes, "ClientScenarios", out_dir / "stderr") as jvm:   # many runs, one JVM
        result = jvm.run("producer-defaults", bootstrap, topic)
"""
from __future__ import annotations

import importlib.metadata
import queue
import shutil
import subprocess
import threading
import time
import zipfile
from pathlib import Path

PACKAGE = "shigawire-apache-flink-libraries"
KAFKA_CLIENTS_VERSION = "3.9.1"
# the jar names under pyflink/lib/ that a Kafka client program needs on its class path
JAR_PATTERNS = ("kafka-clients*.jar", "lz4*.jar", "snappy-java*.jar", "zstd-jni*.jar",
                "slf4j-api*.jar")
# quick start for short programs: no optimizing compiler, the simplest collector
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto")
TIMED_OUT = 124  # the status of a served run that did not end in time (as `timeout` exits)


def end_serving_process(process: subprocess.Popen[str]) -> None:
    """Ends a program that serves requests read from its stdin: closes stdin, which tells it to
    exit, and kills it if it has not exited 10 s later."""
    if process.stdin:
        process.stdin.close()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


class JavaUnavailable(RuntimeError):
    """What is missing to build or run a Java client program, and how to get it."""


def jar_dir() -> Path:
    """`pyflink/lib/` of the installed package that ships the jars."""
    try:
        files = importlib.metadata.files(PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        raise JavaUnavailable(f"the PyPI package {PACKAGE} (kafka-clients jars) is not installed: "
                              "pip install -e '.[test]'") from None
    for file in files:
        if file.name.startswith("kafka-clients") and file.name.endswith(".jar"):
            return Path(file.locate()).parent
    raise JavaUnavailable(f"{PACKAGE} holds no kafka-clients jar")


def kafka_clients_version(jar: Path) -> str:
    with zipfile.ZipFile(jar) as archive:
        text = archive.read("kafka/kafka-version.properties").decode()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)["version"]


def class_path() -> list[Path]:
    """The jars, kafka-clients first; checks that kafka-clients is the expected version."""
    directory = jar_dir()
    jars = []
    for pattern in JAR_PATTERNS:
        found = sorted(directory.glob(pattern))
        if not found:
            raise JavaUnavailable(f"no {pattern} in {directory}")
        jars.append(found[0])
    version = kafka_clients_version(jars[0])
    if version != KAFKA_CLIENTS_VERSION:
        raise JavaUnavailable(f"{jars[0]} is kafka-clients {version}, "
                              f"not {KAFKA_CLIENTS_VERSION}")
    return jars


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise JavaUnavailable(f"`{name}` is not on PATH: a JDK 11+ is needed "
                              "(Debian: apt-get install default-jdk-headless)")
    return path


def compile_sources(sources: list[Path], out_dir: Path) -> Path:
    """Compiles the Java sources against the client jars into `out_dir`; returns it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    jars = class_path()
    result = subprocess.run(
        [tool("javac"), "-nowarn", "-encoding", "UTF-8", "-d", str(out_dir),
         "-cp", ":".join(map(str, jars)), *map(str, sources)],
        capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"javac failed:\n{result.stdout}{result.stderr}")
    return out_dir


def run_main(classes: Path, main_class: str, *args: str,
             timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs `main_class` with the compiled classes and the client jars (in `cwd`, where relative
    paths of its settings are found); output as text."""
    cp = ":".join(map(str, [classes, *class_path()]))
    return subprocess.run([tool("java"), *JVM_OPTIONS, "-cp", cp, main_class, *args],
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, cwd=cwd)


class ServingMain:
    """A Java main class started once with `--serve`, which runs one request a line on stdin
    (its fields separated by tabs) and ends each answer with the line "END <first field>";
    `run` returns each answer as `run_main` returns a process of its own (exit status 0 when
    the answer holds "PASS <first field>", 1 otherwise, TIMED_OUT when it took longer than
    `timeout`: the JVM is then killed and the next run starts a fresh one). The JVM's stderr
    goes to the file `stderr`; a run's result holds what the run added to it."""

    def __init__(self, classes: Path, main_class: str, stderr: Path) -> None:
        self.command = [tool("java"), *JVM_OPTIONS, "-cp", ":".join(map(str, [classes, *class_path()])),
                        main_class, "--serve"]
        self.stderr_path = stderr
        self.process: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()

    def _start(self) -> subprocess.Popen[str]:
        self.lines = queue.Queue()
        with open(self.stderr_path, "a") as stderr:
            process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=stderr, text=True)
        threading.Thread(target=self._read_lines, args=(process, self.lines), daemon=True).start()
        return process

    @staticmethod
    def _read_lines(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        for line in process.stdout:
            lines.put(line)
        lines.put(None)  # the JVM ended

    def run(self, *fields: str, timeout: float = 120) -> subprocess.CompletedProcess:
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()
        stderr_start = self.stderr_path.stat().st_size
        self.process.stdin.write("\t".join(fields) + "\n")
        self.process.stdin.flush()
        out, status = self._answer(fields[0], timeout)
        with open(self.stderr_path, errors="replace") as stderr:
            stderr.seek(stderr_start)
            err = stderr.read()
        return subprocess.CompletedProcess(self.command, status, "".join(out), err)

    def _answer(self, name: str, timeout: float) -> tuple[list[str], int]:
        """The answer's lines (less the END line) and the run's exit status."""
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.process.kill()  # a scenario that hangs holds the JVM: a fresh one runs the next
                self.stop()
                return out, TIMED_OUT
            if line is None:
                return out, self.process.wait()
            if line.rstrip("\n") == f"END {name}":
                return out, 0 if f"PASS {name}\n" in out else 1
            out.append(line)

    def stop(self) -> None:
        if self.process is None:
            return
        end_serving_process(self.process)
        self.process = None

    def __enter__(self) -> ServingMain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def without_logging_noise(text: str) -> str:
    """Output less the lines slf4j prints when no logging backend is on the class path."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("SLF4J:"))
